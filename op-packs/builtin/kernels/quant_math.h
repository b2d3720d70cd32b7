// TFLite's fixed-point arithmetic for quantized kernels, written from its published rules so that
// baton's integer kernels give the same bits as TFLite's reference kernels:
//  - a real multiplier M > 0 becomes an int32 mantissa q in [2^30, 2^31) and an exponent e with
//    M ~= q * 2^(e - 31) (frexp, mantissa rounded half away from zero; M < 2^-31 flushes to 0);
//  - x * M is then "saturating rounding doubling high multiply" (round(x * q / 2^31), ties up, which for
//    q >= 0 equals floor((x * q + 2^30) / 2^31)), after a left shift by e when e > 0, followed by a
//    rounding right shift by -e when e < 0. Two roundings, as TFLite 2.9 does by default. The right
//    shift rounds ties away from zero in TFLite's own kernels (reference and optimized: ADD, MUL,
//    DEPTHWISE_CONV_2D, ...), but upward (toward +infinity) in ruy, the GEMM library TFLite 2.9's x86
//    build runs CONV_2D and FULLY_CONNECTED with; the two differ on negative ties only. Checked against
//    the native TFLite 2.9 library on the SSD model's convolutions (tests/data/reference).
//  - a real value r quantizes to zero_point + round(r / scale), round half away from zero.
// Everything here is exact integer arithmetic; the kernels call these per element or use SIMD forms that
// tests check against them.
#ifndef BATON_BUILTIN_KERNELS_QUANT_MATH_H
#define BATON_BUILTIN_KERNELS_QUANT_MATH_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace baton::builtin {

struct QuantizedMultiplier {
  int32_t multiplier = 0;  // 0, or in [2^30, 2^31)
  int shift = 0;           // > 0: shift left first; < 0: rounding shift right after
};

// TFLite's QuantizeMultiplier. `real` must be >= 0 and finite.
inline QuantizedMultiplier quantize_multiplier(double real) {
  QuantizedMultiplier m;
  if (real == 0.0) return m;
  int exponent = 0;
  const double mantissa = std::frexp(real, &exponent);
  int64_t fixed = static_cast<int64_t>(std::round(mantissa * static_cast<double>(int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    exponent = 0;
    fixed = 0;
  }
  m.multiplier = static_cast<int32_t>(fixed);
  m.shift = exponent;
  return m;
}

// gemmlowp's SaturatingRoundingDoublingHighMul: (a * b * 2 + 2^31) / 2^32 rounded to nearest; only
// INT32_MIN * INT32_MIN saturates.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * b;
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));  // division truncates toward zero
}

// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero.
inline int32_t rounding_divide_by_pot(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// The same, ties rounded toward +infinity: floor(x / 2^exponent + 1/2) (ruy's rounding right shift).
inline int32_t rounding_divide_by_pot_upward(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  return (x >> exponent) + (remainder > (mask >> 1) ? 1 : 0);
}

// x * (1 << left) with the wrap-around of two's complement (TFLite multiplies int32 directly).
inline int32_t shift_left_wrapping(int32_t x, int left) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << left);
}

// TFLite's MultiplyByQuantizedMultiplier (double rounding); `ties_upward` selects ruy's final rounding.
inline int32_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier m, bool ties_upward = false) {
  const int left = m.shift > 0 ? m.shift : 0;
  const int right = m.shift > 0 ? 0 : -m.shift;
  const int32_t high = saturating_rounding_doubling_high_mul(shift_left_wrapping(x, left), m.multiplier);
  return ties_upward ? rounding_divide_by_pot_upward(high, right) : rounding_divide_by_pot(high, right);
}

// TFLite's MultiplyByQuantizedMultiplier for an int64 value (16x8 kernels' int64 accumulators, the
// rescaled products of 8-bit REDUCE_PROD): the multiplier rounded to 16 bits, one rounding shift with
// ties upward, the result narrowed to int32 as TFLite narrows it.
inline int32_t multiply_by_quantized_multiplier_64(int64_t x, QuantizedMultiplier m) {
  const int64_t reduced = m.multiplier < 0x7FFF0000 ? (m.multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - m.shift;
  const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(reduced)) +
                    (int64_t{1} << (total_shift - 1));
  return static_cast<int32_t>(v >> total_shift);
}

// An int32 accumulator to an output code: rescale, add the zero point, clamp to [lo, hi].
struct Requantize {
  QuantizedMultiplier m;
  int32_t zero_point = 0;
  int32_t lo = 0, hi = 255;
  bool ties_upward = false;
};

inline int32_t requantize(int32_t acc, const Requantize& r) {
  // The zero point is added with wrap-around, as the SIMD forms add it (only a degenerate multiplier
  // comes near the int32 limits).
  const int32_t v = static_cast<int32_t>(
      static_cast<uint32_t>(multiply_by_quantized_multiplier(acc, r.m, r.ties_upward)) +
      static_cast<uint32_t>(r.zero_point));
  return std::clamp(v, r.lo, r.hi);
}

// TFLite's quantization of one real value (used for activation bounds): zero_point + round(r / scale)
// in float, without clamping.
inline int32_t quantize_value(float r, float scale, int32_t zero_point) {
  return zero_point + static_cast<int32_t>(std::round(r / scale));
}

// The code range of an 8-bit type: [0, 255] for uint8, [-128, 127] for int8.
struct CodeRange {
  int32_t lo = 0, hi = 255;
};

inline CodeRange code_range(bool is_signed) { return is_signed ? CodeRange{-128, 127} : CodeRange{0, 255}; }

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QUANT_MATH_H
