// The 8-bit kernels' fixed-point rules and convolutions against TFLite's integer arithmetic on cases
// worked out by hand (each comment shows the working): rounding at exactly .5 in both of TFLite's
// final-shift rules, saturation at the code range, zero points at the ends of their range; the 8-bit
// GEMM, im2col's padding and the depthwise convolution. The SIMD forms (AVX2, AVX-512 VNNI, whichever
// this CPU runs) must give the scalar rule's bits, on the hand cases and on random ones. The other 8-bit
// kernels: quant_elementwise_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/qconv.h"
#include "kernels/qdepthwise.h"
#include "kernels/qgemm.h"
#include "kernels/quant_math.h"
#include "tests/test_util.h"
#include "kernels/thread_pool.h"

namespace baton::builtin::testing {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

// ---- fixed-point primitives ---------------------------------------------------------------------------

TEST(QuantMath, QuantizeMultiplier) {
  auto is = [](double real, int32_t m, int shift) {
    const QuantizedMultiplier q = quantize_multiplier(real);
    EXPECT_EQ(q.multiplier, m) << real;
    EXPECT_EQ(q.shift, shift) << real;
  };
  is(0.5, 1 << 30, 0);          // frexp = 0.5 * 2^0; 0.5 * 2^31
  is(1.0, 1 << 30, 1);          // 0.5 * 2^1
  is(0.75, 1610612736, 0);      // 0.75 * 2^31
  is(3.0, 1610612736, 2);       // 0.75 * 2^2
  is(0.1, 1717986918, -3);      // 0.8 * 2^-3; 0.8 * 2^31 = 1717986918.4
  is(1.0 - std::ldexp(1.0, -33), 1 << 30, 1);  // the mantissa rounds up to 2^31: halved, exponent + 1
  is(std::ldexp(1.0, -40), 0, 0);  // below 2^-31: flushed to zero
  is(0.0, 0, 0);
}

TEST(QuantMath, SaturatingRoundingDoublingHighMul) {
  EXPECT_EQ(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30), 1 << 29);  // 2^60 / 2^31
  EXPECT_EQ(saturating_rounding_doubling_high_mul(3, 1 << 30), 2);    // 1.5 -> 2
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-3, 1 << 30), -1);  // -1.5 -> -1: ties go up
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-5, 1 << 30), -2);  // -2.5 -> -2
  EXPECT_EQ(saturating_rounding_doubling_high_mul(-7, 1 << 30), -3);  // -3.5 -> -3
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin, kMin), kMax);  // the one overflow saturates
  // -2^31 * (2^31 - 1) / 2^31 = -2147483647 + 2^-31... rounds to -2147483647.
  EXPECT_EQ(saturating_rounding_doubling_high_mul(kMin, kMax), -2147483647);
}

TEST(QuantMath, RoundingDivideByPowerOfTwoBothTieRules) {
  struct Case {
    int32_t x;
    int e;
    int32_t away, upward;
  } cases[] = {
      {5, 1, 3, 3},      // 2.5
      {-5, 1, -3, -2},   // -2.5: away from zero, or up
      {-6, 2, -2, -1},   // -1.5
      {-7, 2, -2, -2},   // -1.75
      {-5, 2, -1, -1},   // -1.25
      {7, 0, 7, 7},
      {kMax, 31, 1, 1},  // 0.99999...
      {kMin, 31, -1, -1},
      {1 << 30, 31, 1, 1},     // 0.5
      {-(1 << 30), 31, -1, 0}, // -0.5
  };
  for (const Case& c : cases) {
    EXPECT_EQ(rounding_divide_by_pot(c.x, c.e), c.away) << c.x << " / 2^" << c.e;
    EXPECT_EQ(rounding_divide_by_pot_upward(c.x, c.e), c.upward) << c.x << " / 2^" << c.e;
  }
}

