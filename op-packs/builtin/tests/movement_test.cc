// Data movement (PAD, CONCATENATION, SPLIT, DEPTH_TO_SPACE, TRANSPOSE, GATHER) and DEQUANTIZE.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/concat.h"
#include "kernels/dequantize.h"
#include "kernels/gather.h"
#include "kernels/pad.h"
#include "kernels/transpose.h"

namespace baton::builtin::testing {
namespace {

TEST(Pad, ChannelsAndRows) {
  // [1,2,2] -> pad dim 1 by (1,0) and dim 2 by (0,2): 3 rows of 4; the first row and the last two
  // columns hold the pad value 9.
  PadPlan plan;
  plan.rank = 3;
  plan.in_dims[0] = 1;
  plan.in_dims[1] = 2;
  plan.in_dims[2] = 2;
  plan.before[1] = 1;
  plan.after[2] = 2;
  const std::vector<float> in = {1, 2, 3, 4};
  std::vector<float> out(12);
  const float nine = 9.0f;
  pad(plan, in.data(), out.data(), sizeof(float), &nine);
  EXPECT_EQ(out, (std::vector<float>{9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9}));
}

TEST(Concat, AndSplitAreInverse) {
  // Axis 1 of [2,1] and [2,2]: rows {a0, b0, b1}, {a1, b2, b3}.
  const std::vector<float> a = {1, 2}, b = {10, 11, 12, 13};
  const void* inputs[] = {a.data(), b.data()};
  const int64_t chunks[] = {1, 2};
  std::vector<float> out(6);
  concat(2, chunks, inputs, 2, out.data(), sizeof(float));
  EXPECT_EQ(out, (std::vector<float>{1, 10, 11, 2, 12, 13}));
  std::vector<float> a2(2), b2(4);
  void* outputs[] = {a2.data(), b2.data()};
  split(2, chunks, out.data(), outputs, 2, sizeof(float));
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);
}

TEST(DepthToSpace, Block2) {
  // One 1x1 pixel with 4 channels {1,2,3,4} -> 2x2 pixels of one channel: (dy,dx) reads channel dy*2+dx.
  // With 2 input pixels side by side (1x2x4) the output row 0 is {p0c0, p0c1, p1c0, p1c1}.
  const std::vector<float> in = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(8);
  depth_to_space(1, 1, 2, 4, 2, in.data(), out.data(), sizeof(float));
  EXPECT_EQ(out, (std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8}));
}

TEST(Transpose, ThreeDims) {
  // [2,3,1] with perm {1,0,2} -> [3,2,1]: out[j][i] = in[i][j].
  const int32_t dims[] = {2, 3, 1}, perm[] = {1, 0, 2};
  const std::vector<int32_t> in = {0, 1, 2, 10, 11, 12};
  std::vector<int32_t> out(6);
  transpose(dims, perm, 3, in.data(), out.data(), sizeof(int32_t));
  EXPECT_EQ(out, (std::vector<int32_t>{0, 10, 1, 11, 2, 12}));
}

TEST(Gather, AxisOneAndOutOfRange) {
  // params [2,3] rows {0,1,2},{10,11,12}; gather columns {2,0} along axis 1 -> [[2,0],[12,10]].
  GatherParams p;
  p.outer = 2;
  p.axis_size = 3;
  p.indices_per_batch = 2;
  const std::vector<float> params = {0, 1, 2, 10, 11, 12};
  const std::vector<int32_t> idx = {2, 0};
  std::vector<float> out(4);
  int64_t bad = 0;
  ASSERT_TRUE(gather(p, params.data(), idx.data(), out.data(), sizeof(float), &bad));
  EXPECT_EQ(out, (std::vector<float>{2, 0, 12, 10}));
  const std::vector<int64_t> bad_idx = {1, 3};
  EXPECT_FALSE(gather(p, params.data(), bad_idx.data(), out.data(), sizeof(float), &bad));
  EXPECT_EQ(bad, 3);
}

