// Elementwise unary ops (activations, math functions), SOFTMAX, LOG_SOFTMAX and L2_NORMALIZATION: the
// output has the input's shape.
// uint8 / int8 LOGISTIC and SOFTMAX are prepared by glue/quantized_ops.cc, 8-bit HARD_SWISH and
// LOG_SOFTMAX by glue/quantized_activation_ops.cc; uint8 / int8 TANH and GELU
// and int8 ELU run through a 256-entry table of the float function over the input codes, as TFLite
// 2.9's kernels do; 8-bit L2_NORMALIZATION and the ReLUs (also int16 RELU and RELU6) rescale in fixed
// point.
#include <algorithm>
#include <cmath>
#include <string>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "kernels/parallel.h"
#include "kernels/ql2norm.h"
#include "kernels/qlookup.h"
#include "kernels/unary.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

UnaryOp unary_op_of(int32_t code) {
  switch (code) {
    case BATON_OP_RELU: return UnaryOp::kRelu;
    case BATON_OP_RELU6: return UnaryOp::kRelu6;
    case BATON_OP_RELU_N1_TO_1: return UnaryOp::kReluN1To1;
    case BATON_OP_LOGISTIC: return UnaryOp::kLogistic;
    case BATON_OP_TANH: return UnaryOp::kTanh;
    case BATON_OP_HARD_SWISH: return UnaryOp::kHardSwish;
    case BATON_OP_RSQRT: return UnaryOp::kRsqrt;
    case BATON_OP_LOG: return UnaryOp::kLog;
    case BATON_OP_SQUARE: return UnaryOp::kSquare;
    case BATON_OP_SQRT: return UnaryOp::kSqrt;
    case BATON_OP_EXP: return UnaryOp::kExp;
    case BATON_OP_ABS: return UnaryOp::kAbs;
    case BATON_OP_SIN: return UnaryOp::kSin;
    case BATON_OP_COS: return UnaryOp::kCos;
    case BATON_OP_ELU: return UnaryOp::kElu;
    case BATON_OP_FLOOR: return UnaryOp::kFloor;
    case BATON_OP_CEIL: return UnaryOp::kCeil;
    case BATON_OP_ROUND: return UnaryOp::kRound;
    default: return UnaryOp::kNeg;
  }
}

bool is_8bit(const OpContext& ctx, const baton_tensor* t) {
  return ctx.type(t) == BATON_TYPE_UINT8 || ctx.type(t) == BATON_TYPE_INT8;
}

float tanh_value(float x) { return std::tanh(x); }
// TFLite's ELU table computes exp(x) - 1, not expm1(x); the codes can differ.
float elu_value(float x) { return x < 0.0f ? std::exp(x) - 1.0f : x; }

void quantized_relu_prepare(OpContext& ctx);
void int16_relu_prepare(OpContext& ctx);

void same_shape_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const int32_t code = ctx.op_code();
  const bool relu = code == BATON_OP_RELU || code == BATON_OP_RELU6 || code == BATON_OP_RELU_N1_TO_1;
  if (relu && is_8bit(ctx, input)) return quantized_relu_prepare(ctx);
  if ((code == BATON_OP_RELU || code == BATON_OP_RELU6) && ctx.type(input) == BATON_TYPE_INT16) return int16_relu_prepare(ctx);
  if (code == BATON_OP_HARD_SWISH && is_8bit(ctx, input)) return quantized_hard_swish_prepare(ctx);
  if (code == BATON_OP_HARD_SWISH) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  if (code == BATON_OP_ABS && (ctx.type(input) == BATON_TYPE_INT8 || ctx.type(input) == BATON_TYPE_INT16)) {
    return quantized_abs_prepare(ctx);
  }
  if (code == BATON_OP_ABS) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8, BATON_TYPE_INT16});
  if (code == BATON_OP_RSQRT && ctx.type(input) == BATON_TYPE_INT8) return quantized_rsqrt_prepare(ctx);
  if (code == BATON_OP_RSQRT) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8});
  if (code == BATON_OP_RELU_N1_TO_1) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  if (relu) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16});
  const bool table_8bit = code == BATON_OP_LOGISTIC || code == BATON_OP_TANH;
  if (table_8bit && ctx.type(input) == BATON_TYPE_INT16) return sigmoid_16_prepare(ctx, code == BATON_OP_TANH);
  if (is_8bit(ctx, input) && (table_8bit || (code == BATON_OP_ELU && ctx.type(input) == BATON_TYPE_INT8))) {
    ctx.set_output_shape(ctx.output(0), ctx.shape(input));
    if (code == BATON_OP_LOGISTIC) return quantized_logistic_prepare(ctx);
    return quantized_table_prepare(ctx, code == BATON_OP_TANH ? tanh_value : elu_value);
  }
  if (table_8bit) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  if (code == BATON_OP_ELU) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8});
  ctx.require_float(input, "input");
  ctx.require_float(ctx.output(0), "output");  // the kernel writes floats
  ctx.set_output_shape(ctx.output(0), ctx.shape(input));
}

