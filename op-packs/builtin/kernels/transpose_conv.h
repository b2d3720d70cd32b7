// TRANSPOSE_CONV: the gradient of a convolution with respect to its input. Input NHWC, filter OHWI
// ([out_c, fh, fw, in_c]), output NHWC of a given shape. Each input pixel scatters
// input · filter[o, ky, kx, :] into output pixel (iy * stride + ky - pad_top, ix * stride + kx - pad_left).
#ifndef BATON_BUILTIN_KERNELS_TRANSPOSE_CONV_H
#define BATON_BUILTIN_KERNELS_TRANSPOSE_CONV_H

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/common.h"
#include "kernels/parallel.h"

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

// Calls fn(input pixel, tap) for every input pixel of the image and filter tap (ky * filter_w + kx)
// whose product lands on output pixel (oy, ox): oy = iy * stride_h + ky - pad_top, and so across.
template <typename Fn>
inline void for_each_landing(const TransposeConvParams& p, int oy, int ox, Fn fn) {
  for (int ky = 0; ky < p.filter_h; ++ky) {
    const int ty = oy + p.pad_top - ky;
    if (ty < 0 || ty % p.stride_h != 0 || ty / p.stride_h >= p.in_h) continue;
    for (int kx = 0; kx < p.filter_w; ++kx) {
      const int tx = ox + p.pad_left - kx;
      if (tx < 0 || tx % p.stride_w != 0 || tx / p.stride_w >= p.in_w) continue;
      fn(static_cast<size_t>(ty / p.stride_h) * p.in_w + tx / p.stride_w, ky * p.filter_w + kx);
    }
  }
}

// The filter ([out_c][filter_h * filter_w][in_c]) as the product forms' B: row (tap, oc) is the filter's
// [oc][tap], so that the products of one tap for every output channel lie side by side.
template <typename T>
std::vector<T> transpose_conv_rows(const TransposeConvParams& p, const T* filter) {
  const int taps = p.filter_h * p.filter_w;
  std::vector<T> rows(static_cast<size_t>(taps) * p.out_c * p.in_c);
  for (int t = 0; t < taps; ++t) {
    for (int oc = 0; oc < p.out_c; ++oc) {
      const T* src = filter + (static_cast<size_t>(oc) * taps + t) * p.in_c;
      std::copy(src, src + p.in_c, rows.begin() + (static_cast<size_t>(t) * p.out_c + oc) * p.in_c);
    }
  }
  return rows;
}

// The bytes of the products the product form keeps per image: every input pixel's taps x out_c
// (as TFLite's own col2im buffer). Past kTransposeProductsLimit the scatter runs instead.
inline double transpose_conv_products_bytes(const TransposeConvParams& p, size_t element_bytes) {
  return static_cast<double>(element_bytes) * p.in_h * p.in_w * p.filter_h * p.filter_w * p.out_c;
}
inline constexpr double kTransposeProductsLimit = 64.0 * 1024 * 1024;

// The same sums for a constant filter by another road: one matrix product per image (gemm) of the input
// pixels by the filter seen as filter_h * filter_w * out_c rows of in_c (tap-major), then per output
// pixel the products that land on it (for_each_landing), the bias and the activation. Threads split the
// product and the output rows. The sums' order differs from the scatter's (floats within rounding).
struct TransposeConvGemm {
  int n = 0;  // taps * out_c
  std::vector<float> packed;
};
void transpose_conv_gemm_prepare(const TransposeConvParams& p, const float* filter, TransposeConvGemm& g);
size_t transpose_conv_gemm_scratch_floats(const TransposeConvParams& p, const TransposeConvGemm& g, int workers);
void transpose_conv2d_gemm(const TransposeConvParams& p, const TransposeConvGemm& g, const float* input,
                           const float* bias, float* output, float* scratch, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_TRANSPOSE_CONV_H