TEST(QuantMath, MultiplyByQuantizedMultiplier) {
  const QuantizedMultiplier quarter = quantize_multiplier(0.25);  // {2^30, -1}
  EXPECT_EQ(multiply_by_quantized_multiplier(100, quarter), 25);  // srdhm 50, then 50 / 2
  // -6 * 0.25: srdhm gives -3 exactly, then -1.5 rounds to -2 (TFLite) or -1 (ruy).
  EXPECT_EQ(multiply_by_quantized_multiplier(-6, quarter, false), -2);
  EXPECT_EQ(multiply_by_quantized_multiplier(-6, quarter, true), -1);
  // Multipliers above one shift left first: 5 * 3 = (5 << 2) * 0.75.
  EXPECT_EQ(multiply_by_quantized_multiplier(5, quantize_multiplier(3.0)), 15);
  // Two roundings: -667 * 0.25 = -166.75, but srdhm rounds -333.5 up to -333 and -166.5 then goes to
  // -167 (away) or -166 (upward); a single rounding would give -167 both ways.
  EXPECT_EQ(multiply_by_quantized_multiplier(-667, quarter, false), -167);
  EXPECT_EQ(multiply_by_quantized_multiplier(-667, quarter, true), -166);
  // Requantize saturates: 1000 * 0.1 = srdhm(1000, 0.8 * 2^31) = 800, / 8 = 100, + 200 clamps to 255.
  EXPECT_EQ(requantize(1000, {quantize_multiplier(0.1), 200, 0, 255}), 255);
  EXPECT_EQ(requantize(-1000, {quantize_multiplier(0.1), 50, 0, 255}), 0);
  EXPECT_EQ(requantize(-1000, {quantize_multiplier(0.1), 50, -128, 127}), -50);
}

TEST(QuantMath, SimdRequantizationEqualsTheScalarRule) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> any(kMin, kMax), small(-100000, 100000);
  std::uniform_real_distribution<double> real(-12.0, 8.0);
  const int n = 16 * 64 + 5;  // whole SIMD blocks and a scalar tail
  std::vector<int32_t> acc(n), mult(n), shift(n);
  for (int i = 0; i < n; ++i) {
    acc[i] = i % 3 ? small(rng) : any(rng);
    // Real multipliers from 2^-12 to 2^8: shifts from -11 to 9 (left shifts included).
    const QuantizedMultiplier q = quantize_multiplier(std::exp2(real(rng)));
    mult[i] = q.multiplier;
    shift[i] = q.shift;
  }
  acc[0] = kMin;
  acc[1] = kMax;
  acc[2] = -(1 << 10);  // exact ties for small right shifts
  for (bool upward : {false, true}) {
    for (QuantIsa isa : isas()) {
      std::vector<uint8_t> out(n);
      requantize_row(isa, acc.data(), mult.data(), shift.data(), 3, -128, 127, upward, out.data(), n);
      for (int i = 0; i < n; ++i) {
        // Left shifts wrap in both forms, as TFLite's int32 multiply does.
        const int32_t want = requantize(acc[i], {{mult[i], shift[i]}, 3, -128, 127, upward});
        ASSERT_EQ(static_cast<int8_t>(out[i]), want) << quant_isa_name(isa) << " lane " << i << " acc " << acc[i];
      }
    }
  }
}

// ---- the 8-bit GEMM ------------------------------------------------------------------------------------

struct GemmCase {
  int m, n, k;
  bool a_signed, b_unsigned;
  std::vector<uint8_t> a, b;  // row-major m x k and n x k
  std::vector<int32_t> bias, multiplier, shift;  // n entries
  int32_t a_zero, b_zero, out_zero, lo, hi;
  bool upward;
};

const uint8_t* rows_of(const void* context, int r, uint8_t*) {
  const auto* c = static_cast<const GemmCase*>(context);
  return c->a.data() + static_cast<size_t>(r) * c->k;
}

std::vector<uint8_t> run_gemm(const GemmCase& c, QuantIsa isa, Parallel* parallel) {
  const int np = qgemm_n_padded(c.n);
  std::vector<int8_t> packed(qgemm_packed_b_size(c.n, c.k));
  std::vector<int32_t> col_sums(np), offsets(np), mult(np, 0), shift(np, 0);
  qgemm_pack_b(c.b.data(), c.k, c.n, c.k, c.b_unsigned, packed.data(), col_sums.data());
  const int32_t a_zero = c.a_zero + (c.a_signed ? 128 : 0);
  const int32_t b_zero = c.b_zero - (c.b_unsigned ? 128 : 0);
  qgemm_column_offsets(c.n, c.k, c.bias.data(), col_sums.data(), a_zero, b_zero, offsets.data());
  std::copy(c.multiplier.begin(), c.multiplier.end(), mult.begin());
  std::copy(c.shift.begin(), c.shift.end(), shift.begin());
  std::vector<uint8_t> out(static_cast<size_t>(c.m) * c.n);
  QGemmRequantOutput o;
  o.col_offset = offsets.data();
  o.b_zero = b_zero;
  o.multiplier = mult.data();
  o.shift = shift.data();
  o.zero_point = c.out_zero;
  o.lo = c.lo;
  o.hi = c.hi;
  o.ties_upward = c.upward;
  o.out = out.data();
  o.ldc = c.n;
  std::vector<uint8_t> scratch(static_cast<size_t>(worker_count(parallel)) * qgemm_scratch_per_worker(c.k) + 64);
  qgemm(isa, {rows_of, &c, c.a_signed}, c.m, c.n, c.k, packed.data(), o, scratch.data(), parallel);
  return out;
}

