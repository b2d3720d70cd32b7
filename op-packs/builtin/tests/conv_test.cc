// CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV: small cases worked out by hand, and random cases
// against direct (loop-over-everything) convolutions written here as the reference.
#include <gtest/gtest.h>

#include "kernels/conv.h"
#include "kernels/depthwise_conv.h"
#include "kernels/thread_pool.h"
#include "kernels/transpose_conv.h"
#include "tests/test_util.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> run_conv(ConvParams p, const std::vector<float>& in, const std::vector<float>& filter,
                            const float* bias, Parallel* parallel = nullptr) {
  std::vector<float> packed(conv_packed_filter_size(p));
  conv_pack_filter(p, filter.data(), packed.data());
  std::vector<float> scratch(conv_scratch_size(p, worker_count(parallel)));
  std::vector<float> out(static_cast<size_t>(p.batch) * p.out_h * p.out_w * p.out_c, -777.0f);
  conv2d(p, in.data(), packed.data(), bias, out.data(), scratch.data(), parallel);
  return out;
}

// 3x3 filter of ones over a 4x4 input holding 1..16, SAME padding, stride 2. Output 2x2 (ceil(4/2));
// total padding (2-1)*2 + 3 - 4 = 1 goes after, so windows start at rows/cols 0 and 2:
//   (0,0): rows 0-2 x cols 0-2 = (1+2+3)+(5+6+7)+(9+10+11) = 54
//   (0,1): rows 0-2 x cols 2-3 = (3+4)+(7+8)+(11+12) = 45
//   (1,0): rows 2-3 x cols 0-2 = (9+10+11)+(13+14+15) = 72
//   (1,1): rows 2-3 x cols 2-3 = 11+12+15+16 = 54
TEST(Conv2d, SamePaddingStride2ByHand) {
  ConvParams p;
  p.in_h = p.in_w = 4;
  p.filter_h = p.filter_w = 3;
  p.stride_h = p.stride_w = 2;
  conv_compute_geometry(Padding::kSame, p);
  ASSERT_EQ(p.out_h, 2);
  ASSERT_EQ(p.pad_top, 0);
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i) in[i] = static_cast<float>(i + 1);
  EXPECT_EQ(run_conv(p, in, std::vector<float>(9, 1.0f), nullptr), (std::vector<float>{54, 45, 72, 54}));

  // Two output channels (+1 and -1 filters), bias {-50, 10} and RELU: channel 0 = sum - 50
  // = {4, -5, 22, 4} -> {4, 0, 22, 4}; channel 1 = 10 - sum < 0 everywhere -> 0.
  p.out_c = 2;
  p.range.lo = 0.0f;
  std::vector<float> filter(9, 1.0f);
  filter.insert(filter.end(), 9, -1.0f);
  const float bias[] = {-50.0f, 10.0f};
  EXPECT_EQ(run_conv(p, in, filter, bias), (std::vector<float>{4, 0, 0, 0, 22, 0, 4, 0}));
}

std::vector<float> direct_conv(const ConvParams& p, const std::vector<float>& in, const std::vector<float>& f,
                               const std::vector<float>& bias) {
  std::vector<float> out(static_cast<size_t>(p.batch) * p.out_h * p.out_w * p.out_c);
  for (int b = 0; b < p.batch; ++b)
    for (int oy = 0; oy < p.out_h; ++oy)
      for (int ox = 0; ox < p.out_w; ++ox)
        for (int o = 0; o < p.out_c; ++o) {
          double sum = bias[o];
          for (int ky = 0; ky < p.filter_h; ++ky)
            for (int kx = 0; kx < p.filter_w; ++kx)
              for (int c = 0; c < p.in_c; ++c) {
                const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
                const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
                sum += static_cast<double>(in[((b * p.in_h + iy) * p.in_w + ix) * p.in_c + c]) *
                       f[((o * p.filter_h + ky) * p.filter_w + kx) * p.in_c + c];
              }
          out[((b * p.out_h + oy) * p.out_w + ox) * p.out_c + o] =
              std::min(std::max(static_cast<float>(sum), p.range.lo), p.range.hi);
        }
  return out;
}

