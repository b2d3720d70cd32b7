#include "kernels/qpool.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace baton::builtin {
namespace {

template <typename T, bool kMax>
void pool(const QPoolParams& q, const T* input, T* output) {
  const PoolParams& p = q.geo;
  const int channels = p.channels;
  for (int b = 0; b < p.batch; ++b) {
    for (int oy = 0; oy < p.out_h; ++oy) {
      const int y0 = oy * p.stride_h - p.pad_top;
      const int fy0 = std::max(0, -y0), fy1 = std::min(p.filter_h, p.in_h - y0);
      for (int ox = 0; ox < p.out_w; ++ox) {
        const int x0 = ox * p.stride_w - p.pad_left;
        const int fx0 = std::max(0, -x0), fx1 = std::min(p.filter_w, p.in_w - x0);
        const int count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
        T* out = output + ((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * channels;
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
