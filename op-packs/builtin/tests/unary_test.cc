// Unary ops and SOFTMAX against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/unary.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> run(UnaryOp op, const std::vector<float>& in) {
  std::vector<float> out(in.size());
  unary(op, in.data(), out.data(), static_cast<int64_t>(in.size()));
  return out;
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

}  // namespace
}  // namespace baton::builtin::testing
