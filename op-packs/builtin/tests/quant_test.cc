// The 8-bit kernels against TFLite's integer arithmetic on cases worked out by hand (each comment shows
// the working): rounding at exactly .5 in both of TFLite's final-shift rules, saturation at the code
// range, zero points at the ends of their range. The SIMD forms (AVX2, AVX-512 VNNI, whichever this CPU
// runs) must give the scalar rule's bits, on the hand cases and on random ones.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/hybrid.h"
#include "kernels/qconv.h"
#include "kernels/qdepthwise.h"
#include "kernels/qelementwise.h"
#include "kernels/qgemm.h"
#include "kernels/qlookup.h"
#include "kernels/qpool.h"
#include "kernels/quant_math.h"
#include "tests/test_util.h"
#include "kernels/quantize.h"
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
  for (const auto& [m, n, k] : std::vector<std::tuple<int, int, int>>{{37, 35, 29}, {1, 16, 4}, {70, 3, 1}, {9, 50, 300}}) {
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
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255), w(-255, 255), b(-5000, 5000);
  ThreadPool pool(2);
  for (int channels : {16, 40, 7}) {
    for (bool is_signed : {false, true}) {
      QDepthwiseParams p;
      p.geo.batch = 2;
      p.geo.in_h = 9;
      p.geo.in_w = 8;
      p.geo.in_c = channels;
      p.geo.filter_h = 3;
      p.geo.filter_w = 3;
      p.geo.stride_h = 2;
      p.geo.stride_w = 1;
      p.geo.dilation_w = 2;
      depthwise_compute_geometry(Padding::kSame, p.geo);
      std::vector<int32_t> filter(9 * channels), bias(channels), mult(channels), shift(channels);
      for (int32_t& v : filter) v = w(rng);
      for (int c = 0; c < channels; ++c) {
        bias[c] = b(rng);
        const QuantizedMultiplier q = quantize_multiplier(std::ldexp(0.7, -(5 + c % 6)));
        mult[c] = q.multiplier;
        shift[c] = q.shift;
      }
      std::vector<uint8_t> input(2 * 9 * 8 * channels);
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
      for (QuantIsa isa : isas()) {
        std::vector<uint8_t> got(out_size);
        qdepthwise_conv2d(isa, p, input.data(), got.data(), &pool);
        EXPECT_EQ(got, want) << quant_isa_name(isa) << " channels " << channels;
      }
    }
  }
}

// ---- ADD, SUB, MUL ------------------------------------------------------------------------------------

TEST(QBinary, AddSubMulByHand) {
  // ADD uint8: a scale 0.5 zero 128, b scale 0.25 zero 0, output scale 1 zero 200. TFLite's multipliers:
  // twice the larger input scale = 1, so a: 0.5 {2^30, 0}, b: 0.25 {2^30, -1}, out: 1 / 2^20 {2^30, -19}.
  QBinaryParams add;
  add.op = QBinaryOp::kAdd;
  add.a_zero = 128;
  add.b_zero = 0;
  add.out_zero = 200;
  ASSERT_TRUE(qbinary_prepare(add, 0.5f, 0.25f, 1.0f));
  EXPECT_EQ(add.a_mult.multiplier, 1 << 30);
  EXPECT_EQ(add.a_mult.shift, 0);
  EXPECT_EQ(add.b_mult.shift, -1);
  EXPECT_EQ(add.out_mult.shift, -19);
  EXPECT_EQ(qbinary_one(add, 131, 2), 202);    // 1.5 + 0.5 = 2
  EXPECT_EQ(qbinary_one(add, 129, 0), 201);    // 0.5 -> srdhm keeps 2^18, / 2^19 = 0.5 -> 1 (away)
  EXPECT_EQ(qbinary_one(add, 127, 0), 199);    // -0.5 -> -1 (away from zero)
  EXPECT_EQ(qbinary_one(add, 255, 255), 255);  // 63.5 + 63.75 = 127.25 -> 327 saturates
  EXPECT_EQ(qbinary_one(add, 0, 0), 136);      // -64
  QBinaryParams sub = add;  // same scales, so the same multipliers
  sub.op = QBinaryOp::kSub;
  sub.out_zero = 50;
  EXPECT_EQ(qbinary_one(sub, 131, 2), 51);  // 1.5 - 0.5
  EXPECT_EQ(qbinary_one(sub, 0, 255), 0);   // -64 - 63.75 = -127.75 -> -128 + 50 clamps to 0
  // MUL uint8: both inputs scale 0.5 zero 128, output scale 0.5 zero 100: multiplier 0.5 {2^30, 0}, so
  // only srdhm rounds, ties up.
  QBinaryParams mul;
  mul.op = QBinaryOp::kMul;
  mul.a_zero = 128;
  mul.b_zero = 128;
  mul.out_zero = 100;
  ASSERT_TRUE(qbinary_prepare(mul, 0.5f, 0.5f, 0.5f));
  EXPECT_EQ(qbinary_one(mul, 131, 129), 102);  // 3 * 1 * 0.5 = 1.5 -> 2
  EXPECT_EQ(qbinary_one(mul, 125, 129), 99);   // -1.5 -> -1
  EXPECT_EQ(qbinary_one(mul, 255, 255), 255);  // 127 * 127 * 0.5 saturates
}

