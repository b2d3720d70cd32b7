// Unary ops and SOFTMAX against values worked out by hand; the vectorised EXP, TANH, LOGISTIC and GELU
// against the double-precision functions over a sweep of inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/unary.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> run(UnaryOp op, const std::vector<float>& in) {
  std::vector<float> out(in.size());
  unary(op, in.data(), out.data(), static_cast<int64_t>(in.size()));
  return out;
}

std::vector<float> run(VectorIsa isa, UnaryOp op, const std::vector<float>& in) {
  std::vector<float> out(in.size());
  unary(isa, op, in.data(), out.data(), static_cast<int64_t>(in.size()));
  return out;
}

// Every copy of the vectorised functions this CPU runs: 8 lanes (baseline, AVX2), 16 (AVX-512).
std::vector<VectorIsa> runnable_isas() {
  std::vector<VectorIsa> isas;
  for (int i = 0; i <= static_cast<int>(best_vector_isa()); ++i) isas.push_back(static_cast<VectorIsa>(i));
  return isas;
}

const char* isa_name(VectorIsa isa) {
  return isa == VectorIsa::kAvx512 ? "avx512" : isa == VectorIsa::kAvx2 ? "avx2" : "baseline";
}

TEST(Unary, Activations) {
  EXPECT_EQ(run(UnaryOp::kRelu, {-1, 0, 2}), (std::vector<float>{0, 0, 2}));
  EXPECT_EQ(run(UnaryOp::kRelu6, {-1, 3, 7}), (std::vector<float>{0, 3, 6}));
  // hard_swish(x) = x * relu6(x + 3) / 6: -4 -> 0, -1 -> -1 * 2 / 6, 1 -> 4 / 6, 4 -> 4 * 6 / 6.
  const auto hs = run(UnaryOp::kHardSwish, {-4, -1, 1, 4});
  EXPECT_EQ(hs[0], 0.0f);
  EXPECT_FLOAT_EQ(hs[1], -1.0f / 3.0f);
  EXPECT_FLOAT_EQ(hs[2], 2.0f / 3.0f);
  EXPECT_EQ(hs[3], 4.0f);
  const auto sig = run(UnaryOp::kLogistic, {0, 2});
  EXPECT_EQ(sig[0], 0.5f);
  EXPECT_FLOAT_EQ(sig[1], 1.0f / (1.0f + std::exp(-2.0f)));
  EXPECT_FLOAT_EQ(run(UnaryOp::kTanh, {0.5f})[0], 0.46211716f);
}

TEST(Unary, Math) {
  EXPECT_EQ(run(UnaryOp::kRsqrt, {4, 0.25f}), (std::vector<float>{0.5f, 2}));
  EXPECT_FLOAT_EQ(run(UnaryOp::kLog, {std::exp(1.0f)})[0], 1.0f);
  EXPECT_EQ(run(UnaryOp::kSquare, {-3, 0.5f}), (std::vector<float>{9, 0.25f}));
}

// Every 1/64 from -110 to 110 (past exp's overflow and into its denormal results), eight floats either
// side of where the vector code changes method (tanh's 1/2 and 10, exp's overflow), and a count that is not
// a multiple of 8, so the tail block is used.
std::vector<float> sweep() {
  std::vector<float> x;
  for (int i = -110 * 64; i <= 110 * 64; ++i) x.push_back(static_cast<float>(i) / 64.0f);
  for (float edge : {0.5f, 10.0f, 88.7228394f}) {
    float below = edge, above = edge;
    for (int i = 0; i < 8; ++i) {
      below = std::nextafter(below, 0.0f);
      above = std::nextafter(above, 1000.0f);
      x.insert(x.end(), {below, -below, above, -above});
    }
  }
  x.insert(x.end(), {1e-30f, -1e-30f, 1e-3f, -2e-5f, 0.1f});
  return x;
}

