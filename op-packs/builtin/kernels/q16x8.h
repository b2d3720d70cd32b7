// TFLite's 16x8 kernels: int16 activations (symmetric, zero point 0), int8 weights (per tensor or per
// output channel), int64 bias. CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED accumulate in int64 and
// rescale with the int64 form of TFLite's fixed-point multiply (multiply_by_quantized_multiplier_64),
// as TFLite 2.9's reference kernels do (it has no other kernel for an int64 bias). CONV_2D and
// FULLY_CONNECTED take their dot products 16 values at a time in int32 lanes with AVX2, added into
// int64 before a lane could overflow: the same sums.
#ifndef BATON_BUILTIN_KERNELS_Q16X8_H
#define BATON_BUILTIN_KERNELS_Q16X8_H

#include <cstddef>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/depthwise_conv.h"
#include "kernels/pool.h"
#include "kernels/quant_math.h"

namespace baton::builtin {

// Per output channel: the multiplier (one entry when the filter is quantized per tensor is not enough;
// callers fill every channel) and the clamp.
struct Q16Output {
  const QuantizedMultiplier* mults = nullptr;  // one per output channel
  int32_t lo = -32768, hi = 32767;
  // An int32 bias (CONV_2D): TFLite 2.9 then accumulates in int32 (wrapping) and rescales with the
  // 32-bit multiply; the bias still comes widened to int64.
  bool acc32 = false;
};

// Filter [out_c, filter_h, filter_w, in_c]; bias null or [out_c]. `patch`: scratch of
// conv_16x8_patch_size(p) values (one output pixel's window).
void conv_16x8(const ConvParams& p, const int16_t* input, const int8_t* filter, const int64_t* bias,
               const Q16Output& q, int16_t* patch, int16_t* output);
inline size_t conv_16x8_patch_size(const ConvParams& p) {
  return static_cast<size_t>(p.filter_h) * p.filter_w * p.in_c;
}
// Filter [1, filter_h, filter_w, out_c].
void depthwise_16x8(const DepthwiseParams& p, const int16_t* input, const int8_t* filter, const int64_t* bias,
                    const Q16Output& q, int16_t* output);
// Weights [units, depth]; bias null or [units].
void fully_connected_16x8(int batch, int units, int depth, const int16_t* input, const int8_t* weights,
                          const int64_t* bias, const Q16Output& q, int16_t* output);

// int16 pooling (TFLite's integer kernels): the window's codes, averaged with rounding half away from
// zero over the cells inside the input, or their maximum; clamped to [lo, hi]. p.range is not used.
void average_pool_16(const PoolParams& p, int32_t lo, int32_t hi, const int16_t* input, int16_t* output);
void max_pool_16(const PoolParams& p, int32_t lo, int32_t hi, const int16_t* input, int16_t* output);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_Q16X8_H
