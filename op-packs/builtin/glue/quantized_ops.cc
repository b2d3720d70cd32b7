// 8-bit ADD, SUB, MUL, AVERAGE_POOL_2D, MAX_POOL_2D, LOGISTIC, SOFTMAX and a rescaling CONCATENATION:
// the parameter checks TFLite makes in Prepare, and the precomputed multipliers and tables.
#include <cmath>
#include <vector>

#include "glue/quantized_ops.h"
#include "kernels/qelementwise.h"
#include "kernels/qlookup.h"
#include "kernels/qpool.h"
#include "kernels/quantize.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

void require_same_type(const OpContext& ctx, const baton_tensor* a, const baton_tensor* b, const char* role) {
  ctx.require(ctx.type(a) == ctx.type(b), std::string(role) + " type " + type_name(ctx.type(b)) +
                                              " differs from the input's " + type_name(ctx.type(a)));
}

// ---- ADD / SUB / MUL ----

struct QBinaryState : OpState {
  QBinaryParams q;
  BroadcastPlan plan;
  QuantIsa isa = QuantIsa::kScalar;
};

void quantized_binary_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QBinaryState>();
  qbinary(s.isa, s.q, s.plan, ctx.data<uint8_t>(ctx.input(0)), ctx.data<uint8_t>(ctx.input(1)),
          ctx.mutable_data<uint8_t>(ctx.output(0)), ctx.parallel());
}

// ---- pools ----

struct QPoolState : OpState {
  QPoolParams q;
};

void quantized_average_pool_invoke(OpContext& ctx) {
  qaverage_pool(ctx.state<QPoolState>().q, ctx.data<uint8_t>(ctx.input(0)), ctx.mutable_data<uint8_t>(ctx.output(0)));
}

void quantized_max_pool_invoke(OpContext& ctx) {
  qmax_pool(ctx.state<QPoolState>().q, ctx.data<uint8_t>(ctx.input(0)), ctx.mutable_data<uint8_t>(ctx.output(0)));
}

// ---- LOGISTIC / SOFTMAX ----

struct TableState : OpState {
  uint8_t table[256] = {};
};

void table_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  apply_table(ctx.state<TableState>().table, ctx.data<uint8_t>(input), ctx.mutable_data<uint8_t>(ctx.output(0)),
              ctx.element_count(input));
}

struct QSoftmaxState : OpState {
  float table[256] = {};
  bool is_signed = false;
  float out_scale = 1.0f;
  int32_t out_zero = 0;
};

void quantized_softmax_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QSoftmaxState>();
  baton_tensor* input = ctx.input(0);
  const int64_t depth = ctx.shape(input).back();
  if (depth == 0) return;
  qsoftmax(s.is_signed, s.table, s.out_scale, s.out_zero, ctx.data<uint8_t>(input),
           ctx.mutable_data<uint8_t>(ctx.output(0)), ctx.element_count(input) / depth, depth, ctx.parallel());
}

// The fixed output parameters of TFLite's 8-bit LOGISTIC and SOFTMAX: scale 1/256 and the type's lowest
// code as zero point, so [0, 1) spans every code.
void require_unit_output(const OpContext& ctx, const ActQuant& out) {
  const int32_t zero = out.is_signed ? -128 : 0;
  ctx.require(std::abs(out.scale - 1.0f / 256) <= 0.001f / 256 && out.zero_point == zero,
              std::string("output must have scale 1/256 and zero point ") + std::to_string(zero) + ", has " +
                  std::to_string(out.scale) + " and " + std::to_string(out.zero_point));
}

// ---- CONCATENATION ----

struct QConcatState : OpState {
  int64_t outer = 1;
  std::vector<int64_t> chunks;
  std::vector<ConcatScaling> scaling;
  std::vector<const uint8_t*> inputs;  // filled at invoke; sized here
};

void quantized_concat_invoke(OpContext& ctx) {
  auto& s = ctx.state<QConcatState>();
  for (size_t i = 0; i < s.inputs.size(); ++i) s.inputs[i] = ctx.data<uint8_t>(ctx.input(static_cast<int>(i)));
  qconcat(s.outer, s.chunks.data(), s.inputs.data(), s.scaling.data(), static_cast<int>(s.inputs.size()),
          ctx.mutable_data<uint8_t>(ctx.output(0)));
}

}  // namespace

