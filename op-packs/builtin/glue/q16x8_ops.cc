// TFLite's 16x8 quantization (int16 activations with zero point 0, int8 weights (or INT4 for CONV_2D and
// FULLY_CONNECTED, unpacked to int8 as LiteRT does), int64 or int32 bias): CONV_2D,
// DEPTHWISE_CONV_2D, FULLY_CONNECTED, int16 ADD, SUB and MUL, and int16 SOFTMAX, LOGISTIC and TANH. The float prepares hand a node here
// when its input is int16; the checks are TFLite 2.9's Prepare's, the arithmetic its reference kernels'
// (kernels/q16x8.h; ADD / SUB / MUL share the 8-bit rule of kernels/qelementwise.h with a 15-bit left
// shift for ADD and SUB).
#include <cmath>
#include <span>
#include <string>
#include <algorithm>
#include <vector>

#include "glue/quantized_ops.h"
#include "kernels/dequantize.h"
#include "kernels/q16_activation.h"
#include "kernels/q16x8.h"
#include "kernels/qelementwise.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {

// The scale of an int16 activation tensor: per tensor, positive, zero point 0 (TFLite's 16x8 rule).
float int16_scale(const OpContext& ctx, const baton_tensor* t, const char* role) {
  ctx.require_type(t, role, {BATON_TYPE_INT16});
  const TensorQuant q = ctx.quant(t);
  const std::string who = std::string(role) + " (" + ctx.tensor_label(t) + ")";
  ctx.require(q.count == 1, who + " needs one scale (int16 activations are quantized per tensor), has " +
                                std::to_string(q.count));
  ctx.require(q.scale() > 0.0f && std::isfinite(q.scale()), who + " has scale " + std::to_string(q.scale()));
  ctx.require(q.zero_point() == 0, who + " has zero point " + std::to_string(q.zero_point()) +
                                       " (int16 activations are symmetric: zero point 0)");
  return q.scale();
}

