// 8-bit HARD_SWISH, uint8 LOG_SOFTMAX (int8: kernels/qlog_softmax.h), 8-bit PRELU and int8 SQUARED_DIFFERENCE with TFLite 2.9's
// arithmetic:
//  - HARD_SWISH: the input (minus its zero point, times 128) is carried in int16 fixed point; a
//    "relu-ish" factor in [0, 1] (the input rescaled so that 3 is 32768, saturated, mapped from
//    [-1, 1] to [0, 1]) multiplies the input rescaled to the output scale, with int16 multipliers made
//    from TFLite's 32-bit ones (rounded to their top 16 bits).
//  - LOG_SOFTMAX (uint8): the float exp table of the 8-bit SOFTMAX, log of the row's sum, and each
//    output rint((in_scale * (x - max) - log(sum)) / out_scale) + zero point, in float as TFLite's
//    optimized kernel computes it; the output is scale 16/256, zero point 255.
//  - PRELU: x - in_zero >= 0 scales by in_scale / out_scale, else (x - in_zero) * (alpha - alpha_zero)
//    by in_scale * alpha_scale / out_scale; plus the output zero point, clamped to the type.
//  - SQUARED_DIFFERENCE (int8): both sides shifted left 7 bits and rescaled to twice the larger input
//    scale, the difference squared in int32 and rescaled to the output.
#ifndef BATON_BUILTIN_KERNELS_QACTIVATION_H
#define BATON_BUILTIN_KERNELS_QACTIVATION_H

#include <cstdint>

#include "kernels/broadcast_index.h"
#include "kernels/quant_math.h"

namespace baton::builtin {

struct QHardSwishParams {
  bool is_signed = false;
  int32_t in_zero = 0, out_zero = 0;
  int16_t reluish_multiplier = 0, output_multiplier = 0;
  int reluish_exponent = 0, output_exponent = 0;
};

// False when the output multiplier would have to shift left (output scale below in_scale / 128).
bool qhard_swish_prepare(QHardSwishParams& p, float in_scale, float out_scale);
void qhard_swish(const QHardSwishParams& p, const uint8_t* in, uint8_t* out, int64_t n);

// `table` from softmax_table(in_scale, 1, table) (kernels/qlookup.h).
void qlog_softmax_u8(const float table[256], float in_scale, float out_scale, int32_t out_zero, const uint8_t* in,
                     uint8_t* out, int64_t rows, int64_t depth);

// ABS on int8 or int16 codes: |x - in_zero|, rescaled by in_scale / out_scale when the scales differ,
// plus the output zero point, clamped to the type.
struct QAbsParams {
  int32_t in_zero = 0, out_zero = 0;
  bool rescale = false;
  QuantizedMultiplier m;
};
void qabs_i8(const QAbsParams& p, const int8_t* in, int8_t* out, int64_t n);
void qabs_i16(const QAbsParams& p, const int16_t* in, int16_t* out, int64_t n);

// int8 RSQRT: x - in_zero (0 gives 127; negative is an error), its inverse square root as TFLite's fixed-point multiplier
// (kernels/ql2norm.h) applied to 1 with 20 extra bits, then rescaled by 1 / (sqrt(in_scale) * out_scale),
// plus the output zero point, clamped.
struct QRsqrtParams {
  int32_t in_zero = 0, out_zero = 0;
  QuantizedMultiplier m;
};
// False (output incomplete) when a value is below the zero point: TFLite fails on it too.
bool qrsqrt_i8(const QRsqrtParams& p, const int8_t* in, int8_t* out, int64_t n);

// uint8 DIV: (a - a_zero) / (b - b_zero) with TFLite's integer reciprocal of the divisor (gemmlowp's
// 1 / (1 + x) after normalising it), the dividend normalised to its headroom, and the quotient rescaled
// by a_scale / (b_scale * out_scale); plus the output zero point, clamped to [lo, hi].
struct QDivParams {
  int32_t a_zero = 0, b_zero = 0, out_zero = 0;
  int32_t lo = 0, hi = 255;
  QuantizedMultiplier m;
};
// False when a divisor code equals its zero point (a division by zero).
bool qdiv_u8(const QDivParams& p, const IndexPlan& plan, const uint8_t* a, const uint8_t* b, uint8_t* out);

struct QPreluParams {
  bool is_signed = false;
  int32_t in_zero = 0, alpha_zero = 0, out_zero = 0;
  QuantizedMultiplier positive, negative;
};

// Input 0 of the plan is the input, input 1 the alpha.
void qprelu(const QPreluParams& p, const IndexPlan& plan, const uint8_t* in, const uint8_t* alpha, uint8_t* out);
// With a constant alpha: the output code of every input code for each alpha element, made once
// (alpha_count * 256 bytes), and the lookup that replaces qprelu with it (the same bytes).
void qprelu_table(const QPreluParams& p, const uint8_t* alpha, int64_t alpha_count, uint8_t* table);
void qprelu_lookup(const IndexPlan& plan, const uint8_t* table, const uint8_t* in, uint8_t* out);

struct QSquaredDifferenceParams {
  int32_t a_zero = 0, b_zero = 0, out_zero = 0;
  QuantizedMultiplier a_mult, b_mult, out_mult;
  // Each operand's rescaled value of every code (indexed by the code's byte), made by the prepare.
  int32_t a_rescaled[256] = {}, b_rescaled[256] = {};
};

// The multipliers and the rescaled tables; the zero points must be set first.
void qsquared_difference_prepare(QSquaredDifferenceParams& p, float a_scale, float b_scale, float out_scale);
void qsquared_difference_i8(const QSquaredDifferenceParams& p, const IndexPlan& plan, const int8_t* a,
                            const int8_t* b, int8_t* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QACTIVATION_H
