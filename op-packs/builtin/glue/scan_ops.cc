// CUMSUM on float32, int32 and int64 along one axis, inclusive or exclusive, forward or reversed. The
// output has the input's shape, so a computed axis is read at invoke (as TFLite reads it), a constant one
// at prepare. Each output is the running sum in the order TFLite 2.9 adds (from the start, or from the
// end when reversed), so float sums round the same way; integer sums wrap as TFLite's do.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "glue/op_context.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct CumsumState : OpState {
  int64_t outer = 1, length = 1, inner = 1;
  bool exclusive = false, reverse = false;
  bool axis_at_invoke = false;  // a computed axis: the output keeps the input's shape, so invoke reads it
};

// The walk along the axis (one value, negative counted from the end), from the input's shape.
void plan_cumsum(const OpContext& ctx, CumsumState& s) {
  const auto shape = ctx.shape(ctx.input(0));
  const int rank = static_cast<int>(shape.size());
  const int axis = normalize_axis(ctx, ctx.int_value(ctx.input(1), 0), rank);
  s.outer = s.inner = 1;
  for (int d = 0; d < axis; ++d) s.outer *= shape[d];
  for (int d = axis + 1; d < rank; ++d) s.inner *= shape[d];
  s.length = shape[axis];
}

void cumsum_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(2, "CUMSUM's exclusive and reverse");
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64});
  require_like_input(ctx, in, ctx.output(0));
  baton_tensor* axis_tensor = ctx.input(1);
  ctx.require_type(axis_tensor, "axis (input 1)", {BATON_TYPE_INT32});
  ctx.require(ctx.element_count(axis_tensor) == 1, "axis (input 1) must hold one value");
  const auto shape = ctx.shape(in);
  ctx.require(!shape.empty(), "input must have rank >= 1");
  auto& s = ctx.state<CumsumState>();
  s.axis_at_invoke = !ctx.is_constant(axis_tensor);
  if (!s.axis_at_invoke) plan_cumsum(ctx, s);
  s.exclusive = ctx.options().u.cumsum.exclusive != 0;
  s.reverse = ctx.options().u.cumsum.reverse != 0;
  ctx.set_output_shape(ctx.output(0), shape);
}

// Integer sums wrap (TFLite's overflow is undefined; two's complement is what it computes on x86).
template <typename T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
void cumsum(const CumsumState& s, const T* in, T* out) {
  const int64_t step = s.reverse ? -s.inner : s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      int64_t at = o * s.length * s.inner + i + (s.reverse ? (s.length - 1) * s.inner : 0);
      T sum = T(0);
      for (int64_t k = 0; k < s.length; ++k, at += step) {
        if (s.exclusive) {
          out[at] = sum;
          sum = add_wrapping(sum, in[at]);
        } else {
          sum = add_wrapping(sum, in[at]);
          out[at] = sum;
        }
      }
    }
  }
}

void cumsum_invoke(OpContext& ctx) {
  auto& s = ctx.state<CumsumState>();
  if (s.axis_at_invoke) plan_cumsum(ctx, s);
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  switch (ctx.type(in)) {
    case BATON_TYPE_FLOAT32: return cumsum(s, ctx.data<float>(in), ctx.mutable_data<float>(out));
    case BATON_TYPE_INT32: return cumsum(s, ctx.data<int32_t>(in), ctx.mutable_data<int32_t>(out));
    default: return cumsum(s, ctx.data<int64_t>(in), ctx.mutable_data<int64_t>(out));
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_CUMSUM, "CUMSUM", 1, 1, cumsum_prepare, cumsum_invoke},
};

}  // namespace

std::span<const OpDef> scan_ops() { return kOps; }

}  // namespace baton::builtin
