// The cpu delegate (plugins/cpu): its kernels (every instruction set this CPU runs) against values
// worked by hand and a plain loop written here; depthwise + 1x1 pairs of many shapes through the
// delegate against the builtin pack alone; and the real float models through the chain [cpu, xnnpack]
// at one thread against the committed reference outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "interpreter.h"
#include "baton/plugin_kit_scratch.hpp"
#include "kernels.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;
namespace fb = baton::tflite;
using cpu::Clamp;
using cpu::DepthwiseGeometry;
using cpu::Kernels;

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- kernels -------------------------------------------------------------------------------------------

DepthwiseGeometry geometry(int h, int w, int c, int k, int stride, bool same) {
  DepthwiseGeometry g;
  g.in_h = h, g.in_w = w, g.channels = c, g.kernel = k, g.stride_h = stride, g.stride_w = stride;
  auto axis = [&](int in, int& out, int& before) {
    out = same ? (in + stride - 1) / stride : (in - k) / stride + 1;
    before = same ? std::max(0, (out - 1) * stride + k - in) / 2 : 0;
  };
  axis(h, g.out_h, g.pad_top);
  axis(w, g.out_w, g.pad_left);
  return g;
}

// A direct depthwise convolution, one tap at a time, in double.
std::vector<float> plain_depthwise(const DepthwiseGeometry& g, const std::vector<float>& in, const std::vector<float>& w,
                                   const std::vector<float>& bias, Clamp cl) {
  std::vector<float> out(static_cast<size_t>(g.out_h) * g.out_w * g.channels);
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int c = 0; c < g.channels; ++c) {
        double acc = bias[c];
        for (int ky = 0; ky < g.kernel; ++ky)
          for (int kx = 0; kx < g.kernel; ++kx) {
            const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
            acc += static_cast<double>(in[(static_cast<size_t>(iy) * g.in_w + ix) * g.channels + c]) *
                   w[(static_cast<size_t>(ky) * g.kernel + kx) * g.channels + c];
          }
        out[(static_cast<size_t>(oy) * g.out_w + ox) * g.channels + c] =
            static_cast<float>(std::min<double>(std::max<double>(acc, cl.min), cl.max));
      }
  return out;
}

std::vector<float> floats_of(size_t n, uint32_t seed) {
  const std::vector<uint8_t> bytes = random_floats(n, seed);
  std::vector<float> out(n);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(CpuKernels, DepthwiseByHand) {
  // Input of ones, weights of ones, bias 0.5, SAME 3x3 stride 1 on 3x3: a corner sees 4 taps, an edge 6,
  // the centre 9. Channel 1 has weights of two: twice that. Then stride 2 on 3x3 keeps the corners.
  for (const Kernels* k : cpu::available_kernels()) {
    SCOPED_TRACE(k->isa);
    DepthwiseGeometry g = geometry(3, 3, 2, 3, 1, true);
    const std::vector<float> in(18, 1.0f), bias = {0.5f, 0.5f};
    std::vector<float> w(18);
    for (int t = 0; t < 9; ++t) w[t * 2] = 1.0f, w[t * 2 + 1] = 2.0f;
    std::vector<float> out(9 * 2, -1.0f);
    k->depthwise_rows(g, in.data(), w.data(), bias.data(), {-kInf, kInf}, 0, 3, out.data());
    const float taps[9] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
    for (int p = 0; p < 9; ++p) {
      EXPECT_EQ(out[p * 2], taps[p] + 0.5f) << "pixel " << p;
      EXPECT_EQ(out[p * 2 + 1], 2 * taps[p] + 0.5f) << "pixel " << p;
    }
    // Rows 1..2 only, clamped to RELU6: the buffer starts at row 1.
    k->depthwise_rows(g, in.data(), w.data(), bias.data(), {0.0f, 6.0f}, 1, 3, out.data());
    EXPECT_EQ(out[0], 6.0f);          // row 1, x 0, channel 0: 6.5 clamped
    EXPECT_EQ(out[2 * 2 + 0], 6.0f);  // row 1, x 2
    EXPECT_EQ(out[3 * 2 + 0], 4.5f);  // row 2, x 0
    g = geometry(3, 3, 2, 3, 2, true);  // SAME stride 2: 2x2 outputs, padding 1 before
    ASSERT_EQ(g.out_h, 2);
    k->depthwise_rows(g, in.data(), w.data(), bias.data(), {-kInf, kInf}, 0, 2, out.data());
    EXPECT_EQ(out[0], 4.5f);  // (0,0): taps (0..1, 0..1)
    EXPECT_EQ(out[2], 4.5f);  // (0,1): taps (0..1, 1..2)
    EXPECT_EQ(out[6], 4.5f);  // (1,1)
  }
}

TEST(CpuKernels, DepthwiseMatchesAPlainLoop) {
  struct Case { int h, w, c, k, stride; bool same; };
  const Case cases[] = {{7, 9, 19, 3, 1, true},  {11, 13, 33, 3, 2, true}, {10, 8, 24, 5, 1, true},
                        {13, 11, 21, 5, 2, true}, {9, 12, 16, 3, 2, false}, {12, 9, 7, 5, 1, false},
                        {2, 3, 5, 3, 1, true},    {1, 1, 40, 5, 2, true},
                        // border pixels four vectors at a time (64 channels on AVX-512), then the rest
                        {6, 7, 64, 5, 1, true},   {9, 8, 83, 3, 2, true},  {5, 6, 144, 5, 2, true},
                        // stride 1: rows in groups of 8, 4, 2 and 1 pixels, groups at an edge (or both)
                        // with the columns outside masked, channel tails too
                        {4, 15, 37, 5, 1, true},  {3, 30, 20, 3, 1, true}, {3, 1, 9, 5, 1, true},
                        {5, 17, 12, 3, 1, false},
                        // stride 2: inner pixels in groups of 4 that share their columns, channel tails
                        {6, 29, 37, 5, 2, true},  {5, 24, 24, 3, 2, false}, {4, 33, 16, 3, 2, true}};
  for (const Kernels* k : cpu::available_kernels()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(k->isa) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) +
                   " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + (c.same ? " same" : " valid"));
      const DepthwiseGeometry g = geometry(c.h, c.w, c.c, c.k, c.stride, c.same);
      const auto in = floats_of(static_cast<size_t>(c.h) * c.w * c.c, 1);
      const auto w = floats_of(static_cast<size_t>(c.k) * c.k * c.c, 2);
      const auto bias = floats_of(static_cast<size_t>(c.c), 3);
      const Clamp cl{-0.5f, 1.5f};
      const auto want = plain_depthwise(g, in, w, bias, cl);
      std::vector<float> got(want.size(), NAN);
      k->depthwise_rows(g, in.data(), w.data(), bias.data(), cl, 0, g.out_h, got.data());
      EXPECT_LE(relative_error(got.data(), want.data(), want.size()), 1e-6);
    }
  }
}

TEST(CpuKernels, GemmMatchesAPlainLoop) {
  struct Case { int m, n, k; };
  // n of 8, 24, 37 and 40: a last panel at most half a tile wide, which runs the half-width tile.
  const Case cases[] = {{1, 1, 1}, {13, 37, 19}, {12, 32, 64}, {25, 8, 3}, {7, 100, 130}, {50, 17, 5}, {30, 24, 40}, {12, 40, 7}};
  for (const Kernels* kn : cpu::available_kernels()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(kn->isa) + " m" + std::to_string(c.m) + " n" + std::to_string(c.n) + " k" + std::to_string(c.k));
      const int lda = c.k + 3, ldc = c.n + 2;  // leading dimensions wider than the matrices
      // A gets mr rows more than m: the kernel may read (never use) rows of its last tile past m.
      const auto a = floats_of(static_cast<size_t>(c.m + kn->mr) * lda, 4);
      const auto b = floats_of(static_cast<size_t>(c.n) * c.k, 5);
      std::vector<float> bias = floats_of(static_cast<size_t>(c.n), 6);
      std::vector<float> packed(cpu::packed_b_size(c.n, c.k, kn->nr));
      cpu::pack_b(b.data(), c.n, c.k, kn->nr, packed.data());
      bias.resize(static_cast<size_t>((c.n + kn->nr - 1) / kn->nr * kn->nr), 0.0f);
      const Clamp cl{-2.0f, kInf};
      std::vector<float> got(static_cast<size_t>(c.m) * ldc, 123.0f), want(got);
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j) {
          double acc = bias[j];
          for (int p = 0; p < c.k; ++p) acc += static_cast<double>(a[i * lda + p]) * b[j * c.k + p];
          want[i * ldc + j] = static_cast<float>(std::max(acc, -2.0));
        }
      kn->gemm(c.m, c.n, c.k, a.data(), lda, packed.data(), bias.data(), cl, got.data(), ldc);
      EXPECT_LE(relative_error(got.data(), want.data(), want.size()), 1e-6);  // padding columns untouched too
    }
  }
}