TEST(Dequantize, Float16Values) {
  // 0x3C00 = 1, 0xC000 = -2, 0x7BFF = 65504 (largest), 0x0001 = 2^-24 (smallest subnormal),
  // 0x3555 = 0.333251953125, 0x7C00 = +inf, 0x8000 = -0.
  const std::vector<uint16_t> in = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3555, 0x7C00, 0x8000};
  std::vector<float> out(in.size());
  dequantize_f16(in.data(), out.data(), static_cast<int64_t>(in.size()));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 65504.0f);
  EXPECT_EQ(out[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(out[4], 0.333251953125f);
  EXPECT_TRUE(std::isinf(out[5]) && out[5] > 0);
  EXPECT_TRUE(out[6] == 0.0f && std::signbit(out[6]));
}

TEST(Dequantize, Float16EveryValueMatchesTheScalarConversion) {
  // All 65536 halves in one call: the vector path (8 at a time) must agree bit for bit with the portable
  // conversion, NaN payloads and subnormals included. An odd count also exercises the tail.
  std::vector<uint16_t> in(65536 + 3);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i);
  std::vector<float> out(in.size());
  dequantize_f16(in.data(), out.data(), static_cast<int64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const float want = half_to_float(in[i]);
    uint32_t a, b;
    std::memcpy(&a, &out[i], 4);
    std::memcpy(&b, &want, 4);
    // A signalling NaN comes back quiet from F16C; everything else must be identical.
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(out[i])) << std::hex << in[i];
      EXPECT_EQ(a | 0x00400000u, b | 0x00400000u) << std::hex << in[i];
    } else {
      EXPECT_EQ(a, b) << std::hex << in[i];
    }
  }
}

// float32 -> float16, nearest, ties to even: every float16 comes back as itself (NaNs quiet); between two
// neighbours a and b (the largest finite one and infinity too), the midpoint goes to the one with an even
// code, a float32 step either side of it to the nearer one. Both signs; the subnormals and the step into
// the normals included.
TEST(Float16, NearestTiesToEvenAtEveryBoundary) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  auto from_bits = [](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const uint16_t code = static_cast<uint16_t>(h);
    const float v = half_to_float(code);
    if (std::isnan(v)) {
      EXPECT_EQ(float_to_half(v), code | 0x0200u) << std::hex << h;
      continue;
    }
    ASSERT_EQ(float_to_half(v), code) << std::hex << h;
    if ((h & 0x7fffu) >= 0x7c00u) continue;  // infinity has no next value
    const uint16_t next = static_cast<uint16_t>(h + 1);
    // The next float16 up in magnitude; past 65504 it is infinity, whose midpoint is 65520.
    const double b = (next & 0x7fffu) == 0x7c00u ? std::copysign(65536.0, v) : half_to_float(next);
    const float mid = static_cast<float>((static_cast<double>(v) + b) / 2);  // exact in float32
    const uint16_t even = (h & 1u) ? next : code;
    ASSERT_EQ(float_to_half(mid), even) << std::hex << h;
    ASSERT_EQ(float_to_half(from_bits(bits(mid) - 1)), code) << std::hex << h;  // toward zero: v
    ASSERT_EQ(float_to_half(from_bits(bits(mid) + 1)), next) << std::hex << h;  // away from zero
  }
  EXPECT_EQ(float_to_half(1e30f), 0x7c00u);
  EXPECT_EQ(float_to_half(-1e-30f), 0x8000u);
}

TEST(Dequantize, AffinePerChannel) {
  // [2 channels, 2 values] along dimension 0: c0 scale 0.5 zero 10, c1 scale 2 zero -1.
  const float scales[] = {0.5f, 2.0f};
  const int64_t zeros[] = {10, -1};
  AffineDequantParams p;
  p.channels = 2;
  p.inner = 2;
  p.scales = scales;
  p.zero_points = zeros;
  const std::vector<int8_t> in = {10, 14, -1, 3};
  std::vector<float> out(4);
  dequantize_affine(p, in.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 2, 0, 8}));
}

}  // namespace
}  // namespace baton::builtin::testing