TEST(QBinary, SimdEqualsScalarWithBroadcasts) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  const int32_t a_shape[] = {2, 3, 37}, b_shapes[][3] = {{2, 3, 37}, {1, 1, 37}, {2, 3, 1}};
  for (const auto& b_shape : b_shapes) {
    const BroadcastPlan plan = plan_broadcast(a_shape, 3, b_shape, 3);
    std::vector<uint8_t> a(2 * 3 * 37), b(b_shape[0] * b_shape[1] * b_shape[2]);
    for (uint8_t& v : a) v = static_cast<uint8_t>(byte(rng));
    for (uint8_t& v : b) v = static_cast<uint8_t>(byte(rng));
    for (QBinaryOp op : {QBinaryOp::kAdd, QBinaryOp::kSub, QBinaryOp::kMul}) {
      for (bool is_signed : {false, true}) {
        QBinaryParams p;
        p.op = op;
        p.is_signed = is_signed;
        p.a_zero = is_signed ? -7 : 120;
        p.b_zero = is_signed ? 20 : 3;
        p.out_zero = is_signed ? 1 : 128;
        p.lo = is_signed ? -128 : 0;
        p.hi = is_signed ? 127 : 255;
        ASSERT_TRUE(qbinary_prepare(p, 0.037f, 0.021f, 0.045f));
        // The definition, element by element with the broadcast spelled out.
        std::vector<uint8_t> want(a.size());
        for (int i0 = 0; i0 < 2; ++i0) {
          for (int i1 = 0; i1 < 3; ++i1) {
            for (int i2 = 0; i2 < 37; ++i2) {
              const int ai = (i0 * 3 + i1) * 37 + i2;
              const int bi = b.size() == a.size() ? ai : b_shape[2] == 1 ? i0 * 3 + i1 : i2;
              auto code = [&](uint8_t v) { return is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : v; };
              want[ai] = static_cast<uint8_t>(qbinary_one(p, code(a[ai]), code(b[bi])));
            }
          }
        }
        for (QuantIsa isa : isas()) {
          std::vector<uint8_t> got(a.size());
          qbinary(isa, p, plan, a.data(), b.data(), got.data());
          EXPECT_EQ(got, want) << quant_isa_name(isa);
        }
      }
    }
  }
}

// ---- pools, tables, conversions ---------------------------------------------------------------------

