// Quantized DEPTHWISE_CONV_2D (uint8 or int8 activations): per output pixel and channel
//   acc = bias + sum over the taps inside the input of (x - input_zero) * (w - filter_zero)
// in int32, then TFLite's per-channel requantization. Taps over the border add nothing, which is what
// padding with the input's zero point means. The filter arrives with its zero points already taken
// out and widened to int32 ([tap][channel]), done once in prepare. With depth multiplier 1 the channel
// loop is vectorised (int32 lanes); others take a plain loop. One task per output row.
#ifndef BATON_BUILTIN_KERNELS_QDEPTHWISE_H
#define BATON_BUILTIN_KERNELS_QDEPTHWISE_H

#include <cstddef>
#include <cstdint>

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
};

// int32 accumulators per worker.
size_t qdepthwise_scratch_size(const QDepthwiseParams& p, int workers);

void qdepthwise_conv2d(QuantIsa isa, const QDepthwiseParams& p, const uint8_t* input, uint8_t* output,
                       int32_t* scratch, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QDEPTHWISE_H
