// CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV: options and tensors into kernel parameters (a computed
// TRANSPOSE_CONV output_shape makes the output dynamic: prepared again at invoke with the values). A constant
// CONV_2D filter is packed for the GEMM once, in prepare; a computed one (e.g. a DEQUANTIZE output) is
// packed at each invoke into a buffer sized in prepare. 8-bit and int8-weight convolutions are
// prepared by glue/quantized_conv_ops.cc from the same geometry.
#include <vector>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "glue/scratch_buffer.h"
#include "kernels/conv.h"
#include "kernels/depthwise_conv.h"
#include "kernels/transpose_conv.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct ConvState : OpState {
  ConvParams params;
  std::vector<float> packed_filter;
  const void* packed_from = nullptr;  // the constant filter data packed_filter holds, if any
  NodeScratch scratch;
};

void check_window(const OpContext& ctx, int stride_h, int stride_w, int dilation_h, int dilation_w) {
  ctx.require(stride_h > 0 && stride_w > 0, "strides must be positive, are " + std::to_string(stride_h) + "x" +
                                                std::to_string(stride_w));
  ctx.require(dilation_h > 0 && dilation_w > 0, "dilations must be positive, are " + std::to_string(dilation_h) +
                                                    "x" + std::to_string(dilation_w));
}

void check_bias(const OpContext& ctx, int index, int channels) {
  baton_tensor* bias = ctx.optional_input(index);
  if (!bias) return;
  ctx.require_float(bias, "bias");
  ctx.require(ctx.element_count(bias) == channels, "bias has " + std::to_string(ctx.element_count(bias)) +
                                                       " elements, the output has " + std::to_string(channels) +
                                                       " channels");
}

// TFLite refuses only a negative output size; an empty one is an empty output.
void require_output_size(const OpContext& ctx, int out_h, int out_w) {
  ctx.require(out_h >= 0 && out_w >= 0, "the filter does not fit the input with VALID padding (output " +
                                            std::to_string(out_h) + " x " + std::to_string(out_w) + ")");
}

}  // namespace

ConvParams conv_geometry(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* filter = ctx.input(1);
  ctx.require_rank(input, "input", 4);
  ctx.require_rank(filter, "filter", 4);
  const auto& o = ctx.options().u.conv;
  check_window(ctx, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w);
  const auto in = ctx.shape(input);
  const auto f = ctx.shape(filter);
  ConvParams p;
  p.batch = in[0];
  p.in_h = in[1];
  p.in_w = in[2];
  p.in_c = in[3];
  p.out_c = f[0];
  p.filter_h = f[1];
  p.filter_w = f[2];
  if (f[3] != p.in_c) {
    ctx.fail(BATON_UNSUPPORTED, "filter depth " + std::to_string(f[3]) + " differs from input depth " +
                                    std::to_string(p.in_c) + " (grouped convolution is not supported)");
  }
  p.stride_h = o.stride_h;
  p.stride_w = o.stride_w;
  p.dilation_h = o.dilation_h;
  p.dilation_w = o.dilation_w;
  conv_compute_geometry(ctx.padding(o.padding), p);
  require_output_size(ctx, p.out_h, p.out_w);
  return p;
}

namespace {

void float_conv_prepare(OpContext& ctx) {
  baton_tensor* filter = ctx.input(1);
  auto& s = ctx.state<ConvState>();
  ConvParams& p = s.params;
  p = conv_geometry(ctx);
  p.range = ctx.activation(ctx.options().u.conv.activation);
  ctx.require_float(ctx.output(0), "output");
  check_bias(ctx, 2, p.out_c);
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_h, p.out_w, p.out_c});

  s.packed_filter.resize(conv_packed_filter_size(p));
  if (ctx.is_constant(filter)) {
    const void* data = ctx.data<float>(filter);
    if (s.packed_from != data) {
      conv_pack_filter(p, ctx.data<float>(filter), s.packed_filter.data());
      s.packed_from = data;
      ctx.release_constant(filter);  // invoke reads the packed copy
    }
  } else {
    s.packed_from = nullptr;
  }
  s.scratch.prepare(ctx, sizeof(float) * conv_scratch_size(p, ctx.workers()));
}