namespace {

// The int8 weights' scales, one per output channel (a per-tensor scale repeated); zero points 0. Checked
// (ChannelQuant) before the vector sized by `channels` is made; callers check the bias and set the output
// shape first.
std::vector<float> weight_scales(const OpContext& ctx, const baton_tensor* w, int channels, int channel_dim) {
  if (ctx.type(w) != BATON_TYPE_INT4) ctx.require_type(w, "filter", {BATON_TYPE_INT8});
  const ChannelQuant q = ctx.channel_quant(w, "filter", channel_dim, true);
  const std::string who = "filter (" + ctx.tensor_label(w) + ")";
  ctx.require(!q.per_channel() || static_cast<int64_t>(q.scales.size()) == channels,
              who + " has " + std::to_string(q.scales.size()) + " scales along dimension " +
                  std::to_string(q.dimension) + "; one, or one per output channel (" + std::to_string(channels) +
                  ") along dimension " + std::to_string(channel_dim) + ", is needed");
  for (int64_t z : q.zero_points) {
    ctx.require(z == 0, who + " has zero point " + std::to_string(z) + " (16x8 weights are symmetric)");
  }
  std::vector<float> scales(channels);
  for (int c = 0; c < channels; ++c) scales[c] = q.scale(c);
  return scales;
}

// The codes a fused activation leaves of an int16 output (TFLite's CalculateActivationRangeQuantized).
CodeRange int16_activation(const OpContext& ctx, int32_t fused, float scale) {
  CodeRange r{-32768, 32767};
  auto code = [&](float v) { return quantize_value(v, scale, 0); };
  switch (fused) {
    case BATON_ACT_NONE: break;
    case BATON_ACT_RELU: r.lo = 0; break;
    case BATON_ACT_RELU6: r.lo = 0; r.hi = std::min(r.hi, code(6.0f)); break;
    case BATON_ACT_RELU_N1_TO_1: r.lo = std::max(r.lo, code(-1.0f)); r.hi = std::min(r.hi, code(1.0f)); break;
    default: ctx.fail(BATON_UNSUPPORTED, "fused activation " + std::to_string(fused) + " not supported on int16");
  }
  return r;
}

struct Q16WeightsState : OpState {
  ConvParams conv;
  DepthwiseParams depthwise;
  int batch = 1, units = 1, depth = 1;
  std::vector<QuantizedMultiplier> mults;
  CodeRange range;
  std::vector<int16_t> patch;  // CONV_2D: one output pixel's window
  std::vector<int64_t> wide_bias;  // an int32 bias, widened at invoke (sized here)
  bool int32_bias_accumulates = false;  // CONV_2D with an int32 bias: TFLite's int32 accumulator
  std::vector<int8_t> unpacked;  // INT4 weights as int8 codes (empty for int8 weights)
};

// INT4 weights (two codes a byte, the first in the low nibble): LiteRT's 16x8 kernels unpack the constant
// codes to int8 and run the int8 arithmetic; so does this, once, here.
void unpack_int4_weights(OpContext& ctx, Q16WeightsState& s) {
  baton_tensor* w = ctx.input(1);
  s.unpacked.clear();
  if (ctx.type(w) != BATON_TYPE_INT4) return;
  const uint8_t* packed = ctx.constant_data<uint8_t>(w, "filter");
  const int64_t n = ctx.element_count(w);
  s.unpacked.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s.unpacked[i] = static_cast<int8_t>(int4_code(packed, i));
}

const int8_t* weights_data(const OpContext& ctx, const Q16WeightsState& s) {
  return s.unpacked.empty() ? ctx.data<int8_t>(ctx.input(1)) : s.unpacked.data();
}

// Prepare's check of the optional bias (input 2): one value per output channel, int64, or int32 where
// TFLite 2.9's kernel takes that too (CONV_2D and FULLY_CONNECTED, not DEPTHWISE_CONV_2D).
void check_bias(const OpContext& ctx, Q16WeightsState& s, int channels, bool allow_int32) {
  s.wide_bias.clear();
  baton_tensor* bias = ctx.optional_input(2);
  if (!bias) return;
  if (allow_int32) ctx.require_type(bias, "bias", {BATON_TYPE_INT64, BATON_TYPE_INT32});
  else ctx.require_type(bias, "bias", {BATON_TYPE_INT64});
  ctx.require(ctx.element_count(bias) == channels, "bias has " + std::to_string(ctx.element_count(bias)) +
                                                       " elements for " + std::to_string(channels) + " output channels");
  if (ctx.type(bias) == BATON_TYPE_INT32) s.wide_bias.assign(channels, 0);
}

// Invoke's: the bias prepare checked (widened to int64), or null.
const int64_t* bias_data(const OpContext& ctx, Q16WeightsState& s) {
  const baton_tensor* bias = ctx.optional_input(2);
  if (!bias) return nullptr;
  if (s.wide_bias.empty()) return ctx.data<int64_t>(bias);
  const int32_t* narrow = ctx.data<int32_t>(bias);
  std::copy(narrow, narrow + s.wide_bias.size(), s.wide_bias.begin());
  return s.wide_bias.data();
}

// Multipliers in_scale * filter_scale / out_scale, in double as TFLite forms them; the clamp.
void prepare_output(OpContext& ctx, Q16WeightsState& s, const std::vector<float>& filter_scales, int32_t fused) {
  const double in_scale = int16_scale(ctx, ctx.input(0), "input");
  const float out_scale = int16_scale(ctx, ctx.output(0), "output");
  s.mults.clear();
  for (float f : filter_scales) {
    const QuantizedMultiplier m = quantize_multiplier(in_scale * static_cast<double>(f) / static_cast<double>(out_scale));
    ctx.require(m.shift >= -31 && m.shift < 8, "the scales give a multiplier out of TFLite's range");
    s.mults.push_back(m);
  }
  s.range = int16_activation(ctx, fused, out_scale);
}

Q16Output output_of(const Q16WeightsState& s) {
  return {s.mults.data(), s.range.lo, s.range.hi, s.int32_bias_accumulates};
}

void conv_16x8_invoke(OpContext& ctx) {
  auto& s = ctx.state<Q16WeightsState>();
  conv_16x8(s.conv, ctx.data<int16_t>(ctx.input(0)), weights_data(ctx, s), bias_data(ctx, s),
            output_of(s), s.patch.data(), ctx.mutable_data<int16_t>(ctx.output(0)));
}

void depthwise_16x8_invoke(OpContext& ctx) {
  auto& s = ctx.state<Q16WeightsState>();
  depthwise_16x8(s.depthwise, ctx.data<int16_t>(ctx.input(0)), weights_data(ctx, s), bias_data(ctx, s),
                 output_of(s), ctx.mutable_data<int16_t>(ctx.output(0)));
}

void fully_connected_16x8_invoke(OpContext& ctx) {
  auto& s = ctx.state<Q16WeightsState>();
  fully_connected_16x8(s.batch, s.units, s.depth, ctx.data<int16_t>(ctx.input(0)), weights_data(ctx, s),
                       bias_data(ctx, s), output_of(s), ctx.mutable_data<int16_t>(ctx.output(0)));
}

struct Q16BinaryState : OpState {
  QBinaryParams q;
  BroadcastPlan plan;
  QuantIsa isa = QuantIsa::kScalar;
};

void binary_16_invoke(OpContext& ctx) {
  const auto& s = ctx.state<Q16BinaryState>();
  qbinary16(s.isa, s.q, s.plan, ctx.data<int16_t>(ctx.input(0)), ctx.data<int16_t>(ctx.input(1)),
            ctx.mutable_data<int16_t>(ctx.output(0)));
}

struct Q16SoftmaxState : OpState {
  Q16SoftmaxParams p;
  std::vector<int16_t> exps;  // one row's, sized at prepare (grown at invoke only for a dynamic input)
};

void softmax_16_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  auto& s = ctx.state<Q16SoftmaxState>();
  if (s.exps.size() < static_cast<size_t>(depth)) s.exps.resize(static_cast<size_t>(depth));
  q16_softmax(s.p, ctx.data<int16_t>(input), ctx.mutable_data<int16_t>(ctx.output(0)), ctx.element_count(input) / depth,
              depth, s.exps.data());
}