TEST(CpuKernels, HardSwishMatchesTFLitesFormula) {
  for (const Kernels* kn : cpu::available_kernels()) {
    for (long n : {1L, 7L, 16L, 37L, 300L}) {  // whole vectors and tails
      SCOPED_TRACE(std::string(kn->isa) + " n" + std::to_string(n));
      std::vector<float> x = floats_of(static_cast<size_t>(n), 8);
      for (float& v : x) v *= 8.0f;  // past -3 and 3, where the formula saturates
      x[0] = -3.0f;
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] * std::min(6.0f, std::max(0.0f, x[i] + 3.0f)) / 6.0f;
      kn->hard_swish(x.data(), n);
      EXPECT_LE(relative_error(x.data(), want.data(), want.size()), 1e-7);
    }
  }
}

// The shortcut's ADD: where it has channels, out + the max of four rows, then the clamp; past them (the
// channels a PAD appends), out and the clamp alone.
TEST(CpuKernels, AddMax4ClampMatchesAPlainLoop) {
  const Clamp clamp{-0.5f, 0.75f};
  for (const Kernels* kn : cpu::available_kernels()) {
    for (long n : {1L, 16L, 19L, 40L}) {
      for (long extra : {0L, 5L, 24L}) {  // the appended channels: none, a tail, whole vectors and a tail
        SCOPED_TRACE(std::string(kn->isa) + " n" + std::to_string(n) + " +" + std::to_string(extra));
        const long total = n + extra;
        std::vector<float> out = floats_of(static_cast<size_t>(total), 21);
        const auto a = floats_of(static_cast<size_t>(n), 22), b = floats_of(static_cast<size_t>(n), 23);
        const auto c = floats_of(static_cast<size_t>(n), 24), d = floats_of(static_cast<size_t>(n), 25);
        std::vector<float> want(out.size());
        for (long i = 0; i < total; ++i) {
          const float r = i < n ? std::max(std::max(a[i], b[i]), std::max(c[i], d[i])) : 0.0f;
          want[i] = std::min(std::max(out[i] + r, clamp.min), clamp.max);
        }
        kn->add_max4_clamp(out.data(), total, a.data(), b.data(), c.data(), d.data(), n, clamp);
        EXPECT_EQ(out, want);
      }
    }
  }
}

// Tensors between steps of a partition share bytes of the scratch block when their lives do not overlap
// (the planner the host's arena uses too).
TEST(CpuScratchPlan, TensorsApartShareBytesAndNoStepWritesWhatItReads) {
  // A chain a -> b -> c -> d (each read by the next step only), and e written at step 0 and read at step 3.
  const std::vector<kit::Lifetime> blocks = {{6400, 0, 1}, {19200, 1, 2}, {12800, 2, 3}, {3200, 3, 4}, {640, 0, 3}};
  size_t total = 0;
  const std::vector<size_t> at = kit::plan_offsets(blocks, 64, &total);
  ASSERT_EQ(at.size(), blocks.size());
  size_t sum = 0;
  for (size_t x = 0; x < blocks.size(); ++x) {
    EXPECT_EQ(at[x] % 64, 0u);
    EXPECT_LE(at[x] + blocks[x].bytes, total);
    sum += blocks[x].bytes;
    for (size_t y = x + 1; y < blocks.size(); ++y) {
      const bool alive_together = blocks[x].first <= blocks[y].last && blocks[y].first <= blocks[x].last;
      const bool share = at[x] < at[y] + blocks[y].bytes && at[y] < at[x] + blocks[x].bytes;
      if (alive_together) EXPECT_FALSE(share) << x << " and " << y;
    }
  }
  EXPECT_EQ(at[0], at[2]);              // a is dead once b is written; c takes its place
  EXPECT_EQ(total, 19200u + 12800 + 640);  // b and c together, and e beside them
  EXPECT_LT(total, sum);
}

// Blocks lie in host tensors where those are idle during their whole life (an output before the step that
// writes it, a reusable input after the last step that reads it), the smallest region that fits first,
// beside the blocks already there; the rest in the scratch block.
TEST(CpuScratchPlan, BlocksLieInIdleHostTensorsWhereTheyFit) {
  // a [0,1], b [1,2], c [2,3], d [3,3]; an output free at steps 0-1, an input free at steps 2-3.
  const std::vector<kit::Lifetime> blocks = {{100, 0, 1}, {300, 1, 2}, {200, 2, 3}, {50, 3, 3}};
  const std::vector<kit::Region> regions = {{256, 0, 1}, {400, 2, 3}};
  size_t total = 0;
  const std::vector<kit::Place> at = kit::plan_with_regions(blocks, regions, 64, &total);
  ASSERT_EQ(at.size(), blocks.size());
  EXPECT_EQ(at[1].region, -1);  // b: too large for the output, alive before the input is free
  EXPECT_EQ(at[2].region, 1);   // c: in the input
  EXPECT_EQ(at[2].offset, 0u);
  EXPECT_EQ(at[0].region, 0);   // a: in the output, the smaller region that fits
  EXPECT_EQ(at[3].region, 1);   // d: beside c in the input (alive together)
  EXPECT_EQ(at[3].offset, 256u);
  EXPECT_EQ(total, 320u);       // b alone in the scratch
  // Without regions, everything in the scratch.
  EXPECT_EQ(kit::plan_with_regions(blocks, {}, 64, &total)[1].region, -1);
  EXPECT_GT(total, 320u);
}

// A plain loop for a convolution with TFLite's padding, in double.
std::vector<float> plain_conv(const cpu::ConvGeometry& g, const std::vector<float>& in, const std::vector<float>& w,
                              const std::vector<float>& bias, Clamp cl) {
  std::vector<float> out(static_cast<size_t>(g.out_h) * g.out_w * g.out_channels);
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int co = 0; co < g.out_channels; ++co) {
        double acc = bias[co];
        for (int ky = 0; ky < g.kernel_h; ++ky)
          for (int kx = 0; kx < g.kernel_w; ++kx) {
            const int iy = oy * g.stride_h - g.pad_top + ky, ix = ox * g.stride_w - g.pad_left + kx;
            if (iy < 0 || ix < 0 || iy >= g.in_h || ix >= g.in_w) continue;
            for (int c = 0; c < g.channels; ++c) {
              acc += static_cast<double>(in[(static_cast<size_t>(iy) * g.in_w + ix) * g.channels + c]) *
                     w[((static_cast<size_t>(co) * g.kernel_h + ky) * g.kernel_w + kx) * g.channels + c];
            }
          }
        out[(static_cast<size_t>(oy) * g.out_w + ox) * g.out_channels + co] =
            static_cast<float>(std::min<double>(std::max<double>(acc, cl.min), cl.max));
      }
  return out;
}

TEST(CpuKernels, NarrowConvMatchesAPlainLoop) {
  struct Case { int h, w, c, kh, kw, stride, out_c; bool same; };
  const Case cases[] = {{16, 16, 8, 3, 3, 1, 1, true},   {13, 11, 19, 3, 3, 2, 2, true}, {9, 12, 3, 5, 5, 1, 4, true},
                        {10, 7, 33, 1, 1, 1, 3, true},   {12, 9, 16, 2, 2, 1, 1, false}, {11, 13, 7, 7, 7, 2, 2, true},
                        {8, 8, 40, 3, 1, 1, 1, false},   {1, 1, 5, 3, 3, 1, 2, true}};
  for (const Kernels* k : cpu::available_kernels()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(k->isa) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) +
                   " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s" + std::to_string(c.stride) + " out " +
                   std::to_string(c.out_c) + (c.same ? " same" : " valid"));
      cpu::ConvGeometry g;
      g.in_h = c.h, g.in_w = c.w, g.channels = c.c, g.kernel_h = c.kh, g.kernel_w = c.kw;
      g.stride_h = g.stride_w = c.stride, g.out_channels = c.out_c;
      auto axis = [&](int in, int kernel, int& out, int& before) {  // TFLite's SAME / VALID, worked out here
        out = c.same ? (in + c.stride - 1) / c.stride : (in - kernel) / c.stride + 1;
        before = c.same ? std::max(0, (out - 1) * c.stride + kernel - in) / 2 : 0;
      };
      axis(c.h, c.kh, g.out_h, g.pad_top);
      axis(c.w, c.kw, g.out_w, g.pad_left);
      const auto in = floats_of(static_cast<size_t>(c.h) * c.w * c.c, 7);
      const auto w = floats_of(static_cast<size_t>(c.out_c) * c.kh * c.kw * c.c, 8);
      const auto bias = floats_of(static_cast<size_t>(c.out_c), 9);
      const Clamp cl{-1.0f, 2.5f};
      const auto want = plain_conv(g, in, w, bias, cl);
      std::vector<float> got(want.size(), NAN);
      const int split = g.out_h / 2;  // two row ranges, as two threads would take them
      k->narrow_conv_rows(g, in.data(), w.data(), bias.data(), cl, 0, split, got.data());
      k->narrow_conv_rows(g, in.data(), w.data(), bias.data(), cl, split, g.out_h, got.data());
      EXPECT_LE(relative_error(got.data(), want.data(), want.size()), 1e-6);
    }
  }
}

