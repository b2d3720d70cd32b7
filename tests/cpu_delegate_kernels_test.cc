// The cpu delegate's kernels (plugins/cpu/kernels.cc, compiled into this test), on every instruction set
// this CPU runs, against values worked by hand and plain loops written here; and the scratch planner
// (plugin_kit_scratch.hpp) that lays out the tensors between a partition's steps. The delegate through
// the runtime: cpu_delegate_test.cc and the suites it names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baton/plugin_kit_scratch.hpp"
#include "kernels.h"
#include "op_graph.h"

namespace baton::test {
namespace {

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
  const Case cases[] = {{1, 1, 1}, {13, 37, 19}, {12, 32, 64}, {25, 8, 3}, {7, 100, 130}, {50, 17, 5}, {30, 24, 40}, {12, 40, 7},
                        {19, 64, 33}, {6, 96, 16}, {21, 48, 9}};  // the wide tile: whole panels, a half panel, odd m
  // Every ISA's tiles: each product runs the one that suits its width (cpu::gemm_tile_for).
  std::vector<std::pair<const char*, const cpu::GemmTile*>> tiles;
  for (const Kernels* isa : cpu::available_kernels()) {
    tiles.emplace_back(isa->isa, &isa->tile);
    tiles.emplace_back(isa->isa, &isa->wide);
  }
  for (const auto& [isa, kn] : tiles) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(isa) + " tile " + std::to_string(kn->mr) + "x" + std::to_string(kn->nr) + " m" +
                   std::to_string(c.m) + " n" + std::to_string(c.n) + " k" + std::to_string(c.k));
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

}  // namespace
}  // namespace baton::test
