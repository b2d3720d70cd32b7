#include "kernels/hybrid.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace baton::builtin {
namespace {

// min(hi, max(lo, v)) as fmin / fmax give it (a NaN becomes hi), without their library calls.
inline float clamp_code(float v, float lo, float hi) { return !(v <= hi) ? hi : (v < lo ? lo : v); }

void row_dots_scalar(const int8_t* w, int rows, int depth, const int8_t* q, int32_t zero_point, int32_t* out) {
  for (int r = 0; r < rows; ++r) {
    const int8_t* row = w + static_cast<int64_t>(r) * depth;
    int32_t dot = 0, row_sum = 0;
    for (int d = 0; d < depth; ++d) {
      dot += static_cast<int32_t>(row[d]) * q[d];
      row_sum += row[d];
    }
    out[r] = dot - row_sum * zero_point;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) int32_t horizontal_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// Sixteen codes at a time, widened to int16 and multiplied pairwise into int32 lanes (exact: each pair
// of int8 products fits an int32); the weights' sum the same way against ones.
__attribute__((target("avx2"))) void row_dots_avx2(const int8_t* w, int rows, int depth, const int8_t* q,
                                                   int32_t zero_point, int32_t* out) {
  const __m256i ones = _mm256_set1_epi16(1);
  const int blocks = depth / 16;
  for (int r = 0; r < rows; ++r) {
    const int8_t* row = w + static_cast<int64_t>(r) * depth;
    __m256i dot = _mm256_setzero_si256(), sum = _mm256_setzero_si256();
    for (int k = 0; k < blocks; ++k) {
      const __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * k)));
      const __m256i qv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * k)));
      dot = _mm256_add_epi32(dot, _mm256_madd_epi16(wv, qv));
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(wv, ones));
    }
    int32_t d = horizontal_sum(dot), s = horizontal_sum(sum);
    for (int i = 16 * blocks; i < depth; ++i) {
      d += static_cast<int32_t>(row[i]) * q[i];
      s += row[i];
    }
    out[r] = d - s * zero_point;
  }
}
#endif

}  // namespace

void hybrid_row_dots(const int8_t* w, int rows, int depth, const int8_t* q, int32_t zero_point, int32_t* out) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return row_dots_avx2(w, rows, depth, q, zero_point, out);
#endif
  row_dots_scalar(w, rows, depth, q, zero_point, out);
}

void symmetric_quantize_row(const float* x, int n, int8_t* q, float* scale) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    const auto mm = std::minmax_element(x, x + n);
    lo = *mm.first;
    hi = *mm.second;
  }
  const float range = std::max(std::abs(lo), std::abs(hi));
  if (range == 0.0f) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.0f;
    return;
  }
  *scale = range / 127.0f;
  const float inverse = 127.0f / range;
  for (int i = 0; i < n; ++i) {
    // Clamped in float before the conversion, so an infinite or NaN input cannot overflow it.
    const float v = clamp_code(std::round(x[i] * inverse), -127.0f, 127.0f);
    q[i] = static_cast<int8_t>(v);
  }
}

void asymmetric_quantize_row(const float* x, int n, int8_t* q, float* scale, int32_t* zero_point) {
  constexpr double kMin = -128.0, kMax = 127.0;
  double rmin = 0.0, rmax = 0.0;
  if (n > 0) {
    const auto mm = std::minmax_element(x, x + n);
    rmin = std::fmin(0.0, static_cast<double>(*mm.first));
    rmax = std::fmax(0.0, static_cast<double>(*mm.second));
  }
  if (rmin == rmax) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.0f;
    *zero_point = 0;
    return;
  }
  const double s = (rmax - rmin) / (kMax - kMin);
  // The zero point from whichever end loses less precision, nudged onto an integer in range.
  const double from_min = kMin - rmin / s;
  const double from_max = kMax - rmax / s;
  const double error_min = std::abs(kMin) + std::abs(rmin / s);
  const double error_max = std::abs(kMax) + std::abs(rmax / s);
  const double zero = error_min < error_max ? from_min : from_max;
  int32_t nudged;
  if (zero <= kMin) nudged = -128;
  else if (zero >= kMax) nudged = 127;
  else nudged = static_cast<int32_t>(std::round(zero));
  *scale = static_cast<float>(s);
  *zero_point = nudged;
  const float inverse = static_cast<float>(1.0 / static_cast<double>(*scale));
  for (int i = 0; i < n; ++i) {
    const float product = x[i] * inverse;
    const float v = clamp_code(std::round(static_cast<float>(nudged) + product), -128.0f, 127.0f);
    q[i] = static_cast<int8_t>(v);
  }
}

void hybrid_depthwise_conv2d(const DepthwiseParams& p, const int8_t* input, const int32_t* zero_point,
                             const float* input_scale, const int8_t* filter, const float* filter_scale,
                             const float* bias, float* output, Parallel* parallel) {
  const int out_c = p.in_c * p.depth_multiplier;
  // One task per output row of one image.
  parallel_run(parallel, p.batch * p.out_h, [&](int task, int) {
    const int b = task / p.out_h, oy = task % p.out_h;
    const int8_t* image = input + static_cast<int64_t>(b) * p.in_h * p.in_w * p.in_c;
    float* out_row = output + (static_cast<int64_t>(b) * p.out_h + oy) * p.out_w * out_c;
    const int32_t offset = zero_point[b];
    for (int ox = 0; ox < p.out_w; ++ox) {
      for (int c = 0; c < out_c; ++c) {
        const int ic = c / p.depth_multiplier;
        int32_t acc = 0;
        for (int fy = 0; fy < p.filter_h; ++fy) {
          const int iy = oy * p.stride_h - p.pad_top + fy * p.dilation_h;
          if (iy < 0 || iy >= p.in_h) continue;
          for (int fx = 0; fx < p.filter_w; ++fx) {
            const int ix = ox * p.stride_w - p.pad_left + fx * p.dilation_w;
            if (ix < 0 || ix >= p.in_w) continue;
            const int32_t code = image[(static_cast<int64_t>(iy) * p.in_w + ix) * p.in_c + ic];
            acc += static_cast<int32_t>(filter[(fy * p.filter_w + fx) * out_c + c]) * (code - offset);
          }
        }
        float v = static_cast<float>(acc) * (filter_scale[c] * input_scale[b]);
        if (bias) v += bias[c];
        out_row[ox * out_c + c] = clamp_activation(v, p.range);
      }
    }
  });
}

}  // namespace baton::builtin
