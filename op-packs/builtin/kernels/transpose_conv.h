// TRANSPOSE_CONV: the gradient of a convolution with respect to its input. Input NHWC, filter OHWI
// ([out_c, fh, fw, in_c]), output NHWC of a given shape. Each input pixel scatters
// input · filter[o, ky, kx, :] into output pixel (iy * stride + ky - pad_top, ix * stride + kx - pad_left).
#ifndef BATON_BUILTIN_KERNELS_TRANSPOSE_CONV_H
#define BATON_BUILTIN_KERNELS_TRANSPOSE_CONV_H

#include "kernels/common.h"

namespace baton::builtin {

struct TransposeConvParams {
  int batch = 1, in_h = 1, in_w = 1, in_c = 1;
  int out_h = 1, out_w = 1, out_c = 1;
  int filter_h = 1, filter_w = 1;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;
  ActivationRange range;
};

// TFLite's padding of a transposed convolution: that of a convolution whose input is this op's output.
void transpose_conv_compute_padding(Padding padding, TransposeConvParams& p);

void transpose_conv2d(const TransposeConvParams& p, const float* input, const float* filter, const float* bias,
                      float* output);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_TRANSPOSE_CONV_H
