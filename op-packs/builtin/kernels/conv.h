// CONV_2D (NHWC input, OHWI filter) as a GEMM: each output pixel is a row of A (its receptive field,
// im2col order ky, kx, channel) and each output channel a row of B (the filter, unchanged order). A
// 1x1 stride-1 unpadded convolution reads the input itself as A; any other is im2col'd block by block
// into the GEMM's packing buffer, so no whole im2col matrix is ever built.
#ifndef BATON_BUILTIN_KERNELS_CONV_H
#define BATON_BUILTIN_KERNELS_CONV_H

#include <cstddef>

#include "kernels/common.h"
#include "kernels/parallel.h"

namespace baton::builtin {

struct ConvParams {
  int batch = 1, in_h = 1, in_w = 1, in_c = 1;
  int out_h = 1, out_w = 1, out_c = 1;
  int filter_h = 1, filter_w = 1;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0;
  ActivationRange range;
};

// Fills out_h/out_w and pad_top/pad_left from the sizes, strides, dilations and padding mode.
void conv_compute_geometry(Padding padding, ConvParams& p);

// Floats of the packed filter, and the packing itself (done once when the filter is constant).
size_t conv_packed_filter_size(const ConvParams& p);
void conv_pack_filter(const ConvParams& p, const float* filter, float* packed);

// Floats of scratch conv2d needs for `workers` workers.
size_t conv_scratch_size(const ConvParams& p, int workers);

void conv2d(const ConvParams& p, const float* input, const float* packed_filter, const float* bias,
            float* output, float* scratch, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_CONV_H