// The types pick the kernel: float, 8-bit (input uint8/int8) or int8 weights with float activations.
void conv_prepare_by_type(OpContext& ctx) {
  const baton_tensor_type in = ctx.type(ctx.input(0)), f = ctx.type(ctx.input(1));
  if (in == BATON_TYPE_UINT8 || in == BATON_TYPE_INT8) return quantized_conv_prepare(ctx);
  if (in == BATON_TYPE_INT16) return conv_16x8_prepare(ctx);
  if (in == BATON_TYPE_FLOAT32 && (f == BATON_TYPE_INT8 || f == BATON_TYPE_UINT8 || f == BATON_TYPE_INT4)) {
    return hybrid_conv_prepare(ctx);
  }
  ctx.require_type(ctx.input(0), "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  ctx.require_type(ctx.input(1), "filter", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8, BATON_TYPE_UINT8});
  float_conv_prepare(ctx);
}

void conv_prepare(OpContext& ctx) {
  conv_prepare_by_type(ctx);
  ctx.skip_invoke_if_empty();
}

void conv_invoke(OpContext& ctx) {
  auto& s = ctx.state<ConvState>();
  baton_tensor* filter = ctx.input(1);
  if (!s.packed_from) conv_pack_filter(s.params, ctx.data<float>(filter), s.packed_filter.data());
  baton_tensor* bias = ctx.optional_input(2);
  conv2d(s.params, ctx.data<float>(ctx.input(0)), s.packed_filter.data(), bias ? ctx.data<float>(bias) : nullptr,
         ctx.mutable_data<float>(ctx.output(0)), s.scratch.as<float>(ctx), ctx.parallel());
}

struct DepthwiseState : OpState {
  DepthwiseParams params;
};

}  // namespace

DepthwiseParams depthwise_geometry(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* filter = ctx.input(1);
  ctx.require_rank(input, "input", 4);
  ctx.require_rank(filter, "filter", 4);
  const auto& o = ctx.options().u.conv;
  check_window(ctx, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w);
  const auto in = ctx.shape(input);
  const auto f = ctx.shape(filter);
  DepthwiseParams p;
  p.batch = in[0];
  p.in_h = in[1];
  p.in_w = in[2];
  p.in_c = in[3];
  p.filter_h = f[1];
  p.filter_w = f[2];
  const int out_c = f[3];
  ctx.require(f[0] == 1, "filter dimension 0 must be 1, is " + std::to_string(f[0]));
  ctx.require(p.in_c > 0 && out_c % p.in_c == 0, "filter channels " + std::to_string(out_c) +
                                                     " are not a multiple of input channels " + std::to_string(p.in_c));
  // The multiplier follows from the shapes, as in TFLite; the option must agree when it is set.
  p.depth_multiplier = out_c / p.in_c;
  ctx.require(o.depth_multiplier <= 0 || o.depth_multiplier == p.depth_multiplier,
              "depth_multiplier " + std::to_string(o.depth_multiplier) + " disagrees with the shapes (" +
                  std::to_string(out_c) + " / " + std::to_string(p.in_c) + ")");
  p.stride_h = o.stride_h;
  p.stride_w = o.stride_w;
  p.dilation_h = o.dilation_h;
  p.dilation_w = o.dilation_w;
  depthwise_compute_geometry(ctx.padding(o.padding), p);
  require_output_size(ctx, p.out_h, p.out_w);
  return p;
}

namespace {

void depthwise_prepare_by_type(OpContext& ctx) {
  const baton_tensor_type in = ctx.type(ctx.input(0));
  if (in == BATON_TYPE_UINT8 || in == BATON_TYPE_INT8) return quantized_depthwise_prepare(ctx);
  if (in == BATON_TYPE_INT16) return depthwise_16x8_prepare(ctx);
  ctx.require_type(ctx.input(0), "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  if (ctx.type(ctx.input(1)) == BATON_TYPE_INT8) return hybrid_depthwise_prepare(ctx);
  if (ctx.type(ctx.input(1)) == BATON_TYPE_INT4) {
    ctx.fail(BATON_UNSUPPORTED, "an INT4 filter with float input (dynamic-range DEPTHWISE_CONV_2D) is not supported: "
                                "LiteRT 2.5 refuses it too (\"Type FLOAT32 with filter type INT4 not currently supported\")");
  }
  ctx.require_float(ctx.input(1), "filter");
  DepthwiseParams& p = ctx.state<DepthwiseState>().params;
  p = depthwise_geometry(ctx);
  p.range = ctx.activation(ctx.options().u.conv.activation);
  ctx.require_float(ctx.output(0), "output");
  const int out_c = p.in_c * p.depth_multiplier;
  check_bias(ctx, 2, out_c);
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_h, p.out_w, out_c});
}

void depthwise_prepare(OpContext& ctx) {
  depthwise_prepare_by_type(ctx);
  ctx.skip_invoke_if_empty();
}

void depthwise_invoke(OpContext& ctx) {
  const auto& p = ctx.state<DepthwiseState>().params;
  baton_tensor* bias = ctx.optional_input(2);
  depthwise_conv2d(p, ctx.data<float>(ctx.input(0)), ctx.data<float>(ctx.input(1)),
                   bias ? ctx.data<float>(bias) : nullptr, ctx.mutable_data<float>(ctx.output(0)), ctx.parallel());
}

