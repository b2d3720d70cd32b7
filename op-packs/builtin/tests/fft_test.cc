// RFFT2D's FFT against the plain double-precision DFT of its definition, over lengths from 1 x 2 to
// 256 x 512, inputs that are cropped, zero-padded or both, and batches of slices; and against a few
// transforms worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "kernels/fft.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> run(int in_h, int in_w, int fft_h, int fft_w, const std::vector<float>& in, int64_t slices = 1) {
  Rfft2dPlan plan;
  EXPECT_TRUE(rfft2d_plan(in_h, in_w, fft_h, fft_w, plan));
  std::vector<float> scratch(rfft2d_scratch_floats(plan));
  std::vector<float> out(static_cast<size_t>(slices) * fft_h * (fft_w / 2 + 1) * 2);
  rfft2d(plan, in.data(), slices, out.data(), scratch.data());
  return out;
}

// sum over y < fft_h, x < fft_w of in[y][x] exp(-2 pi i (u y / fft_h + v x / fft_w)), v <= fft_w / 2,
// with in[y][x] = 0 outside the input: in double, the sum over x first, then over y.
std::vector<std::complex<double>> dft(int in_h, int in_w, int fft_h, int fft_w, const float* in) {
  const int cols = fft_w / 2 + 1, rows = std::min(in_h, fft_h), width = std::min(in_w, fft_w);
  auto turn = [](int64_t k, int n) {
    const double angle = -2 * std::numbers::pi * static_cast<double>(k % n) / n;
    return std::complex<double>(std::cos(angle), std::sin(angle));
  };
  std::vector<std::complex<double>> by_row(static_cast<size_t>(rows) * cols);
  for (int y = 0; y < rows; ++y) {
    for (int v = 0; v < cols; ++v) {
      std::complex<double> sum = 0;
      for (int x = 0; x < width; ++x) sum += static_cast<double>(in[y * in_w + x]) * turn(int64_t{v} * x, fft_w);
      by_row[static_cast<size_t>(y) * cols + v] = sum;
    }
  }
  std::vector<std::complex<double>> out(static_cast<size_t>(fft_h) * cols);
  for (int u = 0; u < fft_h; ++u) {
    for (int v = 0; v < cols; ++v) {
      std::complex<double> sum = 0;
      for (int y = 0; y < rows; ++y) sum += by_row[static_cast<size_t>(y) * cols + v] * turn(int64_t{u} * y, fft_h);
      out[static_cast<size_t>(u) * cols + v] = sum;
    }
  }
  return out;
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// max |ours - exact| over max |exact|, across all slices.
double relative_error(int in_h, int in_w, int fft_h, int fft_w, int slices, unsigned seed) {
  const auto in = random_floats(static_cast<size_t>(slices) * in_h * in_w, seed);
  const auto out = run(in_h, in_w, fft_h, fft_w, in, slices);
  const size_t per_slice = static_cast<size_t>(fft_h) * (fft_w / 2 + 1);
  double max_ref = 0, max_diff = 0;
  for (int s = 0; s < slices; ++s) {
    const auto want = dft(in_h, in_w, fft_h, fft_w, in.data() + static_cast<size_t>(s) * in_h * in_w);
    for (size_t i = 0; i < per_slice; ++i) {
      const std::complex<double> got(out[2 * (s * per_slice + i)], out[2 * (s * per_slice + i) + 1]);
      max_ref = std::max(max_ref, std::abs(want[i]));
      max_diff = std::max(max_diff, std::abs(got - want[i]));
    }
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

TEST(Rfft2d, MatchesTheDftOverLengthsCropsAndPads) {
  struct Case {
    int in_h, in_w, fft_h, fft_w, slices;
  };
  const Case cases[] = {
      {1, 2, 1, 2, 1},    {2, 2, 2, 2, 3},    {1, 4, 1, 4, 1},     {4, 1, 4, 2, 1},      {4, 8, 4, 8, 2},
      {8, 4, 8, 4, 1},    {3, 5, 8, 16, 2},   {6, 10, 4, 8, 3},    {7, 3, 4, 4, 2},      {1, 400, 1, 512, 4},
      {5, 64, 1, 64, 1},  {64, 4, 64, 4, 1},  {16, 16, 16, 16, 1}, {64, 128, 64, 128, 1}, {32, 300, 256, 512, 1},
      {0, 4, 2, 4, 1},    {2, 0, 2, 4, 1},
  };
  for (const Case& c : cases) {
    const double err = relative_error(c.in_h, c.in_w, c.fft_h, c.fft_w, c.slices, 7u * c.fft_h + c.fft_w);
    EXPECT_LT(err, 2e-6) << c.in_h << "x" << c.in_w << " -> " << c.fft_h << "x" << c.fft_w << " x" << c.slices;
  }
}

TEST(Rfft2d, HandWorkedTransforms) {
  // [1 2 3 4] over 1 x 4: X[0] = 10, X[1] = 1 - 3 + i (4 - 2) = -2 + 2i, X[2] = 1 - 2 + 3 - 4 = -2.
  EXPECT_EQ(run(1, 4, 1, 4, {1, 2, 3, 4}), (std::vector<float>{10, 0, -2, 2, -2, 0}));
  // [[1 2] [3 4]] over 2 x 2: sums 10 and -2 across columns, -4 and 0 across rows.
  EXPECT_EQ(run(2, 2, 2, 2, {1, 2, 3, 4}), (std::vector<float>{10, 0, -2, 0, -4, 0, 0, 0}));
  // A unit impulse at (1, 1) of a 4 x 4: exp(-i pi (u + v) / 2).
  std::vector<float> impulse(16, 0.0f);
  impulse[5] = 1;
  const auto out = run(4, 4, 4, 4, impulse);
  for (int u = 0; u < 4; ++u) {
    for (int v = 0; v < 3; ++v) {
      const double angle = -std::numbers::pi * (u + v) / 2;
      EXPECT_NEAR(out[2 * (u * 3 + v)], std::cos(angle), 1e-6) << u << "," << v;
      EXPECT_NEAR(out[2 * (u * 3 + v) + 1], std::sin(angle), 1e-6) << u << "," << v;
    }
  }
}

TEST(Rfft2d, RefusesLengthsItCannotTransform) {
  Rfft2dPlan plan;
  EXPECT_FALSE(rfft2d_plan(4, 4, 3, 4, plan));  // not a power of two
  EXPECT_FALSE(rfft2d_plan(4, 4, 4, 6, plan));
  EXPECT_FALSE(rfft2d_plan(4, 4, 0, 4, plan));
  EXPECT_FALSE(rfft2d_plan(4, 4, 4, 1, plan));  // a row transform of one value: TFLite's is wrong there
  EXPECT_TRUE(rfft2d_plan(4, 4, 1, 2, plan));
}

}  // namespace
}  // namespace baton::builtin::testing
