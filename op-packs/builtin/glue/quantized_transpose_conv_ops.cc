// uint8, int8 (per-tensor or per-channel weights) and 16x8 TRANSPOSE_CONV: TFLite 2.9's Prepare checks
// and per-channel multipliers (input scale * filter scale / output scale, in double); the float prepare
// (glue/conv_ops.cc) has computed the geometry and set the output shape. An 8-bit node with a constant
// filter runs as an 8-bit matrix product (qtranspose_conv_gemm, the filter packed here); the others
// scatter code by code.
#include <cmath>
#include <string>
#include <vector>

#include "glue/quantized_ops.h"
#include "glue/scratch_buffer.h"
#include "kernels/qtranspose_conv.h"

namespace baton::builtin {
namespace {

struct QTransposeConvState : OpState {
  QTransposeConvParams p;
  std::vector<int64_t> scratch;
  QTransposeGemm gemm;        // the product's form: a constant 8-bit filter, packed
  NodeScratch gemm_scratch;   // its products and sums, in the host's arena where it gives it
};

void quantized_transpose_conv_gemm_invoke(OpContext& ctx) {
  auto& s = ctx.state<QTransposeConvState>();
  qtranspose_conv_gemm(s.p, s.gemm, ctx.data<uint8_t>(ctx.input(2)), ctx.mutable_data<uint8_t>(ctx.output(0)),
                       s.gemm_scratch.data(ctx), ctx.parallel());
}

void quantized_transpose_conv_invoke(OpContext& ctx) {
  auto& s = ctx.state<QTransposeConvState>();
  baton_tensor* bias = ctx.optional_input(3);
  qtranspose_conv(s.p, ctx.data<void>(ctx.input(2)), ctx.data<void>(ctx.input(1)), bias ? ctx.data<void>(bias) : nullptr,
                  ctx.mutable_data<void>(ctx.output(0)), s.scratch.data());
}

// Scale and zero point of a per-tensor activation of any of the three types.
std::pair<float, int32_t> activation_quant(const OpContext& ctx, const baton_tensor* t, const char* role) {
  if (ctx.type(t) != BATON_TYPE_INT16) {
    const ActQuant q = ctx.act_quant(t, role);
    return {q.scale, q.zero_point};
  }
  const TensorQuant q = ctx.quant(t);
  const std::string who = std::string(role) + " (" + ctx.tensor_label(t) + ")";
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()), who + " needs one positive scale");
  ctx.require(q.zero_point() == 0, who + " has zero point " + std::to_string(q.zero_point()) + " (int16 is symmetric)");
  return {q.scale(), 0};
}

}  // namespace

void quantized_transpose_conv_prepare(OpContext& ctx, const TransposeConvParams& float_geometry) {
  // A copy: the float prepare's state, which holds the original, is replaced below.
  const TransposeConvParams geometry = float_geometry;
  baton_tensor* filter = ctx.input(1);
  baton_tensor* input = ctx.input(2);
  baton_tensor* output = ctx.output(0);
  const baton_tensor_type in_type = ctx.type(input);
  ctx.require_type(output, "output", {in_type});
  ctx.require_type(filter, "filter", {in_type == BATON_TYPE_UINT8 ? BATON_TYPE_UINT8 : BATON_TYPE_INT8});
  auto& s = ctx.state<QTransposeConvState>();
  QTransposeConvParams& p = s.p;
  p.geo = geometry;
  p.type = in_type == BATON_TYPE_UINT8 ? QTransposeType::kUint8
           : in_type == BATON_TYPE_INT8 ? QTransposeType::kInt8
                                        : QTransposeType::kInt16;
  const auto [in_scale, in_zero] = activation_quant(ctx, input, "input");
  const auto [out_scale, out_zero] = activation_quant(ctx, output, "output");
  p.in_zero = in_zero;
  p.out_zero = out_zero;
  p.lo = in_type == BATON_TYPE_UINT8 ? 0 : in_type == BATON_TYPE_INT8 ? -128 : -32768;
  p.hi = in_type == BATON_TYPE_UINT8 ? 255 : in_type == BATON_TYPE_INT8 ? 127 : 32767;
  const int channels = geometry.out_c;
  // Checked against the filter's shape and the bias before anything is sized by the channel count.
  const ChannelQuant fq = ctx.channel_quant(filter, "filter", 0, in_type != BATON_TYPE_UINT8);
  const std::string who = "filter (" + ctx.tensor_label(filter) + ")";
  p.filter_zero = static_cast<int32_t>(fq.zero_point(0));
  if (in_type != BATON_TYPE_UINT8) {
    for (int64_t z : fq.zero_points) {
      ctx.require(z == 0, who + " has zero point " + std::to_string(z) + " (int8 weights are symmetric)");
    }
  }
  if (baton_tensor* bias = ctx.optional_input(3)) {
    if (in_type == BATON_TYPE_INT16) {
      ctx.require_type(bias, "bias", {BATON_TYPE_INT64, BATON_TYPE_INT32});
      if (ctx.type(bias) == BATON_TYPE_INT32) p.type = QTransposeType::kInt16Bias32;
    } else {
      ctx.require_type(bias, "bias", {BATON_TYPE_INT32});
    }
    ctx.require(ctx.element_count(bias) == channels, "bias (" + ctx.tensor_label(bias) + ") has " +
                                                         std::to_string(ctx.element_count(bias)) + " elements for " +
                                                         std::to_string(channels) + " channels");
  }
  p.mults.clear();
  for (int c = 0; c < channels; ++c) {
    p.mults.push_back(quantize_multiplier(static_cast<double>(in_scale) * static_cast<double>(fq.scale(c)) /
                                          static_cast<double>(out_scale)));
  }
  if (in_type != BATON_TYPE_INT16 && ctx.is_constant(filter) &&
      transpose_conv_products_bytes(geometry, sizeof(int32_t)) <= kTransposeProductsLimit) {
    baton_tensor* bias = ctx.optional_input(3);
    if (bias && !ctx.is_constant(bias)) bias = nullptr;
    if (bias || !ctx.optional_input(3)) {
      qtranspose_gemm_prepare(p, ctx.data<uint8_t>(filter), bias ? ctx.data<int32_t>(bias) : nullptr, s.gemm);
      s.gemm_scratch.prepare(ctx, qtranspose_gemm_scratch(p, s.gemm, ctx.workers()));
      s.scratch = {};
      ctx.release_constant(filter);  // invoke reads the packed copy
      ctx.set_invoke(quantized_transpose_conv_gemm_invoke);
      return;
    }
  }
  s.scratch.assign(static_cast<size_t>(geometry.batch) * geometry.out_h * geometry.out_w * channels, 0);
  ctx.set_invoke(quantized_transpose_conv_invoke);
}

}  // namespace baton::builtin