// The definition, one element at a time.
std::vector<uint8_t> naive_gemm(const GemmCase& c) {
  std::vector<uint8_t> out(static_cast<size_t>(c.m) * c.n);
  auto code = [](uint8_t byte, bool is_signed) {
    return is_signed ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte);
  };
  for (int r = 0; r < c.m; ++r) {
    for (int j = 0; j < c.n; ++j) {
      int32_t acc = c.bias[j];
      for (int kk = 0; kk < c.k; ++kk) {
        acc += (code(c.a[r * c.k + kk], c.a_signed) - c.a_zero) * (code(c.b[j * c.k + kk], !c.b_unsigned) - c.b_zero);
      }
      const Requantize rq{{c.multiplier[j], c.shift[j]}, c.out_zero, c.lo, c.hi, c.upward};
      out[r * c.n + j] = static_cast<uint8_t>(requantize(acc, rq));
    }
  }
  return out;
}

TEST(QGemm, Uint8ZeroPointsAtTheRangeEnds) {
  // A zero point 255, B zero point 0, bias [100, -100], multiplier 0.25, output zero point 200.
  //   A - 255: row 0 [0, -1, -255], row 1 [-245, 0, -127]; B columns [1, 2, 3] and [255, 0, 1].
  //   acc: (0,0) -2 - 765 + 100 = -667    (0,1) -255 - 100 = -355
  //        (1,0) -245 - 381 + 100 = -526  (1,1) -62475 - 127 - 100 = -62702
  //   x 0.25: -667 -> srdhm -333.5 -> -333, / 2 = -166.5 -> -166 (upward) or -167 (away)
  //           -355 -> -177.5 -> -177, -88.5 -> -88 or -89
  //           -526 -> -263 exactly, -131.5 -> -131 or -132
  //           -62702 -> -15675.5 -> far below 0 after + 200: clamps to 0
  GemmCase c{2, 2, 3, false, true, {255, 254, 0, 10, 255, 128}, {1, 2, 3, 255, 0, 1}, {100, -100},
             {1 << 30, 1 << 30}, {-1, -1}, 255, 0, 200, 0, 255, true};
  for (QuantIsa isa : isas()) {
    c.upward = true;
    EXPECT_EQ(run_gemm(c, isa, nullptr), (std::vector<uint8_t>{34, 112, 69, 0})) << quant_isa_name(isa);
    c.upward = false;
    EXPECT_EQ(run_gemm(c, isa, nullptr), (std::vector<uint8_t>{33, 111, 68, 0})) << quant_isa_name(isa);
  }
}

TEST(QGemm, Int8PerColumnMultipliers) {
  // A zero point -128: A - (-128) is row 0 [255, 0, 128], row 1 [127, 133, 0]. B (int8, zero point 0)
  // columns [1, -1, 2] and [-127, 127, 0]; bias [0, 1000]; multipliers 0.5 and 1/256; output zero point
  // -10, codes [-128, 127].
  //   (0,0) 255 + 256 = 511 -> srdhm(511, 2^30) = 255.5 -> 256, - 10 -> clamps to 127
  //   (0,1) -32385 + 1000 = -31385 -> srdhm -15692.5 -> -15692, / 128 = -122.6 -> -123, - 10 -> clamps to -128
  //   (1,0) 127 - 133 = -6 -> -3, - 10 = -13
  //   (1,1) -16129 + 16891 + 1000 = 1762 -> 881, / 128 = 6.88 -> 7, - 10 = -3
  auto s8 = [](std::initializer_list<int> v) {
    std::vector<uint8_t> out;
    for (int x : v) out.push_back(static_cast<uint8_t>(static_cast<int8_t>(x)));
    return out;
  };
  GemmCase c{2, 2, 3, true, false, s8({127, -128, 0, -1, 5, -128}), s8({1, -1, 2, -127, 127, 0}), {0, 1000},
             {1 << 30, 1 << 30}, {0, -7}, -128, 0, -10, -128, 127, true};
  for (QuantIsa isa : isas()) {
    EXPECT_EQ(run_gemm(c, isa, nullptr), s8({127, -128, -13, -3})) << quant_isa_name(isa);
  }
}

