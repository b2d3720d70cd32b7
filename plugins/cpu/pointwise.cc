#include "pointwise.h"

#include <algorithm>
#include <string>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"

namespace baton::cpu {

using kit::refuse;

PointwiseSpec PointwiseSpec::read(const baton_host_api* api, const baton_node* conv, const baton_node* hard_swish) {
  PointwiseSpec s;
  const ConvTensors c = conv_tensors(api, conv);
  const baton_tensor* filter = c.filter;
  const std::vector<int32_t>&in_shape = c.in_shape, &f_shape = c.filter_shape, &out_shape = c.out_shape;
  if (f_shape.size() != 4 || f_shape[1] != 1 || f_shape[2] != 1) refuse("convolution window other than 1x1");
  s.out_channels = f_shape[0];
  s.channels = in_shape[3];
  if (s.out_channels < 1) refuse("convolution without output channels");
  if (s.channels < 1 || f_shape[3] != s.channels) refuse("convolution filter depth differs from the input's channels");
  const baton_conv_options& o = api->node_builtin_options(conv)->u.conv;
  if (o.stride_h != 1 || o.stride_w != 1) refuse("1x1 convolution with a stride");
  const int64_t pixels = static_cast<int64_t>(out_shape[0]) * out_shape[1] * out_shape[2];
  if (pixels < kMinOutputPixels || pixels * s.channels * s.out_channels < kMinMultiplyAdds) {
    refuse("1x1 convolution smaller than " + std::to_string(kMinOutputPixels) + " output pixels or " +
           std::to_string(kMinMultiplyAdds) + " multiply-adds");
  }
  s.clamp = activation_clamp(o.activation, "convolution");
  if (hard_swish) {
    if (api->node_builtin_code(hard_swish) != BATON_OP_HARD_SWISH || api->node_input_count(hard_swish) != 1 ||
        api->node_output_count(hard_swish) != 1 || api->node_input(hard_swish, 0) != c.out) {
      refuse("the node after the 1x1 convolution is not a HARD_SWISH of it");
    }
    if (o.activation != BATON_ACT_NONE) refuse("a 1x1 convolution with a fused activation and a HARD_SWISH after it");
    expect_float(api, api->node_output(hard_swish, 0), "HARD_SWISH output");
    s.hard_swish = true;
  }
  s.weights = constant_floats(api, filter, f_shape, "convolution filter");
  if (api->node_input_count(conv) > 2 && api->node_input(conv, 2)) {
    s.bias = constant_floats(api, api->node_input(conv, 2), {s.out_channels}, "convolution bias");
  }
  return s;
}

PointwiseSpec PointwiseSpec::read_fully_connected(const baton_host_api* api, const baton_node* fc) {
  if (api->node_input_count(fc) < 2 || api->node_output_count(fc) != 1) {
    refuse("FULLY_CONNECTED without input and weights, or with other than one output");
  }
  const baton_tensor* in = api->node_input(fc, 0);
  const baton_tensor* weights = api->node_input(fc, 1);
  const baton_tensor* out = api->node_output(fc, 0);
  if (!in || !weights || !out) refuse("FULLY_CONNECTED without input, weights or output");
  expect_float(api, in, "FULLY_CONNECTED input");
  expect_float(api, out, "FULLY_CONNECTED output");
  const baton_fully_connected_options& o = api->node_builtin_options(fc)->u.fully_connected;
  if (o.weights_format != 0) refuse("FULLY_CONNECTED weights in a shuffled format");
  const std::vector<int32_t> in_shape = shape_of(api, in), w_shape = shape_of(api, weights);
  if (w_shape.size() != 2 || w_shape[0] < 1 || w_shape[1] < 1) refuse("FULLY_CONNECTED weights not of shape [units, depth]");
  PointwiseSpec s;
  s.fully_connected = true;
  s.keep_num_dims = o.keep_num_dims != 0;
  s.out_channels = w_shape[0];
  s.channels = w_shape[1];
  if (in_shape.empty() || in_shape.back() != s.channels) {
    refuse("FULLY_CONNECTED input whose last dimension is not the weights' depth " + std::to_string(s.channels));
  }
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < in_shape.size(); ++d) rows *= in_shape[d];
  if (rows < kMinOutputPixels || rows * s.channels * s.out_channels < kMinMultiplyAdds) {
    refuse("FULLY_CONNECTED of fewer than " + std::to_string(kMinOutputPixels) + " rows or " +
           std::to_string(kMinMultiplyAdds) + " multiply-adds");
  }
  s.clamp = activation_clamp(o.activation, "FULLY_CONNECTED");
  s.weights = constant_floats(api, weights, w_shape, "FULLY_CONNECTED weights");
  if (api->node_input_count(fc) > 2 && api->node_input(fc, 2)) {
    s.bias = constant_floats(api, api->node_input(fc, 2), {s.out_channels}, "FULLY_CONNECTED bias");
  }
  return s;
}

Pointwise::Pointwise(const PointwiseSpec& spec, const Kernels& kernels, pthreadpool_t pool)
    : spec_(spec),
      kernels_(kernels),
      pool_(pool),
      product_(kernels, spec.weights, spec.bias, spec.out_channels, spec.channels) {
  shares_ = pool ? static_cast<int>(std::max<size_t>(1, pthreadpool_get_threads_count(pool))) : 1;
}