TEST(QPool, AverageRoundsHalfAwayFromZero) {
  QPoolParams p;
  p.geo.in_h = 1;
  p.geo.in_w = 2;
  p.geo.filter_h = 1;
  p.geo.filter_w = 2;
  p.geo.stride_w = 2;
  pool_compute_geometry(Padding::kValid, p.geo);
  p.is_signed = true;
  p.lo = -128;
  p.hi = 127;
  std::vector<uint8_t> in = {static_cast<uint8_t>(-3), static_cast<uint8_t>(-2)}, out(1);
  qaverage_pool(p, in.data(), out.data());
  EXPECT_EQ(static_cast<int8_t>(out[0]), -3);  // -2.5 -> -3
  p.is_signed = false;
  p.lo = 0;
  p.hi = 255;
  in = {3, 2};
  qaverage_pool(p, in.data(), out.data());
  EXPECT_EQ(out[0], 3);  // 2.5 -> 3
  in = {200, 9};
  qmax_pool(p, in.data(), out.data());
  EXPECT_EQ(out[0], 200);
  p.hi = 150;  // a fused RELU-style clamp
  qmax_pool(p, in.data(), out.data());
  EXPECT_EQ(out[0], 150);
}

TEST(QLookup, LogisticTable) {
  // Input scale 1/16 zero 128, output 1/256 zero 0: code 128 is 0.0 -> 0.5 -> 128; code 144 is 1.0 ->
  // sigmoid 0.7310586 -> 187.15 -> 187; code 255 is 7.9375 -> 0.99964 -> 255.9 -> 256 clamps to 255;
  // code 0 is -8 -> 0.000335 -> 0.086 -> 0.
  uint8_t t[256];
  lookup_table(false, 1.0f / 16, 128, 1.0f / 256, 0, sigmoid, t);
  EXPECT_EQ(t[128], 128);
  EXPECT_EQ(t[144], 187);
  EXPECT_EQ(t[255], 255);
  EXPECT_EQ(t[0], 0);
  // int8, zero points 0 and -128: code 0 -> 128 - 128 = 0, code 16 -> 187 - 128 = 59, code -128 -> -128.
  lookup_table(true, 1.0f / 16, 0, 1.0f / 256, -128, sigmoid, t);
  EXPECT_EQ(static_cast<int8_t>(t[0]), 0);
  EXPECT_EQ(static_cast<int8_t>(t[16]), 59);
  EXPECT_EQ(static_cast<int8_t>(t[static_cast<uint8_t>(-128)]), -128);
  const std::vector<uint8_t> in = {0, 16, static_cast<uint8_t>(-128)};
  std::vector<uint8_t> out(3);
  apply_table(t, in.data(), out.data(), 3);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 59, static_cast<uint8_t>(-128)}));
}

TEST(QLookup, Softmax) {
  float table[256];
  softmax_table(1.0f, 1.0f, table);
  // Three equal codes: 1/3 each, 85.33 -> 85; two equal: 0.5 -> 128; a code 255 above the rest: its
  // probability is 1 - tiny -> 256 clamps to 255, the others round to 0.
  std::vector<uint8_t> in = {7, 7, 7, 9, 9, 0, 0, 255, 0}, out(9);
  qsoftmax(false, table, 1.0f / 256, 0, in.data(), out.data(), 3, 3);
  EXPECT_EQ(out[0], 85);
  EXPECT_EQ(out[1], 85);
  EXPECT_EQ(out[2], 85);
  EXPECT_EQ(out[7], 255);
  EXPECT_EQ(out[6], 0);
  std::vector<uint8_t> pair = {9, 9}, pair_out(2);
  qsoftmax(false, table, 1.0f / 256, 0, pair.data(), pair_out.data(), 1, 2);
  EXPECT_EQ(pair_out, (std::vector<uint8_t>{128, 128}));
  // int8 with zero point -128: four equal codes -> 64 - 128 = -64.
  std::vector<uint8_t> four = {static_cast<uint8_t>(-5), static_cast<uint8_t>(-5), static_cast<uint8_t>(-5),
                               static_cast<uint8_t>(-5)},
                       four_out(4);
  qsoftmax(true, table, 1.0f / 256, -128, four.data(), four_out.data(), 1, 4);
  EXPECT_EQ(static_cast<int8_t>(four_out[0]), -64);
}

