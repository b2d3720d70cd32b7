// IEEE 754 half precision (float16) to and from float, a header-only C++17 helper for the host and for
// plugins: TFLite's FLOAT16 tensors, float16 storage on a GPU, the inference protocol's FP16.
//
// float_to_half rounds to the nearest float16, ties to even (IEEE 754's default); values past the largest
// finite float16 (65504, and up to 65520) become infinity; a NaN stays a NaN, made quiet, with the top ten
// bits of its payload (as the x86 F16C conversion does). half_to_float is exact.
#ifndef BATON_FLOAT16_HPP
#define BATON_FLOAT16_HPP

#include <cstdint>
#include <cstring>

namespace baton {

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // 65520 and up: infinity
  if (abs < 0x38800000u) {  // below 2^-14: a subnormal float16 (or zero), counted in steps of 2^-24
    if (abs <= 0x33000000u) return static_cast<uint16_t>(sign);  // at most half a step: zero (a tie goes to even)
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14 to 24
    uint32_t h = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), half_step = 1u << (shift - 1);
    if (rest > half_step || (rest == half_step && (h & 1u))) ++h;  // 0x400 is the smallest normal: right
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (abs >> 13) - (112u << 10);  // exponent rebiased 127 -> 15, the top 10 mantissa bits
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry steps the exponent: right
  return static_cast<uint16_t>(sign | h);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise into a float, which has the range to hold it exactly.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace baton

#endif  // BATON_FLOAT16_HPP