std::vector<int32_t> Pointwise::prepare(const int32_t* in_dims, int32_t rank) {
  if (spec_.fully_connected) {
    if (rank < 1 || in_dims[rank - 1] != spec_.channels) {
      refuse("input's last dimension is not the weights' depth " + std::to_string(spec_.channels));
    }
    rows_ = 1;
    for (int32_t d = 0; d + 1 < rank; ++d) rows_ *= in_dims[d];
    if (!spec_.keep_num_dims) return {static_cast<int32_t>(rows_), spec_.out_channels};
    std::vector<int32_t> out(in_dims, in_dims + rank);
    out.back() = spec_.out_channels;
    return out;
  }
  if (rank != 4 || in_dims[3] != spec_.channels || in_dims[0] < 1 || in_dims[1] < 1 || in_dims[2] < 1) {
    refuse("input shape is not [batch, height, width, " + std::to_string(spec_.channels) + "]");
  }
  rows_ = static_cast<long>(in_dims[0]) * in_dims[1] * in_dims[2];
  return {in_dims[0], in_dims[1], in_dims[2], spec_.out_channels};
}

void Pointwise::run_rows(const float* in, const float* residual, float* out, long first, long end) const {
  // With something after the product, blocks of rows small enough that the block's output is still in
  // cache for it.
  const bool after = spec_.hard_swish || residual;
  const long mr = product_.mr();
  const long block = after ? std::max<long>(mr, 8192 / spec_.out_channels / mr * mr) : end - first;
  for (long r = first; r < end; r += block) {
    const long n = std::min(block, end - r);
    const long at = r * spec_.out_channels;
    product_.run(static_cast<int>(n), in + r * spec_.channels, spec_.channels, spec_.clamp, out + at, spec_.out_channels);
    if (spec_.hard_swish) kernels_.hard_swish(out + at, n * spec_.out_channels);
    if (residual) add_residual_to(kernels_, out + at, residual, r, n);
  }
}

void Pointwise::run_share(void* context, size_t share) {
  const auto* self = static_cast<const Pointwise*>(context);
  const long first = self->rows_ * static_cast<long>(share) / self->run_shares_;
  const long end = self->rows_ * static_cast<long>(share + 1) / self->run_shares_;
  self->run_rows(self->run_in_, self->run_residual_, self->run_out_, first, end);
}

void Pointwise::run(const float* in, const float* residual, float* out, float*) {
  run_in_ = in;
  run_residual_ = residual;
  run_out_ = out;
  run_shares_ = static_cast<int>(std::max<long>(1, std::min<long>(shares_, rows_ / product_.mr())));
  if (run_shares_ == 1) {
    run_rows(in, residual, out, 0, rows_);
    return;
  }
  pthreadpool_parallelize_1d(pool_, run_share, this, static_cast<size_t>(run_shares_), 0);
}

std::vector<int32_t> Elementwise::prepare(const int32_t* in_dims, int32_t rank) {
  size_ = 1;
  for (int32_t i = 0; i < rank; ++i) size_ *= in_dims[i];
  channels_ = rank > 0 && in_dims[rank - 1] > 0 ? in_dims[rank - 1] : 1;
  return std::vector<int32_t>(in_dims, in_dims + rank);
}

void Elementwise::run(const float* in, const float* residual, float* out, float*) {
  switch (kind_) {
    case Kind::kHardSwish:
      std::copy(in, in + size_, out);
      kernels_.hard_swish(out, size_);
      return;
    case Kind::kAdd:
      std::copy(in, in + size_, out);
      add_residual_to(kernels_, out, residual, 0, size_ / channels_);
      return;
    case Kind::kClamp:
      for (long i = 0; i < size_; ++i) out[i] = std::min(std::max(in[i], clamp_.min), clamp_.max);
      return;
  }
}

std::vector<int32_t> ShortcutStep::prepare(const int32_t* in_dims, int32_t rank) {
  if (rank != 4 || in_dims[0] < 1 || in_dims[1] < 1 || in_dims[2] < 1 || in_dims[3] < 1) {
    refuse("shortcut input is not [batch, height, width, channels]");
  }
  const auto side = [&](int32_t n) { return !shortcut_.pool ? n : shortcut_.pool_same ? (n + 1) / 2 : n / 2; };
  const std::vector<int32_t> in(in_dims, in_dims + rank);
  const std::vector<int32_t> out = {in_dims[0], side(in_dims[1]), side(in_dims[2]), in_dims[3] + shortcut_.pad_channels};
  if (!prepare_residual(in, out)) refuse("the shortcut's output would be empty");
  pixels_ = static_cast<long>(out[0]) * out[1] * out[2];
  size_ = pixels_ * out[3];
  return out;
}

void ShortcutStep::run(const float* in, const float*, float* out, float*) {
  std::fill(out, out + size_, 0.0f);  // then out += the shortcut of in
  add_residual_to(kernels_, out, in, 0, pixels_);
}

}  // namespace baton::cpu
