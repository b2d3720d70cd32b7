#include "kernels/q16x8.h"

#include <algorithm>
#include <cstddef>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace baton::builtin {
namespace {

int16_t finish(int64_t acc, const int64_t* bias, int channel, const Q16Output& q) {
  if (bias) acc += bias[channel];
  const int32_t v = q.acc32 ? multiply_by_quantized_multiplier(static_cast<int32_t>(static_cast<uint32_t>(acc)),
                                                               q.mults[channel])
                            : multiply_by_quantized_multiplier_64(acc, q.mults[channel]);
  return static_cast<int16_t>(std::clamp(v, q.lo, q.hi));
}

// The exact int64 dot products of x with up to kDotRows int8 rows (w, rows apart by n), n values each.
constexpr int kDotRows = 4;

void dots_scalar(const int16_t* x, const int8_t* w, int64_t n, int rows, int64_t* out) {
  for (int r = 0; r < rows; ++r) {
    const int8_t* row = w + r * n;
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<int32_t>(row[i]) * x[i];
    out[r] = sum;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) int64_t lanes_sum(__m256i v) {
  // Each lane is below 2^31 in magnitude; widened before adding so the sum cannot wrap.
  const __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v));
  const __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1));
  const __m256i s = _mm256_add_epi64(lo, hi);
  const __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return _mm_cvtsi128_si64(t) + _mm_extract_epi64(t, 1);
}

// Sixteen values a step: the weights widened to int16, multiplied pairwise into int32 lanes
// (_mm256_madd_epi16). A pair of products is at most 2^23 in magnitude (|int16 * int8| <= 2^22), so a
// lane takes 128 steps (2^30) before it is added into the int64 sums: exact, as TFLite's int64
// accumulator is.
__attribute__((target("avx2"))) void dots_avx2(const int16_t* x, const int8_t* w, int64_t n, int rows, int64_t* out) {
  constexpr int64_t kFlush = 128;
  const int64_t blocks = n / 16;
  int64_t sums[kDotRows] = {};
  for (int64_t b0 = 0; b0 < blocks; b0 += kFlush) {
    const int64_t b1 = std::min(blocks, b0 + kFlush);
    __m256i acc[kDotRows] = {};
    for (int64_t b = b0; b < b1; ++b) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16 * b));
      for (int r = 0; r < kDotRows; ++r) {
        if (r >= rows) break;
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + r * n + 16 * b));
        acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(xv, _mm256_cvtepi8_epi16(bytes)));
      }
    }
    for (int r = 0; r < rows; ++r) sums[r] += lanes_sum(acc[r]);
  }
  for (int r = 0; r < rows; ++r) {
    const int8_t* row = w + r * n;
    for (int64_t i = 16 * blocks; i < n; ++i) sums[r] += static_cast<int32_t>(row[i]) * x[i];
    out[r] = sums[r];
  }
}
#endif

void dots_16x8(const int16_t* x, const int8_t* w, int64_t n, int rows, int64_t* out) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return dots_avx2(x, w, n, rows, out);
#endif
  dots_scalar(x, w, n, rows, out);
}

}  // namespace

void conv_16x8(const ConvParams& p, const int16_t* input, const int8_t* filter, const int64_t* bias,
               const Q16Output& q, int16_t* patch, int16_t* output) {
  const int64_t k = static_cast<int64_t>(p.filter_h) * p.filter_w * p.in_c;
  int64_t sums[kDotRows];
  for (int b = 0; b < p.batch; ++b) {
    for (int oy = 0; oy < p.out_h; ++oy) {
      for (int ox = 0; ox < p.out_w; ++ox) {
        // The window's codes in the filter's order, zeros outside the input (they add nothing). A window
        // of no channels holds none, however wide it is.
        int16_t* at = patch;
        for (int fy = 0; k > 0 && fy < p.filter_h; ++fy) {
          const int iy = oy * p.stride_h - p.pad_top + fy * p.dilation_h;
          for (int fx = 0; fx < p.filter_w; ++fx, at += p.in_c) {
            const int ix = ox * p.stride_w - p.pad_left + fx * p.dilation_w;
            if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) {
              std::fill(at, at + p.in_c, int16_t{0});
            } else {
              const int16_t* in = input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c;
              std::copy(in, in + p.in_c, at);
            }
          }
        }
        for (int oc = 0; oc < p.out_c; oc += kDotRows) {
          const int rows = std::min(kDotRows, p.out_c - oc);
          dots_16x8(patch, filter + oc * k, k, rows, sums);
          for (int r = 0; r < rows; ++r) *output++ = finish(sums[r], bias, oc + r, q);
        }
      }
    }
  }
}