// A transposed convolution the way its definition reads (each input pixel scatters into the output, as
// the mediapipe pack computes it), in double; the kernel gathers per output value instead.
std::vector<float> plain_transpose_conv(const cpu::ConvGeometry& g, const std::vector<float>& in,
                                        const std::vector<float>& w, const std::vector<float>& bias) {
  std::vector<double> acc(static_cast<size_t>(g.out_h) * g.out_w * g.out_channels);
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = bias[i % g.out_channels];
  for (int iy = 0; iy < g.in_h; ++iy)
    for (int ix = 0; ix < g.in_w; ++ix)
      for (int ky = 0; ky < g.kernel_h; ++ky)
        for (int kx = 0; kx < g.kernel_w; ++kx) {
          const int oy = iy * g.stride_h - g.pad_top + ky, ox = ix * g.stride_w - g.pad_left + kx;
          if (oy < 0 || ox < 0 || oy >= g.out_h || ox >= g.out_w) continue;
          for (int co = 0; co < g.out_channels; ++co)
            for (int c = 0; c < g.channels; ++c)
              acc[(static_cast<size_t>(oy) * g.out_w + ox) * g.out_channels + co] +=
                  static_cast<double>(in[(static_cast<size_t>(iy) * g.in_w + ix) * g.channels + c]) *
                  w[((static_cast<size_t>(co) * g.kernel_h + ky) * g.kernel_w + kx) * g.channels + c];
        }
  return std::vector<float>(acc.begin(), acc.end());
}

TEST(CpuKernels, NarrowTransposeConvMatchesAPlainLoop) {
  struct Case { int h, w, c, k, stride, out_c, pad; };
  const Case cases[] = {{16, 16, 16, 2, 2, 1, 0},  // selfie segmentation's head (window == stride: one tap each)
                        {7, 9, 32, 2, 2, 3, 0},    // the same path, three outputs (values cross pixels)
                        {5, 6, 48, 3, 3, 2, 0},    // and window 3, stride 3
                        {3, 5, 24, 2, 2, 1, 0},    // one tap, three and one 8-float vectors, a row of 10 values
                        {4, 3, 8, 2, 2, 5, 0},
                        {6, 5, 16, 2, 2, 1, 1},    // window == stride with an offset: the general path
                        {9, 7, 19, 3, 2, 2, 0},    // overlapping windows, channels past a vector
                        {6, 11, 5, 4, 2, 3, 1},    // padding offset
                        {5, 5, 8, 3, 1, 4, 1},     // stride 1
                        {7, 6, 33, 5, 3, 1, 2}};
  for (const Kernels* k : cpu::available_kernels()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(k->isa) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + "x" + std::to_string(c.c) +
                   " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " pad " + std::to_string(c.pad));
      cpu::ConvGeometry g;
      g.in_h = c.h, g.in_w = c.w, g.channels = c.c, g.kernel_h = g.kernel_w = c.k;
      g.stride_h = g.stride_w = c.stride, g.out_channels = c.out_c, g.pad_top = g.pad_left = c.pad;
      g.out_h = c.stride * (c.h - 1) + c.k - 2 * c.pad;
      g.out_w = c.stride * (c.w - 1) + c.k - 2 * c.pad;
      const auto in = floats_of(static_cast<size_t>(c.h) * c.w * c.c, 11);
      const auto w = floats_of(static_cast<size_t>(c.out_c) * c.k * c.k * c.c, 12);
      const auto bias = floats_of(static_cast<size_t>(c.out_c), 13);
      const auto want = plain_transpose_conv(g, in, w, bias);
      std::vector<float> got(want.size(), NAN);
      const int split = g.out_h / 3;
      k->narrow_transpose_conv_rows(g, in.data(), w.data(), bias.data(), 0, split, got.data());
      k->narrow_transpose_conv_rows(g, in.data(), w.data(), bias.data(), split, g.out_h, got.data());
      EXPECT_LE(relative_error(got.data(), want.data(), want.size()), 1e-6);
    }
  }
}

// ---- pairs through the delegate -----------------------------------------------------------------------

enum : int32_t { kConv2d = 3, kDepthwiseConv2d = 4, kAdd = 0 };

struct PairCase {
  std::vector<int32_t> in;  // NHWC
  int kernel, stride;
  fb::Padding padding;
  int dw_act, conv_act, out_channels;
  bool bias;
  int32_t between = -1;  // the builtin code of an activation node between the two (RELU 19, RELU6 21, ...)
};

// in -> DEPTHWISE_CONV_2D -> CONV_2D 1x1 -> out; `second` appends another pair (and reads the first
// pair's output only through it, so the two share one partition and a buffer).
OpGraph pair_graph(const PairCase& p, bool second = false) {
  OpGraph g;
  const int32_t in = g.input(p.in);
  int32_t x = in;
  std::vector<int32_t> shape = p.in;
  for (int round = 0; round < (second ? 2 : 1); ++round) {
    const int c = shape[3];
    const uint32_t seed = 10 * static_cast<uint32_t>(round);
    const int32_t dw_f = random_weights(g, {1, p.kernel, p.kernel, c}, seed + 1);
    const int32_t dw_b = p.bias ? random_weights(g, {c}, seed + 2) : -1;
    auto out = [&](int n) {
      return p.padding == fb::Padding_SAME ? (n + p.stride - 1) / p.stride : (n - p.kernel) / p.stride + 1;
    };
    const std::vector<int32_t> mid_shape = {shape[0], out(shape[1]), out(shape[2]), c};
    const int32_t dw_out = g.add(mid_shape);
    const int32_t mid = p.between >= 0 ? g.add(mid_shape) : dw_out;
    const int32_t cf = random_weights(g, {p.out_channels, 1, 1, c}, seed + 3);
    const int32_t cb = p.bias ? random_weights(g, {p.out_channels}, seed + 4) : -1;
    shape = {mid_shape[0], mid_shape[1], mid_shape[2], p.out_channels};
    const bool last = round == (second ? 1 : 0);
    const int32_t y = last ? g.output(shape) : g.add(shape);
    const int stride = p.stride, dw_act = p.dw_act, conv_act = p.conv_act;
    const fb::Padding padding = p.padding;
    g.ops.push_back({kDepthwiseConv2d, {x, dw_f, dw_b}, {dw_out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                             fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, 1, act(dw_act)).Union());
                     }});
    if (p.between >= 0) g.ops.push_back({p.between, {dw_out}, {mid}, nullptr});
    g.ops.push_back({kConv2d, {mid, cf, cb}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                             fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(conv_act)).Union());
                     }});
    x = y;
  }
  return g;
}

// Appends the nodes of `part` to `g`, part's input 0 read from g's tensor `from`; returns the index in g of
// part's output 0.
int32_t append_graph(OpGraph& g, const OpGraph& part, int32_t from) {
  const int32_t offset = static_cast<int32_t>(g.tensors.size());
  for (const TinyTensor& t : part.tensors) g.tensors.push_back(t);
  for (GraphOp op : part.ops) {
    for (int32_t& i : op.inputs) i = i == part.inputs[0] ? from : i < 0 ? i : i + offset;
    for (int32_t& o : op.outputs) o += offset;
    g.ops.push_back(op);
  }
  return part.outputs[0] + offset;
}

struct Envs {
  TempDir plugins, conf;
  std::shared_ptr<Environment> cpu, builtin;
};

