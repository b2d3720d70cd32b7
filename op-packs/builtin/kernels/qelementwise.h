// Quantized ADD, SUB and MUL (uint8, int8 or int16, numpy broadcasting planned by kernels/binary.h), with
// TFLite's integer rules:
//  - ADD / SUB: both inputs, minus their zero points, are shifted left by 20 bits and rescaled to a
//    common scale (twice the larger input scale) with multipliers below one; the sum or difference is
//    rescaled to the output scale, the output zero point added, the result clamped.
//  - MUL: (a - a_zero) * (b - b_zero) rescaled by a_scale * b_scale / out_scale (that product taken in
//    float, as TFLite does), plus the output zero point, clamped.
#ifndef BATON_BUILTIN_KERNELS_QELEMENTWISE_H
#define BATON_BUILTIN_KERNELS_QELEMENTWISE_H

#include <cstdint>

#include "kernels/binary.h"
#include "kernels/parallel.h"
#include "kernels/qgemm.h"
#include "kernels/quant_math.h"

namespace baton::builtin {

enum class QBinaryOp { kAdd, kSub, kMul };

struct QBinaryParams {
  QBinaryOp op = QBinaryOp::kAdd;
  bool is_signed = false;
  int32_t a_zero = 0, b_zero = 0, out_zero = 0;
  int32_t lo = 0, hi = 255;  // the output clamp (type range and fused activation)
  // ADD / SUB
  int left_shift = 20;
  QuantizedMultiplier a_mult, b_mult;
  // all
  QuantizedMultiplier out_mult;
};

// Fills the multipliers of `p` from the scales (TFLite's Prepare arithmetic). False when a scale is not
// positive or a multiplier would be out of range.
bool qbinary_prepare(QBinaryParams& p, float a_scale, float b_scale, float out_scale);

// The inner runs go 16 (AVX-512) or 8 (AVX2) elements at a time on `isa`; the results are the scalar
// rule's. Large ops are split across `parallel`'s workers (null: the caller's thread).
void qbinary(QuantIsa isa, const QBinaryParams& p, const BroadcastPlan& plan, const uint8_t* a, const uint8_t* b,
             uint8_t* out, Parallel* parallel = nullptr);

// int16 codes (TFLite's 16x8 ADD, SUB and MUL: zero points 0, a left shift of 15 for ADD / SUB), the same
// way.
void qbinary16(QuantIsa isa, const QBinaryParams& p, const BroadcastPlan& plan, const int16_t* a, const int16_t* b,
               int16_t* out);

// One element, for tests and the odd scalar tail.
int32_t qbinary_one(const QBinaryParams& p, int32_t a, int32_t b);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QELEMENTWISE_H