TEST(QGemm, RandomShapesMatchTheDefinitionOnEveryIsaAndThreadCount) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255), zero(0, 255), bias(-20000, 20000);
  ThreadPool pool(3);
  for (const auto& [m, n, k] : std::vector<std::tuple<int, int, int>>{{37, 35, 29}, {1, 16, 4}, {70, 3, 1}, {9, 50, 300}, {130, 40, 64}, {67, 17, 33}}) {
    for (bool a_signed : {false, true}) {
      GemmCase c;
      c.m = m;
      c.n = n;
      c.k = k;
      c.a_signed = a_signed;
      c.b_unsigned = !a_signed;
      for (int i = 0; i < m * k; ++i) c.a.push_back(static_cast<uint8_t>(byte(rng)));
      for (int i = 0; i < n * k; ++i) c.b.push_back(static_cast<uint8_t>(byte(rng)));
      for (int j = 0; j < n; ++j) {
        c.bias.push_back(bias(rng));
        const QuantizedMultiplier q = quantize_multiplier(std::ldexp(0.3 + 0.6 * (j % 7) / 7.0, -(6 + j % 9)));
        c.multiplier.push_back(q.multiplier);
        c.shift.push_back(q.shift);
      }
      c.a_zero = a_signed ? zero(rng) - 128 : zero(rng);
      c.b_zero = a_signed ? 0 : zero(rng);
      c.out_zero = a_signed ? 5 : 130;
      c.lo = a_signed ? -128 : 0;
      c.hi = a_signed ? 127 : 255;
      c.upward = m % 2 == 1;
      const std::vector<uint8_t> want = naive_gemm(c);
      for (QuantIsa isa : isas()) {
        EXPECT_EQ(run_gemm(c, isa, nullptr), want) << quant_isa_name(isa) << " " << m << "x" << n << "x" << k;
        EXPECT_EQ(run_gemm(c, isa, &pool), want) << quant_isa_name(isa) << " threaded " << m << "x" << n << "x" << k;
      }
    }
  }
}

TEST(QGemm, FloatOutputForInt8Weights) {
  // Dynamic range: int8 activations (zero point per row) times int8 weights, scaled to float.
  //   row 0: codes [10, -20], zero 2 -> [8, -22]; row 1: codes [0, 5], zero -1 -> [1, 6]
  //   weights [3, 1] and [-2, 4]; row scales 0.5, 0.25; column scales 0.1, 1; bias [1, -1]
  //   (0,0) (24 - 22) * 0.05 + 1 = 1.1    (0,1) (-16 - 88) * 0.5 - 1 = -53
  //   (1,0) (3 + 6) * 0.025 + 1 = 1.225   (1,1) (-2 + 24) * 0.25 - 1 = 4.5
  struct Rows {
    std::vector<uint8_t> a;
    static const uint8_t* row(const void* c, int r, uint8_t*) { return static_cast<const Rows*>(c)->a.data() + 2 * r; }
  } rows{{10, static_cast<uint8_t>(-20), 0, 5}};
  const std::vector<uint8_t> w = {3, 1, static_cast<uint8_t>(-2), 4};
  std::vector<int8_t> packed(qgemm_packed_b_size(2, 2));
  std::vector<int32_t> col_sums(qgemm_n_padded(2));
  qgemm_pack_b(w.data(), 2, 2, 2, false, packed.data(), col_sums.data());
  std::vector<int32_t> row_zero = {2 + 128, -1 + 128};  // uint8 domain
  std::vector<float> row_scale = {0.5f, 0.25f}, col_scale(qgemm_n_padded(2), 0.0f), bias(qgemm_n_padded(2), 0.0f);
  col_scale[0] = 0.1f;
  col_scale[1] = 1.0f;
  bias[0] = 1.0f;
  bias[1] = -1.0f;
  for (QuantIsa isa : isas()) {
    std::vector<float> out(4);
    QGemmFloatOutput o;
    o.col_sums = col_sums.data();
    o.row_zero = row_zero.data();
    o.row_scale = row_scale.data();
    o.col_scale = col_scale.data();
    o.bias = bias.data();
    o.out = out.data();
    o.ldc = 2;
    std::vector<uint8_t> scratch(qgemm_scratch_per_worker(2) + 64);
    qgemm(isa, {Rows::row, &rows, true}, 2, 2, 2, packed.data(), o, scratch.data(), nullptr);
    EXPECT_NEAR(out[0], 1.1f, 1e-6f);
    EXPECT_NEAR(out[1], -53.0f, 1e-5f);
    EXPECT_NEAR(out[2], 1.225f, 1e-6f);
    EXPECT_NEAR(out[3], 4.5f, 1e-6f);
  }
}