// delegates = cpu, xnnpack (where built) at `threads`, the builtin and mediapipe packs for the rest; and
// the builtin and mediapipe packs alone.
std::unique_ptr<Envs> make_envs(int threads, bool with_xnnpack) {
  auto e = std::make_unique<Envs>();
  fs::copy_file(std::string(CPU_PLUGIN_DIR) + "/libbaton_cpu.so", e->plugins.file("libbaton_cpu.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", e->plugins.file("libbaton_builtin.so"));
  fs::copy_file(std::string(MEDIAPIPE_PACK_DIR) + "/libbaton_mediapipe.so", e->plugins.file("libbaton_mediapipe.so"));
#ifdef XNNPACK_PLUGIN_DIR
  if (with_xnnpack) {
    fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", e->plugins.file("libbaton_xnnpack.so"));
  }
#else
  with_xnnpack = false;
#endif
  const std::string t = "threads = " + std::to_string(threads) + "\n";
  e->conf.write("baton.conf", std::string("delegates = cpu") + (with_xnnpack ? ", xnnpack" : "") + "\n[plugin.cpu]\n" + t +
                                  (with_xnnpack ? "[plugin.xnnpack]\n" + t : ""));
  auto c = isolated_environment({e->plugins.path()}, e->conf.file("baton.conf"));
  EXPECT_TRUE(c) << c.error();
  auto b = isolated_environment({BUILTIN_PACK_DIR, MEDIAPIPE_PACK_DIR});
  EXPECT_TRUE(b) << b.error();
  if (!c || !b) return nullptr;
  e->cpu = c.value();
  e->builtin = b.value();
  return e;
}

// Runs `g` with [cpu] at `threads` and with the builtin pack alone; returns how many nodes cpu took.
size_t run_against_builtin(const OpGraph& g, const std::string& what, int threads,
                           const std::vector<int32_t>& resize = {}, size_t* cpu_arena_bytes = nullptr) {
  SCOPED_TRACE(what);
  auto envs = make_envs(threads, false);
  if (!envs) return 0;
  auto model = load_model_buffer(g.build(), what + ".tflite");
  EXPECT_TRUE(model) << model.error();
  auto ci = Interpreter::create(envs->cpu, model.value());
  auto bi = Interpreter::create(envs->builtin, model.value());
  EXPECT_TRUE(ci && bi);
  if (!ci || !bi) return 0;
  Interpreter& c = *ci.value();
  Interpreter& b = *bi.value();
  if (!resize.empty()) {
    EXPECT_TRUE(c.resize_input(0, resize));
    EXPECT_TRUE(b.resize_input(0, resize));
  }
  EXPECT_TRUE(c.ensure_prepared());
  EXPECT_TRUE(b.ensure_prepared());
  for (size_t i = 0; i < c.input_count(); ++i) {  // every input (a residual may be a second one)
    const auto data = random_floats(c.input(i).bytes / 4, 7 + static_cast<uint32_t>(i));
    std::memcpy(c.input(i).data, data.data(), data.size());
    std::memcpy(b.input(i).data, data.data(), data.size());
  }
  for (int run = 0; run < 2; ++run) {  // twice: buffers are reused, results must not change
    Status sc = c.invoke();
    EXPECT_TRUE(sc) << sc.message();
  }
  Status sb = b.invoke();
  EXPECT_TRUE(sb) << sb.message();
  EXPECT_TRUE(c.fallbacks().empty());
  for (size_t n = 0; n < g.ops.size(); ++n) {
    for (const auto& r : c.refusals(n)) {
      if (r.reason.find("init failed") != std::string::npos) ADD_FAILURE() << "node " << n << ": " << r.reason;
    }
  }
  EXPECT_EQ(c.output_count(), b.output_count());
  for (size_t i = 0; i < std::min(c.output_count(), b.output_count()); ++i) {
    EXPECT_EQ(c.output(i).shape, b.output(i).shape) << "output " << i;
    EXPECT_LE(relative_error(reinterpret_cast<const float*>(c.output(i).data),
                             reinterpret_cast<const float*>(b.output(i).data), b.output(i).bytes / 4),
              1e-5)
        << "output " << i;
  }
  if (cpu_arena_bytes) *cpu_arena_bytes = c.arena_bytes();
  return delegated_nodes(c, "cpu");
}

TEST(CpuDelegate, PairsMatchTheBuiltinPack) {
  const PairCase cases[] = {
      {{1, 9, 11, 19}, 3, 1, fb::Padding_SAME, 3, 0, 13, true},    // channels no multiple of a vector
      {{1, 13, 10, 33}, 3, 2, fb::Padding_SAME, 1, 3, 40, true},   // stride 2, odd rows
      {{1, 12, 12, 24}, 5, 1, fb::Padding_SAME, 0, 1, 7, false},   // 5x5, no biases
      {{1, 17, 15, 16}, 5, 2, fb::Padding_SAME, 2, 2, 48, true},   // RELU_N1_TO_1 on both
      {{1, 11, 9, 8}, 3, 2, fb::Padding_VALID, 0, 0, 5, true},     // VALID stride 2
      {{2, 7, 7, 20}, 3, 1, fb::Padding_SAME, 3, 3, 33, true},     // batch 2
      {{1, 64, 40, 32}, 3, 1, fb::Padding_SAME, 3, 0, 24, true},   // many row blocks
      {{3, 64, 40, 32}, 3, 1, fb::Padding_SAME, 0, 0, 24, true},   // a share that ends inside an image
  };
  // One thread, and the rows split in two and three shares (uneven, fewer blocks than threads).
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const PairCase& p : cases) {
      EXPECT_EQ(run_against_builtin(pair_graph(p), "pair case " + std::to_string(i), threads), 2u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
}

struct ConvCase {
  std::vector<int32_t> in;  // NHWC
  int kernel_h, kernel_w, stride;
  fb::Padding padding;
  int act, out_channels;
  bool bias;
};

// in -> CONV_2D -> out.
OpGraph conv_graph(const ConvCase& p) {
  OpGraph g;
  const int32_t in = g.input(p.in);
  const int32_t f = random_weights(g, {p.out_channels, p.kernel_h, p.kernel_w, p.in[3]}, 21);
  const int32_t b = p.bias ? random_weights(g, {p.out_channels}, 22) : -1;
  auto out = [&](int n, int k) {
    return p.padding == fb::Padding_SAME ? (n + p.stride - 1) / p.stride : (n - k) / p.stride + 1;
  };
  const int32_t y = g.output({p.in[0], out(p.in[1], p.kernel_h), out(p.in[2], p.kernel_w), p.out_channels});
  const int stride = p.stride, a = p.act;
  const fb::Padding padding = p.padding;
  g.ops.push_back({kConv2d, {in, f, b}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, padding, stride, stride, act(a)).Union());
                   }});
  return g;
}

TEST(CpuDelegate, NarrowConvolutionsMatchTheBuiltinPack) {
  const ConvCase cases[] = {
      {{1, 64, 64, 8}, 3, 3, 1, fb::Padding_SAME, 0, 1, true},    // a segmentation head's shape
      {{1, 80, 72, 19}, 3, 3, 2, fb::Padding_SAME, 3, 2, true},   // channels past a vector, stride 2, RELU6
      {{2, 33, 35, 3}, 5, 5, 1, fb::Padding_SAME, 1, 4, false},   // batch 2, fewer channels than a vector
      {{1, 48, 48, 48}, 1, 1, 1, fb::Padding_SAME, 2, 1, true},   // 1x1 (face detection's head)
      {{1, 41, 37, 16}, 2, 2, 1, fb::Padding_VALID, 0, 3, true},  // even window, VALID
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const ConvCase& p : cases) {
      EXPECT_EQ(run_against_builtin(conv_graph(p), "conv case " + std::to_string(i), threads), 1u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  // Resized after load: the geometry follows the new shape.
  EXPECT_EQ(run_against_builtin(conv_graph(cases[1]), "conv resized", 2, {1, 51, 29, 19}), 1u);
}

// 1x1 convolutions on their own: one matrix product over the pixels, rows split over the pool.
TEST(CpuDelegate, PointwiseConvolutionsMatchTheBuiltinPack) {
  const ConvCase cases[] = {
      {{1, 32, 32, 16}, 1, 1, 1, fb::Padding_SAME, 0, 16, true},   // selfie_segmentation's first 1x1
      {{1, 13, 11, 19}, 1, 1, 1, fb::Padding_SAME, 3, 37, true},   // odd rows, channels past a vector, RELU6
      {{2, 9, 10, 40}, 1, 1, 1, fb::Padding_VALID, 1, 96, false},  // batch 2, no bias, RELU
      {{1, 8, 8, 120}, 1, 1, 1, fb::Padding_SAME, 2, 24, true},    // deep, few rows
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const ConvCase& p : cases) {
      EXPECT_EQ(run_against_builtin(conv_graph(p), "pointwise case " + std::to_string(i), threads), 1u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  EXPECT_EQ(run_against_builtin(conv_graph(cases[1]), "pointwise resized", 2, {1, 21, 6, 19}), 1u);
}

// in -> CONV_2D 1x1 (activation `act`) -> HARD_SWISH -> out.
OpGraph pointwise_hard_swish_graph(std::vector<int32_t> in_shape, int out_channels, int a) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {out_channels, 1, 1, in_shape[3]}, 41);
  const int32_t b = random_weights(g, {out_channels}, 42);
  const std::vector<int32_t> shape = {in_shape[0], in_shape[1], in_shape[2], out_channels};
  const int32_t mid = g.add(shape);
  const int32_t y = g.output(shape);
  g.ops.push_back({kConv2d, {in, f, b}, {mid}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(a)).Union());
                   }});
  g.ops.push_back({117 /* HARD_SWISH */, {mid}, {y}, nullptr});
  return g;
}

