// SIMD forms of kernels/quant_math.h's requantization for the x86 8-bit kernels: 8 lanes with AVX2,
// 16 with AVX-512, lane by lane the same integers as the scalar rules (tests hold them to it). Each
// function carries its own target attribute, so only code that checked the CPU (best_quant_isa) may
// call them; the file that includes this is compiled for the baseline ISA.
#ifndef BATON_BUILTIN_KERNELS_REQUANT_SIMD_H
#define BATON_BUILTIN_KERNELS_REQUANT_SIMD_H

#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12's AVX-512 headers initialise a placeholder from itself (`__Y = __Y`), which -Wmaybe-uninitialized
// reports at every use; the warning is about the header, not this code.
#if defined(__clang__)
#include <immintrin.h>
#else
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif
#define BATON_QUANT_X86 1
#define BATON_TARGET_AVX2 __attribute__((target("avx2")))
// AVX-512 F/BW/VL and VNNI: what QuantIsa::kAvx512Vnni promises.
#define BATON_TARGET_VNNI __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace baton::builtin {

// floor((a * b + 2^30) / 2^31) for b >= 0, which is SaturatingRoundingDoublingHighMul there.
BATON_TARGET_AVX2 static inline __m256i srdhm8(__m256i a, __m256i b) {
  const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  __m256i even = _mm256_add_epi64(_mm256_mul_epi32(a, b), nudge);
  __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(b, 32)), nudge);
  even = _mm256_srli_epi64(even, 31);  // bits 31..62 to the low half
  odd = _mm256_slli_epi64(odd, 1);     // bits 31..62 to the high half
  return _mm256_blend_epi32(even, odd, 0xAA);
}

// MultiplyByQuantizedMultiplier lane by lane, with left = max(shift, 0) and right = max(-shift, 0)
// given. `away`: all ones for TFLite's ties-away-from-zero final shift, zero for ruy's ties-upward one.
BATON_TARGET_AVX2 static inline __m256i mbqm8(__m256i x, __m256i mult, __m256i left, __m256i right, __m256i away) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i h = srdhm8(_mm256_sllv_epi32(x, left), mult);
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), right), _mm256_set1_epi32(1));
  const __m256i rem = _mm256_and_si256(h, mask);
  // threshold = mask / 2 + (h < 0 when rounding away from zero); cmpgt yields -1 for true.
  const __m256i threshold =
      _mm256_sub_epi32(_mm256_srli_epi32(mask, 1), _mm256_and_si256(_mm256_cmpgt_epi32(zero, h), away));
  return _mm256_sub_epi32(_mm256_srav_epi32(h, right), _mm256_cmpgt_epi32(rem, threshold));
}

// The whole output stage: rescale by (mult, shift), add the zero point, clamp to [lo, hi].
BATON_TARGET_AVX2 static inline __m256i requant8(__m256i x, __m256i mult, __m256i shift, __m256i zp, __m256i lo,
                                                 __m256i hi, __m256i away) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i left = _mm256_max_epi32(shift, zero);
  const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
  const __m256i v = _mm256_add_epi32(mbqm8(x, mult, left, right, away), zp);
  return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
}

// 16 clamped int32 codes (two registers) to 16 bytes.
BATON_TARGET_AVX2 static inline __m128i codes_to_bytes(__m256i c0, __m256i c1) {
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(c0, c1), 0xD8);  // int16, in order
  // The codes are within [-128, 255]; take the low byte of each int16 without saturating.
  const __m256i bytes = _mm256_shuffle_epi8(
      w, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1, 0, 2, 4, 6, 8, 10, 12, 14, -1,
                          -1, -1, -1, -1, -1, -1, -1));
  const __m256i joined = _mm256_permute4x64_epi64(bytes, 0x08);  // qwords 0 and 2
  return _mm256_castsi256_si128(joined);
}

BATON_TARGET_VNNI static inline __m512i srdhm16(__m512i a, __m512i b) {
  const __m512i nudge = _mm512_set1_epi64(int64_t{1} << 30);
  __m512i even = _mm512_add_epi64(_mm512_mul_epi32(a, b), nudge);
  __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), _mm512_srli_epi64(b, 32)), nudge);
  even = _mm512_srli_epi64(even, 31);
  odd = _mm512_slli_epi64(odd, 1);
  return _mm512_mask_blend_epi32(0xAAAA, even, odd);
}

BATON_TARGET_VNNI static inline __m512i mbqm16(__m512i x, __m512i mult, __m512i left, __m512i right,
                                               __mmask16 away) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i h = srdhm16(_mm512_sllv_epi32(x, left), mult);
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
  const __m512i rem = _mm512_and_si512(h, mask);
  const __m512i half = _mm512_srli_epi32(mask, 1);
  const __m512i threshold = _mm512_mask_add_epi32(half, _mm512_cmplt_epi32_mask(h, zero) & away, half, one);
  const __m512i v = _mm512_srav_epi32(h, right);
  return _mm512_mask_add_epi32(v, _mm512_cmpgt_epi32_mask(rem, threshold), v, one);
}

BATON_TARGET_VNNI static inline __m512i requant16(__m512i x, __m512i mult, __m512i shift, __m512i zp, __m512i lo,
                                                  __m512i hi, __mmask16 away) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i left = _mm512_max_epi32(shift, zero);
  const __m512i right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
  const __m512i v = _mm512_add_epi32(mbqm16(x, mult, left, right, away), zp);
  return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
}

}  // namespace baton::builtin

#endif  // x86

#endif  // BATON_BUILTIN_KERNELS_REQUANT_SIMD_H