TEST(QConv, Im2colPadsWithTheInputZeroPoint) {
  // A 3x1 filter over a 1x2 image, SAME padding: the tap over the border must read the zero point, so
  // it contributes (zero - zero) * w = 0. Input zero point 7, codes [9, 12] -> [2, 5]; filter [1, 1, 1],
  // bias 0, multiplier 1 (shift 1 of 2^30): outputs 0 + 2 + 5 = 7 and 2 + 5 + 0 = 7, plus zero point 0.
  ConvParams p;
  p.in_h = 1;
  p.in_w = 2;
  p.in_c = 1;
  p.out_c = 1;
  p.filter_h = 1;
  p.filter_w = 3;
  conv_compute_geometry(Padding::kSame, p);
  ASSERT_EQ(p.pad_left, 1);
  const std::vector<uint8_t> input = {9, 12}, filter = {129, 129, 129};  // uint8 code 129, zero point 128
  const uint8_t pad = 7;
  const QConvRows conv{&p, input.data(), &pad};
  std::vector<int8_t> packed(qgemm_packed_b_size(1, 3));
  std::vector<int32_t> sums(qgemm_n_padded(1)), offsets(qgemm_n_padded(1)), mult(16, 1 << 30), shift(16, 1);
  qgemm_pack_b(filter.data(), 3, 1, 3, true, packed.data(), sums.data());
  const int32_t zero = 0;
  qgemm_column_offsets(1, 3, &zero, sums.data(), 7, 128 - 128, offsets.data());
  for (QuantIsa isa : isas()) {
    std::vector<uint8_t> out(2);
    QGemmRequantOutput o;
    o.col_offset = offsets.data();
    o.b_zero = 0;
    o.multiplier = mult.data();
    o.shift = shift.data();
    o.out = out.data();
    o.ldc = 1;
    std::vector<uint8_t> scratch(qgemm_scratch_per_worker(3) + 64);
    qgemm(isa, conv.rows(false), conv_rows(p), 1, conv_depth(p), packed.data(), o, scratch.data(), nullptr);
    EXPECT_EQ(out, (std::vector<uint8_t>{7, 7})) << quant_isa_name(isa);
  }
}

// ---- depthwise -----------------------------------------------------------------------------------------

TEST(QDepthwise, PaddingBiasAndTiesAwayFromZero) {
  // int8, one row of two pixels, two channels, a 1x3 filter, SAME padding (one tap over each border).
  // Input zero point 3: codes (5, 5) and (13, 13) -> 2 and 10. Channel 0 weights [1, 2, 3], bias 4;
  // channel 1 weights [-1, -2, -3], bias -4. Multiplier 0.25 (srdhm by 2^30 halves exactly, then a
  // rounding shift by 1), output zero point 0:
  //   pixel 0: taps (pad, 2, 10): ch0 2*2 + 10*3 + 4 = 38 -> 9.5 -> 10; ch1 -38 -> -9.5 -> -10
  //   pixel 1: taps (2, 10, pad): ch0 2 + 20 + 4 = 26 -> 6.5 -> 7;     ch1 -26 -> -6.5 -> -7
  QDepthwiseParams p;
  p.geo.in_h = 1;
  p.geo.in_w = 2;
  p.geo.in_c = 2;
  p.geo.filter_h = 1;
  p.geo.filter_w = 3;
  depthwise_compute_geometry(Padding::kSame, p.geo);
  const std::vector<int32_t> filter = {1, -1, 2, -2, 3, -3}, bias = {4, -4}, mult = {1 << 30, 1 << 30},
                             shift = {-1, -1};
  p.is_signed = true;
  p.input_zero = 3;
  p.filter = filter.data();
  p.bias = bias.data();
  p.multiplier = mult.data();
  p.shift = shift.data();
  p.lo = -128;
  p.hi = 127;
  const std::vector<uint8_t> input = {5, 5, 13, 13};
  for (QuantIsa isa : isas()) {
    std::vector<uint8_t> out(4);
    qdepthwise_conv2d(isa, p, input.data(), out.data(), nullptr);
    EXPECT_EQ(out, (std::vector<uint8_t>{10, static_cast<uint8_t>(-10), 7, static_cast<uint8_t>(-7)}))
        << quant_isa_name(isa);
  }
}