TEST(Conv2d, RandomShapesMatchDirectConvolution) {
  struct Case {
    int batch, h, w, c, oc, fh, fw, stride, dilation;
    Padding padding;
  };
  const Case cases[] = {
      {1, 8, 8, 3, 16, 3, 3, 1, 1, Padding::kSame},   {2, 9, 7, 5, 17, 3, 3, 2, 1, Padding::kSame},
      {1, 10, 10, 4, 8, 3, 3, 1, 2, Padding::kSame},  {1, 10, 11, 6, 7, 5, 3, 2, 1, Padding::kValid},
      {1, 12, 12, 32, 24, 1, 1, 1, 1, Padding::kSame},  // pointwise: the input is A
      {1, 12, 12, 40, 20, 1, 1, 2, 1, Padding::kValid},  // 1x1 stride 2: im2col
      {1, 3, 3, 8, 4, 3, 3, 3, 1, Padding::kValid},    // stride 3 on a 3x3 input (face mesh)
      {1, 16, 16, 64, 33, 3, 3, 1, 1, Padding::kSame},  // depth 576 crosses kGemmKC
      // Stem convolutions of 3 channels, whose filter rows im2col copies whole: a ViT's 16x16 stride-16
      // patches (depth 768: depth blocks end inside a filter row), and a 7x7 SAME (edges padded).
      {1, 48, 32, 3, 20, 16, 16, 16, 1, Padding::kValid},
      {1, 13, 11, 3, 17, 7, 7, 2, 1, Padding::kSame},
  };
  unsigned seed = 10;
  ThreadPool pool(2);
  for (const Case& c : cases) {
    ConvParams p;
    p.batch = c.batch;
    p.in_h = c.h;
    p.in_w = c.w;
    p.in_c = c.c;
    p.out_c = c.oc;
    p.filter_h = c.fh;
    p.filter_w = c.fw;
    p.stride_h = p.stride_w = c.stride;
    p.dilation_h = p.dilation_w = c.dilation;
    p.range = {0.0f, 6.0f};
    conv_compute_geometry(c.padding, p);
    const auto in = random_floats(static_cast<size_t>(c.batch) * c.h * c.w * c.c, seed++);
    const auto f = random_floats(static_cast<size_t>(c.oc) * c.fh * c.fw * c.c, seed++);
    const auto bias = random_floats(c.oc, seed++);
    const auto expected = direct_conv(p, in, f, bias);
    expect_near_all(expected, run_conv(p, in, f, bias.data()));
    expect_near_all(expected, run_conv(p, in, f, bias.data(), &pool));
  }
}

// Depthwise, depth multiplier 2, dilation 2, VALID, on a 3x3 single-channel input holding 1..9. The
// 2x2 filter dilated by 2 covers 3x3, so there is one output pixel and its taps are the corners
// 1, 3, 7, 9. Filter layout [1, ky, kx, channel * 2 + m]: m = 0 all ones -> 1+3+7+9 = 20; m = 1 holds
// 1, 2, 3, 4 in (ky, kx) order -> 1*1 + 3*2 + 7*3 + 9*4 = 64, plus bias 0.5.
TEST(DepthwiseConv2d, MultiplierAndDilationByHand) {
  DepthwiseParams p;
  p.in_h = p.in_w = 3;
  p.depth_multiplier = 2;
  p.filter_h = p.filter_w = 2;
  p.dilation_h = p.dilation_w = 2;
  depthwise_compute_geometry(Padding::kValid, p);
  ASSERT_EQ(p.out_h, 1);
  ASSERT_EQ(p.out_w, 1);
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> filter = {1, 1, 1, 2, 1, 3, 1, 4};
  const float bias[] = {0.0f, 0.5f};
  std::vector<float> out(2);
  depthwise_conv2d(p, in.data(), filter.data(), bias, out.data(), nullptr);
  EXPECT_EQ(out, (std::vector<float>{20.0f, 64.5f}));
}

TEST(DepthwiseConv2d, RandomShapesMatchDirectConvolution) {
  unsigned seed = 40;
  for (int dm : {1, 3}) {
    for (int stride : {1, 2}) {
      for (Padding padding : {Padding::kSame, Padding::kValid}) {
        DepthwiseParams p;
        p.batch = 2;
        p.in_h = 9;
        p.in_w = 8;
        p.in_c = 13;
        p.depth_multiplier = dm;
        p.filter_h = 3;
        p.filter_w = 5;
        p.stride_h = p.stride_w = stride;
        p.dilation_h = 2;
        p.range = {-0.5f, 0.5f};
        depthwise_compute_geometry(padding, p);
        const int oc = p.in_c * dm;
        const auto in = random_floats(static_cast<size_t>(p.batch) * p.in_h * p.in_w * p.in_c, seed++);
        const auto f = random_floats(static_cast<size_t>(p.filter_h) * p.filter_w * oc, seed++);
        const auto bias = random_floats(oc, seed++);
        std::vector<float> expected(static_cast<size_t>(p.batch) * p.out_h * p.out_w * oc);
        for (int b = 0; b < p.batch; ++b)
          for (int oy = 0; oy < p.out_h; ++oy)
            for (int ox = 0; ox < p.out_w; ++ox)
              for (int o = 0; o < oc; ++o) {
                float sum = bias[o];
                for (int ky = 0; ky < p.filter_h; ++ky)
                  for (int kx = 0; kx < p.filter_w; ++kx) {
                    const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
                    const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
                    if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
                    sum += in[((b * p.in_h + iy) * p.in_w + ix) * p.in_c + o / dm] * f[(ky * p.filter_w + kx) * oc + o];
                  }
                expected[((b * p.out_h + oy) * p.out_w + ox) * oc + o] = std::min(std::max(sum, -0.5f), 0.5f);
              }
        std::vector<float> out(expected.size());
        ThreadPool pool(2);
        depthwise_conv2d(p, in.data(), f.data(), bias.data(), out.data(), &pool);
        expect_near_all(expected, out);
      }
    }
  }
}

