// Conversions between real values and 8-bit codes, by TFLite's rules:
//  - QUANTIZE float -> uint8/int8: zero_point + round(x / scale) (float division, round half away from
//    zero), clamped to the type.
//  - QUANTIZE 8-bit -> 8-bit (requantize): (x - in_zero) times the fixed-point multiplier of
//    in_scale / out_scale (kernels/quant_math.h), plus out_zero, clamped.
//  - CONCATENATION of uint8 inputs whose scale or zero point differ from the output's: each such input
//    is mapped in float, round(x * (in_scale / out_scale) - in_zero * that) + out_zero, clamped; inputs
//    with the output's parameters are copied.
// The loops run in the baseline instruction set, and QUANTIZE from float and the 8-bit requantize also in
// AVX2 lanes with the same integers (no fused multiply-add anywhere changes a rounding).
#ifndef BATON_BUILTIN_KERNELS_QUANTIZE_H
#define BATON_BUILTIN_KERNELS_QUANTIZE_H

#include <cstdint>

#include "kernels/quant_math.h"

namespace baton::builtin {

// TFLite's AffineQuantize: round(double(x) / double(scale)) (half away from zero) plus the zero point,
// clamped to the type; NaN reads as 0.
void quantize_floats(const float* in, int64_t n, float scale, int32_t zero_point, bool out_signed, uint8_t* out);

void requantize_codes(const uint8_t* in, int64_t n, bool in_signed, int32_t in_zero, QuantizedMultiplier m,
                      int32_t out_zero, bool out_signed, uint8_t* out);

// The same two with int16 codes on either side (TFLite's 16x8 QUANTIZE): round(x / scale) + zero point
// clamped to int16; and the requantize rule between uint8, int8 and int16 codes.
void quantize_floats_int16(const float* in, int64_t n, float scale, int32_t zero_point, int16_t* out);
enum class CodeType { kUint8, kInt8, kInt16 };
void requantize_any(const void* in, CodeType in_type, int64_t n, int32_t in_zero, QuantizedMultiplier m,
                    int32_t out_zero, void* out, CodeType out_type);

// One input of a requantizing concatenation.
struct ConcatScaling {
  bool copy = true;  // same parameters as the output
  uint8_t table[256] = {};  // the output code of every uint8 input code, by the rule above (not copy)
};
ConcatScaling concat_scaling(float in_scale, int32_t in_zero, float out_scale, int32_t out_zero);

void qconcat(int64_t outer, const int64_t* chunk, const uint8_t* const* inputs, const ConcatScaling* scaling,
             int count, uint8_t* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QUANTIZE_H