// MobileNetV3's expansions: a 1x1 convolution, then HARD_SWISH, run as one step.
TEST(CpuDelegate, AHardSwishAfterAPointwiseJoinsIt) {
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(pointwise_hard_swish_graph({1, 32, 32, 16}, 16, 0), "hard swish", threads), 2u);
    EXPECT_EQ(run_against_builtin(pointwise_hard_swish_graph({2, 17, 9, 24}, 72, 0), "hard swish, batch 2", threads), 2u);
  }
  // With a fused activation before it, the HARD_SWISH is not part of the pattern: the next delegate runs it.
  EXPECT_EQ(run_against_builtin(pointwise_hard_swish_graph({1, 16, 16, 16}, 16, 1), "relu then hard swish", 1), 1u);
  // The convolution's output is a model output too: the two run as two steps, both outputs written.
  OpGraph both = pointwise_hard_swish_graph({1, 16, 16, 16}, 16, 0);
  both.outputs.push_back(both.ops[0].outputs[0]);
  EXPECT_EQ(run_against_builtin(both, "convolution output read outside", 1), 2u);
}

// `g` (whose only output is its last op's, of `shape`) with an activation node `code` after that op:
// the op's output becomes an inner tensor, the node's the model's output.
OpGraph with_activation_node(OpGraph g, int32_t code, const std::vector<int32_t>& shape) {
  const int32_t mid = g.outputs.back();
  g.outputs.pop_back();
  const int32_t y = g.output(shape);
  g.ops.push_back({code, {mid}, {y}, nullptr});
  return g;
}

// A RELU, RELU6 or RELU_N1_TO_1 node that alone reads a convolution without a fused activation
// (selfie_segmentation's decoder has five) joins the convolution's step: clamped while still in cache. So
// does one after a pair's 1x1 convolution (face_detection_full_range's blocks: pair, RELU, pair, ADD of
// the block's input, RELU; the ADD after such a RELU in AResidualAddJoinsThePattern).
TEST(CpuDelegate, AnActivationNodeAfterAConvolutionJoinsIt) {
  const ConvCase pointwise = {{1, 32, 32, 16}, 1, 1, 1, fb::Padding_SAME, 0, 16, true};
  const ConvCase odd = {{1, 13, 11, 19}, 1, 1, 1, fb::Padding_SAME, 0, 37, false};
  const ConvCase narrow = {{1, 64, 64, 8}, 3, 3, 1, fb::Padding_SAME, 0, 1, true};
  const PairCase pair = {{1, 17, 15, 24}, 3, 1, fb::Padding_SAME, 3, 0, 24, true};
  const PairCase strided = {{1, 19, 14, 12}, 5, 2, fb::Padding_SAME, 0, 0, 20, false};
  for (int threads : {1, 2}) {
    OpGraph p = with_activation_node(pair_graph(pair), 19, {1, 17, 15, 24});
    EXPECT_EQ(run_against_builtin(p, "pair, RELU", threads), 3u);
    EXPECT_EQ(run_against_builtin(with_activation_node(pair_graph(strided), 21, {1, 10, 7, 20}), "pair, RELU6", threads),
              3u);
    EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(pointwise), 19, {1, 32, 32, 16}), "pointwise, RELU", threads), 2u);
    EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(odd), 21, {1, 13, 11, 37}), "pointwise, RELU6", threads), 2u);
    EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(narrow), 20, {1, 64, 64, 1}), "narrow, RELU_N1_TO_1", threads),
              2u);
  }
  // After a fused activation the node is not part of the pattern: the next delegate runs it.
  ConvCase fused = pointwise;
  fused.act = 3;  // RELU6
  EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(fused), 19, {1, 32, 32, 16}), "RELU6 then RELU", 1), 1u);
  // The convolution's output is a model output too: two steps, both outputs written.
  OpGraph both = with_activation_node(conv_graph(pointwise), 19, {1, 32, 32, 16});
  both.outputs.push_back(both.ops[0].outputs[0]);
  EXPECT_EQ(run_against_builtin(both, "convolution output read outside", 1), 2u);
}

// in -> Convolution2DTransposeBias (MediaPipe's custom op, options as raw TfLiteTransposeConvParams) -> out.
OpGraph transpose_bias_graph(std::vector<int32_t> in_shape, int kernel, int stride, bool same, int out_channels) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t w = random_weights(g, {out_channels, kernel, kernel, in_shape[3]}, 31);
  const int32_t b = random_weights(g, {out_channels}, 32);
  auto out = [&](int n) { return stride * (n - 1) + kernel - (same ? std::max(0, kernel - (n - 1) % stride - 1) : 0); };
  const int32_t y = g.output({in_shape[0], out(in_shape[1]), out(in_shape[2]), out_channels});
  GraphOp op;
  op.code = 32;
  op.custom = "Convolution2DTransposeBias";
  op.inputs = {in, w, b};
  op.outputs = {y};
  for (int32_t v : {same ? 1 : 2, stride, stride}) {
    for (int byte = 0; byte < 4; ++byte) op.custom_options.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * byte)));
  }
  g.ops.push_back(op);
  return g;
}

TEST(CpuDelegate, TransposedHeadsMatchTheMediapipePack) {
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(transpose_bias_graph({1, 32, 32, 16}, 2, 2, true, 1), "selfie's head", threads), 1u);
    EXPECT_EQ(run_against_builtin(transpose_bias_graph({1, 20, 23, 19}, 3, 2, true, 2), "overlapping, SAME", threads), 1u);
    EXPECT_EQ(run_against_builtin(transpose_bias_graph({2, 17, 16, 8}, 4, 2, false, 4), "VALID, batch 2", threads), 1u);
  }
}

TEST(CpuDelegate, WideOrSmallConvolutionsStayWithTheNextDelegate) {
  auto envs = make_envs(1, false);
  ASSERT_TRUE(envs);
  struct Refused {
    ConvCase c;
    const char* reason;
  };
  const Refused cases[] = {
      {{{1, 64, 64, 8}, 3, 3, 1, fb::Padding_SAME, 0, 5, true}, "more than 4 output channels"},
      {{{1, 16, 16, 8}, 3, 3, 1, fb::Padding_SAME, 0, 1, true}, "smaller than 1024 pixels"},
      {{{1, 64, 64, 8}, 9, 9, 1, fb::Padding_SAME, 0, 1, true}, "larger than 7x7"},
      {{{1, 4, 4, 64}, 1, 1, 1, fb::Padding_SAME, 0, 64, true}, "smaller than 64 output pixels"},
      {{{1, 16, 16, 8}, 1, 1, 1, fb::Padding_SAME, 0, 8, true}, "or 65536 multiply-adds"},
      {{{1, 32, 32, 8}, 1, 1, 2, fb::Padding_SAME, 0, 8, true}, "1x1 convolution with a stride"},
  };
  for (const Refused& r : cases) {
    SCOPED_TRACE(r.reason);
    auto model = load_model_buffer(conv_graph(r.c).build(), "refused.tflite");
    ASSERT_TRUE(model) << model.error();
    auto in = Interpreter::create(envs->cpu, model.value());
    ASSERT_TRUE(in) << in.error();
    EXPECT_EQ(delegated_nodes(*in.value(), "cpu"), 0u);
    ASSERT_FALSE(in.value()->refusals(0).empty());
    EXPECT_NE(in.value()->refusals(0).back().reason.find(r.reason), std::string::npos)
        << in.value()->refusals(0).back().reason;
  }
}

// MobileNetV3-style converters leave the depthwise activation as a node of its own: it joins the pair.
TEST(CpuDelegate, AnActivationNodeBetweenJoinsThePair) {
  const PairCase cases[] = {
      {{1, 17, 15, 16}, 3, 1, fb::Padding_SAME, 0, 0, 24, true, 19},  // RELU
      {{1, 13, 10, 33}, 5, 2, fb::Padding_SAME, 0, 3, 40, true, 21},  // RELU6, stride 2
      {{2, 9, 11, 19}, 3, 1, fb::Padding_VALID, 0, 0, 13, false, 20}, // RELU_N1_TO_1, batch 2
  };
  for (int threads : {1, 2}) {
    int i = 0;
    for (const PairCase& p : cases) {
      EXPECT_EQ(run_against_builtin(pair_graph(p), "activation case " + std::to_string(i), threads), 3u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  // A fused activation on the depthwise and another node after it: not a pattern the pair takes.
  const PairCase twice = {{1, 9, 9, 8}, 3, 1, fb::Padding_SAME, 1, 0, 8, true, 19};
  EXPECT_EQ(run_against_builtin(pair_graph(twice), "two activations", 1), 0u);
}

// The last op of `g` (its output a model output) gets a residual ADD of its output and `residual`
// (with `add_act` fused), and after it, when `relu_after` is a builtin code, that activation node.
OpGraph with_residual(OpGraph g, int32_t residual, int add_act, int32_t relu_after = -1) {
  const int32_t t = g.ops.back().outputs[0];
  const std::vector<int32_t> shape = g.tensors[static_cast<size_t>(t)].shape;
  g.outputs.clear();
  const int32_t sum = relu_after >= 0 ? g.add(shape) : g.output(shape);
  g.ops.push_back({kAdd, {t, residual}, {sum}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(add_act)).Union());
                   }});
  if (relu_after >= 0) g.ops.push_back({relu_after, {sum}, {g.output(shape)}, nullptr});
  return g;
}