bool gelu_approximate_option(const OpContext& ctx) {
  ctx.require_host_abi_minor(2, "GELU's approximate");
  return ctx.options().u.gelu.approximate != 0;
}

void gelu_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const bool approximate = gelu_approximate_option(ctx);
  if (is_8bit(ctx, input)) {
    ctx.set_output_shape(ctx.output(0), ctx.shape(input));
    return quantized_table_prepare(ctx, approximate ? gelu_approximate : gelu);
  }
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  ctx.require_float(ctx.output(0), "output");
  ctx.set_output_shape(ctx.output(0), ctx.shape(input));
}

// `op` over the input, in runs of whole 64-byte lines across the workers when each gets enough elements
// to outweigh the hand-over. Every element is computed alone, so the split never changes an output.
void unary_split(OpContext& ctx, UnaryOp op) {
  const float* in = ctx.data<float>(ctx.input(0));
  float* out = ctx.mutable_data<float>(ctx.output(0));
  parallel_ranges(ctx.parallel(), ctx.workers(), ctx.element_count(ctx.input(0)), 1, 1 << 13,
                  [&](int64_t begin, int64_t end) { unary(op, in + begin, out + begin, end - begin); }, 0, 16);
}

void gelu_invoke(OpContext& ctx) {
  unary_split(ctx, gelu_approximate_option(ctx) ? UnaryOp::kGeluApproximate : UnaryOp::kGelu);
}

void unary_invoke(OpContext& ctx) { unary_split(ctx, unary_op_of(ctx.op_code())); }

void softmax_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require(ctx.rank(input) >= 1, "input must have rank >= 1");
  if (is_8bit(ctx, input)) {
    ctx.set_output_shape(ctx.output(0), ctx.shape(input));
    return quantized_softmax_prepare(ctx);
  }
  if (ctx.type(input) == BATON_TYPE_INT16) return softmax_16_prepare(ctx);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  same_shape_prepare(ctx);
}

void softmax_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  const int64_t count = ctx.element_count(input);
  if (depth == 0) return;
  // Rows across the workers when each gets enough elements; a row's floats do not depend on the split.
  const float* in = ctx.data<float>(input);
  float* out = ctx.mutable_data<float>(ctx.output(0));
  const float beta = ctx.options().u.softmax.beta;
  parallel_ranges(ctx.parallel(), ctx.workers(), count / depth, depth, 1 << 13, [&](int64_t begin, int64_t end) {
    softmax(in + begin * depth, out + begin * depth, end - begin, depth, beta);
  });
}

void log_softmax_prepare(OpContext& ctx) {
  ctx.require(ctx.rank(ctx.input(0)) >= 1, "input must have rank >= 1");
  if (is_8bit(ctx, ctx.input(0))) return quantized_log_softmax_prepare(ctx);
  ctx.require_type(ctx.input(0), "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8});
  same_shape_prepare(ctx);
}

void log_softmax_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  log_softmax(ctx.data<float>(input), ctx.mutable_data<float>(ctx.output(0)), ctx.element_count(input) / depth, depth);
}

struct QL2NormState : OpState {
  QuantIsa isa = QuantIsa::kScalar;
  int32_t in_zero = 0;
  bool is_signed = false;
};

