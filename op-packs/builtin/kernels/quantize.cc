#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/qlookup.h"
#include "kernels/requant_simd.h"

namespace baton::builtin {
namespace {

#ifdef BATON_QUANT_X86
bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

// Four lanes of quantize_floats' rule; returns how many elements it did (a multiple of 4). The quotient
// is the same double division; round half away from zero as trunc plus one step away where the exact
// remainder is at least a half; NaN to 0; the same bounds.
BATON_TARGET_AVX2 int64_t quantize_floats_avx2(const float* in, int64_t n, double scale, int32_t zero_point,
                                               CodeRange r, uint8_t* out) {
  const __m256d d = _mm256_set1_pd(scale), half = _mm256_set1_pd(0.5), one = _mm256_set1_pd(1.0);
  const __m256d sign = _mm256_set1_pd(-0.0), top = _mm256_set1_pd(1e9), bottom = _mm256_set1_pd(-1e9);
  const __m128i zp = _mm_set1_epi32(zero_point), lo = _mm_set1_epi32(r.lo), hi = _mm_set1_epi32(r.hi);
  const __m128i low_bytes = _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d v = _mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(in + i)), d);
    __m256d t = _mm256_round_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d away = _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(v, t)), half, _CMP_GE_OQ);
    t = _mm256_add_pd(t, _mm256_and_pd(away, _mm256_or_pd(_mm256_and_pd(v, sign), one)));
    t = _mm256_and_pd(t, _mm256_cmp_pd(t, t, _CMP_ORD_Q));  // NaN reads as 0
    t = _mm256_max_pd(_mm256_min_pd(t, top), bottom);
    __m128i q = _mm_add_epi32(_mm256_cvtpd_epi32(t), zp);
    q = _mm_min_epi32(_mm_max_epi32(q, lo), hi);
    const int32_t packed = _mm_cvtsi128_si32(_mm_shuffle_epi8(q, low_bytes));
    std::memcpy(out + i, &packed, 4);
  }
  return i;
}

// Eight lanes of requantize_codes' rule (requant8 is the scalar requantize lane by lane).
BATON_TARGET_AVX2 int64_t requantize_codes_avx2(const uint8_t* in, int64_t n, bool in_signed, int32_t in_zero,
                                                QuantizedMultiplier m, int32_t out_zero, CodeRange r, uint8_t* out) {
  const __m256i mult = _mm256_set1_epi32(m.multiplier), shift = _mm256_set1_epi32(m.shift);
  const __m256i zp = _mm256_set1_epi32(out_zero), lo = _mm256_set1_epi32(r.lo), hi = _mm256_set1_epi32(r.hi);
  const __m256i zero_in = _mm256_set1_epi32(in_zero), away = _mm256_set1_epi32(-1);
  const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                             0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i));
    const __m256i x = _mm256_sub_epi32(in_signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes), zero_in);
    const __m256i codes = _mm256_shuffle_epi8(requant8(x, mult, shift, zp, lo, hi, away), low_bytes);
    const int32_t first = _mm256_extract_epi32(codes, 0), second = _mm256_extract_epi32(codes, 4);
    std::memcpy(out + i, &first, 4);
    std::memcpy(out + i + 4, &second, 4);
  }
  return i;
}
#endif

}  // namespace

void quantize_floats(const float* in, int64_t n, float scale, int32_t zero_point, bool out_signed, uint8_t* out) {
  const CodeRange r = code_range(out_signed);
  const double d = scale;
  int64_t first = 0;
#ifdef BATON_QUANT_X86
  if (has_avx2()) first = quantize_floats_avx2(in, n, d, zero_point, r, out);
#endif
  for (int64_t i = first; i < n; ++i) {
    // TFLite divides in double: x / scale can be a tie in float and not in double.
    double q = std::round(static_cast<double>(in[i]) / d);
    // NaN reads as 0.0; a huge or infinite value is bounded first, so the conversion is defined.
    if (std::isnan(q)) q = 0.0;
    q = std::fmax(-1e9, std::fmin(1e9, q));
    const int64_t v = static_cast<int64_t>(q) + zero_point;
    out[i] = static_cast<uint8_t>(std::clamp<int64_t>(v, r.lo, r.hi));
  }
}

