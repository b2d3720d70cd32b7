#include "kernels/pool.h"

#include <cmath>
#include <cstddef>

namespace baton::builtin {
namespace {

enum class PoolKind { kAverage, kMax, kL2 };

template <PoolKind kKind>
void pool(const PoolParams& p, const float* __restrict input, float* __restrict output) {
  const int c_count = p.channels;
  for (int b = 0; b < p.batch; ++b) {
    for (int oy = 0; oy < p.out_h; ++oy) {
      const int y0 = oy * p.stride_h - p.pad_top;
      const int fy0 = std::max(0, -y0), fy1 = std::min(p.filter_h, p.in_h - y0);
      for (int ox = 0; ox < p.out_w; ++ox) {
        const int x0 = ox * p.stride_w - p.pad_left;
        const int fx0 = std::max(0, -x0), fx1 = std::min(p.filter_w, p.in_w - x0);
        float* __restrict out = output + ((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * c_count;
        constexpr bool kMax = kKind == PoolKind::kMax;
        for (int c = 0; c < c_count; ++c) out[c] = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
        for (int fy = fy0; fy < fy1; ++fy) {
          for (int fx = fx0; fx < fx1; ++fx) {
            const float* __restrict in =
                input + ((static_cast<size_t>(b) * p.in_h + y0 + fy) * p.in_w + x0 + fx) * c_count;
            if constexpr (kMax) {
              for (int c = 0; c < c_count; ++c) out[c] = std::max(out[c], in[c]);
            } else if constexpr (kKind == PoolKind::kL2) {
              for (int c = 0; c < c_count; ++c) out[c] += in[c] * in[c];
            } else {
              for (int c = 0; c < c_count; ++c) out[c] += in[c];
            }
          }
        }
        const int count = std::max(0, fy1 - fy0) * std::max(0, fx1 - fx0);
        for (int c = 0; c < c_count; ++c) {
          float v = kMax ? out[c] : (count > 0 ? out[c] / static_cast<float>(count) : 0.0f);
          if constexpr (kKind == PoolKind::kL2) v = std::sqrt(v);
          out[c] = clamp_activation(v, p.range);
        }
      }
    }
  }
}

}  // namespace

void pool_compute_geometry(Padding padding, PoolParams& p) {
  p.out_h = window_output_size(padding, p.in_h, p.filter_h, p.stride_h, 1);
  p.out_w = window_output_size(padding, p.in_w, p.filter_w, p.stride_w, 1);
  p.pad_top = window_padding_before(p.in_h, p.out_h, p.filter_h, p.stride_h, 1);
  p.pad_left = window_padding_before(p.in_w, p.out_w, p.filter_w, p.stride_w, 1);
}

void average_pool(const PoolParams& p, const float* input, float* output) { pool<PoolKind::kAverage>(p, input, output); }
void max_pool(const PoolParams& p, const float* input, float* output) { pool<PoolKind::kMax>(p, input, output); }
void l2_pool(const PoolParams& p, const float* input, float* output) { pool<PoolKind::kL2>(p, input, output); }

}  // namespace baton::builtin