// |got - want| <= ulps float ulps of want (or abs_floor, whichever is larger; times |x| if per_x), over
// the sweep.
void expect_close(VectorIsa isa, UnaryOp op, double (*f)(double), double ulps, double abs_floor,
                  const char* what, bool per_x = false) {
  SCOPED_TRACE(isa_name(isa));
  const std::vector<float> x = sweep();
  const std::vector<float> y = run(isa, op, x);
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = f(static_cast<double>(x[i]));
    if (std::isinf(want) || std::fabs(want) > std::numeric_limits<float>::max()) {
      EXPECT_EQ(y[i], static_cast<float>(want)) << what << "(" << x[i] << ")";
      continue;
    }
    const double floor = per_x ? abs_floor * std::max(1.0, std::fabs(static_cast<double>(x[i]))) : abs_floor;
    const double ulp = std::max(std::ldexp(1.0, std::ilogb(std::max(std::fabs(want), 1e-38)) - 23), floor);
    const double err = std::fabs(static_cast<double>(y[i]) - want) / ulp;
    if (err > worst) worst = err, worst_x = x[i];
  }
  EXPECT_LE(worst, ulps) << what << ": worst at x = " << worst_x;
}

TEST(Unary, VectorisedFunctionsAreWithinAFewUlps) {
  for (VectorIsa isa : runnable_isas()) {
  expect_close(isa, UnaryOp::kExp, [](double x) { return std::exp(x); }, 2, 0x1p-149, "exp");
  expect_close(isa, UnaryOp::kTanh, [](double x) { return std::tanh(x); }, 4, 0x1p-149, "tanh");
  // The logistic function gives zero where its result is below the smallest normal float (2^-126).
  expect_close(isa, UnaryOp::kLogistic, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 4, 0x1p-126, "logistic");
  // GELU's erf is Abramowitz and Stegun's, good to 1.5e-7 absolute: measured in units of 2^-23 (1.2e-7) of
  // x / 2 at least.
  expect_close(isa, UnaryOp::kGelu, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 4, 0x1p-23,
               "gelu");
  // The tanh approximation adds 1 to a tanh near -1 for negative x, as TFLite's formula does: its error is a
  // few ulps of 1, times x / 2.
  expect_close(isa, UnaryOp::kGeluApproximate,
               [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }, 4,
               0x1p-24, "gelu (tanh)", true);
  }
}

// The AVX2 and AVX-512 copies (8 and 16 lanes, both with FMA) compute the same floats lane by lane: a model
// gives the same outputs on either kind of machine.
TEST(Unary, AvxCopiesGiveTheSameFloats) {
  if (best_vector_isa() < VectorIsa::kAvx512) GTEST_SKIP() << "needs a CPU with AVX-512";
  const std::vector<float> x = sweep();
  for (UnaryOp op : {UnaryOp::kExp, UnaryOp::kTanh, UnaryOp::kLogistic, UnaryOp::kGelu, UnaryOp::kGeluApproximate}) {
    const std::vector<float> avx2 = run(VectorIsa::kAvx2, op, x), avx512 = run(VectorIsa::kAvx512, op, x);
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(avx512[i] == avx2[i] || (std::isnan(avx512[i]) && std::isnan(avx2[i])))
          << "op " << static_cast<int>(op) << " at x = " << x[i] << ": " << avx512[i] << " vs " << avx2[i];
    }
  }
}

TEST(Unary, VectorisedFunctionsAtTheEdges) {
  for (VectorIsa isa : runnable_isas()) {
  SCOPED_TRACE(isa_name(isa));
  const auto run = [isa](UnaryOp op, const std::vector<float>& in) { return testing::run(isa, op, in); };
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {0.0f, -0.0f, inf, -inf, nan, 200.0f, -200.0f, 1e-40f, -1e-40f};
  const auto e = run(UnaryOp::kExp, in);
  EXPECT_EQ(e[0], 1.0f);
  EXPECT_EQ(e[2], inf);
  EXPECT_EQ(e[3], 0.0f);
  EXPECT_TRUE(std::isnan(e[4]));
  EXPECT_EQ(e[5], inf);
  EXPECT_EQ(e[6], 0.0f);
  EXPECT_EQ(run(UnaryOp::kExp, {-103.0f})[0], static_cast<float>(std::exp(-103.0)));  // a denormal
  const auto t = run(UnaryOp::kTanh, in);
  EXPECT_EQ(t[0], 0.0f);
  EXPECT_TRUE(std::signbit(t[1]));
  EXPECT_EQ(t[2], 1.0f);
  EXPECT_EQ(t[3], -1.0f);
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[7], 1e-40f);
  const auto s = run(UnaryOp::kLogistic, in);
  EXPECT_EQ(s[2], 1.0f);
  EXPECT_EQ(s[3], 0.0f);
  EXPECT_TRUE(std::isnan(s[4]));
  const auto g = run(UnaryOp::kGelu, in);
  EXPECT_EQ(g[2], inf);
  EXPECT_TRUE(std::isnan(g[4]));
  EXPECT_EQ(g[5], 200.0f);
  }
}

