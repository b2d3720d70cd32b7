// DEQUANTIZE: float16 -> float32, and int4 / int8 / uint8 / int16 -> float32 as (q - zero_point) * scale with
// per-tensor or per-channel parameters.
#ifndef BATON_BUILTIN_KERNELS_DEQUANTIZE_H
#define BATON_BUILTIN_KERNELS_DEQUANTIZE_H

#include <cstdint>

#include "baton/float16.hpp"

namespace baton::builtin {

using baton::float_to_half;  // baton/float16.hpp
using baton::half_to_float;
void dequantize_f16(const uint16_t* in, float* out, int64_t n);

// The tensor seen as [outer, channels, inner]; channel c uses scales[c] and zero_points[c]
// (channels = 1 for per-tensor). zero_points may be null (all zero).
struct AffineDequantParams {
  int64_t outer = 1, channels = 1, inner = 1;
  const float* scales = nullptr;
  const int64_t* zero_points = nullptr;
};

template <typename Q>
void dequantize_affine(const AffineDequantParams& p, const Q* in, float* out);

extern template void dequantize_affine<int8_t>(const AffineDequantParams&, const int8_t*, float*);
extern template void dequantize_affine<uint8_t>(const AffineDequantParams&, const uint8_t*, float*);
extern template void dequantize_affine<int16_t>(const AffineDequantParams&, const int16_t*, float*);

// INT4 codes as LiteRT packs them: two a byte, element 2k in the low nibble of byte k, 2k + 1 in the high
// one, each a signed 4-bit value.
inline int32_t int4_code(const uint8_t* packed, int64_t i) {
  const uint8_t b = packed[i >> 1];
  const int32_t v = (i & 1) ? (b >> 4) : (b & 0x0F);
  return v >= 8 ? v - 16 : v;
}
void dequantize_int4(const AffineDequantParams& p, const uint8_t* packed, float* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_DEQUANTIZE_H
