// Ops that map values onto a grid given by the options (ABI 1.3): BUCKETIZE (the index of each value's
// bucket among ascending boundaries, int32 out) and FAKE_QUANT (float32 values rounded to the codes of
// a nudged [min, max] range, kernels/fake_quant.cc).
#include <string>
#include <type_traits>

#include "glue/op_context.h"
#include "kernels/fake_quant.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// ---- BUCKETIZE ----

void bucketize_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(3, "BUCKETIZE's boundaries");
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_FLOAT64, BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_INT32});
  const auto& o = ctx.options().u.bucketize;
  ctx.require(o.boundaries_count == 0 || o.boundaries, "boundaries are missing");
  for (int32_t i = 1; i < o.boundaries_count; ++i) {
    ctx.require(o.boundaries[i - 1] < o.boundaries[i], "boundaries must be in ascending order (boundary " +
                                                           std::to_string(i) + " is not above the one before)");
  }
  ctx.set_output_shape(ctx.output(0), ctx.shape(input));
}

// The number of boundaries at or below each value: a value and a boundary compare in the wider of the
// value's type and float (an integer value as a float, a float boundary as a double for float64).
template <typename T>
void bucketize(const float* boundaries, int32_t count, const T* in, int32_t* out, int64_t n) {
  using Common = std::common_type_t<T, float>;
  for (int64_t i = 0; i < n; ++i) {
    const Common v = static_cast<Common>(in[i]);
    int32_t lo = 0, hi = count;  // first boundary above v
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo) / 2;
      if (v < static_cast<Common>(boundaries[mid])) hi = mid; else lo = mid + 1;
    }
    out[i] = lo;
  }
}

void bucketize_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const auto& o = ctx.options().u.bucketize;
  int32_t* out = ctx.mutable_data<int32_t>(ctx.output(0));
  const int64_t n = ctx.element_count(input);
  switch (ctx.type(input)) {
    case BATON_TYPE_FLOAT32: return bucketize(o.boundaries, o.boundaries_count, ctx.data<float>(input), out, n);
    case BATON_TYPE_FLOAT64: return bucketize(o.boundaries, o.boundaries_count, ctx.data<double>(input), out, n);
    case BATON_TYPE_INT32: return bucketize(o.boundaries, o.boundaries_count, ctx.data<int32_t>(input), out, n);
    default: return bucketize(o.boundaries, o.boundaries_count, ctx.data<int64_t>(input), out, n);
  }
}

// ---- FAKE_QUANT ----

struct FakeQuantState : OpState {
  FakeQuantRange range;
};

void fake_quant_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(3, "FAKE_QUANT's min, max and num_bits");
  baton_tensor* input = ctx.input(0);
  ctx.require_float(input, "input");
  ctx.require_float(ctx.output(0), "output");
  const auto& o = ctx.options().u.fake_quant;
  ctx.require(!o.narrow_range, "narrow_range is not supported (TFLite 2.9 refuses it too)");
  ctx.require(o.num_bits >= 2 && o.num_bits <= 16, "num_bits " + std::to_string(o.num_bits) + " outside [2, 16]");
  ctx.require(o.min < o.max, "min " + std::to_string(o.min) + " is not below max " + std::to_string(o.max));
  ctx.state<FakeQuantState>().range = fake_quant_range(o.min, o.max, o.num_bits);
  ctx.set_output_shape(ctx.output(0), ctx.shape(input));
}

void fake_quant_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  fake_quant(ctx.state<FakeQuantState>().range, ctx.data<float>(input), ctx.mutable_data<float>(ctx.output(0)),
             ctx.element_count(input));
}

constexpr OpDef kOps[] = {
    {BATON_OP_BUCKETIZE, "BUCKETIZE", 1, 1, bucketize_prepare, bucketize_invoke},
    {BATON_OP_FAKE_QUANT, "FAKE_QUANT", 1, 2, fake_quant_prepare, fake_quant_invoke},
};

}  // namespace

std::span<const OpDef> discretize_ops() { return kOps; }

}  // namespace baton::builtin