struct Q16SigmoidState : OpState {
  Q16SigmoidParams p;
};

void logistic_16_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  q16_logistic(ctx.state<Q16SigmoidState>().p, ctx.data<int16_t>(input), ctx.mutable_data<int16_t>(ctx.output(0)),
               ctx.element_count(input));
}

void tanh_16_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  q16_tanh(ctx.state<Q16SigmoidState>().p, ctx.data<int16_t>(input), ctx.mutable_data<int16_t>(ctx.output(0)),
           ctx.element_count(input));
}

// The output TFLite's int16 SOFTMAX, LOGISTIC and TANH write: scale 1/32768 (zero point 0, checked).
void require_unit_output_16(const OpContext& ctx) {
  const float scale = int16_scale(ctx, ctx.output(0), "output");
  ctx.require(std::abs(scale - 1.0f / 32768) <= 0.001f / 32768,
              "output scale " + std::to_string(scale) + " is not 1/32768, which TFLite's int16 kernel writes");
}

struct Q16PoolState : OpState {
  PoolParams p;
  CodeRange range;
};

void pool_16_invoke(OpContext& ctx) {
  const auto& s = ctx.state<Q16PoolState>();
  (ctx.op_code() == BATON_OP_MAX_POOL_2D ? max_pool_16 : average_pool_16)(
      s.p, s.range.lo, s.range.hi, ctx.data<int16_t>(ctx.input(0)), ctx.mutable_data<int16_t>(ctx.output(0)));
}

}  // namespace

// The codes are pooled as they are (TFLite does not rescale them); the clamp is the output's.
void pool_16_prepare(OpContext& ctx, const PoolParams& geometry) {
  int16_scale(ctx, ctx.input(0), "input");
  const float out_scale = int16_scale(ctx, ctx.output(0), "output");
  auto& s = ctx.state<Q16PoolState>();
  s.p = geometry;
  s.range = int16_activation(ctx, ctx.options().u.pool.activation, out_scale);
  ctx.set_invoke(pool_16_invoke);
}

void softmax_16_prepare(OpContext& ctx) {
  const float in_scale = int16_scale(ctx, ctx.input(0), "input");
  require_unit_output_16(ctx);
  const float beta = ctx.options().u.softmax.beta;
  ctx.require(beta > 0.0f && std::isfinite(beta), "beta must be positive and finite, is " + std::to_string(beta));
  auto& s = ctx.state<Q16SoftmaxState>();
  q16_softmax_prepare(s.p, in_scale, beta);
  const auto shape = ctx.shape(ctx.input(0));
  s.exps.resize(shape.empty() ? 1 : static_cast<size_t>(std::max<int32_t>(shape.back(), 1)));
  ctx.set_output_shape(ctx.output(0), shape);
  ctx.set_invoke(softmax_16_invoke);
}

void sigmoid_16_prepare(OpContext& ctx, bool tanh) {
  const float in_scale = int16_scale(ctx, ctx.input(0), "input");
  require_unit_output_16(ctx);
  q16_sigmoid_prepare(ctx.state<Q16SigmoidState>().p, in_scale, tanh);
  ctx.set_output_shape(ctx.output(0), ctx.shape(ctx.input(0)));
  ctx.set_invoke(tanh ? tanh_16_invoke : logistic_16_invoke);
}

