#include "kernels/dequantize.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace baton::builtin {

#if defined(__x86_64__) && defined(__GNUC__)
// F16C converts 8 halves per instruction, exactly (subnormals, infinities and NaNs included), so the
// float16 weights of a model unpack at load in a fraction of the time of the portable loop.
__attribute__((target("avx,f16c"))) static void dequantize_f16_f16c(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// CPUID leaf 1: F16C is ECX bit 29; its 256-bit form also needs AVX (bit 28) with the YMM state enabled by
// the OS (OSXSAVE, bit 27, and XCR0 bits 1-2). Read directly: clang has no "f16c" for __builtin_cpu_supports.
static bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 29))) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 0x6u) == 0x6u;
}
#endif

void dequantize_f16(const uint16_t* in, float* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has_f16c = cpu_has_f16c();
  if (has_f16c) {
    dequantize_f16_f16c(in, out, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(in[i]);
}

namespace {

// `code(i)` is the i-th stored value as an integer.
template <typename Code>
void dequantize_codes(const AffineDequantParams& p, Code code, float* out) {
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t c = 0; c < p.channels; ++c) {
      const float scale = p.scales[c];
      const int32_t zero = p.zero_points ? static_cast<int32_t>(p.zero_points[c]) : 0;
      const int64_t base = (o * p.channels + c) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) out[base + i] = static_cast<float>(code(base + i) - zero) * scale;
    }
  }
}

}  // namespace

template <typename Q>
void dequantize_affine(const AffineDequantParams& p, const Q* in, float* out) {
  dequantize_codes(p, [in](int64_t i) { return static_cast<int32_t>(in[i]); }, out);
}

void dequantize_int4(const AffineDequantParams& p, const uint8_t* packed, float* out) {
  dequantize_codes(p, [packed](int64_t i) { return int4_code(packed, i); }, out);
}

template void dequantize_affine<int8_t>(const AffineDequantParams&, const int8_t*, float*);
template void dequantize_affine<uint8_t>(const AffineDequantParams&, const uint8_t*, float*);
template void dequantize_affine<int16_t>(const AffineDequantParams&, const int16_t*, float*);

}  // namespace baton::builtin
