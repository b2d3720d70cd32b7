// CONV_3D and CONV_3D_TRANSPOSE (float32, the only type TFLite 2.9 runs them in): options (ABI 1.3) and
// tensors into kernels/conv3d.cc's parameters. CONV_3D_TRANSPOSE's output shape is its input 0:
// constant, or read at invoke (the output is dynamic, prepared again with the values).
#include <string>

#include "glue/op_context.h"
#include "kernels/conv3d.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct Conv3dState : OpState {
  Conv3dParams params;
};

// Strides, dilations and the fused activation, common to both ops.
void read_window(OpContext& ctx, Conv3dParams& p) {
  ctx.require_host_abi_minor(3, "the 3-D convolution options");
  const auto& o = ctx.options().u.conv3d;
  ctx.require(o.stride_d > 0 && o.stride_h > 0 && o.stride_w > 0, "strides must be positive, are " +
                  std::to_string(o.stride_d) + "x" + std::to_string(o.stride_h) + "x" + std::to_string(o.stride_w));
  ctx.require(o.dilation_d > 0 && o.dilation_h > 0 && o.dilation_w > 0, "dilations must be positive, are " +
                  std::to_string(o.dilation_d) + "x" + std::to_string(o.dilation_h) + "x" + std::to_string(o.dilation_w));
  p.stride_d = o.stride_d;
  p.stride_h = o.stride_h;
  p.stride_w = o.stride_w;
  p.dilation_d = o.dilation_d;
  p.dilation_h = o.dilation_h;
  p.dilation_w = o.dilation_w;
  p.range = ctx.activation(o.activation);
}

// The sizes of the input [n, d, h, w, c] and the filter [d, h, w, ...], whose output channels lie at
// `out_axis` (4 for CONV_3D, 3 for CONV_3D_TRANSPOSE) and input channels at the other of 3 and 4.
void read_sizes(OpContext& ctx, const baton_tensor* input, const baton_tensor* filter, int out_axis, Conv3dParams& p) {
  const auto in = ctx.shape(input);
  const auto f = ctx.shape(filter);
  p.batch = in[0];
  p.in_d = in[1];
  p.in_h = in[2];
  p.in_w = in[3];
  p.in_c = in[4];
  p.filter_d = f[0];
  p.filter_h = f[1];
  p.filter_w = f[2];
  p.out_c = f[out_axis];
  const int32_t filter_in = f[7 - out_axis];
  ctx.require(filter_in == p.in_c, "filter input channels " + std::to_string(filter_in) + " differ from the input's " +
                                       std::to_string(p.in_c));
}

void conv3d_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* filter = ctx.input(1);
  ctx.require_float(input, "input");
  ctx.require_float(filter, "filter");
  ctx.require_float(ctx.output(0), "output");
  ctx.require_rank(input, "input", 5);
  ctx.require_rank(filter, "filter", 5);
  auto& p = ctx.state<Conv3dState>().params;
  p = Conv3dParams{};
  read_window(ctx, p);
  read_sizes(ctx, input, filter, 4, p);
  if (baton_tensor* bias = ctx.optional_input(2)) {
    ctx.require_float(bias, "bias");
    ctx.require(ctx.element_count(bias) == p.out_c, "bias has " + std::to_string(ctx.element_count(bias)) +
                                                        " elements, the output " + std::to_string(p.out_c) + " channels");
  }
  conv3d_compute_geometry(ctx.padding(ctx.options().u.conv3d.padding), p);
  // TFLite refuses only a negative output size; an empty one is an empty output.
  ctx.require(p.out_d >= 0 && p.out_h >= 0 && p.out_w >= 0,
              "the filter does not fit the input with VALID padding (output " + std::to_string(p.out_d) + " x " +
                  std::to_string(p.out_h) + " x " + std::to_string(p.out_w) + ")");
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_d, p.out_h, p.out_w, p.out_c});
  ctx.skip_invoke_if_empty();
}

void conv3d_invoke(OpContext& ctx) {
  baton_tensor* bias = ctx.optional_input(2);
  conv3d(ctx.state<Conv3dState>().params, ctx.data<float>(ctx.input(0)), ctx.data<float>(ctx.input(1)),
         bias ? ctx.data<float>(bias) : nullptr, ctx.mutable_data<float>(ctx.output(0)));
}