// The logistic function, GELU and SOFTMAX never make a denormal (each instruction that does takes a
// microcode assist on many x86 cores): results under 2^-126 are zero, those just above it stay exact. EXP
// keeps its denormal results.
TEST(Unary, LogisticGeluAndSoftmaxMakeNoDenormals) {
  for (VectorIsa isa : runnable_isas()) {
    SCOPED_TRACE(isa_name(isa));
    const std::vector<float> in = {-87.0f, -87.4f, -95.0f, -103.5f, -110.0f, -13.3f, -20.0f};
    const std::vector<float> s = run(isa, UnaryOp::kLogistic, in);
    EXPECT_NEAR(s[0], std::exp(-87.0), std::exp(-87.0) * 1e-6);
    EXPECT_GE(s[0], std::numeric_limits<float>::min());
    for (size_t i = 1; i < 5; ++i) EXPECT_EQ(s[i], 0.0f) << "logistic(" << in[i] << ")";
    const std::vector<float> g = run(isa, UnaryOp::kGelu, in);
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_TRUE(g[i] == 0.0f || std::fabs(g[i]) >= std::numeric_limits<float>::min()) << "gelu(" << in[i] << ") = " << g[i];
    }
    EXPECT_EQ(run(isa, UnaryOp::kExp, {-95.0f})[0], static_cast<float>(std::exp(-95.0)));  // exact, a denormal
  }
  // A masked logit (-1e4 below the others, as attention masks are written) gets exactly zero; the others
  // share the whole sum.
  std::vector<float> out(20);
  std::vector<float> in(20, 0.5f);
  in[3] = -10000.0f;
  in[17] = -90.0f;
  softmax(in.data(), out.data(), 1, 20, 1.0f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[17], 0.0f);
  EXPECT_NEAR(out[0], 1.0f / 18.0f, 1e-7);
}

TEST(Softmax, RowsAndBeta) {
  // Row {1,2,3}: e^-2, e^-1, 1 over their sum 1.5032147; row {0,0,0} is uniform.
  std::vector<float> out(6);
  const std::vector<float> in = {1, 2, 3, 0, 0, 0};
  softmax(in.data(), out.data(), 2, 3, 1.0f);
  EXPECT_NEAR(out[0], 0.09003057f, 1e-6);
  EXPECT_NEAR(out[1], 0.24472847f, 1e-6);
  EXPECT_NEAR(out[2], 0.66524096f, 1e-6);
  EXPECT_NEAR(out[3], 1.0f / 3.0f, 1e-6);
  // beta 0 flattens any row.
  softmax(in.data(), out.data(), 2, 3, 0.0f);
  EXPECT_NEAR(out[2], 1.0f / 3.0f, 1e-6);
}

// Rows long and short (a whole number of vectors, a tail, less than one vector), each against softmax in
// double: the vectorised exp and the partial sums stay within a few float roundings of it, and the tail's
// padding lanes do not enter the sum (they would add exp(-max) to it).
TEST(Softmax, RowsOfAnyLengthMatchDouble) {
  for (int64_t depth : {3, 16, 37, 128}) {
    const int64_t rows = 5;
    std::vector<float> in(rows * depth), out(rows * depth);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(static_cast<int>((i * 7919) % 401) - 200) / 10.0f;
    softmax(in.data(), out.data(), rows, depth, 0.7f);
    for (int64_t r = 0; r < rows; ++r) {
      double max = -1e30, sum = 0;
      for (int64_t i = 0; i < depth; ++i) max = std::max(max, static_cast<double>(in[r * depth + i]));
      const double beta = 0.7f;  // the float the kernel multiplies by
      for (int64_t i = 0; i < depth; ++i) sum += std::exp((in[r * depth + i] - max) * beta);
      for (int64_t i = 0; i < depth; ++i) {
        const double want = std::exp((in[r * depth + i] - max) * beta) / sum;
        EXPECT_NEAR(out[r * depth + i], want, 4e-7 * std::max(want, 1e-3)) << "depth " << depth << " row " << r << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
