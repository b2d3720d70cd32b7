// Quantized DEPTHWISE_CONV_2D (uint8 or int8 activations): per output pixel and channel
//   acc = bias + sum over the taps inside the input of (x - input_zero) * (w - filter_zero)
// in int32, then TFLite's per-channel requantization (ties of the final shift away from zero, as
// TFLite's own depthwise kernels round). Taps over the border add nothing, which is what padding with
// the input's zero point means. The filter arrives with its zero points already taken out and widened
// to int32 ([tap][channel]), done once in prepare. With depth multiplier 1, 16 (AVX-512) or 8 (AVX2)
// channels at a time stay in registers across the taps and are requantized there; other multipliers
// take a plain loop. One task per output row. Where every tap of a pixel lies inside the input (most
// pixels), the input zero point's share is in the bias instead (the same int32 sum, wrapping alike), the
// sixteen channels' taps of a 3x3 filter stay in registers along the row, and each tap is one widening
// load, a multiply and an add.
#ifndef BATON_BUILTIN_KERNELS_QDEPTHWISE_H
#define BATON_BUILTIN_KERNELS_QDEPTHWISE_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/depthwise_conv.h"
#include "kernels/parallel.h"
#include "kernels/qgemm.h"

namespace baton::builtin {

struct QDepthwiseParams {
  DepthwiseParams geo;
  bool is_signed = false;     // int8 activations (else uint8)
  int32_t input_zero = 0;
  const int32_t* filter = nullptr;      // [filter_h * filter_w][out_c], zero point removed
  const int32_t* bias = nullptr;        // out_c (zeros when the model has none)
  const int32_t* multiplier = nullptr;  // out_c
  const int32_t* shift = nullptr;       // out_c
  int32_t output_zero = 0, lo = 0, hi = 255;
  // For pixels whose taps all lie inside the input (optional; both or neither): the bias with the input
  // zero point's share taken out, bias - input_zero * sum over taps of the filter (out_c), and each tap's
  // byte offset from tap (0, 0) in the input image (filter_h * filter_w).
  const int32_t* interior_bias = nullptr;
  const ptrdiff_t* tap_offset = nullptr;
};

// interior_bias and tap_offset for `p` (see QDepthwiseParams).
void qdepthwise_interior_tables(const QDepthwiseParams& p, std::vector<int32_t>& interior_bias,
                                std::vector<ptrdiff_t>& tap_offset);

void qdepthwise_conv2d(QuantIsa isa, const QDepthwiseParams& p, const uint8_t* input, uint8_t* output,
                       Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QDEPTHWISE_H