TEST(QDepthwise, SimdEqualsScalarOnRandomLayers) {
  // Filters of 9 taps (the register path) and of 15 (the generic one), strides, dilations and both
  // paddings, so rows and columns with taps over a border sit beside interior ones; the SIMD runs
  // take the interior tables as the op's prepare makes them.
  struct Layer {
    int in_h, in_w, filter_h, filter_w, stride_h, stride_w, dilation_h, dilation_w;
    Padding padding;
  };
  const Layer layers[] = {{9, 8, 3, 3, 2, 1, 1, 2, Padding::kSame},
                          {12, 11, 3, 3, 1, 1, 1, 1, Padding::kSame},
                          {12, 11, 3, 3, 2, 2, 1, 1, Padding::kValid},
                          {13, 10, 5, 3, 1, 2, 2, 1, Padding::kSame},
                          {7, 9, 5, 3, 1, 1, 1, 2, Padding::kValid}};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255), w(-255, 255), b(-5000, 5000);
  ThreadPool pool(2);
  for (const Layer& layer : layers) {
    for (int channels : {16, 40, 7}) {
      for (bool is_signed : {false, true}) {
        QDepthwiseParams p;
        p.geo.batch = 2;
        p.geo.in_h = layer.in_h;
        p.geo.in_w = layer.in_w;
        p.geo.in_c = channels;
        p.geo.filter_h = layer.filter_h;
        p.geo.filter_w = layer.filter_w;
        p.geo.stride_h = layer.stride_h;
        p.geo.stride_w = layer.stride_w;
        p.geo.dilation_h = layer.dilation_h;
        p.geo.dilation_w = layer.dilation_w;
        depthwise_compute_geometry(layer.padding, p.geo);
        const int taps = layer.filter_h * layer.filter_w;
        std::vector<int32_t> filter(static_cast<size_t>(taps) * channels), bias(channels), mult(channels),
            shift(channels);
        for (int32_t& v : filter) v = w(rng);
        for (int c = 0; c < channels; ++c) {
          bias[c] = b(rng);
          const QuantizedMultiplier q = quantize_multiplier(std::ldexp(0.7, -(5 + c % 6)));
          mult[c] = q.multiplier;
          shift[c] = q.shift;
        }
        std::vector<uint8_t> input(static_cast<size_t>(2) * layer.in_h * layer.in_w * channels);
        for (uint8_t& v : input) v = static_cast<uint8_t>(byte(rng));
        p.is_signed = is_signed;
        p.input_zero = is_signed ? -3 : 131;
        p.filter = filter.data();
        p.bias = bias.data();
        p.multiplier = mult.data();
        p.shift = shift.data();
        p.output_zero = is_signed ? 0 : 128;
        p.lo = is_signed ? -128 : 0;
        p.hi = is_signed ? 127 : 255;
        const size_t out_size = static_cast<size_t>(2) * p.geo.out_h * p.geo.out_w * channels;
        std::vector<uint8_t> want(out_size);
        qdepthwise_conv2d(QuantIsa::kScalar, p, input.data(), want.data(), nullptr);
        std::vector<int32_t> interior_bias;
        std::vector<ptrdiff_t> tap_offset;
        qdepthwise_interior_tables(p, interior_bias, tap_offset);
        p.interior_bias = interior_bias.data();
        p.tap_offset = tap_offset.data();
        for (QuantIsa isa : isas()) {
          std::vector<uint8_t> got(out_size);
          qdepthwise_conv2d(isa, p, input.data(), got.data(), &pool);
          EXPECT_EQ(got, want) << quant_isa_name(isa) << " channels " << channels << " filter " << layer.filter_h
                               << "x" << layer.filter_w << " input " << layer.in_h << "x" << layer.in_w;
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