void conv_16x8_prepare(OpContext& ctx) {
  auto& s = ctx.state<Q16WeightsState>();
  s.conv = conv_geometry(ctx);
  // INT4 (LiteRT's) besides; the message names int8, TFLite 2.9's.
  if (ctx.type(ctx.input(1)) != BATON_TYPE_INT4) ctx.require_type(ctx.input(1), "filter", {BATON_TYPE_INT8});
  ctx.channel_quant(ctx.input(1), "filter", 0, true);
  check_bias(ctx, s, s.conv.out_c, true);
  s.int32_bias_accumulates = !s.wide_bias.empty();
  ctx.set_output_shape(ctx.output(0), {s.conv.batch, s.conv.out_h, s.conv.out_w, s.conv.out_c});
  s.patch.assign(conv_16x8_patch_size(s.conv), 0);
  const std::vector<float> scales = weight_scales(ctx, ctx.input(1), s.conv.out_c, 0);
  prepare_output(ctx, s, scales, ctx.options().u.conv.activation);
  unpack_int4_weights(ctx, s);
  ctx.set_invoke(conv_16x8_invoke);
}

void depthwise_16x8_prepare(OpContext& ctx) {
  auto& s = ctx.state<Q16WeightsState>();
  s.depthwise = depthwise_geometry(ctx);
  const int out_c = s.depthwise.in_c * s.depthwise.depth_multiplier;
  if (ctx.type(ctx.input(1)) == BATON_TYPE_INT4) {
    ctx.fail(BATON_UNSUPPORTED, "an INT4 filter with int16 input (16x8 DEPTHWISE_CONV_2D) is not supported: LiteRT 2.5 "
                                "runs it reading the packed bytes as int8 codes (past the filter's end), no result "
                                "to match");
  }
  ctx.require_type(ctx.input(1), "filter", {BATON_TYPE_INT8});
  ctx.channel_quant(ctx.input(1), "filter", 3, true);
  check_bias(ctx, s, out_c, false);
  ctx.set_output_shape(ctx.output(0), {s.depthwise.batch, s.depthwise.out_h, s.depthwise.out_w, out_c});
  const std::vector<float> scales = weight_scales(ctx, ctx.input(1), out_c, 3);
  prepare_output(ctx, s, scales, ctx.options().u.conv.activation);
  s.unpacked.clear();
  ctx.set_invoke(depthwise_16x8_invoke);
}

void fully_connected_16x8_prepare(OpContext& ctx, int units, int depth, int batch) {
  auto& s = ctx.state<Q16WeightsState>();
  s.units = units;
  s.depth = depth;
  s.batch = batch;
  const TensorQuant wq = ctx.quant(ctx.input(1));
  ctx.require(wq.count <= 1, "per-channel weights are not supported by TFLite 2.9's FULLY_CONNECTED");
  const std::vector<float> scales = weight_scales(ctx, ctx.input(1), 1, 0);
  check_bias(ctx, s, units, true);
  prepare_output(ctx, s, std::vector<float>(units, scales[0]), ctx.options().u.fully_connected.activation);
  unpack_int4_weights(ctx, s);
  ctx.set_invoke(fully_connected_16x8_invoke);
}

void binary_16_prepare(OpContext& ctx, const BroadcastPlan& plan) {
  const int32_t code = ctx.op_code();
  const float a = int16_scale(ctx, ctx.input(0), "input");
  const float b = int16_scale(ctx, ctx.input(1), "second input");
  const float o = int16_scale(ctx, ctx.output(0), "output");
  const auto& opts = ctx.options().u.elementwise;
  // TFLite's power-of-two int16 ADD / SUB (pot_scale_int16, the schema's default) is another kernel:
  // taken only when every scale is a power of two; models from the converter turn it off.
  if (code != BATON_OP_MUL && opts.pot_scale_int16) {
    auto pot = [](float s) { int e = 0; return std::frexp(s, &e) == 0.5f; };
    ctx.require(!(pot(a) && pot(b) && pot(o)),
                "int16 ADD / SUB with pot_scale_int16 and power-of-two scales (TFLite's older int16 kernel) is not "
                "supported");
  }
  auto& s = ctx.state<Q16BinaryState>();
  s.q = QBinaryParams{};
  s.q.op = code == BATON_OP_MUL ? QBinaryOp::kMul : code == BATON_OP_SUB ? QBinaryOp::kSub : QBinaryOp::kAdd;
  ctx.require(qbinary_prepare(s.q, a, b, o), "the input scales cannot be rescaled to the output scale");
  if (s.q.op != QBinaryOp::kMul) {
    // 15 bits of headroom instead of 20: (65535 << 15) still fits an int32.
    s.q.left_shift = 15;
    const double twice_max = 2.0 * static_cast<double>(std::max(a, b));
    s.q.out_mult = quantize_multiplier(twice_max / ((1 << s.q.left_shift) * static_cast<double>(o)));
  }
  const CodeRange r = int16_activation(ctx, opts.activation, o);
  s.q.lo = r.lo;
  s.q.hi = r.hi;
  s.plan = plan;
  s.isa = best_quant_isa();
  ctx.set_invoke(binary_16_invoke);
}

}  // namespace baton::builtin