// Transposed conv, stride 2, VALID, 3x3 filter of ones, 2x2 input {1,2,3,4} -> 5x5 output. Each input
// pixel (iy, ix) adds its value to the 3x3 block at (2*iy, 2*ix): the centre (2,2) gets all four
// (10), (0,2) gets 1+2 = 3, (2,0) gets 1+3 = 4, (4,4) only 4; bias 1 is added everywhere.
TEST(TransposeConv2d, Stride2ByHand) {
  TransposeConvParams p;
  p.in_h = p.in_w = 2;
  p.out_h = p.out_w = 5;
  p.filter_h = p.filter_w = 3;
  p.stride_h = p.stride_w = 2;
  transpose_conv_compute_padding(Padding::kValid, p);
  EXPECT_EQ(p.pad_top, 0);
  const std::vector<float> in = {1, 2, 3, 4};
  const std::vector<float> filter(9, 1.0f);
  const float bias[] = {1.0f};
  std::vector<float> out(25);
  transpose_conv2d(p, in.data(), filter.data(), bias, out.data());
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[2], 4.0f);
  EXPECT_EQ(out[2 * 5 + 0], 5.0f);
  EXPECT_EQ(out[2 * 5 + 2], 11.0f);
  EXPECT_EQ(out[4 * 5 + 4], 5.0f);
  EXPECT_EQ(out[1 * 5 + 3], 3.0f);  // (1,3) lies only in the block of input (0,1): 2 + 1
}

// The product form (one matrix product per image, then a gather per output pixel) against the scatter
// above on odd shapes: strides 1 to 3 (3 over a kernel of 2 leaves pixels no tap reaches), SAME and
// VALID, depths across the product's blocks, with and without a bias, an activation; serial and on
// two threads.
TEST(TransposeConv2d, ProductFormMatchesTheScatter) {
  struct Case {
    int batch, h, w, c, oc, fh, fw, stride;
    Padding padding;
    bool bias;
  };
  const Case cases[] = {
      {1, 9, 7, 37, 19, 3, 3, 2, Padding::kSame, true},  {2, 5, 6, 20, 33, 4, 4, 1, Padding::kValid, false},
      {1, 4, 5, 6, 5, 2, 2, 3, Padding::kSame, true},    {1, 7, 7, 300, 17, 3, 3, 2, Padding::kValid, true},
      {1, 3, 3, 1, 1, 5, 5, 2, Padding::kSame, false},
  };
  unsigned seed = 40;
  ThreadPool pool(2);
  for (const Case& c : cases) {
    TransposeConvParams p;
    p.batch = c.batch;
    p.in_h = c.h;
    p.in_w = c.w;
    p.in_c = c.c;
    p.out_c = c.oc;
    p.filter_h = c.fh;
    p.filter_w = c.fw;
    p.stride_h = p.stride_w = c.stride;
    p.out_h = c.padding == Padding::kSame ? c.h * c.stride : (c.h - 1) * c.stride + c.fh;
    p.out_w = c.padding == Padding::kSame ? c.w * c.stride : (c.w - 1) * c.stride + c.fw;
    p.range = {-1.5f, 6.0f};
    transpose_conv_compute_padding(c.padding, p);
    const auto in = random_floats(static_cast<size_t>(c.batch) * c.h * c.w * c.c, seed++);
    const auto f = random_floats(static_cast<size_t>(c.oc) * c.fh * c.fw * c.c, seed++);
    const auto bias = random_floats(c.oc, seed++);
    const size_t out_count = static_cast<size_t>(c.batch) * p.out_h * p.out_w * c.oc;
    std::vector<float> expected(out_count);
    transpose_conv2d(p, in.data(), f.data(), c.bias ? bias.data() : nullptr, expected.data());
    TransposeConvGemm g;
    transpose_conv_gemm_prepare(p, f.data(), g);
    for (Parallel* parallel : {static_cast<Parallel*>(nullptr), static_cast<Parallel*>(&pool)}) {
      std::vector<float> scratch(transpose_conv_gemm_scratch_floats(p, g, worker_count(parallel)));
      std::vector<float> got(out_count, -99.0f);
      transpose_conv2d_gemm(p, g, in.data(), c.bias ? bias.data() : nullptr, got.data(), scratch.data(), parallel);
      expect_near_all(expected, got);
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
