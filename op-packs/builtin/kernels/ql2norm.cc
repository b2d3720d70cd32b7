#include "kernels/ql2norm.h"

#include <algorithm>
#include <limits>

#include "kernels/quant_math.h"
#include "kernels/requant_simd.h"

namespace baton::builtin {
namespace {

// gemmlowp's SaturatingRoundingMultiplyByPOT for a positive exponent: x * 2^exponent, saturated.
int32_t saturating_shift_left(int32_t x, int exponent) {
  const int32_t threshold = (int32_t{1} << (31 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return shift_left_wrapping(x, exponent);
}

int32_t wrapping_sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

}  // namespace

void inv_sqrt_multiplier(int32_t x, int32_t* multiplier, int* right_shift) {
  if (x <= 1) {  // 0 (an all-zero row) is treated as 1, as TFLite does
    *multiplier = std::numeric_limits<int32_t>::max();
    *right_shift = 0;
    return;
  }
  int shift = 11;
  while (x >= (int32_t{1} << 29)) {
    x /= 4;
    ++shift;
  }
  // Normalise x into [2^27, 2^29) by an even shift, so its square root shifts by half.
  const int spare_bit_pairs = (__builtin_clz(static_cast<uint32_t>(x)) - 1) / 2 - 1;
  shift -= spare_bit_pairs;
  x <<= 2 * spare_bit_pairs;
  // Newton-Raphson for 1 / sqrt(x / 2^28) in fixed point with 3 integer bits (raw 2^28 = 1.0):
  // y <- 1.5 y - (x / 2) y^3, five times from y = 1. Products of values with a and b integer bits have
  // a + b, and are brought back to 3 by a saturating left shift.
  const int32_t half_x = rounding_divide_by_pot(x >> 1, 1);
  constexpr int32_t kOneAndAHalf = (1 << 28) + (1 << 27);
  int32_t y = 1 << 28;
  for (int i = 0; i < 5; ++i) {
    const int32_t y3 = saturating_shift_left(
        saturating_rounding_doubling_high_mul(saturating_rounding_doubling_high_mul(y, y), y), 6);
    y = saturating_shift_left(wrapping_sub(saturating_rounding_doubling_high_mul(kOneAndAHalf, y),
                                           saturating_rounding_doubling_high_mul(half_x, y3)),
                              3);
  }
  constexpr int32_t kHalfSqrt2 = 1518500250;  // sqrt(2) / 2 with 0 integer bits
  y = saturating_rounding_doubling_high_mul(y, kHalfSqrt2);
  if (shift < 0) {
    y = shift_left_wrapping(y, -shift);
    shift = 0;
  }
  *multiplier = y;
  *right_shift = shift;
}

namespace {

template <typename T>
void normalize_rows(int32_t in_zero, const T* in, T* out, int64_t rows, int64_t depth) {
  constexpr bool kSigned = std::numeric_limits<T>::is_signed;
  const CodeRange range = code_range(kSigned);
  for (int64_t r = 0; r < rows; ++r, in += depth, out += depth) {
    int32_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t d = static_cast<int32_t>(in[c]) - in_zero;
      sum += d * d;
    }
    int32_t multiplier;
    int right_shift;
    inv_sqrt_multiplier(sum, &multiplier, &right_shift);
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t d = static_cast<int32_t>(in[c]) - in_zero;
      int32_t v;
      if constexpr (kSigned) {
        v = multiply_by_quantized_multiplier(d, QuantizedMultiplier{multiplier, 7 - right_shift});
      } else {
        v = 128 + rounding_divide_by_pot(saturating_rounding_doubling_high_mul(128 * d, multiplier), right_shift);
      }
      out[c] = static_cast<T>(std::clamp(v, range.lo, range.hi));
    }
  }
}

#ifdef BATON_QUANT_X86

template <bool kSigned>
BATON_TARGET_VNNI void normalize_rows_avx512(int32_t in_zero, const uint8_t* in, uint8_t* out, int64_t rows, int64_t depth) {
  const __m512i zero16 = _mm512_set1_epi16(static_cast<int16_t>(in_zero));
  const __m512i zero32 = _mm512_set1_epi32(in_zero);
  const __m512i lo = _mm512_set1_epi32(kSigned ? -128 : 0), hi = _mm512_set1_epi32(kSigned ? 127 : 255);
  const __m512i out_zero = _mm512_set1_epi32(kSigned ? 0 : 128);
  for (int64_t r = 0; r < rows; ++r, in += depth, out += depth) {
    // The sum of squares, 32 codes a step as int16 differences, pairs added by vpmaddwd. Lanes past the
    // row are masked to zero after the zero point is taken off.
    __m512i acc = _mm512_setzero_si512();
    for (int64_t c = 0; c < depth; c += 32) {
      const __mmask32 m = depth - c >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << (depth - c)) - 1);
      const __m256i bytes = _mm256_maskz_loadu_epi8(m, in + c);
      const __m512i x = kSigned ? _mm512_cvtepi8_epi16(bytes) : _mm512_cvtepu8_epi16(bytes);
      const __m512i d = _mm512_maskz_sub_epi16(m, x, zero16);
      acc = _mm512_add_epi32(acc, _mm512_madd_epi16(d, d));
    }
    int32_t multiplier;
    int right_shift;
    inv_sqrt_multiplier(_mm512_reduce_add_epi32(acc), &multiplier, &right_shift);
    // uint8: (diff << 7) rescaled and shifted right by right_shift; int8: diff rescaled with the shift
    // 7 - right_shift (quant_math.h's multiply_by_quantized_multiplier).
    const int left = kSigned ? std::max(7 - right_shift, 0) : 7;
    const int right = kSigned ? std::max(right_shift - 7, 0) : right_shift;
    const __m512i mult = _mm512_set1_epi32(multiplier);
    const __m512i left_v = _mm512_set1_epi32(left), right_v = _mm512_set1_epi32(right);
    for (int64_t c = 0; c < depth; c += 16) {
      const __mmask16 m = depth - c >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (depth - c)) - 1u);
      const __m128i bytes = _mm_maskz_loadu_epi8(m, in + c);
      const __m512i d = _mm512_sub_epi32(kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes), zero32);
      const __m512i v = _mm512_add_epi32(mbqm16(d, mult, left_v, right_v, 0xFFFF), out_zero);
      const __m512i codes = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
      _mm_mask_storeu_epi8(out + c, m, _mm512_cvtepi32_epi8(codes));
    }
  }
}

#endif  // BATON_QUANT_X86

}  // namespace

void ql2_normalize(QuantIsa isa, bool is_signed, int32_t in_zero, const uint8_t* in, uint8_t* out, int64_t rows,
                   int64_t depth) {
#ifdef BATON_QUANT_X86
  if (isa == QuantIsa::kAvx512Vnni) {
    if (is_signed) normalize_rows_avx512<true>(in_zero, in, out, rows, depth);
    else normalize_rows_avx512<false>(in_zero, in, out, rows, depth);
    return;
  }
#endif
  (void)isa;
  if (is_signed) {
    normalize_rows(in_zero, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out), rows, depth);
  } else {
    normalize_rows(in_zero, in, out, rows, depth);
  }
}

}  // namespace baton::builtin
