// STRIDED_SLICE on a [3,4] input holding 0..11 (row r, column c = 4r + c), one case per mask.
#include <gtest/gtest.h>

#include "kernels/strided_slice.h"

namespace baton::builtin::testing {
namespace {

struct Result {
  std::vector<int32_t> shape;
  std::vector<float> values;
  std::string error;
};

Result slice(std::vector<int64_t> begin, std::vector<int64_t> end, std::vector<int64_t> strides, int32_t begin_mask = 0,
             int32_t end_mask = 0, int32_t ellipsis_mask = 0, int32_t new_axis_mask = 0, int32_t shrink_mask = 0) {
  const int32_t dims[] = {3, 4};
  std::vector<float> in(12);
  for (int i = 0; i < 12; ++i) in[i] = static_cast<float>(i);
  StridedSliceSpec spec;
  spec.begin = std::move(begin);
  spec.end = std::move(end);
  spec.strides = std::move(strides);
  spec.begin_mask = begin_mask;
  spec.end_mask = end_mask;
  spec.ellipsis_mask = ellipsis_mask;
  spec.new_axis_mask = new_axis_mask;
  spec.shrink_axis_mask = shrink_mask;
  StridedSlicePlan plan;
  Result r;
  r.error = plan_strided_slice(dims, 2, spec, plan);
  if (!r.error.empty()) return r;
  r.shape = plan.out_shape;
  int64_t n = 1;
  for (int32_t d : r.shape) n *= d;
  r.values.assign(n, -1.0f);
  strided_slice(plan, in.data(), r.values.data(), sizeof(float));
  return r;
}

TEST(StridedSlice, BasicWithStride) {
  // Rows 1..2, columns 0 and 2.
  const Result r = slice({1, 0}, {3, 4}, {1, 2});
  EXPECT_EQ(r.shape, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(r.values, (std::vector<float>{4, 6, 8, 10}));
}

TEST(StridedSlice, BeginMask) {
  // Bit 0: rows start at 0 whatever begin says (2); rows 0..1, columns 1..2.
  const Result r = slice({2, 1}, {2, 3}, {1, 1}, /*begin_mask=*/1);
  EXPECT_EQ(r.shape, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(r.values, (std::vector<float>{1, 2, 5, 6}));
}

TEST(StridedSlice, EndMask) {
  // Bit 1: columns run to the end whatever end says (0); row 0, columns 1..3.
  const Result r = slice({0, 1}, {1, 0}, {1, 1}, 0, /*end_mask=*/2);
  EXPECT_EQ(r.shape, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(r.values, (std::vector<float>{1, 2, 3}));
}

TEST(StridedSlice, NegativeStrides) {
  // Rows 2, 1, 0 (end masked, so past the front), columns 3, 1 (3 down to, not including, 0).
  const Result r = slice({-1, 3}, {0, 0}, {-1, -2}, 0, /*end_mask=*/1);
  EXPECT_EQ(r.shape, (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(r.values, (std::vector<float>{11, 9, 7, 5, 3, 1}));
}

TEST(StridedSlice, ShrinkAxis) {
  // Bit 0: take row 1 and drop the dimension.
  const Result r = slice({1, 0}, {2, 4}, {1, 1}, 0, 0, 0, 0, /*shrink=*/1);
  EXPECT_EQ(r.shape, (std::vector<int32_t>{4}));
  EXPECT_EQ(r.values, (std::vector<float>{4, 5, 6, 7}));
  // Negative index -1 is the last row.
  const Result last = slice({-1, 2}, {0, 3}, {1, 1}, 0, 0, 0, 0, /*shrink=*/3);
  EXPECT_TRUE(last.shape.empty());
  EXPECT_EQ(last.values, (std::vector<float>{10}));
  EXPECT_FALSE(slice({3, 0}, {4, 4}, {1, 1}, 0, 0, 0, 0, 1).error.empty());
}

TEST(StridedSlice, NewAxis) {
  // Entry 0 is a new axis; entry 1 slices dimension 0 to rows 0..1; dimension 1 is implicit (full).
  const Result r = slice({0, 0}, {0, 2}, {1, 1}, 0, 0, 0, /*new_axis=*/1);
  EXPECT_EQ(r.shape, (std::vector<int32_t>{1, 2, 4}));
  EXPECT_EQ(r.values, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(StridedSlice, Ellipsis) {
  // [..., 1:3]: the ellipsis stands for dimension 0, the second entry slices columns 1..2.
  const Result r = slice({0, 1}, {0, 3}, {1, 1}, 0, 0, /*ellipsis=*/1);
  EXPECT_EQ(r.shape, (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(r.values, (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST(StridedSlice, ClampsAndRejectsZeroStride) {
  // Out-of-range bounds clamp: rows -100..100 is all rows, columns 3..100 is column 3.
  const Result r = slice({-100, 3}, {100, 100}, {1, 1});
  EXPECT_EQ(r.values, (std::vector<float>{3, 7, 11}));
  EXPECT_FALSE(slice({0, 0}, {1, 1}, {0, 1}).error.empty());
}

// A space-to-depth phase of an NHWC image: every second row and column (forward from 1, or backward from
// the end), each pixel's channels whole. Channel counts 1 to 5 take each copy path (single elements,
// blocks of 2, 3 and 4 with their size known at compile time, a block of 5 of run-time size); the values
// are those the indices give.
TEST(StridedSlice, PixelsSteppedOverWithTheirChannels) {
  for (int32_t channels = 1; channels <= 5; ++channels) {
    for (const int64_t step : {int64_t{2}, int64_t{-2}}) {
      SCOPED_TRACE("channels " + std::to_string(channels) + ", step " + std::to_string(step));
      const int32_t dims[] = {1, 7, 6, channels};
      std::vector<float> in(static_cast<size_t>(7 * 6 * channels));
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
      StridedSliceSpec spec;
      spec.begin = {0, step > 0 ? 1 : -1, step > 0 ? 1 : -1, 0};
      spec.end = {1, step > 0 ? 7 : -8, step > 0 ? 6 : -7, channels};
      spec.strides = {1, step, step, 1};
      StridedSlicePlan plan;
      ASSERT_EQ(plan_strided_slice(dims, 4, spec, plan), "");
      const int32_t rows = step > 0 ? 3 : 4, cols = 3;
      ASSERT_EQ(plan.out_shape, (std::vector<int32_t>{1, rows, cols, channels}));
      std::vector<float> out(static_cast<size_t>(rows * cols * channels), -1.0f);
      strided_slice(plan, in.data(), out.data(), sizeof(float));
      for (int32_t y = 0; y < rows; ++y) {
        for (int32_t x = 0; x < cols; ++x) {
          const int64_t sy = step > 0 ? 1 + 2 * y : 6 - 2 * y, sx = step > 0 ? 1 + 2 * x : 5 - 2 * x;
          for (int32_t c = 0; c < channels; ++c) {
            EXPECT_EQ(out[static_cast<size_t>((y * cols + x) * channels + c)], static_cast<float>((sy * 6 + sx) * channels + c))
                << "at " << y << ", " << x << ", " << c;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