void quantize_floats_int16(const float* in, int64_t n, float scale, int32_t zero_point, int16_t* out) {
  const double d = scale;
  for (int64_t i = 0; i < n; ++i) {
    double q = std::round(static_cast<double>(in[i]) / d);
    if (std::isnan(q)) q = 0.0;
    q = std::fmax(-1e9, std::fmin(1e9, q));
    const int64_t v = static_cast<int64_t>(q) + zero_point;
    out[i] = static_cast<int16_t>(std::clamp<int64_t>(v, -32768, 32767));
  }
}

void requantize_any(const void* in, CodeType in_type, int64_t n, int32_t in_zero, QuantizedMultiplier m,
                    int32_t out_zero, void* out, CodeType out_type) {
  const int32_t lo = out_type == CodeType::kUint8 ? 0 : out_type == CodeType::kInt8 ? -128 : -32768;
  const int32_t hi = out_type == CodeType::kUint8 ? 255 : out_type == CodeType::kInt8 ? 127 : 32767;
  const Requantize rq{m, out_zero, lo, hi};
  for (int64_t i = 0; i < n; ++i) {
    int32_t x;
    switch (in_type) {
      case CodeType::kUint8: x = static_cast<const uint8_t*>(in)[i]; break;
      case CodeType::kInt8: x = static_cast<const int8_t*>(in)[i]; break;
      default: x = static_cast<const int16_t*>(in)[i]; break;
    }
    const int32_t v = requantize(x - in_zero, rq);
    switch (out_type) {
      case CodeType::kUint8: static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v); break;
      case CodeType::kInt8: static_cast<int8_t*>(out)[i] = static_cast<int8_t>(v); break;
      default: static_cast<int16_t*>(out)[i] = static_cast<int16_t>(v); break;
    }
  }
}

void requantize_codes(const uint8_t* in, int64_t n, bool in_signed, int32_t in_zero, QuantizedMultiplier m,
                      int32_t out_zero, bool out_signed, uint8_t* out) {
  const CodeRange r = code_range(out_signed);
  const Requantize rq{m, out_zero, r.lo, r.hi};
  int64_t first = 0;
#ifdef BATON_QUANT_X86
  if (has_avx2()) first = requantize_codes_avx2(in, n, in_signed, in_zero, m, out_zero, r, out);
#endif
  for (int64_t i = first; i < n; ++i) {
    const int32_t x = in_signed ? static_cast<int32_t>(static_cast<int8_t>(in[i])) : static_cast<int32_t>(in[i]);
    out[i] = static_cast<uint8_t>(requantize(x - in_zero, rq));
  }
}

ConcatScaling concat_scaling(float in_scale, int32_t in_zero, float out_scale, int32_t out_zero) {
  ConcatScaling s;
  s.copy = in_scale == out_scale && in_zero == out_zero;
  const float inverse = 1.0f / out_scale;
  const float scale = in_scale * inverse;
  const float bias = static_cast<float>(-in_zero) * scale;
  // Each output code depends on its input code alone: the rule once for the 256 codes, then lookups.
  for (int code = 0; code < 256; ++code) {
    const float product = static_cast<float>(code) * scale;
    // Bounded in float first: any finite scale keeps the conversion defined.
    const float r = std::fmax(-1e6f, std::fmin(1e6f, std::round(product + bias)));
    const int32_t v = static_cast<int32_t>(r) + out_zero;
    s.table[code] = static_cast<uint8_t>(std::clamp(v, 0, 255));
  }
  return s;
}

void qconcat(int64_t outer, const int64_t* chunk, const uint8_t* const* inputs, const ConcatScaling* scaling,
             int count, uint8_t* out) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < count; ++i) {
      const int64_t n = chunk[i];
      const uint8_t* src = inputs[i] + o * n;
      if (scaling[i].copy) {
        std::memcpy(out, src, static_cast<size_t>(n));
      } else {
        apply_table(scaling[i].table, src, out, n);
      }
      out += n;
    }
  }
}

}  // namespace baton::builtin