void quantized_binary_prepare(OpContext& ctx, const BroadcastPlan& plan) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  baton_tensor* out = ctx.output(0);
  require_same_type(ctx, a, b, "second input");
  require_same_type(ctx, a, out, "output");
  const ActQuant qa = ctx.act_quant(a, "input");
  const ActQuant qb = ctx.act_quant(b, "second input");
  const ActQuant qo = ctx.act_quant(out, "output");
  auto& s = ctx.state<QBinaryState>();
  s.plan = plan;
  s.isa = best_quant_isa();
  QBinaryParams& q = s.q;
  q = QBinaryParams{};
  q.op = ctx.op_code() == BATON_OP_MUL ? QBinaryOp::kMul : ctx.op_code() == BATON_OP_SUB ? QBinaryOp::kSub : QBinaryOp::kAdd;
  q.is_signed = qa.is_signed;
  q.a_zero = qa.zero_point;
  q.b_zero = qb.zero_point;
  q.out_zero = qo.zero_point;
  const CodeRange range = ctx.quantized_activation(ctx.options().u.elementwise.activation, qo);
  q.lo = range.lo;
  q.hi = range.hi;
  ctx.require(qbinary_prepare(q, qa.scale, qb.scale, qo.scale),
              "the input scales " + std::to_string(qa.scale) + " and " + std::to_string(qb.scale) +
                  " cannot be rescaled to the output scale " + std::to_string(qo.scale));
  ctx.set_invoke(quantized_binary_invoke);
}

void quantized_pool_prepare(OpContext& ctx, const PoolParams& geometry) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input");
  const ActQuant qo = ctx.act_quant(output, "output");
  ctx.require(qi.scale == qo.scale && qi.zero_point == qo.zero_point,
              "input and output quantization differ (scale " + std::to_string(qi.scale) + " / " +
                  std::to_string(qo.scale) + ", zero point " + std::to_string(qi.zero_point) + " / " +
                  std::to_string(qo.zero_point) + "); 8-bit pooling does not rescale");
  auto& s = ctx.state<QPoolState>();
  s.q.geo = geometry;
  s.q.is_signed = qi.is_signed;
  const CodeRange range = ctx.quantized_activation(ctx.options().u.pool.activation, qo);
  s.q.lo = range.lo;
  s.q.hi = range.hi;
  ctx.set_invoke(ctx.op_code() == BATON_OP_MAX_POOL_2D ? quantized_max_pool_invoke : quantized_average_pool_invoke);
}

void quantized_table_prepare(OpContext& ctx, float (*f)(float)) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input");
  const ActQuant qo = ctx.act_quant(output, "output");
  lookup_table(qi.is_signed, qi.scale, qi.zero_point, qo.scale, qo.zero_point, f, ctx.state<TableState>().table);
  ctx.set_invoke(table_invoke);
}

void quantized_logistic_prepare(OpContext& ctx) {
  require_unit_output(ctx, ctx.act_quant(ctx.output(0), "output"));
  quantized_table_prepare(ctx, sigmoid);
}

void quantized_softmax_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  require_same_type(ctx, input, output, "output");
  const ActQuant qi = ctx.act_quant(input, "input");
  const ActQuant qo = ctx.act_quant(output, "output");
  require_unit_output(ctx, qo);
  const float beta = ctx.options().u.softmax.beta;
  // A negative beta would make the table's exponentials overflow.
  ctx.require(beta > 0.0f && std::isfinite(beta), "beta must be positive and finite, is " + std::to_string(beta));
  auto& s = ctx.state<QSoftmaxState>();
  softmax_table(qi.scale, beta, s.table);
  s.is_signed = qi.is_signed;
  s.out_scale = qo.scale;
  s.out_zero = qo.zero_point;
  ctx.set_invoke(quantized_softmax_invoke);
}

void quantized_concat_prepare(OpContext& ctx, int64_t outer, std::vector<int64_t> chunks) {
  baton_tensor* output = ctx.output(0);
  const ActQuant qo = ctx.act_quant(output, "output");
  auto& s = ctx.state<QConcatState>();
  s.outer = outer;
  s.chunks = std::move(chunks);
  s.scaling.clear();
  for (int i = 0; i < ctx.input_count(); ++i) {
    baton_tensor* t = ctx.input(i);
    const std::string role = "input " + std::to_string(i);
    const ActQuant qi = ctx.act_quant(t, role.c_str());
    const ConcatScaling scaling = concat_scaling(qi.scale, qi.zero_point, qo.scale, qo.zero_point);
    // TFLite rescales uint8 inputs only; int8 inputs must already share the output's parameters.
    if (!scaling.copy && qi.is_signed) {
      ctx.fail(BATON_UNSUPPORTED, role + " (" + ctx.tensor_label(t) + ") has scale " + std::to_string(qi.scale) +
                                      " and zero point " + std::to_string(qi.zero_point) + ", the output " +
                                      std::to_string(qo.scale) + " and " + std::to_string(qo.zero_point) +
                                      "; int8 concatenation does not rescale");
    }
    s.scaling.push_back(scaling);
  }
  s.inputs.assign(ctx.input_count(), nullptr);
  ctx.set_invoke(quantized_concat_invoke);
}

}  // namespace baton::builtin
