// The input side of TFLite's dynamic-range ("hybrid") kernels, where float activations meet int8
// weights: each batch row of the float input is quantized to int8 on the fly, symmetrically
// (scale = max|x| / 127, zero point 0) or asymmetrically (scale = (max(0, max x) - min(0, min x)) / 255
// and a zero point nudged into [-128, 127]), exactly as TFLite's portable tensor utilities do. The int8
// product itself is kernels/qgemm.h's, with a float output stage.
#ifndef BATON_BUILTIN_KERNELS_HYBRID_H
#define BATON_BUILTIN_KERNELS_HYBRID_H

#include <cstdint>

namespace baton::builtin {

// `scale` gets the row's scale (1 for an all-zero row).
void symmetric_quantize_row(const float* x, int n, int8_t* q, float* scale);
// `scale` and `zero_point` get the row's parameters (1 and 0 for an all-zero row).
void asymmetric_quantize_row(const float* x, int n, int8_t* q, float* scale, int32_t* zero_point);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_HYBRID_H