// MobileNetV2's inverted residuals: the ADD after the 1x1 convolution runs in the same step, each block of
// output rows while it is still in cache.
TEST(CpuDelegate, AResidualAddJoinsThePattern) {
  const PairCase pair = {{1, 17, 15, 24}, 3, 1, fb::Padding_SAME, 3, 0, 24, true};
  const ConvCase pointwise = {{1, 20, 19, 16}, 1, 1, 1, fb::Padding_SAME, 0, 16, true};
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    OpGraph p = pair_graph(pair);
    EXPECT_EQ(run_against_builtin(with_residual(p, p.inputs[0], 0), "pair + ADD", threads), 3u);
    EXPECT_EQ(run_against_builtin(with_residual(p, p.inputs[0], 3), "pair + ADD with RELU6", threads), 3u);
    EXPECT_EQ(run_against_builtin(with_residual(p, p.inputs[0], 0, 19), "pair + ADD, then RELU", threads), 4u);
    OpGraph relu = with_activation_node(pair_graph(pair), 19, pair.in);
    EXPECT_EQ(run_against_builtin(with_residual(relu, relu.inputs[0], 0, 19), "pair, RELU, ADD, RELU", threads), 5u);
    OpGraph c = conv_graph(pointwise);
    EXPECT_EQ(run_against_builtin(with_residual(c, c.inputs[0], 1), "1x1 + ADD with RELU", threads), 2u);
    // The ADD's operands the other way round, batch 2.
    OpGraph b = conv_graph({{2, 9, 10, 40}, 1, 1, 1, fb::Padding_SAME, 0, 40, false});
    OpGraph swapped = with_residual(b, b.inputs[0], 0);
    std::swap(swapped.ops.back().inputs[0], swapped.ops.back().inputs[1]);
    EXPECT_EQ(run_against_builtin(swapped, "input + 1x1", threads), 2u);
  }
  // The residual made by the cpu delegate's own step before the pattern (a 1x1 convolution feeding both):
  // in -> 1x1 A -> x; x -> DW -> 1x1 -> y; ADD(y, x).
  OpGraph chain = conv_graph(pointwise);
  const int32_t x = chain.ops.back().outputs[0];
  chain.outputs.clear();
  chain.outputs.push_back(append_graph(chain, pair_graph({{1, 20, 19, 16}, 3, 1, fb::Padding_SAME, 0, 0, 16, true}), x));
  EXPECT_EQ(run_against_builtin(with_residual(chain, x, 0), "residual from an earlier step", 2), 4u);
  // The pair's output is a model output too: the ADD and the RELU after it run as steps of their own.
  OpGraph p = pair_graph(pair);
  const int32_t pair_out = p.ops.back().outputs[0];
  OpGraph split = with_residual(p, p.inputs[0], 0, 19);
  split.outputs.push_back(pair_out);
  EXPECT_EQ(run_against_builtin(split, "pair output read outside", 2), 4u);
  // A broadcasting ADD (a per-channel constant) is not a residual: the pattern ends at the convolution.
  OpGraph c = conv_graph(pointwise);
  const int32_t bias = random_weights(c, {16}, 51);
  EXPECT_EQ(run_against_builtin(with_residual(c, bias, 0), "broadcasting ADD", 1), 1u);
}

enum : int32_t { kMaxPool2d = 17, kPad = 34, kRelu = 19, kTanh = 28 };

// Appends to `g` a 2x2 MAX_POOL_2D of stride 2 over `x` (padding `padding`); returns its output.
int32_t add_max_pool(OpGraph& g, int32_t x, fb::Padding padding, int size = 2) {
  std::vector<int32_t> shape = g.tensors[static_cast<size_t>(x)].shape;
  for (int i : {1, 2}) shape[i] = padding == fb::Padding_SAME ? (shape[i] + 1) / 2 : (shape[i] - size) / 2 + 1;
  const int32_t y = g.add(shape);
  g.ops.push_back({kMaxPool2d, {x}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                           fb::CreatePool2DOptions(fbb, padding, 2, 2, size, size).Union());
                   }});
  return y;
}

// Appends a PAD of `x`'s channels, `before` zeros ahead of them and `after` behind; returns its output.
int32_t add_channel_pad(OpGraph& g, int32_t x, int before, int after) {
  std::vector<int32_t> shape = g.tensors[static_cast<size_t>(x)].shape;
  shape[3] += before + after;
  const int32_t paddings_values[8] = {0, 0, 0, 0, 0, 0, before, after};
  std::vector<uint8_t> bytes(sizeof paddings_values);
  std::memcpy(bytes.data(), paddings_values, bytes.size());
  const int32_t paddings = g.add({4, 2}, bytes, 2);  // INT32
  const int32_t y = g.add(shape);
  g.ops.push_back({kPad, {x, paddings}, {y}, nullptr});
  return y;
}

// ADD(a, b) -> RELU -> a model output (the only one).
void add_then_relu(OpGraph& g, int32_t a, int32_t b) {
  const std::vector<int32_t> shape = g.tensors[static_cast<size_t>(a)].shape;
  g.outputs.clear();
  const int32_t sum = g.add(shape);
  g.ops.push_back({kAdd, {a, b}, {sum}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union());
                   }});
  g.ops.push_back({kRelu, {sum}, {g.output(shape)}, nullptr});
}

// BlazeNet's blocks: x -> depthwise (stride 1 or 2) -> 1x1 convolution -> ADD of the shortcut of x (a 2x2
// MAX_POOL_2D beside a stride-2 block, then a PAD of the channels the block adds) -> RELU.
OpGraph shortcut_block(const PairCase& p, fb::Padding pool_padding, bool pad_first = false) {
  OpGraph g = pair_graph(p);
  const int32_t x = g.inputs[0], y = g.ops.back().outputs[0];
  const int extra = p.out_channels - p.in[3];
  int32_t r = x;
  if (pad_first && extra > 0) r = add_channel_pad(g, r, 0, extra);
  if (p.stride == 2) r = add_max_pool(g, r, pool_padding);
  if (!pad_first && extra > 0) r = add_channel_pad(g, r, 0, extra);
  add_then_relu(g, y, r);
  return g;
}

// The shortcut is computed from the block's input while each block of output rows is in cache: the
// MAX_POOL_2D and PAD nodes join the pair with the ADD and the RELU, and their tensors never exist.
TEST(CpuDelegate, AShortcutOfPoolAndPadJoinsTheResidualAdd) {
  struct Case {
    PairCase pair;
    fb::Padding pool_padding;
    bool pad_first;
    size_t nodes;
    const char* what;
  };
  const Case cases[] = {
      {{{1, 12, 10, 16}, 3, 2, fb::Padding_SAME, 0, 0, 16, true}, fb::Padding_VALID, false, 5, "pool (hand_landmark's)"},
      {{{1, 13, 11, 24}, 3, 2, fb::Padding_SAME, 0, 0, 40, true}, fb::Padding_SAME, false, 6,
       "pool of odd sides (SAME), then PAD (face_detection's)"},
      {{{1, 9, 9, 8}, 3, 2, fb::Padding_VALID, 3, 0, 8, false}, fb::Padding_VALID, false, 5, "VALID pool of odd sides"},
      {{{1, 10, 9, 19}, 5, 1, fb::Padding_SAME, 0, 0, 35, true}, fb::Padding_SAME, false, 5, "PAD alone, stride 1"},
      {{{2, 8, 8, 16}, 5, 2, fb::Padding_SAME, 0, 0, 32, true}, fb::Padding_SAME, false, 6, "batch 2"},
      {{{1, 8, 6, 8}, 3, 2, fb::Padding_SAME, 0, 0, 21, true}, fb::Padding_SAME, true, 6, "PAD, then pool"},
      {{{1, 64, 40, 32}, 3, 2, fb::Padding_SAME, 0, 0, 48, true}, fb::Padding_VALID, false, 6, "many row blocks"},
  };
  for (int threads : {1, 2, 3}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      EXPECT_EQ(run_against_builtin(shortcut_block(c.pair, c.pool_padding, c.pad_first), c.what, threads), c.nodes);
    }
  }
  // The pair's output a model output too: the ADD (with its shortcut) and the RELU run as steps of their own.
  OpGraph split = shortcut_block({{1, 13, 11, 24}, 3, 2, fb::Padding_SAME, 0, 0, 40, true}, fb::Padding_SAME);
  split.outputs.push_back(split.ops[1].outputs[0]);
  EXPECT_EQ(run_against_builtin(split, "pair output read outside", 2), 6u);
  // Not shortcuts: a 3x3 pool, and a PAD ahead of the channels. They run on the op packs, before the
  // partition; the ADD takes their output as a residual of its own.
  OpGraph wide = pair_graph({{1, 12, 12, 16}, 3, 2, fb::Padding_SAME, 0, 0, 16, true});
  const int32_t wide_y = wide.ops.back().outputs[0];
  add_then_relu(wide, wide_y, add_max_pool(wide, wide.inputs[0], fb::Padding_SAME, 3));
  EXPECT_EQ(run_against_builtin(wide, "3x3 pool", 2), 4u);
  OpGraph ahead = pair_graph({{1, 8, 8, 8}, 3, 1, fb::Padding_SAME, 0, 0, 16, true});
  const int32_t ahead_y = ahead.ops.back().outputs[0];
  add_then_relu(ahead, ahead_y, add_channel_pad(ahead, ahead.inputs[0], 8, 0));
  EXPECT_EQ(run_against_builtin(ahead, "PAD ahead of the channels", 2), 4u);
}

