// 8-bit L2_NORMALIZATION over the last axis the way TFLite 2.9 computes it, all in integers. Per row:
// the sum of squared (code - in_zero), its inverse square root as a fixed-point multiplier (gemmlowp's
// Newton-Raphson iteration, see inv_sqrt_multiplier), then each (code - in_zero) rescaled to the
// output's fixed scale 1/128: uint8 as 128 + (128 * diff) times the multiplier (zero point 128),
// int8 as diff times the multiplier shifted left by 7 (zero point 0); clamped to the type.
#ifndef BATON_BUILTIN_KERNELS_QL2NORM_H
#define BATON_BUILTIN_KERNELS_QL2NORM_H

#include <cstdint>

#include "kernels/qgemm.h"

namespace baton::builtin {

// 1 / sqrt(x) as multiplier * 2^-right_shift / 2^31 (right_shift >= 0), TFLite's
// GetInvSqrtQuantizedMultiplierExp; x <= 1 gives the largest multiplier and no shift.
void inv_sqrt_multiplier(int32_t x, int32_t* multiplier, int* right_shift);

// `isa`: kAvx512Vnni takes 32 codes a step for the sum and 16 for the output (the same integers as the
// scalar loop); any other runs the scalar loop.
void ql2_normalize(QuantIsa isa, bool is_signed, int32_t in_zero, const uint8_t* in, uint8_t* out, int64_t rows,
                   int64_t depth);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QL2NORM_H
