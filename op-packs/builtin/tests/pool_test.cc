// Pooling and MEAN.
#include <gtest/gtest.h>

#include "kernels/pool.h"
#include "kernels/reduce.h"

namespace baton::builtin::testing {
namespace {

// 2x2 windows, stride 2, SAME, on a 3x3 input holding 1..9: output 2x2, total padding
// (2-1)*2 + 2 - 3 = 1 after. Windows: {1,2,4,5}, {3,6}, {7,8}, {9}. Averages count only covered
// elements (TFLite): 3, 4.5, 7.5, 9. Maxima: 5, 6, 8, 9.
TEST(Pool, SamePaddingAveragesOnlyCoveredElements) {
  PoolParams p;
  p.in_h = p.in_w = 3;
  p.filter_h = p.filter_w = 2;
  p.stride_h = p.stride_w = 2;
  pool_compute_geometry(Padding::kSame, p);
  ASSERT_EQ(p.out_h, 2);
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> out(4);
  average_pool(p, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{3, 4.5f, 7.5f, 9}));
  max_pool(p, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 8, 9}));
  p.range = {0.0f, 6.0f};
  max_pool(p, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 6, 6}));
}

TEST(Pool, GlobalAverageTwoChannels) {
  // VALID 2x2 window over the whole 2x2 input, channels interleaved: c0 = {1,2,3,4}, c1 = {10,20,30,40}.
  PoolParams p;
  p.in_h = p.in_w = 2;
  p.channels = 2;
  p.filter_h = p.filter_w = 2;
  p.stride_h = p.stride_w = 2;
  pool_compute_geometry(Padding::kValid, p);
  ASSERT_EQ(p.out_h, 1);
  const std::vector<float> in = {1, 10, 2, 20, 3, 30, 4, 40};
  std::vector<float> out(2);
  average_pool(p, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{2.5f, 25}));
}

TEST(Mean, AnyAxes) {
  // [2,2,3] holding 0..11. Axes {1}: mean of rows -> [[1.5,2.5,3.5],[7.5,8.5,9.5]].
  const int32_t dims[] = {2, 2, 3};
  std::vector<float> in(12);
  for (int i = 0; i < 12; ++i) in[i] = static_cast<float>(i);
  std::vector<float> out(6);
  reduce_mean(plan_reduce(dims, 3, 0b010), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1.5f, 2.5f, 3.5f, 7.5f, 8.5f, 9.5f}));
  // Axes {0, 2}: per middle index j, mean of {0..2, 6..8} = 4 and {3..5, 9..11} = 7.
  out.assign(2, 0);
  reduce_mean(plan_reduce(dims, 3, 0b101), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{4, 7}));
  // Everything: 5.5.
  out.assign(1, 0);
  reduce_mean(plan_reduce(dims, 3, 0b111), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{5.5f}));
  // Axis {2} (innermost): {1, 4, 7, 10}.
  out.assign(4, 0);
  reduce_mean(plan_reduce(dims, 3, 0b100), in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 4, 7, 10}));
}

// Rows long enough for the blocked sum (blocks of 32, a tail, and rows shorter than one block): integer
// values, so every order of summation gives the exact mean, (first + last) / 2.
TEST(Mean, LongRowsOverTheLastAxis) {
  for (int32_t n : {31, 32, 33, 64, 100, 129}) {
    const int32_t dims[] = {3, n};
    std::vector<float> in(3 * n);
    for (int r = 0; r < 3; ++r) {
      for (int j = 0; j < n; ++j) in[r * n + j] = static_cast<float>(r * 1000 + j);
    }
    std::vector<float> out(3);
    reduce_mean(plan_reduce(dims, 2, 0b10), in.data(), out.data());
    for (int r = 0; r < 3; ++r) EXPECT_EQ(out[r], r * 1000 + (n - 1) / 2.0f) << "row " << r << " of " << n;
  }
}

}  // namespace
}  // namespace baton::builtin::testing
