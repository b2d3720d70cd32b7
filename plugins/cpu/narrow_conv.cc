#include "narrow_conv.h"

#include <algorithm>
#include <string>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"

namespace baton::cpu {

using kit::refuse;

NarrowConvSpec NarrowConvSpec::read(const baton_host_api* api, const baton_node* conv) {
  NarrowConvSpec s;
  const ConvTensors c = conv_tensors(api, conv);
  const baton_tensor* filter = c.filter;
  const std::vector<int32_t>&in_shape = c.in_shape, &f_shape = c.filter_shape, &out_shape = c.out_shape;
  if (f_shape.size() != 4 || f_shape[0] < 1 || f_shape[0] > kMaxOutChannels) {
    refuse("convolution with more than " + std::to_string(kMaxOutChannels) + " output channels");
  }
  if (f_shape[1] < 1 || f_shape[2] < 1 || f_shape[1] > kMaxWindow || f_shape[2] > kMaxWindow) {
    refuse("convolution window larger than " + std::to_string(kMaxWindow) + "x" + std::to_string(kMaxWindow));
  }
  s.out_channels = f_shape[0];
  s.kernel_h = f_shape[1];
  s.kernel_w = f_shape[2];
  s.channels = in_shape[3];
  if (s.channels < 1 || f_shape[3] != s.channels) refuse("convolution filter depth differs from the input's channels");
  if (static_cast<int64_t>(out_shape[1]) * out_shape[2] < kMinOutputPixels) {
    refuse("convolution output smaller than " + std::to_string(kMinOutputPixels) + " pixels");
  }
  const baton_conv_options& o = api->node_builtin_options(conv)->u.conv;
  if (o.dilation_h != 1 || o.dilation_w != 1) refuse("dilated convolution");
  if (o.stride_h < 1 || o.stride_w < 1) refuse("convolution stride below 1");
  if (o.padding != BATON_PADDING_SAME && o.padding != BATON_PADDING_VALID) refuse("unknown convolution padding");
  s.stride_h = o.stride_h;
  s.stride_w = o.stride_w;
  s.same_padding = o.padding == BATON_PADDING_SAME;
  s.clamp = activation_clamp(o.activation, "convolution");
  s.weights = constant_floats(api, filter, f_shape, "convolution filter");
  if (api->node_input_count(conv) > 2 && api->node_input(conv, 2)) {
    s.bias = constant_floats(api, api->node_input(conv, 2), {s.out_channels}, "convolution bias");
  }
  return s;
}

NarrowConvSpec NarrowConvSpec::read_transpose_bias(const baton_host_api* api, const baton_node* conv) {
  NarrowConvSpec s;
  s.transposed = true;
  if (api->node_input_count(conv) != 3 || api->node_output_count(conv) != 1) {
    refuse("Convolution2DTransposeBias without input, weights and bias, or with other than one output");
  }
  const baton_tensor* in = api->node_input(conv, 0);
  const baton_tensor* filter = api->node_input(conv, 1);
  const baton_tensor* bias = api->node_input(conv, 2);
  const baton_tensor* out = api->node_output(conv, 0);
  if (!in || !filter || !bias || !out) refuse("Convolution2DTransposeBias without input, weights, bias or output");
  expect_float(api, in, "transposed convolution input");
  expect_float(api, out, "transposed convolution output");
  const std::vector<int32_t> in_shape = shape_of(api, in), f_shape = shape_of(api, filter),
                             out_shape = shape_of(api, out);
  if (in_shape.size() != 4 || out_shape.size() != 4) refuse("transposed convolution of other than rank 4 (NHWC only)");
  if (f_shape.size() != 4 || f_shape[0] < 1 || f_shape[0] > kMaxOutChannels) {
    refuse("transposed convolution with more than " + std::to_string(kMaxOutChannels) + " output channels");
  }
  if (f_shape[1] < 1 || f_shape[2] < 1 || f_shape[1] > kMaxWindow || f_shape[2] > kMaxWindow) {
    refuse("transposed convolution window larger than " + std::to_string(kMaxWindow) + "x" + std::to_string(kMaxWindow));
  }
  s.out_channels = f_shape[0];
  s.kernel_h = f_shape[1];
  s.kernel_w = f_shape[2];
  s.channels = in_shape[3];
  if (s.channels < 1 || f_shape[3] != s.channels) refuse("transposed convolution weights' depth differs from the input's channels");
  if (static_cast<int64_t>(out_shape[1]) * out_shape[2] < kMinOutputPixels) {
    refuse("transposed convolution output smaller than " + std::to_string(kMinOutputPixels) + " pixels");
  }
  size_t size = 0;
  const uint8_t* o = api->node_custom_options(conv, &size);
  if (!o || size < 12) refuse("Convolution2DTransposeBias options shorter than 12 bytes");
  auto le32 = [&](size_t at) {
    return static_cast<int32_t>(static_cast<uint32_t>(o[at]) | static_cast<uint32_t>(o[at + 1]) << 8 |
                                static_cast<uint32_t>(o[at + 2]) << 16 | static_cast<uint32_t>(o[at + 3]) << 24);
  };
  const int32_t padding = le32(0);
  s.stride_w = le32(4);
  s.stride_h = le32(8);
  if (padding != 1 && padding != 2) refuse("Convolution2DTransposeBias padding other than SAME (1) or VALID (2)");
  if (s.stride_h < 1 || s.stride_w < 1 || s.stride_h > kMaxWindow || s.stride_w > kMaxWindow) {
    refuse("transposed convolution stride out of 1.." + std::to_string(kMaxWindow));
  }
  s.same_padding = padding == 1;
  s.clamp = {-kInf, kInf};
  s.weights = constant_floats(api, filter, f_shape, "transposed convolution weights");
  s.bias = constant_floats(api, bias, {s.out_channels}, "transposed convolution bias");
  return s;
}

NarrowConv::NarrowConv(const NarrowConvSpec& spec, const Kernels& kernels, pthreadpool_t pool)
    : spec_(spec), kernels_(kernels), pool_(pool) {
  shares_ = pool ? static_cast<int>(std::max<size_t>(1, pthreadpool_get_threads_count(pool))) : 1;
  bias_.assign(static_cast<size_t>(spec.out_channels), 0.0f);
  if (spec.bias) std::copy(spec.bias, spec.bias + spec.out_channels, bias_.begin());
}

std::vector<int32_t> NarrowConv::prepare(const int32_t* in_dims, int32_t rank) {
  if (rank != 4 || in_dims[3] != spec_.channels || in_dims[0] < 1 || in_dims[1] < 1 || in_dims[2] < 1) {
    refuse("input shape is not [batch, height, width, " + std::to_string(spec_.channels) + "]");
  }
  ConvGeometry& g = geometry_;
  g.in_h = in_dims[1];
  g.in_w = in_dims[2];
  g.channels = spec_.channels;
  g.kernel_h = spec_.kernel_h;
  g.kernel_w = spec_.kernel_w;
  g.stride_h = spec_.stride_h;
  g.stride_w = spec_.stride_w;
  g.out_channels = spec_.out_channels;
  // TFLite's padding: SAME gives ceil(in / stride) outputs with half the total padding (rounded down)
  // before; VALID only windows that fit.
  auto axis = [&](int in, int kernel, int stride, int& out, int& before) {
    if (spec_.transposed) {  // MediaPipe's sizes (the op pack's): stride * (in - 1) + kernel, less SAME's padding
      const int total = spec_.same_padding ? std::max(0, kernel - (in - 1) % stride - 1) : 0;
      out = stride * (in - 1) + kernel - total;
      before = total / 2;
      return;
    }
    if (spec_.same_padding) {
      out = (in + stride - 1) / stride;
      before = std::max(0, (out - 1) * stride + kernel - in) / 2;
    } else {
      if (in < kernel) refuse("the convolution window does not fit the input (VALID padding)");
      out = (in - kernel) / stride + 1;
      before = 0;
    }
  };
  axis(g.in_h, g.kernel_h, g.stride_h, g.out_h, g.pad_top);
  axis(g.in_w, g.kernel_w, g.stride_w, g.out_w, g.pad_left);
  batch_ = in_dims[0];
  return {batch_, g.out_h, g.out_w, spec_.out_channels};
}

// Share `share` of the run: a contiguous range of the output rows of all images.
void NarrowConv::run_share(void* context, size_t share) {
  const auto* self = static_cast<const NarrowConv*>(context);
  const ConvGeometry& g = self->geometry_;
  const long rows = static_cast<long>(g.out_h) * self->batch_;
  const long first = rows * static_cast<long>(share) / self->run_shares_;
  const long end = rows * static_cast<long>(share + 1) / self->run_shares_;
  const size_t image_in = static_cast<size_t>(g.in_h) * g.in_w * g.channels;
  const size_t image_out = static_cast<size_t>(g.out_h) * g.out_w * g.out_channels;
  for (long r = first; r < end;) {
    const long image = r / g.out_h;
    const int row = static_cast<int>(r % g.out_h);
    const int row_end = static_cast<int>(std::min<long>(g.out_h, row + (end - r)));
    if (self->spec_.transposed) {
      self->kernels_.narrow_transpose_conv_rows(g, self->run_in_ + image * image_in, self->spec_.weights,
                                                self->bias_.data(), row, row_end, self->run_out_ + image * image_out);
    } else {
      self->kernels_.narrow_conv_rows(g, self->run_in_ + image * image_in, self->spec_.weights, self->bias_.data(),
                                      self->spec_.clamp, row, row_end, self->run_out_ + image * image_out);
    }
    r += row_end - row;
  }
}

void NarrowConv::run(const float* in, const float*, float* out, float*) {
  run_in_ = in;
  run_out_ = out;
  const int rows = geometry_.out_h * batch_;
  run_shares_ = std::max(1, std::min(shares_, rows));
  if (run_shares_ == 1) {
    run_share(this, 0);
    return;
  }
  pthreadpool_parallelize_1d(pool_, run_share, this, static_cast<size_t>(run_shares_), 0);
}

}  // namespace baton::cpu
