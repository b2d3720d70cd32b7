// Ops current LiteRT registers that TFLite 2.9 did not have: SIGN, ATAN2, RELU_0_TO_1, BITWISE_XOR,
// RIGHT_SHIFT, BITCAST and UNSORTED_SEGMENT_SUM / PROD / MAX / MIN, in the types LiteRT's kernels take.
// Their one-op cases (tools/op-models-wild.mjs) are checked against LiteRT 2.5.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/binary.h"
#include "kernels/broadcast_index.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

void require_output_like_input(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  ctx.require(ctx.type(out) == ctx.type(in), std::string("output type ") + type_name(ctx.type(out)) +
                                                 " differs from the input's " + type_name(ctx.type(in)));
}

// Calls f(T{}) with the C++ type of an integer tensor type of LiteRT's bitwise kernels.
template <typename F>
void with_integer_type(baton_tensor_type t, F&& f) {
  switch (t) {
    case BATON_TYPE_INT8: return f(int8_t{});
    case BATON_TYPE_UINT8: return f(uint8_t{});
    case BATON_TYPE_INT16: return f(int16_t{});
    case BATON_TYPE_UINT16: return f(uint16_t{});
    case BATON_TYPE_INT32: return f(int32_t{});
    case BATON_TYPE_UINT32: return f(uint32_t{});
    default: return;
  }
}

// ---- SIGN, RELU_0_TO_1: elementwise, the input's shape ----

void sign_prepare(OpContext& ctx) {
  ctx.require_type(ctx.input(0), "input", {BATON_TYPE_FLOAT32, BATON_TYPE_FLOAT64, BATON_TYPE_INT32});
  require_output_like_input(ctx);
  ctx.set_output_shape(ctx.output(0), ctx.shape(ctx.input(0)));
}

template <typename T>
void sign_of(const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>((T(0) < in[i]) - (in[i] < T(0)));  // NaN gives 0
}

void sign_invoke(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  const int64_t n = ctx.element_count(in);
  switch (ctx.type(in)) {
    case BATON_TYPE_FLOAT32: return sign_of(ctx.data<float>(in), ctx.mutable_data<float>(ctx.output(0)), n);
    case BATON_TYPE_FLOAT64: return sign_of(ctx.data<double>(in), ctx.mutable_data<double>(ctx.output(0)), n);
    default: return sign_of(ctx.data<int32_t>(in), ctx.mutable_data<int32_t>(ctx.output(0)), n);
  }
}

void relu_0_to_1_prepare(OpContext& ctx) {
  ctx.require_float(ctx.input(0), "input");
  require_output_like_input(ctx);
  ctx.set_output_shape(ctx.output(0), ctx.shape(ctx.input(0)));
}

void relu_0_to_1_invoke(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  const int64_t n = ctx.element_count(in);
  const float* x = ctx.data<float>(in);
  float* y = ctx.mutable_data<float>(ctx.output(0));
  // min(max(x, 0), 1) as LiteRT writes it: a NaN stays NaN.
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 1.0f ? 1.0f : (x[i] < 0.0f ? 0.0f : x[i]);
}

// ---- ATAN2 (same shapes), BITWISE_XOR and RIGHT_SHIFT (broadcast) ----

struct BinaryState : OpState {
  IndexPlan plan;
};

void atan2_prepare(OpContext& ctx) {
  baton_tensor* y = ctx.input(0);
  baton_tensor* x = ctx.input(1);
  ctx.require_type(y, "y (input 0)", {BATON_TYPE_FLOAT32, BATON_TYPE_FLOAT64});
  ctx.require(ctx.type(x) == ctx.type(y), "x (input 1) type differs from y's");
  require_output_like_input(ctx);
  const auto sy = ctx.shape(y), sx = ctx.shape(x);
  ctx.require(std::equal(sy.begin(), sy.end(), sx.begin(), sx.end()),
              "y " + shape_text(sy) + " and x " + shape_text(sx) + " must have one shape (LiteRT's ATAN2 does not broadcast)");
  ctx.set_output_shape(ctx.output(0), sy);
}

void atan2_invoke(OpContext& ctx) {
  const int64_t n = ctx.element_count(ctx.input(0));
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* y = ctx.data<T>(ctx.input(0));
    const T* x = ctx.data<T>(ctx.input(1));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    for (int64_t i = 0; i < n; ++i) out[i] = std::atan2(y[i], x[i]);
  };
  if (ctx.type(ctx.input(0)) == BATON_TYPE_FLOAT64) return run(double{});
  run(float{});
}