TEST(Quantize, FloatsToCodes) {
  // scale 0.5, zero 10: 0.25 / 0.5 = 0.5 -> 1 (away from zero) -> 11; -0.25 -> -1 -> 9; saturation at
  // both ends; NaN reads as 0.0.
  const std::vector<float> in = {0.25f, -0.25f, 1000.0f, -1000.0f, NAN, 3.0f};
  std::vector<uint8_t> out(in.size());
  quantize_floats(in.data(), 6, 0.5f, 10, false, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{11, 9, 255, 0, 10, 16}));
  quantize_floats(in.data(), 6, 0.5f, -128, true, out.data());
  EXPECT_EQ(static_cast<int8_t>(out[0]), -127);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -128);  // -129 clamps
  EXPECT_EQ(static_cast<int8_t>(out[2]), 127);
}

TEST(Quantize, RequantizeCodes) {
  // uint8 (zero 128) to int8 (zero 0) with multiplier 0.5: 131 -> 3 * 0.5 = 1.5 -> srdhm ties up -> 2;
  // 125 -> -1.5 -> -1; 255 -> 63.5 -> 64; 0 -> -64.
  const std::vector<uint8_t> in = {131, 125, 255, 0};
  std::vector<uint8_t> out(4);
  requantize_codes(in.data(), 4, false, 128, quantize_multiplier(0.5), 0, true, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{2, static_cast<uint8_t>(-1), 64, static_cast<uint8_t>(-64)}));
}

// The vector lanes (AVX2, where the CPU has it) against the scalar rule, which one element at a time
// always takes: ties in float and double, values a hair off a tie, zeros, NaN, infinities, huge values,
// every scale sign of a residue, uint8 and int8; and the 8-bit requantize over every code.
TEST(Quantize, VectorLanesGiveTheScalarCodes) {
  std::vector<float> in;
  for (int k = -300; k <= 300; ++k) {
    const float tie = (static_cast<float>(k) + 0.5f) * 0.1f;
    in.insert(in.end(), {tie, std::nextafter(tie, 1e9f), std::nextafter(tie, -1e9f), static_cast<float>(k) * 0.1f});
  }
  in.insert(in.end(), {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 3e38f, -3e38f, 1e-30f});
  for (float scale : {0.1f, 0.0039215686f, 3.7f}) {
    for (bool is_signed : {false, true}) {
      for (int32_t zero : {0, -7, 128}) {
        std::vector<uint8_t> whole(in.size()), one_by_one(in.size());
        quantize_floats(in.data(), static_cast<int64_t>(in.size()), scale, zero, is_signed, whole.data());
        for (size_t i = 0; i < in.size(); ++i) quantize_floats(&in[i], 1, scale, zero, is_signed, &one_by_one[i]);
        ASSERT_EQ(whole, one_by_one) << "scale " << scale << " zero " << zero << (is_signed ? " int8" : " uint8");
      }
    }
  }
  std::vector<uint8_t> codes(256 * 3);
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i * 7 + i / 256);
  for (double real : {0.5, 0.3712, 1.9, 0.0031}) {
    for (bool in_signed : {false, true}) {
      std::vector<uint8_t> whole(codes.size()), one_by_one(codes.size());
      requantize_codes(codes.data(), static_cast<int64_t>(codes.size()), in_signed, 3, quantize_multiplier(real), -5,
                       !in_signed, whole.data());
      for (size_t i = 0; i < codes.size(); ++i) {
        requantize_codes(&codes[i], 1, in_signed, 3, quantize_multiplier(real), -5, !in_signed, &one_by_one[i]);
      }
      ASSERT_EQ(whole, one_by_one) << "real " << real;
    }
  }
}

// The table lookup's vector steps (64 codes at a time where the CPU has AVX-512 VBMI) give table[code] for
// every code in every position, the tail included.
TEST(Lookup, ApplyTableGivesEachCodesEntry) {
  uint8_t table[256];
  for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v * 151 + 7);
  std::vector<uint8_t> in(64 * 5 + 13), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37 + i / 256);
  apply_table(table, in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], table[in[i]]) << i;
}

