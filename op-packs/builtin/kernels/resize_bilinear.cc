#include "kernels/resize_bilinear.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace baton::builtin {
namespace {

struct Sample {
  float source;
  int low, high;
};

Sample sample(int dst, float scale, int in_size, bool half_pixel_centers) {
  Sample s;
  s.source = half_pixel_centers ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : static_cast<float>(dst) * scale;
  s.low = std::max(static_cast<int>(std::floor(s.source)), 0);
  s.high = std::min(static_cast<int>(std::ceil(s.source)), in_size - 1);
  return s;
}

float scale_of(int in, int out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

}  // namespace

void resize_bilinear(const ResizeBilinearParams& p, const float* input, float* output) {
  const float scale_y = scale_of(p.in_h, p.out_h, p.align_corners);
  const float scale_x = scale_of(p.in_w, p.out_w, p.align_corners);
  const size_t c_count = p.channels;
  float* __restrict out = output;
  for (int b = 0; b < p.batch; ++b) {
    const float* image = input + static_cast<size_t>(b) * p.in_h * p.in_w * c_count;
    for (int y = 0; y < p.out_h; ++y) {
      const Sample sy = sample(y, scale_y, p.in_h, p.half_pixel_centers);
      const float dy = sy.source - static_cast<float>(sy.low);
      const float* row0 = image + static_cast<size_t>(sy.low) * p.in_w * c_count;
      const float* row1 = image + static_cast<size_t>(sy.high) * p.in_w * c_count;
      for (int x = 0; x < p.out_w; ++x) {
        const Sample sx = sample(x, scale_x, p.in_w, p.half_pixel_centers);
        const float dx = sx.source - static_cast<float>(sx.low);
        const float* __restrict tl = row0 + sx.low * c_count;
        const float* __restrict tr = row0 + sx.high * c_count;
        const float* __restrict bl = row1 + sx.low * c_count;
        const float* __restrict br = row1 + sx.high * c_count;
        for (size_t c = 0; c < c_count; ++c) {
          out[c] = tl[c] * (1 - dy) * (1 - dx) + bl[c] * dy * (1 - dx) + tr[c] * (1 - dy) * dx + br[c] * dy * dx;
        }
        out += c_count;
      }
    }
  }
}

}  // namespace baton::builtin