void bitwise_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  ctx.require_type(a, "input", {BATON_TYPE_INT8, BATON_TYPE_UINT8, BATON_TYPE_INT16, BATON_TYPE_UINT16, BATON_TYPE_INT32,
                                BATON_TYPE_UINT32});
  ctx.require(ctx.type(b) == ctx.type(a), std::string("input 1 type ") + type_name(ctx.type(b)) +
                                              " differs from input 0's " + type_name(ctx.type(a)));
  require_output_like_input(ctx);
  const auto sa = ctx.shape(a), sb = ctx.shape(b);
  ctx.require(static_cast<int>(sa.size()) <= kMaxIndexRank && static_cast<int>(sb.size()) <= kMaxIndexRank,
              "rank above " + std::to_string(kMaxIndexRank) + " not supported");
  std::vector<int32_t> out;
  if (!broadcast_shape(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size()), out)) {
    ctx.fail(BATON_INVALID_ARGUMENT, "input shapes " + shape_text(sa) + " and " + shape_text(sb) + " do not broadcast");
  }
  ctx.set_output_shape(ctx.output(0), out);
  const std::span<const int32_t> ins[] = {sa, sb};
  ctx.state<BinaryState>().plan = plan_index(out, ins);
}

// x >> y with y clamped to [0, bits - 1], as LiteRT does (a shift past the width is not undefined there).
template <typename T>
T right_shift(T x, T y) {
  constexpr T kMax = static_cast<T>(sizeof(T) * 8 - 1);
  const T shift = y < T(0) ? T(0) : (y > kMax ? kMax : y);
  return static_cast<T>(x >> shift);
}

void bitwise_invoke(OpContext& ctx) {
  const auto& s = ctx.state<BinaryState>();
  const bool xor_op = ctx.op_code() == BATON_OP_BITWISE_XOR;
  with_integer_type(ctx.type(ctx.input(0)), [&](auto zero) {
    using T = decltype(zero);
    const T* a = ctx.data<T>(ctx.input(0));
    const T* b = ctx.data<T>(ctx.input(1));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    if (xor_op) {
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = static_cast<T>(a[i] ^ b[j]); });
    } else {
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = right_shift(a[i], b[j]); });
    }
  });
}

// ---- BITCAST: the bytes as another type; a narrower output adds a last dimension, a wider one takes it ----

void bitcast_prepare(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  const size_t a = element_size(ctx.type(in)), b = element_size(ctx.type(out));
  ctx.require(a > 0 && b > 0 && ctx.type(in) != BATON_TYPE_STRING && ctx.type(out) != BATON_TYPE_STRING,
              std::string("BITCAST between ") + type_name(ctx.type(in)) + " and " + type_name(ctx.type(out)) +
                  " is not supported");
  const auto shape = ctx.shape(in);
  std::vector<int32_t> result(shape.begin(), shape.end());
  if (a > b) {
    ctx.require(a % b == 0, "element sizes do not divide");
    result.push_back(static_cast<int32_t>(a / b));
  } else if (a < b) {
    ctx.require(!result.empty() && static_cast<size_t>(result.back()) * a == b,
                "the input's last dimension must be " + std::to_string(b / a) + " to make one " +
                    type_name(ctx.type(out)) + " of " + type_name(ctx.type(in)) + ", the shape is " + shape_text(shape));
    result.pop_back();
  }
  ctx.set_output_shape(out, result);
}

void bitcast_invoke(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  const size_t bytes = static_cast<size_t>(ctx.element_count(in)) * element_size(ctx.type(in));
  std::memmove(ctx.mutable_data<void>(ctx.output(0)), ctx.data<void>(in), bytes);
}

// ---- UNSORTED_SEGMENT_SUM / PROD / MAX / MIN ----

struct SegmentState : OpState {
  int64_t rows = 0, row = 0, segments = 0;  // data rows (ids), elements per row, output segments
};

void unsorted_segment_prepare(OpContext& ctx) {
  baton_tensor* data = ctx.input(0);
  baton_tensor* ids = ctx.input(1);
  baton_tensor* count = ctx.input(2);
  ctx.require_type(data, "data (input 0)", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32});
  require_output_like_input(ctx);
  ctx.require_type(ids, "segment ids (input 1)", {BATON_TYPE_INT32});
  ctx.require_type(count, "num_segments (input 2)", {BATON_TYPE_INT32});
  const auto shape = ctx.shape(data), id_shape = ctx.shape(ids);
  ctx.require(id_shape.size() <= shape.size() && std::equal(id_shape.begin(), id_shape.end(), shape.begin()),
              "segment ids " + shape_text(id_shape) + " must be a prefix of data's shape " + shape_text(shape));
  ctx.require(ctx.element_count(count) == 1, "num_segments must be a scalar");
  const auto n = ctx.shape_ints(count, "num_segments (input 2)");
  if (!n) return;  // computed: prepared again at invoke with the value
  ctx.require((*n)[0] >= 0 && (*n)[0] <= INT32_MAX, "num_segments " + std::to_string((*n)[0]) + " out of range");
  auto& s = ctx.state<SegmentState>();
  s.segments = (*n)[0];
  s.rows = ctx.element_count(ids);
  s.row = 1;
  std::vector<int32_t> out{static_cast<int32_t>(s.segments)};
  for (size_t d = id_shape.size(); d < shape.size(); ++d) {
    out.push_back(shape[d]);
    s.row *= shape[d];
  }
  ctx.set_output_shape(ctx.output(0), out);
}