struct TransposeConvState : OpState {
  TransposeConvParams params;
  TransposeConvGemm gemm;  // the product form's packed filter (a constant filter)
  NodeScratch scratch;     // its products
};

void transpose_conv_invoke(OpContext& ctx) {
  const auto& p = ctx.state<TransposeConvState>().params;
  baton_tensor* bias = ctx.optional_input(3);
  transpose_conv2d(p, ctx.data<float>(ctx.input(2)), ctx.data<float>(ctx.input(1)),
                   bias ? ctx.data<float>(bias) : nullptr, ctx.mutable_data<float>(ctx.output(0)));
}

void transpose_conv_gemm_invoke(OpContext& ctx) {
  auto& s = ctx.state<TransposeConvState>();
  baton_tensor* bias = ctx.optional_input(3);
  transpose_conv2d_gemm(s.params, s.gemm, ctx.data<float>(ctx.input(2)), bias ? ctx.data<float>(bias) : nullptr,
                        ctx.mutable_data<float>(ctx.output(0)), s.scratch.as<float>(ctx), ctx.parallel());
}

void transpose_conv_prepare(OpContext& ctx) {
  baton_tensor* output_shape = ctx.input(0);
  baton_tensor* filter = ctx.input(1);
  baton_tensor* input = ctx.input(2);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16});
  const bool quantized = ctx.type(input) != BATON_TYPE_FLOAT32;
  if (!quantized) ctx.require_float(filter, "filter");
  ctx.require_rank(input, "input", 4);
  ctx.require_rank(filter, "filter", 4);
  const auto out_shape_value = ctx.shape_ints(output_shape, "output_shape (input 0)");
  if (!out_shape_value) return;  // computed: prepared again at invoke with the values
  const std::vector<int64_t>& out_shape = *out_shape_value;
  ctx.require(out_shape.size() == 4, "output_shape must have 4 values, has " + std::to_string(out_shape.size()));
  const auto& o = ctx.options().u.transpose_conv;
  check_window(ctx, o.stride_h, o.stride_w, 1, 1);
  const auto in = ctx.shape(input);
  const auto f = ctx.shape(filter);
  TransposeConvParams& p = ctx.state<TransposeConvState>().params;
  p.batch = in[0];
  p.in_h = in[1];
  p.in_w = in[2];
  p.in_c = in[3];
  p.out_c = f[0];
  p.filter_h = f[1];
  p.filter_w = f[2];
  ctx.require(f[3] == p.in_c, "filter depth " + std::to_string(f[3]) + " differs from input depth " +
                                  std::to_string(p.in_c));
  ctx.require(out_shape[0] == p.batch && out_shape[3] == p.out_c,
              "output_shape batch/channels disagree with the input batch and the filter's output channels");
  ctx.require(out_shape[1] > 0 && out_shape[2] > 0, "output_shape has a non-positive size");
  p.out_h = static_cast<int>(out_shape[1]);
  p.out_w = static_cast<int>(out_shape[2]);
  p.stride_h = o.stride_h;
  p.stride_w = o.stride_w;
  p.range = ctx.activation(o.activation);
  transpose_conv_compute_padding(ctx.padding(o.padding), p);
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_h, p.out_w, p.out_c});
  if (quantized) {
    ctx.require(o.activation == BATON_ACT_NONE, "a fused activation on a quantized TRANSPOSE_CONV is not supported");
    return quantized_transpose_conv_prepare(ctx, p);
  }
  check_bias(ctx, 3, p.out_c);
  // A constant filter: one matrix product per image (kernels/transpose_conv.h), unless its products
  // would take too much memory.
  auto& s = ctx.state<TransposeConvState>();
  if (ctx.is_constant(filter) && transpose_conv_products_bytes(p, sizeof(float)) <= kTransposeProductsLimit) {
    transpose_conv_gemm_prepare(p, ctx.data<float>(filter), s.gemm);
    s.scratch.prepare(ctx, sizeof(float) * transpose_conv_gemm_scratch_floats(p, s.gemm, ctx.workers()));
    ctx.release_constant(filter);  // invoke reads the packed copy
    ctx.set_invoke(transpose_conv_gemm_invoke);
  } else {
    ctx.set_invoke(transpose_conv_invoke);
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_CONV_2D, "CONV_2D", 1, 8, conv_prepare, conv_invoke},
    {BATON_OP_DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", 1, 7, depthwise_prepare, depthwise_invoke},
    {BATON_OP_TRANSPOSE_CONV, "TRANSPOSE_CONV", 1, 5, transpose_conv_prepare, transpose_conv_invoke},
};

}  // namespace

std::span<const OpDef> conv_ops() { return kOps; }

}  // namespace baton::builtin
