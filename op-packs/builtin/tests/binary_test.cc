// Broadcasting binary ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/binary.h"
#include "kernels/compare.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> run(BinaryOp op, std::vector<int32_t> sa, const std::vector<float>& a, std::vector<int32_t> sb,
                       const std::vector<float>& b, ActivationRange range = {}) {
  std::vector<int32_t> shape;
  EXPECT_TRUE(broadcast_shape(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size()), shape));
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> out(n, -777.0f);
  binary(op, plan_broadcast(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size())), a.data(),
         b.data(), out.data(), range);
  return out;
}

// [2,1,3] + [1,4,1] -> [2,4,3]: out[i][j][k] = a[i][k] + b[j]. With a = {1,2,3 | 4,5,6} and
// b = {10,20,30,40}, row (i, j) is a's row i plus b[j].
TEST(Binary, BroadcastBothSides) {
  const std::vector<int32_t> sa = {2, 1, 3}, sb = {1, 4, 1};
  std::vector<int32_t> shape;
  ASSERT_TRUE(broadcast_shape(sa.data(), 3, sb.data(), 3, shape));
  EXPECT_EQ(shape, (std::vector<int32_t>{2, 4, 3}));
  const auto out = run(BinaryOp::kAdd, sa, {1, 2, 3, 4, 5, 6}, sb, {10, 20, 30, 40});
  const std::vector<float> expected = {11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43,
                                       14, 15, 16, 24, 25, 26, 34, 35, 36, 44, 45, 46};
  EXPECT_EQ(out, expected);
}

TEST(Binary, IncompatibleShapesRejected) {
  const int32_t a[] = {2, 3}, b[] = {4, 3};
  std::vector<int32_t> shape;
  EXPECT_FALSE(broadcast_shape(a, 2, b, 2, shape));
}

TEST(Binary, ScalarRankMismatchAndActivation) {
  // [2,2] - scalar 3, then RELU6: {1-3, 5-3, 9-3, 12-3} = {-2, 2, 6, 9} -> {0, 2, 6, 6}.
  EXPECT_EQ(run(BinaryOp::kSub, {2, 2}, {1, 5, 9, 12}, {}, {3}, {0.0f, 6.0f}), (std::vector<float>{0, 2, 6, 6}));
  // scalar - [3]: 10 - {1,2,3}.
  EXPECT_EQ(run(BinaryOp::kSub, {}, {10}, {3}, {1, 2, 3}), (std::vector<float>{9, 8, 7}));
  // [2,3] * [3] (a channel vector, numpy's right alignment).
  EXPECT_EQ(run(BinaryOp::kMul, {2, 3}, {1, 2, 3, 4, 5, 6}, {3}, {1, 10, 100}),
            (std::vector<float>{1, 20, 300, 4, 50, 600}));
}

TEST(Binary, OtherOps) {
  EXPECT_EQ(run(BinaryOp::kSquaredDifference, {3}, {1, 5, -2}, {3}, {4, 5, 2}), (std::vector<float>{9, 0, 16}));
  EXPECT_EQ(run(BinaryOp::kMinimum, {3}, {1, 5, -2}, {1}, {2}), (std::vector<float>{1, 2, -2}));
  EXPECT_EQ(run(BinaryOp::kMaximum, {3}, {1, 5, -2}, {1}, {2}), (std::vector<float>{2, 5, 2}));
  EXPECT_EQ(run(BinaryOp::kDiv, {2}, {1, 9}, {2}, {4, 3}), (std::vector<float>{0.25f, 3}));
  // PRELU with a per-channel alpha of shape [1,1,2] on [1,2,2]: negatives scale by their channel's alpha.
  EXPECT_EQ(run(BinaryOp::kPrelu, {1, 2, 2}, {-1, -2, 3, -4}, {1, 1, 2}, {0.5f, 0.25f}),
            (std::vector<float>{-0.5f, -0.5f, 3, -1}));
}

TEST(Binary, HighRankMiddleBroadcast) {
  // [2,3,2,2] + [3,1,1]: b varies along dimension 1 only; out = a + 100 * (index along dim 1).
  std::vector<float> a(24);
  for (int i = 0; i < 24; ++i) a[i] = static_cast<float>(i);
  const auto out = run(BinaryOp::kAdd, {2, 3, 2, 2}, a, {3, 1, 1}, {0, 100, 200});
  for (int i = 0; i < 24; ++i) EXPECT_EQ(out[i], static_cast<float>(i + 100 * ((i / 4) % 3))) << i;
}

