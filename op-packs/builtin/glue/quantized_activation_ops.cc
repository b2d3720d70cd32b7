// int8 / int16 ABS, int8 RSQRT, 8-bit HARD_SWISH, 8-bit LOG_SOFTMAX, 8-bit PRELU and int8 SQUARED_DIFFERENCE: the checks TFLite 2.9's
// Prepare makes and the multipliers it computes (kernels/qactivation.h has the arithmetic).
#include <array>
#include <cmath>
#include <utility>
#include <span>
#include <string>

#include "glue/quantized_ops.h"
#include "kernels/qactivation.h"
#include "kernels/qlog_softmax.h"
#include "kernels/qlookup.h"

namespace baton::builtin {
namespace {

void require_same_type(const OpContext& ctx, const baton_tensor* a, const baton_tensor* b, const char* role) {
  ctx.require(ctx.type(a) == ctx.type(b), std::string(role) + " type " + type_name(ctx.type(b)) +
                                              " differs from the input's " + type_name(ctx.type(a)));
}

// The output code of every input code, made once in prepare by TFLite's arithmetic (qhard_swish on the
// 256 codes): each output depends only on its input code, so the lookup gives the same bytes.
struct QHardSwishState : OpState {
  QHardSwishParams p;
  uint8_t table[256] = {};
};

void quantized_hard_swish_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  apply_table(ctx.state<QHardSwishState>().table, ctx.data<uint8_t>(input), ctx.mutable_data<uint8_t>(ctx.output(0)),
              ctx.element_count(input));
}

struct QLogSoftmaxState : OpState {
  float table[256] = {};
  float in_scale = 1.0f, out_scale = 1.0f;
  int32_t out_zero = 0;
};

void quantized_log_softmax_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QLogSoftmaxState>();
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  qlog_softmax_u8(s.table, s.in_scale, s.out_scale, s.out_zero, ctx.data<uint8_t>(input),
                  ctx.mutable_data<uint8_t>(ctx.output(0)), ctx.element_count(input) / depth, depth);
}

struct QLogSoftmaxInt8State : OpState {
  QLogSoftmaxParams p;
};

void quantized_log_softmax_i8_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  qlog_softmax_i8(ctx.state<QLogSoftmaxInt8State>().p, ctx.data<int8_t>(input), ctx.mutable_data<int8_t>(ctx.output(0)),
                  ctx.element_count(input) / depth, depth);
}

struct QAbsState : OpState {
  QAbsParams p;
};

void quantized_abs_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const auto& p = ctx.state<QAbsState>().p;
  if (ctx.type(input) == BATON_TYPE_INT16) {
    return qabs_i16(p, ctx.data<int16_t>(input), ctx.mutable_data<int16_t>(ctx.output(0)), ctx.element_count(input));
  }
  qabs_i8(p, ctx.data<int8_t>(input), ctx.mutable_data<int8_t>(ctx.output(0)), ctx.element_count(input));
}

// Scale and zero point of an int8 or int16 tensor (int16: zero point 0, as TFLite requires).
std::pair<float, int32_t> signed_quant(const OpContext& ctx, const baton_tensor* t, const char* role) {
  if (ctx.type(t) == BATON_TYPE_INT8) {
    const ActQuant q = ctx.act_quant(t, role);
    return {q.scale, q.zero_point};
  }
  const TensorQuant q = ctx.quant(t);
  const std::string who = std::string(role) + " (" + ctx.tensor_label(t) + ")";
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()), who + " needs one positive scale");
  ctx.require(q.zero_point() == 0, who + " has zero point " + std::to_string(q.zero_point()) + " (int16 is symmetric)");
  return {q.scale(), 0};
}

struct QRsqrtState : OpState {
  QRsqrtParams p;
};

void quantized_rsqrt_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require(qrsqrt_i8(ctx.state<QRsqrtState>().p, ctx.data<int8_t>(input), ctx.mutable_data<int8_t>(ctx.output(0)),
                        ctx.element_count(input)),
              "RSQRT of a negative value (a code below the input's zero point)");
}

struct QDivState : OpState {
  QDivParams p;
  IndexPlan plan;
};

