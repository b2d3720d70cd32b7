// The input side of TFLite's dynamic-range ("hybrid") kernels, where float activations meet int8
// weights: each batch row of the float input is quantized to int8 on the fly, symmetrically
// (scale = max|x| / 127, zero point 0) or asymmetrically (scale = (max(0, max x) - min(0, min x)) / 255
// and a zero point nudged into [-128, 127]), exactly as TFLite's portable tensor utilities do. The int8
// product itself is kernels/qgemm.h's, with a float output stage.
#ifndef BATON_BUILTIN_KERNELS_HYBRID_H
#define BATON_BUILTIN_KERNELS_HYBRID_H

#include <cstdint>

#include "kernels/depthwise_conv.h"
#include "kernels/parallel.h"

namespace baton::builtin {

// `scale` gets the row's scale (1 for an all-zero row).
void symmetric_quantize_row(const float* x, int n, int8_t* q, float* scale);
// `scale` and `zero_point` get the row's parameters (1 and 0 for an all-zero row).
void asymmetric_quantize_row(const float* x, int n, int8_t* q, float* scale, int32_t* zero_point);

// One row either way (`asymmetric`: TFLite's asymmetric_quantize_inputs); the zero point is 0 when symmetric.
inline void quantize_row(const float* x, int n, int8_t* q, float* scale, int32_t* zero_point, bool asymmetric) {
  if (asymmetric) {
    asymmetric_quantize_row(x, n, q, scale, zero_point);
  } else {
    symmetric_quantize_row(x, n, q, scale);
    *zero_point = 0;
  }
}

// out[r] = the int32 dot product of weight row r (of `depth` int8 codes) with a quantized row q of zero
// point `zero_point`: TFLite's sum of w * q less zero_point times the row's sum of weights. Integer only
// (exact); compiled for AVX2 and the baseline, picked at run time.
void hybrid_row_dots(const int8_t* w, int rows, int depth, const int8_t* q, int32_t zero_point, int32_t* out);

// The same for one row.
inline int32_t hybrid_dot(const int8_t* w, const int8_t* q, int n, int32_t zero_point) {
  int32_t dot = 0;
  hybrid_row_dots(w, 1, n, q, zero_point, &dot);
  return dot;
}

// TFLite's dynamic-range DEPTHWISE_CONV_2D: each batch image quantized asymmetrically (zero point
// `zero_point[b]`, scale `input_scale[b]`), the int32 sum of filter * (code - zero point) over the taps
// inside the image (padding adds nothing), then float(sum) * (filter_scale[c] * input_scale[b]) + bias[c],
// clamped to `p.range`. `filter` is [filter_h * filter_w][out_c] int8; `bias` may be null.
void hybrid_depthwise_conv2d(const DepthwiseParams& p, const int8_t* input, const int32_t* zero_point,
                             const float* input_scale, const int8_t* filter, const float* filter_scale,
                             const float* bias, float* output, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_HYBRID_H