// Inputs: output_shape (int32 [5]), filter [d, h, w, out_c, in_c], input, optional bias.
void conv3d_transpose_prepare(OpContext& ctx) {
  baton_tensor* shape = ctx.input(0);
  baton_tensor* filter = ctx.input(1);
  baton_tensor* input = ctx.input(2);
  ctx.require_type(shape, "output_shape", {BATON_TYPE_INT32});
  ctx.require_float(input, "input");
  ctx.require_float(filter, "filter");
  ctx.require_float(ctx.output(0), "output");
  ctx.require_rank(input, "input", 5);
  ctx.require_rank(filter, "filter", 5);
  ctx.require(ctx.rank(shape) == 1 && ctx.element_count(shape) == 5, "output_shape must hold 5 values");
  auto& p = ctx.state<Conv3dState>().params;
  p = Conv3dParams{};
  read_window(ctx, p);
  read_sizes(ctx, input, filter, 3, p);
  if (baton_tensor* bias = ctx.optional_input(3)) {
    // TFLite 2.9 wants as many bias values as input channels and adds the first out_c; its dilated
    // (reference) kernel also steps through the output by in_c per voxel when adding them.
    ctx.require_float(bias, "bias");
    ctx.require(ctx.element_count(bias) == p.in_c, "bias has " + std::to_string(ctx.element_count(bias)) +
                                                       " elements; TFLite 2.9 wants one per input channel (" +
                                                       std::to_string(p.in_c) + ")");
    ctx.require(p.out_c <= p.in_c, "a bias with fewer values than output channels is not supported (TFLite 2.9 "
                                   "reads past its end)");
    const bool dilated = p.dilation_d > 1 || p.dilation_h > 1 || p.dilation_w > 1;
    ctx.require(!dilated || p.out_c == p.in_c, "a bias on a dilated CONV_3D_TRANSPOSE whose input and output "
                                               "channels differ is not supported (TFLite 2.9 writes past its output)");
  }
  const auto dims = ctx.shape_ints(shape, "output_shape (input 0)");
  if (!dims) return;
  const std::vector<int64_t>& d = *dims;
  for (int64_t v : d) ctx.require(v >= 0 && v <= INT32_MAX, "output dimension " + std::to_string(v) + " out of range");
  ctx.require(d[0] == p.batch, "output batch " + std::to_string(d[0]) + " differs from the input's " + std::to_string(p.batch));
  ctx.require(d[4] == p.out_c, "output channels " + std::to_string(d[4]) + " differ from the filter's " + std::to_string(p.out_c));
  p.out_d = static_cast<int>(d[1]);
  p.out_h = static_cast<int>(d[2]);
  p.out_w = static_cast<int>(d[3]);
  int want_d = 0, want_h = 0, want_w = 0;
  conv3d_transpose_compute_padding(ctx.padding(ctx.options().u.conv3d.padding), p, &want_d, &want_h, &want_w);
  ctx.require(want_d == p.in_d && want_h == p.in_h && want_w == p.in_w,
              "the input's size " + std::to_string(p.in_d) + "x" + std::to_string(p.in_h) + "x" + std::to_string(p.in_w) +
                  " is not what a convolution of the output shape gives (" + std::to_string(want_d) + "x" +
                  std::to_string(want_h) + "x" + std::to_string(want_w) + ")");
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_d, p.out_h, p.out_w, p.out_c});
}

void conv3d_transpose_invoke(OpContext& ctx) {
  baton_tensor* bias = ctx.optional_input(3);
  conv3d_transpose(ctx.state<Conv3dState>().params, ctx.data<float>(ctx.input(2)), ctx.data<float>(ctx.input(1)),
                   bias ? ctx.data<float>(bias) : nullptr, ctx.mutable_data<float>(ctx.output(0)));
}

constexpr OpDef kOps[] = {
    {BATON_OP_CONV_3D, "CONV_3D", 1, 1, conv3d_prepare, conv3d_invoke},
    {BATON_OP_CONV_3D_TRANSPOSE, "CONV_3D_TRANSPOSE", 1, 1, conv3d_transpose_prepare, conv3d_transpose_invoke},
};

}  // namespace

std::span<const OpDef> conv3d_ops() { return kOps; }

}  // namespace baton::builtin