void quantized_div_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QDivState>();
  ctx.require(qdiv_u8(s.p, s.plan, ctx.data<uint8_t>(ctx.input(0)), ctx.data<uint8_t>(ctx.input(1)),
                      ctx.mutable_data<uint8_t>(ctx.output(0))),
              "division by zero (a divisor code equals the second input's zero point)");
}

struct QPreluState : OpState {
  QPreluParams p;
  IndexPlan plan;
  std::vector<uint8_t> table;  // a constant alpha of at most kPreluTableAlphas elements: qprelu_table
};

// 1024 alphas make a 256 KiB table (a channel's slope each, for up to 1024 channels).
constexpr int64_t kPreluTableAlphas = 1024;

void quantized_prelu_table_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QPreluState>();
  qprelu_lookup(s.plan, s.table.data(), ctx.data<uint8_t>(ctx.input(0)), ctx.mutable_data<uint8_t>(ctx.output(0)));
}

void quantized_prelu_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QPreluState>();
  qprelu(s.p, s.plan, ctx.data<uint8_t>(ctx.input(0)), ctx.data<uint8_t>(ctx.input(1)),
         ctx.mutable_data<uint8_t>(ctx.output(0)));
}

struct QSquaredDifferenceState : OpState {
  QSquaredDifferenceParams p;
  IndexPlan plan;
};

void quantized_squared_difference_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QSquaredDifferenceState>();
  qsquared_difference_i8(s.p, s.plan, ctx.data<int8_t>(ctx.input(0)), ctx.data<int8_t>(ctx.input(1)),
                         ctx.mutable_data<int8_t>(ctx.output(0)));
}

IndexPlan plan_two(const OpContext& ctx, std::span<const int32_t> out) {
  const std::array<std::span<const int32_t>, 2> ins = {ctx.shape(ctx.input(0)), ctx.shape(ctx.input(1))};
  return plan_index(out, ins);
}

}  // namespace

void quantized_hard_swish_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input"), qo = ctx.act_quant(output, "output");
  auto& s = ctx.state<QHardSwishState>();
  s.p.is_signed = qi.is_signed;
  s.p.in_zero = qi.zero_point;
  s.p.out_zero = qo.zero_point;
  ctx.require(qhard_swish_prepare(s.p, qi.scale, qo.scale),
              "output scale " + std::to_string(qo.scale) + " is below the input scale / 128 (" +
                  std::to_string(qi.scale / 128) + "), which TFLite's kernel cannot rescale to");
  uint8_t codes[256];
  for (int c = 0; c < 256; ++c) codes[c] = static_cast<uint8_t>(c);
  qhard_swish(s.p, codes, s.table, 256);
  ctx.set_output_shape(output, ctx.shape(input));
  ctx.set_invoke(quantized_hard_swish_invoke);
}

void quantized_abs_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const auto [in_scale, in_zero] = signed_quant(ctx, input, "input");
  const auto [out_scale, out_zero] = signed_quant(ctx, output, "output");
  auto& p = ctx.state<QAbsState>().p;
  p.in_zero = in_zero;
  p.out_zero = out_zero;
  p.rescale = in_scale != out_scale;
  if (p.rescale) p.m = quantize_multiplier(in_scale / out_scale);
  ctx.set_output_shape(output, ctx.shape(input));
  ctx.set_invoke(quantized_abs_invoke);
}

void quantized_rsqrt_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input"), qo = ctx.act_quant(output, "output");
  auto& p = ctx.state<QRsqrtState>().p;
  p.in_zero = qi.zero_point;
  p.out_zero = qo.zero_point;
  p.m = quantize_multiplier(1.0 / (std::sqrt(qi.scale) * qo.scale));
  ctx.set_output_shape(output, ctx.shape(input));
  ctx.set_invoke(quantized_rsqrt_invoke);
}