// Every float op over runs long enough for the vector path (37 = whole vectors and a tail), with the
// second side a row, a scalar, or whole, and a clamp: every float is that of the one operation and the
// clamp done element by element, -0 and NaN on either side included (MINIMUM and MAXIMUM as std::min and
// std::max pick between them).
TEST(Binary, VectorArithmeticMatchesElementByElement) {
  std::vector<float> a(3 * 37), row(37);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>((i * 7919) % 201) - 100) / 7.0f;
  for (size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(static_cast<int>((i * 104729) % 101) - 50) / 3.0f;
  a[5] = -0.0f;
  a[40] = std::numeric_limits<float>::quiet_NaN();
  row[7] = std::numeric_limits<float>::quiet_NaN();
  row[9] = 0.0f;
  a[9] = -0.0f;
  const ActivationRange relu6{0.0f, 6.0f};
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv, BinaryOp::kSquaredDifference,
                      BinaryOp::kMinimum, BinaryOp::kMaximum, BinaryOp::kPrelu}) {
    SCOPED_TRACE(static_cast<int>(op));
    auto f = [op](float x, float y) {
      switch (op) {
        case BinaryOp::kAdd: return x + y;
        case BinaryOp::kSub: return x - y;
        case BinaryOp::kMul: return x * y;
        case BinaryOp::kDiv: return x / y;
        case BinaryOp::kSquaredDifference: return (x - y) * (x - y);
        case BinaryOp::kMinimum: return std::min(x, y);
        case BinaryOp::kMaximum: return std::max(x, y);
        case BinaryOp::kPrelu: return x >= 0.0f ? x : x * y;
      }
      return 0.0f;
    };
    for (const ActivationRange& range : {ActivationRange{}, relu6}) {
      const std::vector<float> by_row = run(op, {3, 37}, a, {37}, row, range);
      const std::vector<float> by_scalar = run(op, {3, 37}, a, {1}, {2.5f}, range);
      const std::vector<float> whole = run(op, {3, 37}, a, {3, 37}, a, range);
      const std::vector<float> scalar_first = run(op, {1}, {2.5f}, {3, 37}, a, range);
      for (size_t i = 0; i < a.size(); ++i) {
        auto same = [](float got, float want) { return std::memcmp(&got, &want, sizeof got) == 0 || (std::isnan(got) && std::isnan(want)); };
        EXPECT_TRUE(same(by_row[i], clamp_activation(f(a[i], row[i % 37]), range))) << i;
        EXPECT_TRUE(same(by_scalar[i], clamp_activation(f(a[i], 2.5f), range))) << i;
        EXPECT_TRUE(same(whole[i], clamp_activation(f(a[i], a[i]), range))) << i;
        EXPECT_TRUE(same(scalar_first[i], clamp_activation(f(2.5f, a[i]), range))) << i;
      }
    }
  }
}

// Each ISA's comparison runs against the comparison written out, element by element: every op, both
// sides stepping or held, lengths around the vector widths, NaNs, signed zeros and the types' extremes.
template <typename T>
void check_compare_runs(std::vector<T> values) {
  const CompareOp ops[] = {CompareOp::kEqual, CompareOp::kNotEqual, CompareOp::kLess,
                           CompareOp::kLessEqual, CompareOp::kGreater, CompareOp::kGreaterEqual};
  auto expect = [](CompareOp op, T x, T y) {
    switch (op) {
      case CompareOp::kEqual: return x == y;
      case CompareOp::kNotEqual: return x != y;
      case CompareOp::kLess: return x < y;
      case CompareOp::kLessEqual: return x <= y;
      case CompareOp::kGreater: return x > y;
      case CompareOp::kGreaterEqual: return x >= y;
    }
    return false;
  };
  std::vector<T> a(131), b(131);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = values[i % values.size()];
    b[i] = values[(i * 7 + 3) % values.size()];
  }
  for (int i = 0; i <= static_cast<int>(best_vector_isa()); ++i) {
    const auto isa = static_cast<VectorIsa>(i);
    for (CompareOp op : ops) {
      for (int64_t as : {0, 1}) {
        for (int64_t bs : {0, 1}) {
          for (int64_t n : {1, 7, 16, 33, 64, 131}) {
            std::vector<bool> want(n);
            for (int64_t k = 0; k < n; ++k) want[k] = expect(op, a[k * as], b[k * bs]);
            std::unique_ptr<bool[]> got(new bool[n + 1]);
            std::memset(got.get(), 2, n + 1);  // neither false nor true: an unwritten byte shows
            compare_run(isa, op, a.data(), as, b.data(), bs, got.get(), n);
            for (int64_t k = 0; k < n; ++k) {
              unsigned char byte;
              std::memcpy(&byte, got.get() + k, 1);
              ASSERT_EQ(byte, want[k] ? 1 : 0) << "isa " << i << " op " << static_cast<int>(op) << " steps " << as
                                               << "," << bs << " n " << n << " at " << k;
            }
            unsigned char past;
            std::memcpy(&past, got.get() + n, 1);
            ASSERT_EQ(past, 2) << "wrote past the run";
          }
        }
      }
    }
  }
}

TEST(Compare, RunsOfEveryIsaMatchTheElementwiseComparison) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  check_compare_runs<float>({0.0f, -0.0f, 1.5f, -2.0f, nan, inf, -inf, 1.5f, 3.0f, -1e-30f, 2.0f});
  check_compare_runs<int32_t>({0, -1, 1, INT32_MIN, INT32_MAX, 5, 5, -7, 1 << 20});
  check_compare_runs<int64_t>({0, -1, 1, INT64_MIN, INT64_MAX, int64_t{1} << 40, 5, -(int64_t{1} << 33), 7});
}

}  // namespace
}  // namespace baton::builtin::testing
