// RESIZE_BILINEAR coordinate modes on a 2x2 image {0, 4 / 8, 12}.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace baton::builtin::testing