// The tensors between a partition's steps lie in its idle host tensors (ABI 1.8): x -> TANH (op pack) -> a ->
// pair -> b -> pair -> d -> pair -> c. b lies in the output c until c is written, d in the input a once
// the first pair has read it; the arena holds x, a and c and the pairs' small working memory, where it
// held b and d beside them before.
TEST(CpuDelegate, APartitionComputesInItsIdleInputAndOutput) {
  const std::vector<int32_t> shape = {1, 40, 40, 16};
  const size_t tensor_bytes = 40 * 40 * 16 * sizeof(float);
  OpGraph g;
  const int32_t x = g.input(shape);
  int32_t t = g.add(shape);
  g.ops.push_back({kTanh, {x}, {t}, nullptr});
  for (int round = 0; round < 3; ++round) t = append_graph(g, pair_graph({shape, 3, 1, fb::Padding_SAME, 0, 0, 16, true}), t);
  g.outputs = {t};
  for (int threads : {1, 2}) {
    size_t arena = 0;
    EXPECT_EQ(run_against_builtin(g, "three pairs after an op pack's node", threads, {}, &arena), 6u);
    EXPECT_LT(arena, 4 * tensor_bytes) << threads << " threads";  // x, a, c and working memory
  }
}

// A shortcut whose source and ADD the host puts in two partitions (a node of another plugin between
// them: x -> pair -> a -> TANH -> pair -> ADD of pool(a)): the shortcut's nodes run as a step of their own.
TEST(CpuDelegate, AShortcutInAnotherPartitionThanItsAddRunsOnItsOwn) {
  OpGraph g = pair_graph({{1, 14, 12, 16}, 3, 1, fb::Padding_SAME, 0, 0, 16, true});
  const int32_t a = g.ops.back().outputs[0];
  g.outputs.clear();
  const int32_t b = g.add(g.tensors[static_cast<size_t>(a)].shape);
  g.ops.push_back({kTanh, {a}, {b}, nullptr});
  const int32_t y = append_graph(g, pair_graph({{1, 14, 12, 16}, 3, 2, fb::Padding_SAME, 0, 0, 24, true}), b);
  add_then_relu(g, y, add_channel_pad(g, add_max_pool(g, a, fb::Padding_SAME), 0, 8));
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(g, "pool and PAD in the first partition, ADD in the second", threads), 8u);
  }
}

// in -> DEPTHWISE_CONV_2D (no 1x1 convolution after it; fused activation `dw_act`) -> out.
OpGraph depthwise_graph(const std::vector<int32_t>& in_shape, int kernel, int stride, fb::Padding padding, int dw_act) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int c = in_shape[3];
  const int32_t f = random_weights(g, {1, kernel, kernel, c}, 71);
  const int32_t b = random_weights(g, {c}, 72);
  auto out = [&](int n) { return padding == fb::Padding_SAME ? (n + stride - 1) / stride : (n - kernel) / stride + 1; };
  const int32_t y = g.output({in_shape[0], out(in_shape[1]), out(in_shape[2]), c});
  g.ops.push_back({kDepthwiseConv2d, {in, f, b}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                           fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, 1, act(dw_act)).Union());
                   }});
  return g;
}

// A depthwise convolution no 1x1 convolution reads joins the cpu delegate with the residual ADD after it
// (and its activation node, and the RELU after the ADD: selfie_segmentation's decoder), each block of rows
// clamped and added while in cache; without such an ADD it stays with the next delegate.
TEST(CpuDelegate, ADepthwiseWithAResidualAddRunsAsOneStep) {
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    OpGraph a = with_activation_node(depthwise_graph({1, 32, 32, 16}, 3, 1, fb::Padding_SAME, 0), 19, {1, 32, 32, 16});
    EXPECT_EQ(run_against_builtin(with_residual(a, a.inputs[0], 0), "depthwise, RELU, ADD", threads), 3u);
    OpGraph b = depthwise_graph({1, 17, 13, 19}, 5, 1, fb::Padding_SAME, 3);
    EXPECT_EQ(run_against_builtin(with_residual(b, b.inputs[0], 1), "5x5 depthwise RELU6, ADD with RELU", threads), 2u);
    OpGraph c = with_activation_node(depthwise_graph({2, 15, 16, 8}, 3, 2, fb::Padding_SAME, 0), 21, {2, 8, 8, 8});
    const int32_t other = c.input({2, 8, 8, 8});
    EXPECT_EQ(run_against_builtin(with_residual(c, other, 0, 19), "stride 2, RELU6, ADD, RELU; batch 2", threads), 4u);
  }
  OpGraph alone = with_activation_node(depthwise_graph({1, 32, 32, 16}, 3, 1, fb::Padding_SAME, 0), 19, {1, 32, 32, 16});
  EXPECT_EQ(run_against_builtin(alone, "depthwise and RELU without an ADD", 1), 0u);
  // A 1x1 convolution the depthwise alone reads (an expansion, had a 1x1 convolution followed): a step of
  // its own before it.
  OpGraph d = depthwise_graph({1, 24, 20, 16}, 3, 1, fb::Padding_SAME, 0);
  OpGraph e;
  const int32_t x = e.input({1, 24, 20, 12});
  const int32_t f = random_weights(e, {16, 1, 1, 12}, 81);
  const int32_t offset = static_cast<int32_t>(e.tensors.size());
  for (const TinyTensor& t : d.tensors) e.tensors.push_back(t);
  e.ops.push_back({kConv2d, {x, f, -1}, {d.inputs[0] + offset}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(0)).Union());
                   }});
  for (GraphOp op : d.ops) {
    for (int32_t& i : op.inputs) i = i < 0 ? i : i + offset;
    for (int32_t& o : op.outputs) o += offset;
    e.ops.push_back(op);
  }
  e.outputs.push_back(d.outputs[0] + offset);
  const int32_t other = e.input({1, 24, 20, 16});
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(with_residual(e, other, 0), "1x1, depthwise, ADD", threads), 3u);
  }
}

// in -> CONV_2D 1x1 (in[3] -> p.in[3] channels, activation `expand_act`) -> the pair of `p` -> out.
OpGraph expanded_pair_graph(const PairCase& p, int in_channels, int expand_act) {
  OpGraph pair = pair_graph(p);
  OpGraph g;
  const int32_t in = g.input({p.in[0], p.in[1], p.in[2], in_channels});
  const int32_t f = random_weights(g, {p.in[3], 1, 1, in_channels}, 61);
  const int32_t b = random_weights(g, {p.in[3]}, 62);
  const int32_t offset = static_cast<int32_t>(g.tensors.size());
  for (const TinyTensor& t : pair.tensors) g.tensors.push_back(t);
  const int32_t expanded = pair.inputs[0] + offset;
  g.ops.push_back({kConv2d, {in, f, b}, {expanded}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(expand_act)).Union());
                   }});
  for (GraphOp op : pair.ops) {
    for (int32_t& i : op.inputs) i = i < 0 ? i : i + offset;
    for (int32_t& o : op.outputs) o += offset;
    g.ops.push_back(op);
  }
  for (int32_t o : pair.outputs) g.outputs.push_back(o + offset);
  return g;
}

