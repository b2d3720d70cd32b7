#include "fused_pair.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"

namespace baton::cpu {
namespace {

using kit::refuse;

}  // namespace

PairSpec PairSpec::read(const baton_host_api* api, const baton_node* depthwise, const baton_node* conv,
                        const baton_node* activation) {
  PairSpec s;
  if (api->node_input_count(depthwise) < 2 || api->node_output_count(depthwise) != 1) {
    refuse("depthwise convolution without input and filter, or with other than one output");
  }
  const baton_tensor* in = api->node_input(depthwise, 0);
  const baton_tensor* filter = api->node_input(depthwise, 1);
  const baton_tensor* mid = api->node_output(depthwise, 0);  // what the 1x1 convolution reads
  if (!in || !filter) refuse("depthwise convolution without input or filter");
  expect_float(api, in, "depthwise input");
  expect_float(api, mid, "depthwise output");
  const std::vector<int32_t> in_shape = shape_of(api, in), f_shape = shape_of(api, filter);
  if (in_shape.size() != 4) refuse("depthwise input of rank " + std::to_string(in_shape.size()) + " (NHWC only)");
  if (f_shape.size() != 4 || f_shape[0] != 1 || f_shape[1] != f_shape[2] || (f_shape[1] != 3 && f_shape[1] != 5)) {
    refuse("depthwise window other than 3x3 or 5x5");
  }
  s.kernel = f_shape[1];
  s.channels = in_shape[3];
  if (s.channels < 1 || f_shape[3] != s.channels) refuse("depthwise depth multiplier other than 1");
  const baton_conv_options& dw = api->node_builtin_options(depthwise)->u.conv;
  if (dw.dilation_h != 1 || dw.dilation_w != 1) refuse("dilated depthwise convolution");
  if (dw.stride_h < 1 || dw.stride_h > 2 || dw.stride_w < 1 || dw.stride_w > 2) refuse("depthwise stride other than 1 or 2");
  if (dw.padding != BATON_PADDING_SAME && dw.padding != BATON_PADDING_VALID) refuse("unknown depthwise padding");
  s.stride_h = dw.stride_h;
  s.stride_w = dw.stride_w;
  s.same_padding = dw.padding == BATON_PADDING_SAME;
  s.depthwise_clamp = activation_clamp(dw.activation, "depthwise convolution");
  s.depthwise_weights = constant_floats(api, filter, f_shape, "depthwise filter");
  if (api->node_input_count(depthwise) > 2 && api->node_input(depthwise, 2)) {
    s.depthwise_bias = constant_floats(api, api->node_input(depthwise, 2), {s.channels}, "depthwise bias");
  }

  if (activation) {
    const std::optional<Clamp> c = activation_node_clamp(api->node_builtin_code(activation));
    if (!c || api->node_input_count(activation) != 1 || api->node_output_count(activation) != 1 ||
        api->node_input(activation, 0) != mid) {
      refuse("the node between the depthwise and the 1x1 convolution is not a RELU, RELU6 or RELU_N1_TO_1 of it");
    }
    if (dw.activation != BATON_ACT_NONE) refuse("a depthwise convolution with a fused activation and another after it");
    s.depthwise_clamp = *c;
    mid = api->node_output(activation, 0);
    expect_float(api, mid, "activation output");
  }
  if (!conv) return s;  // a depthwise step alone
  if (api->node_input_count(conv) < 2 || api->node_output_count(conv) != 1 || api->node_input(conv, 0) != mid) {
    refuse("the convolution does not read the depthwise output as its input");
  }
  const baton_tensor* cf = api->node_input(conv, 1);
  if (!cf) refuse("convolution without filter");
  const std::vector<int32_t> cf_shape = shape_of(api, cf);
  if (cf_shape.size() != 4 || cf_shape[1] != 1 || cf_shape[2] != 1) refuse("convolution window other than 1x1");
  if (cf_shape[3] != s.channels) refuse("convolution filter depth differs from the depthwise output's channels");
  s.out_channels = cf_shape[0];
  if (s.out_channels < 1) refuse("convolution without output channels");
  const baton_conv_options& co = api->node_builtin_options(conv)->u.conv;
  if (co.stride_h != 1 || co.stride_w != 1) refuse("1x1 convolution with a stride");
  s.conv_clamp = activation_clamp(co.activation, "convolution");
  expect_float(api, api->node_output(conv, 0), "convolution output");
  s.conv_weights = constant_floats(api, cf, cf_shape, "convolution filter");
  if (api->node_input_count(conv) > 2 && api->node_input(conv, 2)) {
    s.conv_bias = constant_floats(api, api->node_input(conv, 2), {s.out_channels}, "convolution bias");
  }
  return s;
}

void PairSpec::add_expansion(const PointwiseSpec& expand) {
  if (expand.hard_swish) refuse("an expansion with a HARD_SWISH after it");
  if (expand.out_channels != channels) refuse("the expansion's output channels differ from the depthwise's");
  in_channels = expand.channels;
  expand_clamp = expand.clamp;
  expand_weights = expand.weights;
  expand_bias = expand.bias;
}

FusedPair::FusedPair(const PairSpec& spec, const Kernels& kernels, pthreadpool_t pool)
    : spec_(spec),
      kernels_(kernels),
      conv_(kernels, spec.conv_weights, spec.conv_bias, spec.out_channels, spec.channels),
      pool_(pool) {
  shares_ = pool ? static_cast<int>(std::max<size_t>(1, pthreadpool_get_threads_count(pool))) : 1;
  depthwise_bias_.assign(static_cast<size_t>(spec.channels), 0.0f);
  if (spec.depthwise_bias) std::copy(spec.depthwise_bias, spec.depthwise_bias + spec.channels, depthwise_bias_.begin());
  if (spec.in_channels > 0) expand_.emplace(kernels, spec.expand_weights, spec.expand_bias, spec.channels, spec.in_channels);
}

DepthwiseGeometry depthwise_geometry(const PairSpec& spec, int in_h, int in_w) {
  DepthwiseGeometry g;
  g.in_h = in_h;
  g.in_w = in_w;
  g.channels = spec.channels;
  g.kernel = spec.kernel;
  g.stride_h = spec.stride_h;
  g.stride_w = spec.stride_w;
  // TFLite's SAME: ceil(in / stride) outputs, half the total padding (rounded down) before.
  auto axis = [&](int in, int stride, int& out, int& before) {
    if (spec.same_padding) {
      out = (in + stride - 1) / stride;
      const int total = std::max(0, (out - 1) * stride + spec.kernel - in);
      before = total / 2;
    } else {
      if (in < spec.kernel) refuse("the depthwise window does not fit the input (VALID padding)");
      out = (in - spec.kernel) / stride + 1;
      before = 0;
    }
  };
  axis(g.in_h, g.stride_h, g.out_h, g.pad_top);
  axis(g.in_w, g.stride_w, g.out_w, g.pad_left);
  return g;
}

std::vector<int32_t> FusedPair::prepare(const int32_t* in_dims, int32_t rank) {
  const int in_channels = spec_.input_channels();
  if (rank != 4 || in_dims[3] != in_channels || in_dims[0] < 1 || in_dims[1] < 1 || in_dims[2] < 1) {
    refuse("input shape is not [batch, height, width, " + std::to_string(in_channels) + "]");
  }
  geometry_ = depthwise_geometry(spec_, in_dims[1], in_dims[2]);
  const DepthwiseGeometry& g = geometry_;
  batch_ = in_dims[0];

  // Rows per block: the depthwise block (rows * out_w * channels floats) about 32 KiB, so it stays in
  // L1/L2 while the matrix product passes over it once per panel of the 1x1 weights. With an expansion,
  // 128 KiB: each block then also makes the expanded rows its window reaches, a few times the block,
  // and fewer blocks make fewer, longer products (hand_landmark_lite 4.24 -> 3.89 ms, pose_landmark_lite
  // 9.53 -> 9.43 ms, one thread, on an AMD EPYC; 64 and 256 KiB were between or no better).
  const size_t kBlockBytes = (spec_.in_channels > 0 ? 128 : 32) * 1024;
  const size_t row_bytes = static_cast<size_t>(g.out_w) * static_cast<size_t>(g.channels) * sizeof(float);
  rows_per_block_ = static_cast<int>(std::clamp<size_t>(kBlockBytes / row_bytes, 1, static_cast<size_t>(g.out_h)));
  blocks_per_image_ = (g.out_h + rows_per_block_ - 1) / rows_per_block_;
  block_floats_ = static_cast<size_t>(rows_per_block_) * g.out_w * g.channels;
  share_floats_ = share_floats_for_rows();
  // Too few blocks to give every share the same number, twice over: whole-image mode (see the header),
  // where its two buffers stay within the blocks' memory or 768 KiB (an L2's share; more would raise the
  // arena: hand_landmark_lite's 112x112x64 expansion alone is 3.2 MB); else each share its even part
  // of the rows, in blocks as even as it allows (run_rows).
  whole_expanded_floats_ =
      spec_.in_channels > 0 ? (static_cast<size_t>(g.in_h) * g.in_w * g.channels + 15) / 16 * 16 : 0;
  whole_depthwise_floats_ = (static_cast<size_t>(g.out_h) * g.out_w * g.channels + 15) / 16 * 16;
  const bool uneven = shares_ > 1 && ((blocks_per_image_ % shares_ != 0 && blocks_per_image_ < 4 * shares_) ||
                                      blocks_per_image_ < 2 * shares_);
  const size_t whole_floats = whole_expanded_floats_ + whole_depthwise_floats_;
  whole_ = uneven && (whole_floats * sizeof(float) <= 768 * 1024 ||
                      whole_floats <= share_floats_ * static_cast<size_t>(shares_));
  if (shares_ > 1 && !whole_) {  // the buffers for the largest share's blocks, as run_rows makes them
    const long rows = (static_cast<long>(batch_) * g.out_h + shares_ - 1) / shares_;
    const long blocks = (rows + rows_per_block_ - 1) / rows_per_block_;
    rows_per_block_ = static_cast<int>((rows + blocks - 1) / blocks);
    block_floats_ = static_cast<size_t>(rows_per_block_) * g.out_w * g.channels;
    share_floats_ = share_floats_for_rows();
  }
  return {batch_, g.out_h, g.out_w, spec_.out_channels};
}

// One share's working memory for the current rows per block: the block of depthwise rows and, with an
// expansion, the expanded input rows one block reads ((rows - 1) * stride + the window, at most).
size_t FusedPair::share_floats_for_rows() const {
  const DepthwiseGeometry& g = geometry_;
  const int in_rows = std::min(g.in_h, (rows_per_block_ - 1) * g.stride_h + g.kernel);
  const size_t expanded_floats = spec_.in_channels > 0 ? static_cast<size_t>(in_rows) * g.in_w * g.channels : 0;
  return (block_floats_ + expanded_floats + 15) / 16 * 16;
}

void FusedPair::run_rows(const float* in, const float* residual, float* out, long first_row, long end_row,
                         float* work) const {
  const DepthwiseGeometry& g = geometry_;
  const int in_channels = spec_.input_channels();
  const size_t image_in = static_cast<size_t>(g.in_h) * g.in_w * in_channels;
  const size_t image_out = static_cast<size_t>(g.out_h) * g.out_w * spec_.out_channels;
  float* block = work;
  float* expanded = work + block_floats_;
  const size_t expanded_row = static_cast<size_t>(g.in_w) * g.channels;
  int have_image = -1, have_begin = 0, have_end = 0;  // the input rows in `expanded`, of which image
  // The rows (of all images, image by image) in as few blocks of at most rows_per_block_ as they need, of
  // sizes that differ by one row at most; a block ends with its image.
  const long rows = end_row - first_row;
  const long blocks = (rows + rows_per_block_ - 1) / rows_per_block_;
  for (long k = 0, r = first_row; r < end_row;) {
    const long block_end = first_row + rows * (k + 1) / blocks;
    const int image = static_cast<int>(r / g.out_h);
    const int row0 = static_cast<int>(r % g.out_h);
    const int row1 = static_cast<int>(std::min<long>(g.out_h, row0 + (block_end - r)));
    r += row1 - row0;
    if (r == block_end) ++k;
    const float* src = in + image * image_in;
    if (spec_.in_channels == 0) {
      kernels_.depthwise_rows(g, src, spec_.depthwise_weights, depthwise_bias_.data(), spec_.depthwise_clamp, row0,
                              row1, block);
    } else {
      // The input rows these output rows' windows reach, expanded; those the last block expanded too are
      // moved to the front.
      const int begin = std::max(0, row0 * g.stride_h - g.pad_top);
      const int end = std::min(g.in_h, (row1 - 1) * g.stride_h - g.pad_top + g.kernel);
      int from = begin;
      if (have_image == image && begin >= have_begin && begin < have_end) {
        std::memmove(expanded, expanded + (begin - have_begin) * expanded_row,
                     static_cast<size_t>(have_end - begin) * expanded_row * sizeof(float));
        from = have_end;
      }
      if (end > from) {
        expand_->run((end - from) * g.in_w, src + static_cast<size_t>(from) * g.in_w * in_channels, in_channels,
                     spec_.expand_clamp, expanded + (from - begin) * expanded_row, g.channels);
      }
      have_image = image;
      have_begin = begin;
      have_end = end;  // never below `from`: blocks of one share go down the image
      // The depthwise over rows [begin, end) only: its top padding grows by the rows left out above.
      DepthwiseGeometry rows = g;
      rows.in_h = end - begin;
      rows.pad_top = g.pad_top + begin;
      kernels_.depthwise_rows(rows, expanded, spec_.depthwise_weights, depthwise_bias_.data(), spec_.depthwise_clamp,
                              row0, row1, block);
    }
    const size_t at = image * image_out + static_cast<size_t>(row0) * g.out_w * spec_.out_channels;
    conv_.run((row1 - row0) * g.out_w, block, g.channels, spec_.conv_clamp, out + at, spec_.out_channels);
    if (residual) {  // the block's output is still in cache
      add_residual_to(kernels_, out + at, residual, (static_cast<long>(image) * g.out_h + row0) * g.out_w,
                      static_cast<long>(row1 - row0) * g.out_w);
    }
  }
}

namespace {

// [begin, end) of share `share` among `shares` over n items, as even as integers allow.
inline void share_range(long n, size_t share, long shares, long& begin, long& end) {
  begin = n * static_cast<long>(share) / shares;
  end = n * static_cast<long>(share + 1) / shares;
}

}  // namespace

void FusedPair::run_share(void* context, size_t share) {
  const auto* self = static_cast<const FusedPair*>(context);
  long first, end;
  share_range(static_cast<long>(self->geometry_.out_h) * self->batch_, share, self->run_shares_, first, end);
  self->run_rows(self->run_in_, self->run_residual_, self->run_out_, first, end,
                 self->run_work_ + share * self->share_floats_);
}

void FusedPair::expand_share(void* context, size_t share) {
  const auto* self = static_cast<const FusedPair*>(context);
  const DepthwiseGeometry& g = self->geometry_;
  const int in_channels = self->spec_.in_channels;
  long p0, p1;
  share_range(static_cast<long>(g.in_h) * g.in_w, share, self->run_shares_, p0, p1);
  if (p1 <= p0) return;
  self->expand_->run(static_cast<int>(p1 - p0), self->run_in_ + p0 * in_channels, in_channels,
                     self->spec_.expand_clamp, self->run_work_ + p0 * g.channels, g.channels);
}

void FusedPair::depthwise_share(void* context, size_t share) {
  const auto* self = static_cast<const FusedPair*>(context);
  const DepthwiseGeometry& g = self->geometry_;
  long r0, r1;
  share_range(g.out_h, share, self->run_shares_, r0, r1);
  if (r1 <= r0) return;
  const float* src = self->spec_.in_channels > 0 ? self->run_work_ : self->run_in_;
  float* dst = self->run_work_ + self->whole_expanded_floats_;
  self->kernels_.depthwise_rows(g, src, self->spec_.depthwise_weights, self->depthwise_bias_.data(),
                                self->spec_.depthwise_clamp, static_cast<int>(r0), static_cast<int>(r1),
                                dst + r0 * g.out_w * g.channels);
}

void FusedPair::project_share(void* context, size_t share) {
  const auto* self = static_cast<const FusedPair*>(context);
  const DepthwiseGeometry& g = self->geometry_;
  const int n = self->spec_.out_channels;
  long p0, p1;
  share_range(static_cast<long>(g.out_h) * g.out_w, share, self->run_shares_, p0, p1);
  if (p1 <= p0) return;
  const float* dw = self->run_work_ + self->whole_expanded_floats_;
  float* out = self->run_out_ + p0 * n;
  self->conv_.run(static_cast<int>(p1 - p0), dw + p0 * g.channels, g.channels, self->spec_.conv_clamp, out, n);
  if (self->run_residual_) {
    self->add_residual_to(self->kernels_, out, self->run_residual_,
                          static_cast<long>(self->run_image_) * g.out_h * g.out_w + p0, p1 - p0);
  }
}

void FusedPair::run_whole_image(const float* in, const float* residual, float* out, float* work) {
  const DepthwiseGeometry& g = geometry_;
  const size_t image_in = static_cast<size_t>(g.in_h) * g.in_w * spec_.input_channels();
  const size_t image_out = static_cast<size_t>(g.out_h) * g.out_w * spec_.out_channels;
  run_work_ = work;
  run_shares_ = shares_;
  for (int image = 0; image < batch_; ++image) {
    run_in_ = in + image * image_in;
    run_out_ = out + image * image_out;
    run_residual_ = residual;  // add_residual_to finds the image's pixels
    run_image_ = image;
    if (spec_.in_channels > 0) pthreadpool_parallelize_1d(pool_, expand_share, this, static_cast<size_t>(shares_), 0);
    pthreadpool_parallelize_1d(pool_, depthwise_share, this, static_cast<size_t>(shares_), 0);
    pthreadpool_parallelize_1d(pool_, project_share, this, static_cast<size_t>(shares_), 0);
  }
}

void FusedPair::run(const float* in, const float* residual, float* out, float* work) {
  if (whole_) {
    run_whole_image(in, residual, out, work);
    return;
  }
  const int blocks = blocks_per_image_ * batch_;
  if (shares_ == 1 || blocks < 2) {
    run_rows(in, residual, out, 0, static_cast<long>(geometry_.out_h) * batch_, work);
    return;
  }
  run_in_ = in;
  run_residual_ = residual;
  run_out_ = out;
  run_work_ = work;
  run_shares_ = std::min(shares_, blocks);
  pthreadpool_parallelize_1d(pool_, run_share, this, static_cast<size_t>(run_shares_), 0);
}

Depthwise::Depthwise(const PairSpec& spec, const Kernels& kernels, pthreadpool_t pool)
    : spec_(spec), kernels_(kernels), pool_(pool) {
  shares_ = pool ? static_cast<int>(std::max<size_t>(1, pthreadpool_get_threads_count(pool))) : 1;
  bias_.assign(static_cast<size_t>(spec.channels), 0.0f);
  if (spec.depthwise_bias) std::copy(spec.depthwise_bias, spec.depthwise_bias + spec.channels, bias_.begin());
}

std::vector<int32_t> Depthwise::prepare(const int32_t* in_dims, int32_t rank) {
  if (rank != 4 || in_dims[3] != spec_.channels || in_dims[0] < 1 || in_dims[1] < 1 || in_dims[2] < 1) {
    refuse("input shape is not [batch, height, width, " + std::to_string(spec_.channels) + "]");
  }
  geometry_ = depthwise_geometry(spec_, in_dims[1], in_dims[2]);
  batch_ = in_dims[0];
  // Rows of about 32 KiB at a time: the residual is added while they are in cache.
  const size_t row_bytes = static_cast<size_t>(geometry_.out_w) * static_cast<size_t>(spec_.channels) * sizeof(float);
  chunk_rows_ = static_cast<int>(std::clamp<size_t>(32 * 1024 / row_bytes, 1, static_cast<size_t>(geometry_.out_h)));
  return {batch_, geometry_.out_h, geometry_.out_w, spec_.channels};
}

void Depthwise::run_rows(const float* in, const float* residual, float* out, long first, long end) const {
  const DepthwiseGeometry& g = geometry_;
  const size_t image_in = static_cast<size_t>(g.in_h) * g.in_w * g.channels;
  const size_t row_out = static_cast<size_t>(g.out_w) * g.channels;
  for (long r = first; r < end;) {  // rows of all images, image by image
    const int image = static_cast<int>(r / g.out_h);
    const int row0 = static_cast<int>(r % g.out_h);
    const int row1 = static_cast<int>(std::min<long>({static_cast<long>(g.out_h), row0 + chunk_rows_, row0 + (end - r)}));
    const size_t at = (static_cast<size_t>(image) * g.out_h + row0) * row_out;
    kernels_.depthwise_rows(g, in + image * image_in, spec_.depthwise_weights, bias_.data(), spec_.depthwise_clamp, row0,
                            row1, out + at);
    if (residual) {
      add_residual_to(kernels_, out + at, residual, (static_cast<long>(image) * g.out_h + row0) * g.out_w,
                      static_cast<long>(row1 - row0) * g.out_w);
    }
    r += row1 - row0;
  }
}

void Depthwise::run_share(void* context, size_t share) {
  const auto* self = static_cast<const Depthwise*>(context);
  long first, end;
  share_range(static_cast<long>(self->batch_) * self->geometry_.out_h, share, self->shares_, first, end);
  self->run_rows(self->run_in_, self->run_residual_, self->run_out_, first, end);
}

void Depthwise::run(const float* in, const float* residual, float* out, float*) {
  const long rows = static_cast<long>(batch_) * geometry_.out_h;
  if (shares_ == 1 || rows < 2 * shares_) {
    run_rows(in, residual, out, 0, rows);
    return;
  }
  run_in_ = in;
  run_residual_ = residual;
  run_out_ = out;
  pthreadpool_parallelize_1d(pool_, run_share, this, static_cast<size_t>(shares_), 0);
}

}  // namespace baton::cpu
