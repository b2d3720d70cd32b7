// A CONV_2D, or MediaPipe's transposed Convolution2DTransposeBias, with at most four output channels over
// a large output (a segmentation or heatmap head: one map at 256x256 from eight or sixteen channels). XNNPACK runs it as a matrix product whose 16-wide tiles are
// mostly padding; here each output value is one dot product of its window with a filter, vectorised
// over the input channels, and the output rows are split over the host's shared thread pool.
#ifndef BATON_CPU_NARROW_CONV_H
#define BATON_CPU_NARROW_CONV_H

#include <pthreadpool.h>

#include <cstdint>
#include <vector>

#include "baton/plugin_api.h"
#include "cpu_op.h"
#include "kernels.h"

namespace baton::cpu {

struct NarrowConvSpec {
  static constexpr int kMaxOutChannels = 4;
  static constexpr int kMaxWindow = 7;
  static constexpr int kMinOutputPixels = 1024;  // smaller ones are not worth a partition of their own

  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  bool same_padding = true;
  bool transposed = false;  // MediaPipe's Convolution2DTransposeBias (no activation)
  int channels = 0, out_channels = 0;
  Clamp clamp{};
  const float* weights = nullptr;  // [out_channels][kernel_h][kernel_w][channels], the model's
  const float* bias = nullptr;     // [out_channels] or null

  // `conv` must be a CONV_2D. Throws kit::Refusal naming what does not fit (the output size included,
  // from the model's shapes).
  static NarrowConvSpec read(const baton_host_api* api, const baton_node* conv);
  // `conv` must be the custom op Convolution2DTransposeBias (v1): input, weights [out_channels, kh, kw,
  // channels], bias; its options are TFLite's TfLiteTransposeConvParams as raw bytes (padding, stride_w,
  // stride_h, little-endian int32).
  static NarrowConvSpec read_transpose_bias(const baton_host_api* api, const baton_node* conv);
};

class NarrowConv : public CpuOp {
 public:
  NarrowConv(const NarrowConvSpec& spec, const Kernels& kernels, pthreadpool_t pool);
  std::vector<int32_t> prepare(const int32_t* in_dims, int32_t rank) override;
  void run(const float* in, const float* residual, float* out, float* work) override;

 private:
  static void run_share(void* context, size_t share);

  NarrowConvSpec spec_;
  const Kernels& kernels_;
  pthreadpool_t pool_;
  int shares_ = 1;
  std::vector<float> bias_;  // the model's, or zeros
  ConvGeometry geometry_;
  int batch_ = 0;
  const float* run_in_ = nullptr;
  float* run_out_ = nullptr;
  int run_shares_ = 1;
};

}  // namespace baton::cpu

#endif  // BATON_CPU_NARROW_CONV_H