TEST(Quantize, ConcatRescalesInFloat) {
  // Input 0 keeps the output's parameters (copied); input 1: scale 0.25 zero 10 into scale 0.5 zero 5:
  // x * 0.5 - 5 rounded half away from zero, + 5: 13 -> 1.5 -> 2 -> 7; 7 -> -1.5 -> -2 -> 3; 0 -> -5 -> 0.
  const ConcatScaling same = concat_scaling(0.5f, 5, 0.5f, 5);
  EXPECT_TRUE(same.copy);
  const ConcatScaling other = concat_scaling(0.25f, 10, 0.5f, 5);
  EXPECT_FALSE(other.copy);
  const std::vector<uint8_t> a = {200, 201}, b = {13, 7, 0};
  const uint8_t* inputs[] = {a.data(), b.data()};
  const ConcatScaling scaling[] = {same, other};
  const int64_t chunks[] = {2, 3};
  std::vector<uint8_t> out(5);
  qconcat(1, chunks, inputs, scaling, 2, 5, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{200, 201, 7, 3, 0}));
}

TEST(Hybrid, SymmetricRowQuantization) {
  // max |x| = 1: scale 1/127; x * 127 rounded half away from zero: -127, 63.5 -> 64, 127, 31.75 -> 32.
  const std::vector<float> x = {-1.0f, 0.5f, 1.0f, 0.25f};
  std::vector<int8_t> q(4);
  float scale = 0;
  symmetric_quantize_row(x.data(), 4, q.data(), &scale);
  EXPECT_FLOAT_EQ(scale, 1.0f / 127);
  EXPECT_EQ(q, (std::vector<int8_t>{-127, 64, 127, 32}));
  const std::vector<float> zeros(3, 0.0f);
  symmetric_quantize_row(zeros.data(), 3, q.data(), &scale);
  EXPECT_EQ(scale, 1.0f);
  EXPECT_EQ(q[0], 0);
}

TEST(Hybrid, AsymmetricRowQuantization) {
  // [-1, 3, 0]: range [-1, 3], scale 4/255; zero point from the minimum -128 + 63.75 = -64.25 (error
  // 191.75, less than the maximum's 318.25) nudged to -64; x * 63.75 - 64: -127.75 -> -128, 127.25 ->
  // 127, 0 -> -64.
  const std::vector<float> x = {-1.0f, 3.0f, 0.0f};
  std::vector<int8_t> q(3);
  float scale = 0;
  int32_t zero = 0;
  asymmetric_quantize_row(x.data(), 3, q.data(), &scale, &zero);
  EXPECT_FLOAT_EQ(scale, 4.0f / 255);
  EXPECT_EQ(zero, -64);
  EXPECT_EQ(q, (std::vector<int8_t>{-128, 127, -64}));
  // Positive only: the range starts at 0, the zero point is the lowest code.
  const std::vector<float> pos = {0.5f, 2.0f};
  asymmetric_quantize_row(pos.data(), 2, q.data(), &scale, &zero);
  EXPECT_EQ(zero, -128);
  EXPECT_EQ(q[0], -64);  // 0.5 * 127.5 - 128 = -64.25
  EXPECT_EQ(q[1], 127);
}

TEST(Hybrid, RowDotsTakeTheZeroPointsTermOut) {
  // Depths around the 16-code blocks of the vector path, extreme codes included; each result is
  // sum w * (q - zero point), formed here one product at a time in int64.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> code(-128, 127);
  for (int depth : {1, 15, 16, 17, 64, 77}) {
    const int rows = 5;
    std::vector<int8_t> w(static_cast<size_t>(rows) * depth), q(static_cast<size_t>(depth));
    for (auto& v : w) v = static_cast<int8_t>(code(rng));
    for (auto& v : q) v = static_cast<int8_t>(code(rng));
    w[0] = -128;
    q[0] = -128;
    for (int32_t zero : {0, -128, 37, 127}) {
      std::vector<int32_t> out(rows);
      hybrid_row_dots(w.data(), rows, depth, q.data(), zero, out.data());
      for (int r = 0; r < rows; ++r) {
        int64_t want = 0;
        for (int d = 0; d < depth; ++d) want += int64_t{w[static_cast<size_t>(r) * depth + d]} * (q[d] - zero);
        EXPECT_EQ(out[r], want) << "depth " << depth << " zero point " << zero << " row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