void quantized_l2_normalization_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QL2NormState>();
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  ql2_normalize(s.isa, s.is_signed, s.in_zero, ctx.data<uint8_t>(input), ctx.mutable_data<uint8_t>(ctx.output(0)),
                ctx.element_count(input) / depth, depth);
}

// 8-bit: the output must be scale 1/128 with zero point 128 (uint8) or 0 (int8), as TFLite requires.
void quantized_l2_normalization_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  ctx.require(ctx.type(output) == ctx.type(input), "output type differs from the input's");
  const ActQuant qi = ctx.act_quant(input, "input"), qo = ctx.act_quant(output, "output");
  ctx.require(qo.scale == 1.0f / 128 && qo.zero_point == (qo.is_signed ? 0 : 128),
              "output scale " + std::to_string(qo.scale) + " and zero point " + std::to_string(qo.zero_point) +
                  " not supported (1/128 and " + (qo.is_signed ? "0" : "128") + ", as TFLite requires)");
  auto& s = ctx.state<QL2NormState>();
  s.isa = best_quant_isa();
  s.in_zero = qi.zero_point;
  s.is_signed = qi.is_signed;
  ctx.set_output_shape(output, ctx.shape(input));
  ctx.set_invoke(quantized_l2_normalization_invoke);
}

// The fused activation must be NONE, as TFLite 2.9 refuses any other.
void l2_normalization_prepare(OpContext& ctx) {
  ctx.require(ctx.rank(ctx.input(0)) >= 1, "input must have rank >= 1");
  const int32_t act = ctx.options().kind != 0 ? ctx.options().u.elementwise.activation : BATON_ACT_NONE;
  if (act != BATON_ACT_NONE) ctx.fail(BATON_UNSUPPORTED, "fused activation " + std::to_string(act) + " not supported (NONE only, as in TFLite)");
  if (is_8bit(ctx, ctx.input(0))) return quantized_l2_normalization_prepare(ctx);
  ctx.require_type(ctx.input(0), "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  same_shape_prepare(ctx);
}

void l2_normalization_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  l2_normalize(ctx.data<float>(input), ctx.mutable_data<float>(ctx.output(0)), ctx.element_count(input) / depth, depth);
}

// Float only, as in TFLite; needs the ABI 1.2 options.
void local_response_normalization_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(2, "LOCAL_RESPONSE_NORMALIZATION's radius, bias, alpha and beta");
  ctx.require_rank(ctx.input(0), "input", 4);
  ctx.require(ctx.options().u.lrn.radius >= 0, "radius " + std::to_string(ctx.options().u.lrn.radius) + " is negative");
  same_shape_prepare(ctx);
}

void local_response_normalization_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const auto& o = ctx.options().u.lrn;
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  local_response_normalize(ctx.data<float>(input), ctx.mutable_data<float>(ctx.output(0)),
                           ctx.element_count(input) / depth, depth, o.radius, o.bias, o.alpha, o.beta);
}

// 8-bit LEAKY_RELU as TFLite computes it: the code minus the input zero point, times the fixed-point
// multiplier of in_scale / out_scale (non-negative side) or in_scale * alpha / out_scale (negative side),
// both formed in float like TFLite's Prepare, plus the output zero point, clamped to the type. 8-bit
// RELU, RELU6 and RELU_N1_TO_1 are the same with in_scale / out_scale on both sides, clamped to the
// activation's codes (zero point + round(bound / out_scale), within the type).
struct QLeakyReluState : OpState {
  int32_t in_zero = 0, out_zero = 0;
  QuantizedMultiplier identity, alpha;
  CodeRange range;
  bool is_signed = false;
  uint8_t table[256] = {};  // 8-bit: the output code of every input code (finish_8bit)
};

template <typename T>
void qleaky_relu(const QLeakyReluState& s, const T* in, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = static_cast<int32_t>(in[i]) - s.in_zero;
    const int32_t scaled = multiply_by_quantized_multiplier(v, v >= 0 ? s.identity : s.alpha);
    out[i] = static_cast<T>(std::clamp(s.out_zero + scaled, s.range.lo, s.range.hi));
  }
}