// MobileNetV2's inverted residual: expansion, depthwise and projection as one step, the expanded rows made
// block by block. Batches, both windows and strides, VALID, channels no multiple of a vector, blocks over
// many rows (rows shared by neighbouring blocks moved, not recomputed), one to three threads (with two or
// three, images of too few row blocks to share evenly run in whole-image phases: most cases here).
TEST(CpuDelegate, AnExpansionJoinsThePairAfterIt) {
  struct Case {
    PairCase pair;
    int in_channels, expand_act;
  };
  const Case cases[] = {
      {{{1, 17, 15, 48}, 3, 1, fb::Padding_SAME, 3, 0, 16, true}, 16, 3},   // RELU6, stride 1
      {{{1, 33, 29, 40}, 3, 2, fb::Padding_SAME, 3, 0, 24, true}, 24, 3},   // stride 2, odd rows
      {{{2, 20, 21, 72}, 5, 1, fb::Padding_SAME, 1, 0, 12, false}, 12, 1},  // 5x5, batch 2, RELU
      {{{1, 23, 19, 37}, 5, 2, fb::Padding_SAME, 0, 2, 9, true}, 7, 0},     // 5x5 stride 2, no activation
      {{{1, 26, 23, 24}, 3, 2, fb::Padding_VALID, 3, 0, 8, true}, 8, 2},    // VALID
      {{{1, 120, 64, 32}, 3, 1, fb::Padding_SAME, 3, 0, 16, true}, 16, 3},  // many blocks
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const Case& c : cases) {
      EXPECT_EQ(run_against_builtin(expanded_pair_graph(c.pair, c.in_channels, c.expand_act),
                                    "expanded pair " + std::to_string(i), threads),
                3u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  // With the residual ADD of the block's input, as MobileNetV2 has it; and after a resize.
  const Case r = {{{1, 21, 18, 64}, 3, 1, fb::Padding_SAME, 3, 0, 16, true}, 16, 3};
  OpGraph g = expanded_pair_graph(r.pair, r.in_channels, r.expand_act);
  EXPECT_EQ(run_against_builtin(with_residual(g, g.inputs[0], 0), "expanded pair + ADD", 2), 4u);
  EXPECT_EQ(run_against_builtin(expanded_pair_graph(cases[1].pair, 24, 3), "expanded pair resized", 2, {1, 45, 17, 24}),
            3u);

  // The expanded tensor (96 x 96 x 48 floats, 1.77 MB) never exists: the arena holds the input, the output
  // and the step's working rows, less than it alone.
  const Case big = {{{1, 96, 96, 48}, 3, 2, fb::Padding_SAME, 3, 0, 16, true}, 8, 3};
  size_t arena = 0;
  EXPECT_EQ(run_against_builtin(expanded_pair_graph(big.pair, big.in_channels, big.expand_act), "large expansion", 1,
                                {}, &arena),
            3u);
  EXPECT_GT(arena, 0u);
  EXPECT_LT(arena, size_t{96} * 96 * 48 * sizeof(float));
  // The expansion's output read by a model output too: the convolution runs as a step of its own.
  OpGraph both = expanded_pair_graph(cases[0].pair, 16, 3);
  both.outputs.push_back(both.ops[0].outputs[0]);
  EXPECT_EQ(run_against_builtin(both, "expansion read outside", 2), 3u);
}

TEST(CpuDelegate, ChainedPairsShareAPartition) {
  const PairCase p = {{1, 14, 13, 12}, 3, 2, fb::Padding_SAME, 3, 0, 20, true};
  EXPECT_EQ(run_against_builtin(pair_graph(p, true), "two pairs", 1), 4u);
  EXPECT_EQ(run_against_builtin(pair_graph(p, true), "two pairs, two threads", 2), 4u);
}

TEST(CpuDelegate, ANewInputShapeIsPrepared) {
  const PairCase p = {{1, 9, 9, 10}, 5, 2, fb::Padding_SAME, 1, 0, 6, true};
  EXPECT_EQ(run_against_builtin(pair_graph(p), "resized", 1, {1, 21, 6, 10}), 2u);
  EXPECT_EQ(run_against_builtin(pair_graph(p), "resized, two threads", 2, {1, 21, 6, 10}), 2u);
}

TEST(CpuDelegate, RefusesWithReasons) {
  auto envs = make_envs(1, false);
  ASSERT_TRUE(envs);
  // The depthwise output read twice (by the 1x1 convolution and by an ADD): no pair.
  PairCase p = {{1, 6, 6, 4}, 3, 1, fb::Padding_SAME, 0, 0, 4, true};
  OpGraph g = pair_graph(p);
  const int32_t extra = g.output({1, 6, 6, 4});
  g.ops.push_back({kAdd, {g.ops[0].outputs[0], g.ops[1].outputs[0]}, {extra}, [](flatbuffers::FlatBufferBuilder& fbb) { return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union()); }});
  auto model = load_model_buffer(g.build(), "shared.tflite");
  ASSERT_TRUE(model) << model.error();
  auto in = Interpreter::create(envs->cpu, model.value());
  ASSERT_TRUE(in) << in.error();
  EXPECT_EQ(delegated_nodes(*in.value(), "cpu"), 0u);
  ASSERT_FALSE(in.value()->refusals(0).empty());
  EXPECT_NE(in.value()->refusals(0).back().reason.find("1x1 CONV_2D that alone reads it"), std::string::npos);

  // A 7x7 window: the last pair refused is named.
  p.kernel = 7;
  p.in = {1, 9, 9, 4};
  auto model7 = load_model_buffer(pair_graph(p).build(), "seven.tflite");
  ASSERT_TRUE(model7);
  auto in7 = Interpreter::create(envs->cpu, model7.value());
  ASSERT_TRUE(in7) << in7.error();
  EXPECT_EQ(delegated_nodes(*in7.value(), "cpu"), 0u);
  EXPECT_NE(in7.value()->refusals(0).back().reason.find("3x3 or 5x5"), std::string::npos);
}

size_t threads_of_this_process() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// cpu and xnnpack in one chain at 3 threads run on one pthreadpool the host keeps for them (shared_object,
// "pthreadpool/3"): two workers beside the caller's thread, not two pools of two workers each.
TEST(CpuDelegate, SharesOneThreadPoolWithXnnpack) {
#ifndef XNNPACK_PLUGIN_DIR
  GTEST_SKIP() << "the xnnpack delegate is not built";
#else
  TempDir plugins, conf;
  fs::copy_file(std::string(CPU_PLUGIN_DIR) + "/libbaton_cpu.so", plugins.file("libbaton_cpu.so"));
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
  conf.write("baton.conf", "delegates = cpu, xnnpack\n[plugin.cpu]\nthreads = 3\n[plugin.xnnpack]\nthreads = 3\n");
  // A pair for cpu, then an ADD of its output to itself for xnnpack.
  OpGraph g = pair_graph({{1, 12, 10, 8}, 3, 1, fb::Padding_SAME, 0, 0, 6, true});
  const int32_t pair_out = g.ops[1].outputs[0];
  const int32_t sum = g.output({1, 12, 10, 6});
  g.ops.push_back({kAdd, {pair_out, pair_out}, {sum}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union());
                   }});
  const size_t before = threads_of_this_process();
  {
    auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
    ASSERT_TRUE(env) << env.error();
    auto model = load_model_buffer(g.build(), "pair-add.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    ASSERT_TRUE(in.ensure_prepared());
    std::memset(in.input(0).data, 0, in.input(0).bytes);
    Status st = in.invoke();
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(delegated_nodes(in, "cpu"), 2u);
    EXPECT_EQ(delegated_nodes(in, "xnnpack"), 1u);
    EXPECT_EQ(threads_of_this_process(), before + 2) << "one pool of three threads for both delegates";
  }
  EXPECT_EQ(threads_of_this_process(), before) << "the pool ends with the environment";
#endif
}

// ---- real models -----------------------------------------------------------------------------------------

class CpuRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuRealModel, MatchesTheReferenceThroughCpuThenXnnpack) {
  const std::string name = GetParam();
  const std::string path = model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite";
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path << " (run tools/fetch-models.sh)";
    GTEST_SKIP() << "missing " << path;
  }
  for (int threads : {1, 2}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    auto envs = make_envs(threads, true);
    ASSERT_TRUE(envs);
    auto model = load_model_file(path);
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(envs->cpu, model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    ASSERT_TRUE(run_reference_inputs(in, name, 2));
    EXPECT_TRUE(in.fallbacks().empty());
    const double worst = compare_with_reference(in, name, 1e-3);
    std::printf("[ cpu      ] %s, %d threads: cpu took %zu nodes; worst |diff|/max|ref| = %.3g\n", name.c_str(),
                threads, delegated_nodes(in, "cpu"), worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, CpuRealModel,
                         ::testing::ValuesIn(reference_case_names([](const ReferenceCase& c) { return c.float_input; })),
                         param_name);

}  // namespace
}  // namespace baton::test