void depthwise_16x8(const DepthwiseParams& p, const int16_t* input, const int8_t* filter, const int64_t* bias,
                    const Q16Output& q, int16_t* output) {
  const int out_c = p.in_c * p.depth_multiplier;
  for (int b = 0; b < p.batch; ++b) {
    for (int oy = 0; oy < p.out_h; ++oy) {
      for (int ox = 0; ox < p.out_w; ++ox) {
        for (int ic = 0; ic < p.in_c; ++ic) {
          for (int m = 0; m < p.depth_multiplier; ++m) {
            const int oc = ic * p.depth_multiplier + m;
            int64_t acc = 0;
            for (int fy = 0; fy < p.filter_h; ++fy) {
              const int iy = oy * p.stride_h - p.pad_top + fy * p.dilation_h;
              if (iy < 0 || iy >= p.in_h) continue;
              for (int fx = 0; fx < p.filter_w; ++fx) {
                const int ix = ox * p.stride_w - p.pad_left + fx * p.dilation_w;
                if (ix < 0 || ix >= p.in_w) continue;
                const int32_t x = input[((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c + ic];
                const int32_t w = filter[(static_cast<size_t>(fy) * p.filter_w + fx) * out_c + oc];
                acc += w * x;
              }
            }
            output[((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * out_c + oc] = finish(acc, bias, oc, q);
          }
        }
      }
    }
  }
}

void fully_connected_16x8(int batch, int units, int depth, const int16_t* input, const int8_t* weights,
                          const int64_t* bias, const Q16Output& q, int16_t* output) {
  int64_t sums[kDotRows];
  for (int b = 0; b < batch; ++b) {
    const int16_t* in = input + static_cast<size_t>(b) * depth;
    for (int u = 0; u < units; u += kDotRows) {
      const int rows = std::min(kDotRows, units - u);
      dots_16x8(in, weights + static_cast<int64_t>(u) * depth, depth, rows, sums);
      for (int r = 0; r < rows; ++r) output[static_cast<size_t>(b) * units + u + r] = finish(sums[r], bias, u + r, q);
    }
  }
}

namespace {

template <typename F>
void pool_windows(const PoolParams& p, const int16_t* input, int16_t* output, F reduce) {
  for (int b = 0; b < p.batch; ++b) {
    for (int oy = 0; oy < p.out_h; ++oy) {
      const int y0 = oy * p.stride_h - p.pad_top;
      const int fy_begin = std::max(0, -y0), fy_end = std::min(p.filter_h, p.in_h - y0);
      for (int ox = 0; ox < p.out_w; ++ox) {
        const int x0 = ox * p.stride_w - p.pad_left;
        const int fx_begin = std::max(0, -x0), fx_end = std::min(p.filter_w, p.in_w - x0);
        for (int c = 0; c < p.channels; ++c) {
          *output++ = reduce([&](auto visit) {
            for (int fy = fy_begin; fy < fy_end; ++fy) {
              for (int fx = fx_begin; fx < fx_end; ++fx) {
                visit(input[((static_cast<size_t>(b) * p.in_h + y0 + fy) * p.in_w + x0 + fx) * p.channels + c]);
              }
            }
          });
        }
      }
    }
  }
}

}  // namespace

void average_pool_16(const PoolParams& p, int32_t lo, int32_t hi, const int16_t* input, int16_t* output) {
  pool_windows(p, input, output, [lo, hi](auto each) {
    int32_t sum = 0, count = 0;
    each([&](int16_t v) {
      sum += v;
      ++count;
    });
    if (count == 0) return static_cast<int16_t>(std::clamp(0, lo, hi));
    const int32_t mean = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
    return static_cast<int16_t>(std::clamp(mean, lo, hi));
  });
}

void max_pool_16(const PoolParams& p, int32_t lo, int32_t hi, const int16_t* input, int16_t* output) {
  pool_windows(p, input, output, [lo, hi](auto each) {
    int32_t max = -32768;
    each([&](int16_t v) { max = std::max<int32_t>(max, v); });
    return static_cast<int16_t>(std::clamp(max, lo, hi));
  });
}

}  // namespace baton::builtin