template <typename T>
void unsorted_segment(OpContext& ctx, const SegmentState& s, int32_t code) {
  const T* data = ctx.data<T>(ctx.input(0));
  const int32_t* ids = ctx.data<int32_t>(ctx.input(1));
  T* out = ctx.mutable_data<T>(ctx.output(0));
  for (int64_t r = 0; r < s.rows; ++r) {
    if (ids[r] < 0 || ids[r] >= s.segments) {
      ctx.fail(BATON_ERROR, "segment id " + std::to_string(ids[r]) + " at " + std::to_string(r) + " is outside [0, " +
                                std::to_string(s.segments) + ")");
    }
  }
  // Segments no id names keep the operation's identity: 0, 1, the lowest value, the highest value.
  const T identity = code == BATON_OP_UNSORTED_SEGMENT_SUM    ? T(0)
                     : code == BATON_OP_UNSORTED_SEGMENT_PROD ? T(1)
                     : code == BATON_OP_UNSORTED_SEGMENT_MAX  ? std::numeric_limits<T>::lowest()
                                                        : std::numeric_limits<T>::max();
  std::fill(out, out + s.segments * s.row, identity);
  for (int64_t r = 0; r < s.rows; ++r) {
    T* dst = out + ids[r] * s.row;
    const T* src = data + r * s.row;
    for (int64_t j = 0; j < s.row; ++j) {
      switch (code) {
        case BATON_OP_UNSORTED_SEGMENT_SUM: dst[j] += src[j]; break;
        case BATON_OP_UNSORTED_SEGMENT_PROD: dst[j] *= src[j]; break;
        case BATON_OP_UNSORTED_SEGMENT_MAX: dst[j] = std::max(dst[j], src[j]); break;
        default: dst[j] = std::min(dst[j], src[j]); break;
      }
    }
  }
}

void unsorted_segment_invoke(OpContext& ctx) {
  const auto& s = ctx.state<SegmentState>();
  if (ctx.type(ctx.input(0)) == BATON_TYPE_FLOAT32) return unsorted_segment<float>(ctx, s, ctx.op_code());
  unsorted_segment<int32_t>(ctx, s, ctx.op_code());
}

constexpr OpDef kOps[] = {
    {BATON_OP_SIGN, "SIGN", 1, 2, sign_prepare, sign_invoke},
    {BATON_OP_ATAN2, "ATAN2", 1, 1, atan2_prepare, atan2_invoke},
    {BATON_OP_RELU_0_TO_1, "RELU_0_TO_1", 1, 1, relu_0_to_1_prepare, relu_0_to_1_invoke},
    {BATON_OP_BITWISE_XOR, "BITWISE_XOR", 1, 1, bitwise_prepare, bitwise_invoke},
    {BATON_OP_RIGHT_SHIFT, "RIGHT_SHIFT", 1, 1, bitwise_prepare, bitwise_invoke},
    {BATON_OP_BITCAST, "BITCAST", 1, 1, bitcast_prepare, bitcast_invoke},
    {BATON_OP_UNSORTED_SEGMENT_SUM, "UNSORTED_SEGMENT_SUM", 1, 1, unsorted_segment_prepare, unsorted_segment_invoke},
    {BATON_OP_UNSORTED_SEGMENT_PROD, "UNSORTED_SEGMENT_PROD", 1, 1, unsorted_segment_prepare, unsorted_segment_invoke},
    {BATON_OP_UNSORTED_SEGMENT_MAX, "UNSORTED_SEGMENT_MAX", 1, 1, unsorted_segment_prepare, unsorted_segment_invoke},
    {BATON_OP_UNSORTED_SEGMENT_MIN, "UNSORTED_SEGMENT_MIN", 1, 1, unsorted_segment_prepare, unsorted_segment_invoke},
};

}  // namespace

std::span<const OpDef> litert_ops() { return kOps; }

}  // namespace baton::builtin
