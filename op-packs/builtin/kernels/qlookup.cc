#include "kernels/qlookup.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/requant_simd.h"

namespace baton::builtin {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

void lookup_table(bool is_signed, float in_scale, int32_t in_zero, float out_scale, int32_t out_zero,
                  float (*f)(float), uint8_t table[256]) {
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const float inverse_scale = 1 / out_scale;
  for (int32_t v = lo; v <= hi; ++v) {
    const float x = in_scale * static_cast<float>(v - in_zero);
    const float y = f(x);
    const float rescaled = std::round(y * inverse_scale);
    const int32_t q = static_cast<int32_t>(rescaled + static_cast<float>(out_zero));
    table[static_cast<uint8_t>(v)] = static_cast<uint8_t>(std::clamp(q, lo, hi));
  }
}

namespace {

#ifdef BATON_QUANT_X86
#define BATON_TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

// 64 codes a step: two byte permutes over the table's halves (vpermi2b looks up 7 bits in two registers),
// the code's top bit picking the half. Returns how many it did.
BATON_TARGET_VBMI int64_t apply_table_vbmi(const uint8_t table[256], const uint8_t* in, uint8_t* out, int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v = _mm512_loadu_si512(in + i);
    const __m512i low = _mm512_permutex2var_epi8(t0, v, t1), high = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_storeu_si512(out + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high));
  }
  return i;
}

bool has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi");
  return yes;
}
#endif

}  // namespace

void apply_table(const uint8_t table[256], const uint8_t* in, uint8_t* out, int64_t n) {
  int64_t i = 0;
#ifdef BATON_QUANT_X86
  if (has_vbmi()) i = apply_table_vbmi(table, in, out, n);
#endif
  for (; i < n; ++i) out[i] = table[in[i]];
}

void softmax_table(float in_scale, float beta, float table[256]) {
  const float scale = -in_scale * beta;
  for (int32_t d = 0; d <= 255; ++d) table[255 - d] = std::exp(scale * static_cast<float>(d));
}

namespace {

template <typename T>
void softmax_rows(const float table[256], float out_scale, int32_t out_zero, const T* in, T* out, int64_t rows,
                  int64_t depth) {
  constexpr int32_t lo = std::is_signed_v<T> ? -128 : 0, hi = std::is_signed_v<T> ? 127 : 255;
  for (int64_t r = 0; r < rows; ++r, in += depth, out += depth) {
    int32_t max = lo;
    for (int64_t j = 0; j < depth; ++j) max = std::max<int32_t>(max, in[j]);
    // Entry for x is table[255 - max + x] = expf(-in_scale * beta * (max - x)).
    const float* row_table = table + (255 - max);
    float sum = 0.0f;
    for (int64_t j = 0; j < depth; ++j) sum += row_table[in[j]];
    const float inverse = 1.0f / (sum * out_scale);
    for (int64_t j = 0; j < depth; ++j) {
      const float p = row_table[in[j]] * inverse;  // in (0, 1 / out_scale]: positive and small
      int32_t q;
      if constexpr (std::is_signed_v<T>) {
        // std::round for a positive p, without the library call: the truncation, plus one where the
        // (exact) remainder is at least a half.
        const int32_t t = static_cast<int32_t>(p);
        q = t + (p - static_cast<float>(t) >= 0.5f) + out_zero;
      } else {
        q = static_cast<int32_t>(p + 0.5f);
      }
      out[j] = static_cast<T>(std::clamp(q, lo, hi));
    }
  }
}

}  // namespace

void qsoftmax(bool is_signed, const float table[256], float out_scale, int32_t out_zero, const uint8_t* in,
              uint8_t* out, int64_t rows, int64_t depth, Parallel* parallel) {
  // Rows are independent; each keeps TFLite's summation order. Small ops stay on the caller's thread.
  const int tasks = rows * depth >= 32 * 1024 ? static_cast<int>(std::min<int64_t>(worker_count(parallel), rows)) : 1;
  parallel_run(parallel, tasks, [&](int task, int) {
    const int64_t begin = rows * task / tasks, end = rows * (task + 1) / tasks;
    const size_t offset = static_cast<size_t>(begin * depth);
    if (is_signed) {
      softmax_rows(table, out_scale, out_zero, reinterpret_cast<const int8_t*>(in + offset),
                   reinterpret_cast<int8_t*>(out + offset), end - begin, depth);
    } else {
      softmax_rows(table, out_scale, out_zero, in + offset, out + offset, end - begin, depth);
    }
  });
}

}  // namespace baton::builtin
