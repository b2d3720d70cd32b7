// The 8-bit element-wise and table kernels against TFLite's integer arithmetic on cases worked out by
// hand (each comment shows the working): ADD, SUB and MUL with their own scales and broadcasts, average
// pooling's rounding, the LOGISTIC and softmax tables, QUANTIZE, requantize and CONCATENATION's rescale,
// and the hybrid kernels' row quantization and dots. The SIMD forms (AVX2, AVX-512, whichever this CPU
// runs) must give the scalar rule's bits. The fixed-point rules and convolutions: quant_gemm_test.cc.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/hybrid.h"
#include "kernels/qelementwise.h"
#include "kernels/qlookup.h"
#include "kernels/qpool.h"
#include "kernels/quant_math.h"
#include "tests/test_util.h"
#include "kernels/quantize.h"
#include "kernels/thread_pool.h"

namespace baton::builtin::testing {
namespace {

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

TEST(QBinary, SimdEqualsScalarWithBroadcastsOnOneAndTwoThreads) {
  // Small shapes (one thread does them), and shapes over the split size: many runs split into ranges
  // of runs, one long run cut into pieces, a broadcast scalar.
  struct Case {
    std::array<int32_t, 3> a, b;
  };
  const Case cases[] = {{{2, 3, 37}, {2, 3, 37}},     {{2, 3, 37}, {1, 1, 37}},   {{2, 3, 37}, {2, 3, 1}},
                        {{5, 67, 301}, {5, 67, 301}}, {{5, 67, 301}, {1, 67, 1}}, {{1, 1, 70001}, {1, 1, 70001}},
                        {{1, 1, 70001}, {1, 1, 1}},   {{1, 2, 40003}, {1, 2, 1}}};
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  ThreadPool pool(2);
  for (const Case& c : cases) {
    const BroadcastPlan plan = plan_broadcast(c.a.data(), 3, c.b.data(), 3);
    std::vector<uint8_t> a(static_cast<size_t>(c.a[0]) * c.a[1] * c.a[2]), b(static_cast<size_t>(c.b[0]) * c.b[1] * c.b[2]);
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
        auto code = [&](uint8_t v) { return is_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : v; };
        for (int i0 = 0; i0 < c.a[0]; ++i0) {
          for (int i1 = 0; i1 < c.a[1]; ++i1) {
            for (int i2 = 0; i2 < c.a[2]; ++i2) {
              const size_t ai = (static_cast<size_t>(i0) * c.a[1] + i1) * c.a[2] + i2;
              const size_t bi = (static_cast<size_t>(c.b[0] == 1 ? 0 : i0) * c.b[1] + (c.b[1] == 1 ? 0 : i1)) * c.b[2] +
                                (c.b[2] == 1 ? 0 : i2);
              want[ai] = static_cast<uint8_t>(qbinary_one(p, code(a[ai]), code(b[bi])));
            }
          }
        }
        for (QuantIsa isa : isas()) {
          for (Parallel* parallel : {static_cast<Parallel*>(nullptr), static_cast<Parallel*>(&pool)}) {
            std::vector<uint8_t> got(a.size());
            qbinary(isa, p, plan, a.data(), b.data(), got.data(), parallel);
            EXPECT_EQ(got, want) << quant_isa_name(isa) << (parallel ? " two threads " : " one thread ") << c.a[0]
                                 << "x" << c.a[1] << "x" << c.a[2] << " and " << c.b[0] << "x" << c.b[1] << "x"
                                 << c.b[2];
          }
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

TEST(QLookup, SoftmaxRowsSplitAcrossThreadsGiveTheSameCodes) {
  // Rows of 16 (a detector head's shape) and of 7, over the split size, one thread against two.
  float table[256];
  softmax_table(0.11f, 1.0f, table);
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(0, 255);
  ThreadPool pool(2);
  for (int depth : {16, 7}) {
    for (bool is_signed : {false, true}) {
      const int64_t rows = 4099;
      std::vector<uint8_t> in(static_cast<size_t>(rows * depth)), one(in.size()), two(in.size());
      for (uint8_t& v : in) v = static_cast<uint8_t>(byte(rng));
      qsoftmax(is_signed, table, 1.0f / 256, is_signed ? -128 : 0, in.data(), one.data(), rows, depth);
      qsoftmax(is_signed, table, 1.0f / 256, is_signed ? -128 : 0, in.data(), two.data(), rows, depth, &pool);
      EXPECT_EQ(one, two) << "depth " << depth;
      // And the last row is a softmax: its codes sum to about 256.
      int sum = 0;
      for (size_t j = in.size() - depth; j < in.size(); ++j) {
        sum += is_signed ? static_cast<int8_t>(one[j]) + 128 : one[j];
      }
      EXPECT_NEAR(sum, 256, depth);
    }
  }
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
  qconcat(1, chunks, inputs, scaling, 2, out.data());
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