void int16_leaky_relu_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  qleaky_relu(ctx.state<QLeakyReluState>(), ctx.data<int16_t>(input), ctx.mutable_data<int16_t>(ctx.output(0)),
              ctx.element_count(input));
}

void quantized_8bit_table_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  apply_table(ctx.state<QLeakyReluState>().table, ctx.data<uint8_t>(input), ctx.mutable_data<uint8_t>(ctx.output(0)),
              ctx.element_count(input));
}

// An 8-bit output depends on its input code alone: the rule runs once here on the 256 codes, and invoke
// looks each code up (the same bytes).
void finish_8bit(OpContext& ctx, QLeakyReluState& s) {
  uint8_t codes[256];
  for (int i = 0; i < 256; ++i) codes[i] = static_cast<uint8_t>(i);
  if (s.is_signed) {
    qleaky_relu(s, reinterpret_cast<const int8_t*>(codes), reinterpret_cast<int8_t*>(s.table), 256);
  } else {
    qleaky_relu(s, codes, s.table, 256);
  }
  ctx.set_invoke(quantized_8bit_table_invoke);
}

// The multiplier and ranges both 8-bit paths share; returns the state for the caller to finish
// (finish_8bit).
QLeakyReluState& prepare_rescale(OpContext& ctx, ActQuant* out_quant) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  ctx.require(ctx.type(output) == ctx.type(input), "output type differs from the input's");
  const ActQuant qi = ctx.act_quant(input, "input"), qo = ctx.act_quant(output, "output");
  auto& s = ctx.state<QLeakyReluState>();
  s.in_zero = qi.zero_point;
  s.out_zero = qo.zero_point;
  s.identity = quantize_multiplier(qi.scale / qo.scale);
  s.range = code_range(qi.is_signed);
  s.is_signed = qi.is_signed;
  ctx.set_output_shape(output, ctx.shape(input));
  *out_quant = qo;
  return s;
}

void quantized_relu_prepare(OpContext& ctx) {
  ActQuant qo;
  auto& s = prepare_rescale(ctx, &qo);
  s.alpha = s.identity;
  const int32_t code = ctx.op_code();
  s.range = ctx.quantized_activation(code == BATON_OP_RELU    ? BATON_ACT_RELU
                                     : code == BATON_OP_RELU6 ? BATON_ACT_RELU6
                                                          : BATON_ACT_RELU_N1_TO_1,
                                     qo);
  finish_8bit(ctx, s);
}

// int16 (16x8): the 8-bit rule with zero points 0, clamped to int16. Returns the state with the
// identity multiplier set, for LEAKY_RELU, RELU and RELU6 to finish; scales[] gets the input's and the
// output's scale.
QLeakyReluState& int16_rescale_prepare(OpContext& ctx, float scales[2]) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  ctx.require_type(output, "output", {BATON_TYPE_INT16});
  for (int k = 0; k < 2; ++k) {
    const baton_tensor* t = k == 0 ? input : output;
    const TensorQuant q = ctx.quant(t);
    const std::string who = std::string(k == 0 ? "input" : "output") + " (" + ctx.tensor_label(t) + ")";
    ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()), who + " needs one positive scale");
    ctx.require(q.zero_point() == 0, who + " has zero point " + std::to_string(q.zero_point()) + " (int16 is symmetric)");
    scales[k] = q.scale();
  }
  auto& s = ctx.state<QLeakyReluState>();
  s.in_zero = s.out_zero = 0;
  s.identity = quantize_multiplier(scales[0] / scales[1]);
  s.alpha = s.identity;
  s.range = {-32768, 32767};
  ctx.set_output_shape(output, ctx.shape(input));
  ctx.set_invoke(int16_leaky_relu_invoke);
  return s;
}

void int16_leaky_relu_prepare(OpContext& ctx) {
  float scales[2];
  auto& s = int16_rescale_prepare(ctx, scales);
  const float alpha = ctx.options().u.leaky_relu.alpha;
  ctx.require(alpha >= 0.0f && std::isfinite(alpha), "alpha " + std::to_string(alpha) + " not supported for int16 (must be >= 0)");
  s.alpha = quantize_multiplier(scales[0] * alpha / scales[1]);
}

