#include "kernels/qpool.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace baton::builtin {
namespace {

// One output pixel, its channels in chunks: the window's taps outer, the channels inner (contiguous, so
// the compiler vectorises them), into int32 sums (exact while the window holds under 2^23 codes: the
// caller takes the int64 loop past that).
template <typename T, bool kMax>
void pool_pixel(const QPoolParams& q, const T* window, int rows, int cols, int count, T* out) {
  const PoolParams& p = q.geo;
  const int channels = p.channels;
  constexpr int kChunk = 256;
  int32_t acc[kChunk];
  for (int c0 = 0; c0 < channels; c0 += kChunk) {
    const int n = std::min(kChunk, channels - c0);
    for (int c = 0; c < n; ++c) acc[c] = kMax ? std::numeric_limits<T>::lowest() : 0;
    for (int fy = 0; fy < rows; ++fy) {
      const T* in = window + static_cast<size_t>(fy) * p.in_w * channels + c0;
      for (int fx = 0; fx < cols; ++fx, in += channels) {
        for (int c = 0; c < n; ++c) {
          if constexpr (kMax) acc[c] = std::max<int32_t>(acc[c], in[c]);
          else acc[c] += in[c];
        }
      }
    }
    if constexpr (kMax) {
      for (int c = 0; c < n; ++c) out[c0 + c] = static_cast<T>(std::clamp(acc[c], q.lo, q.hi));
    } else {
      // (v +- count / 2) / count, truncated: the magnitude's quotient, divided in double (exact: the
      // quotient is at most 256, so its rounding error is far below 1 / count), which vectorises where
      // an integer division does not.
      const double divisor = count > 0 ? count : 1;
      const int32_t half = count / 2;
      for (int c = 0; c < n; ++c) {
        const int32_t v = acc[c];
        const int32_t magnitude = static_cast<int32_t>(static_cast<double>((v < 0 ? -v : v) + half) / divisor);
        const int32_t avg = count > 0 ? (v < 0 ? -magnitude : magnitude) : v;
        out[c0 + c] = static_cast<T>(std::clamp(avg, q.lo, q.hi));
      }
    }
  }
}

template <typename T, bool kMax>
void pool(const QPoolParams& q, const T* input, T* output) {
  const PoolParams& p = q.geo;
  const int channels = p.channels;
  const bool int32_sums = static_cast<int64_t>(p.filter_h) * p.filter_w < (int64_t{1} << 23);
  for (int b = 0; b < p.batch; ++b) {
    for (int oy = 0; oy < p.out_h; ++oy) {
      const int y0 = oy * p.stride_h - p.pad_top;
      const int fy0 = std::max(0, -y0), fy1 = std::min(p.filter_h, p.in_h - y0);
      for (int ox = 0; ox < p.out_w; ++ox) {
        const int x0 = ox * p.stride_w - p.pad_left;
        const int fx0 = std::max(0, -x0), fx1 = std::min(p.filter_w, p.in_w - x0);
        const int count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
        T* out = output + ((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * channels;
        if (int32_sums) {
          const T* window = count > 0 ? input + ((static_cast<size_t>(b) * p.in_h + y0 + fy0) * p.in_w + x0 + fx0) * channels
                                      : input;
          pool_pixel<T, kMax>(q, window, std::max(0, fy1 - fy0), std::max(0, fx1 - fx0), count, out);
          continue;
        }
        for (int c = 0; c < channels; ++c) {
          // int64: a window of millions of codes cannot overflow the sum.
          int64_t acc = kMax ? static_cast<int64_t>(std::numeric_limits<T>::lowest()) : 0;
          for (int fy = fy0; fy < fy1; ++fy) {
            const T* in = input + ((static_cast<size_t>(b) * p.in_h + y0 + fy) * p.in_w + x0 + fx0) * channels + c;
            for (int fx = fx0; fx < fx1; ++fx, in += channels) {
              if constexpr (kMax) acc = std::max<int64_t>(acc, *in);
              else acc += *in;
            }
          }
          if constexpr (!kMax) {
            if (count > 0) acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          }
          out[c] = static_cast<T>(std::clamp<int64_t>(acc, q.lo, q.hi));
        }
      }
    }
  }
}

}  // namespace

void qaverage_pool(const QPoolParams& p, const uint8_t* input, uint8_t* output) {
  if (p.is_signed) pool<int8_t, false>(p, reinterpret_cast<const int8_t*>(input), reinterpret_cast<int8_t*>(output));
  else pool<uint8_t, false>(p, input, output);
}

void qmax_pool(const QPoolParams& p, const uint8_t* input, uint8_t* output) {
  if (p.is_signed) pool<int8_t, true>(p, reinterpret_cast<const int8_t*>(input), reinterpret_cast<int8_t*>(output));
  else pool<uint8_t, true>(p, input, output);
}

}  // namespace baton::builtin
