// DEPTHWISE_CONV_2D: NHWC input, filter [1, fh, fw, in_c * depth_multiplier]; output channel
// c * depth_multiplier + m reads input channel c. A direct loop with channels innermost, which the
// compiler vectorises; one task per output row.
#ifndef BATON_BUILTIN_KERNELS_DEPTHWISE_CONV_H
#define BATON_BUILTIN_KERNELS_DEPTHWISE_CONV_H

#include "kernels/common.h"
#include "kernels/parallel.h"

namespace baton::builtin {

struct DepthwiseParams {
  int batch = 1, in_h = 1, in_w = 1, in_c = 1;
  int out_h = 1, out_w = 1;
  int depth_multiplier = 1;  // out_c = in_c * depth_multiplier
  int filter_h = 1, filter_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0;
  ActivationRange range;
};

void depthwise_compute_geometry(Padding padding, DepthwiseParams& p);

void depthwise_conv2d(const DepthwiseParams& p, const float* input, const float* filter, const float* bias,
                      float* output, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_DEPTHWISE_CONV_H