void quantized_log_softmax_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input"), qo = ctx.act_quant(output, "output");
  const int32_t zero = qi.is_signed ? 127 : 255;
  ctx.require(qo.scale == 16.0f / 256 && qo.zero_point == zero,
              "output must have scale 16/256 and zero point " + std::to_string(zero) + " (as TFLite requires), has " +
                  std::to_string(qo.scale) + " and " + std::to_string(qo.zero_point));
  if (qi.is_signed) {
    ctx.require(qlog_softmax_prepare(ctx.state<QLogSoftmaxInt8State>().p, qi.scale),
                "input scale " + std::to_string(qi.scale) + " is too small for TFLite's int8 kernel");
    ctx.set_output_shape(output, ctx.shape(input));
    return ctx.set_invoke(quantized_log_softmax_i8_invoke);
  }
  auto& s = ctx.state<QLogSoftmaxState>();
  softmax_table(qi.scale, 1.0f, s.table);
  s.in_scale = qi.scale;
  s.out_scale = qo.scale;
  s.out_zero = qo.zero_point;
  ctx.set_output_shape(output, ctx.shape(input));
  ctx.set_invoke(quantized_log_softmax_invoke);
}

void quantized_prelu_prepare(OpContext& ctx, std::span<const int32_t> out_shape) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* alpha = ctx.input(1);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, alpha, "alpha");
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input"), qa = ctx.act_quant(alpha, "alpha"),
                 qo = ctx.act_quant(output, "output");
  auto& s = ctx.state<QPreluState>();
  s.p.is_signed = qi.is_signed;
  s.p.in_zero = qi.zero_point;
  s.p.alpha_zero = qa.zero_point;
  s.p.out_zero = qo.zero_point;
  // Formed in float, then widened, as TFLite's Prepare does.
  s.p.positive = quantize_multiplier(qi.scale / qo.scale);
  s.p.negative = quantize_multiplier(qi.scale * qa.scale / qo.scale);
  s.plan = plan_two(ctx, out_shape);
  const int64_t alphas = ctx.element_count(alpha);
  if (ctx.is_constant(alpha) && alphas <= kPreluTableAlphas) {
    s.table.assign(static_cast<size_t>(alphas) * 256, 0);
    qprelu_table(s.p, ctx.data<uint8_t>(alpha), alphas, s.table.data());
    ctx.set_invoke(quantized_prelu_table_invoke);
    return;
  }
  s.table = {};
  ctx.set_invoke(quantized_prelu_invoke);
}

void quantized_div_prepare(OpContext& ctx, std::span<const int32_t> out_shape) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  baton_tensor* output = ctx.output(0);
  ctx.require(ctx.type(a) == BATON_TYPE_UINT8, "int8 DIV is not supported (TFLite 2.9 has uint8 only)");
  require_same_type(ctx, a, b, "second input");
  require_same_type(ctx, a, output, "output");
  const ActQuant qa = ctx.act_quant(a, "input"), qb = ctx.act_quant(b, "second input"),
                 qo = ctx.act_quant(output, "output");
  auto& s = ctx.state<QDivState>();
  s.p.a_zero = qa.zero_point;
  s.p.b_zero = qb.zero_point;
  s.p.out_zero = qo.zero_point;
  s.p.m = quantize_multiplier(qa.scale / (qb.scale * qo.scale));
  const CodeRange range = ctx.quantized_activation(ctx.options().u.elementwise.activation, qo);
  s.p.lo = range.lo;
  s.p.hi = range.hi;
  s.plan = plan_two(ctx, out_shape);
  ctx.set_invoke(quantized_div_invoke);
}

void quantized_squared_difference_prepare(OpContext& ctx, std::span<const int32_t> out_shape) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  baton_tensor* output = ctx.output(0);
  ctx.require(ctx.type(a) == BATON_TYPE_INT8, "uint8 SQUARED_DIFFERENCE is not supported (TFLite 2.9 has int8 only)");
  require_same_type(ctx, a, b, "second input");
  require_same_type(ctx, a, output, "output");
  const ActQuant qa = ctx.act_quant(a, "input"), qb = ctx.act_quant(b, "second input"),
                 qo = ctx.act_quant(output, "output");
  auto& s = ctx.state<QSquaredDifferenceState>();
  s.p.a_zero = qa.zero_point;
  s.p.b_zero = qb.zero_point;
  s.p.out_zero = qo.zero_point;
  qsquared_difference_prepare(s.p, qa.scale, qb.scale, qo.scale);
  s.plan = plan_two(ctx, out_shape);
  ctx.set_invoke(quantized_squared_difference_invoke);
}

}  // namespace baton::builtin