// int16 RELU and RELU6 (TFLite 2.9 has no int16 RELU_N1_TO_1): clamped below at code 0 and, for RELU6,
// above at round(6 / output scale), as TFLite's QuantizedReluX forms it.
void int16_relu_prepare(OpContext& ctx) {
  float scales[2];
  auto& s = int16_rescale_prepare(ctx, scales);
  s.range.lo = 0;
  if (ctx.op_code() == BATON_OP_RELU6) s.range.hi = std::min(32767, static_cast<int32_t>(std::round(6.0f / scales[1])));
}

void leaky_relu_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  if (ctx.type(input) == BATON_TYPE_INT16) return int16_leaky_relu_prepare(ctx);
  if (!is_8bit(ctx, input)) return same_shape_prepare(ctx);
  const float alpha = ctx.options().u.leaky_relu.alpha;
  ctx.require(alpha >= 0.0f && std::isfinite(alpha), "alpha " + std::to_string(alpha) + " not supported for 8-bit (must be >= 0)");
  ActQuant qo;
  auto& s = prepare_rescale(ctx, &qo);
  const float in_scale = ctx.act_quant(input, "input").scale;
  s.alpha = quantize_multiplier(in_scale * alpha / qo.scale);
  finish_8bit(ctx, s);
}

void leaky_relu_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const float alpha = ctx.options().u.leaky_relu.alpha;
  const float* x = ctx.data<float>(input);
  float* y = ctx.mutable_data<float>(ctx.output(0));
  const int64_t n = ctx.element_count(input);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : x[i] * alpha;
}

constexpr OpDef kOps[] = {
    {BATON_OP_RELU, "RELU", 1, 3, same_shape_prepare, unary_invoke},
    {BATON_OP_RELU6, "RELU6", 1, 3, same_shape_prepare, unary_invoke},
    {BATON_OP_RELU_N1_TO_1, "RELU_N1_TO_1", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_LOGISTIC, "LOGISTIC", 1, 3, same_shape_prepare, unary_invoke},
    {BATON_OP_TANH, "TANH", 1, 3, same_shape_prepare, unary_invoke},
    {BATON_OP_HARD_SWISH, "HARD_SWISH", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_RSQRT, "RSQRT", 1, 3, same_shape_prepare, unary_invoke},
    {BATON_OP_LOG, "LOG", 1, 2, same_shape_prepare, unary_invoke},
    {BATON_OP_SQUARE, "SQUARE", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_SQRT, "SQRT", 1, 2, same_shape_prepare, unary_invoke},
    {BATON_OP_EXP, "EXP", 1, 2, same_shape_prepare, unary_invoke},
    {BATON_OP_ABS, "ABS", 1, 5, same_shape_prepare, unary_invoke},
    {BATON_OP_NEG, "NEG", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_SOFTMAX, "SOFTMAX", 1, 4, softmax_prepare, softmax_invoke},
    {BATON_OP_SIN, "SIN", 1, 2, same_shape_prepare, unary_invoke},
    {BATON_OP_COS, "COS", 1, 2, same_shape_prepare, unary_invoke},
    {BATON_OP_ELU, "ELU", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_FLOOR, "FLOOR", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_CEIL, "CEIL", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_ROUND, "ROUND", 1, 1, same_shape_prepare, unary_invoke},
    {BATON_OP_LOG_SOFTMAX, "LOG_SOFTMAX", 1, 2, log_softmax_prepare, log_softmax_invoke},
    {BATON_OP_LEAKY_RELU, "LEAKY_RELU", 1, 2, leaky_relu_prepare, leaky_relu_invoke},
    {BATON_OP_L2_NORMALIZATION, "L2_NORMALIZATION", 1, 2, l2_normalization_prepare, l2_normalization_invoke},
    {BATON_OP_GELU, "GELU", 1, 3, gelu_prepare, gelu_invoke},
    {BATON_OP_LOCAL_RESPONSE_NORMALIZATION, "LOCAL_RESPONSE_NORMALIZATION", 1, 1, local_response_normalization_prepare,
     local_response_normalization_invoke},
};

}  // namespace

std::span<const OpDef> unary_ops() { return kOps; }

}  // namespace baton::builtin
