// RESIZE_BILINEAR coordinate modes on a 2x2 image {0, 4 / 8, 12}.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "kernels/resize_bilinear.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> resize(int out_h, int out_w, bool align_corners, bool half_pixel) {
  ResizeBilinearParams p;
  p.in_h = p.in_w = 2;
  p.out_h = out_h;
  p.out_w = out_w;
  p.align_corners = align_corners;
  p.half_pixel_centers = half_pixel;
  const std::vector<float> in = {0, 4, 8, 12};
  std::vector<float> out(static_cast<size_t>(out_h) * out_w);
  resize_bilinear(p, in.data(), out.data());
  return out;
}

// half_pixel_centers, 2 -> 4: scale 0.5, source = (x + 0.5) * 0.5 - 0.5 = -0.25, 0.25, 0.75, 1.25.
// -0.25 clamps to pixel 0 (low = high = 0), 1.25 to pixel 1; 0.25 -> 0.75*p0 + 0.25*p1,
// 0.75 -> 0.25*p0 + 0.75*p1. Along a row 0 -> 4: 0, 1, 3, 4; rows mix 0 and 8 the same way.
TEST(ResizeBilinear, HalfPixelCenters) {
  EXPECT_EQ(resize(4, 4, false, true),
            (std::vector<float>{0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12}));
}

// align_corners, 2 -> 3: scale (2-1)/(3-1) = 0.5, sources 0, 0.5, 1.
TEST(ResizeBilinear, AlignCorners) {
  EXPECT_EQ(resize(3, 3, true, false), (std::vector<float>{0, 2, 4, 4, 6, 8, 8, 10, 12}));
}

// Neither, 2 -> 4: scale 0.5, sources 0, 0.5, 1, 1.5; 1.5 has low = high = 1 (ceil clamps).
TEST(ResizeBilinear, Legacy) {
  const auto out = resize(1, 4, false, false);
  EXPECT_EQ(out, (std::vector<float>{0, 2, 4, 4}));
}

// Channel counts from the vector path's (8 and more: whole vectors and a tail) down to the element-by-element
// one, 3x5 -> 7x9 in each coordinate mode, two images: each output against TFLite's formula worked here from
// the same source positions (within float rounding: the vector copies may fuse a multiply and an add).
TEST(ResizeBilinear, AnyChannelCountMatchesTheFormula) {
  for (int channels : {1, 3, 8, 19, 32}) {
    for (int mode = 0; mode < 3; ++mode) {
      ResizeBilinearParams p;
      p.batch = 2;
      p.in_h = 3;
      p.in_w = 5;
      p.channels = channels;
      p.out_h = 7;
      p.out_w = 9;
      p.align_corners = mode == 1;
      p.half_pixel_centers = mode == 2;
      std::vector<float> in(static_cast<size_t>(2 * 3 * 5 * channels));
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(static_cast<int>((i * 7919) % 97) - 48) / 8.0f;
      std::vector<float> out(static_cast<size_t>(2 * 7 * 9 * channels));
      resize_bilinear(p, in.data(), out.data());
      auto source = [&](int dst, int in_size, int out_size) {
        const double scale = p.align_corners ? double(in_size - 1) / (out_size - 1) : double(in_size) / out_size;
        const double s = p.half_pixel_centers ? (dst + 0.5) * scale - 0.5 : dst * scale;
        const int low = std::max(static_cast<int>(std::floor(s)), 0);
        const int high = std::min(static_cast<int>(std::ceil(s)), in_size - 1);
        return std::make_tuple(s - low, low, high);
      };
      for (int b = 0; b < 2; ++b) {
        for (int y = 0; y < 7; ++y) {
          const auto [dy, y0, y1] = source(y, 3, 7);
          for (int x = 0; x < 9; ++x) {
            const auto [dx, x0, x1] = source(x, 5, 9);
            for (int c = 0; c < channels; ++c) {
              auto at = [&](int yy, int xx) { return double(in[((b * 3 + yy) * 5 + xx) * channels + c]); };
              const double want = at(y0, x0) * (1 - dy) * (1 - dx) + at(y1, x0) * dy * (1 - dx) +
                                  at(y0, x1) * (1 - dy) * dx + at(y1, x1) * dy * dx;
              EXPECT_NEAR(out[((b * 7 + y) * 9 + x) * channels + c], want, 1e-5)
                  << "channels " << channels << " mode " << mode << " at " << b << "," << y << "," << x << "," << c;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
