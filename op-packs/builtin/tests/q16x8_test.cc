// The 16x8 kernels' vector paths against their definitions: CONV_2D and FULLY_CONNECTED as plain int64
// dot products (depths around the 16-value steps and past the point where an int32 lane would overflow,
// extreme codes), the int16 ADD / SUB / MUL runs against the scalar rule on every instruction set.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/binary.h"
#include "kernels/q16x8.h"
#include "kernels/qelementwise.h"
#include "kernels/qgemm.h"
#include "kernels/quant_math.h"
#include "tests/test_util.h"

namespace baton::builtin::testing {
namespace {

int16_t finish(int64_t acc, int64_t bias, QuantizedMultiplier m, int32_t lo, int32_t hi) {
  return static_cast<int16_t>(std::clamp(multiply_by_quantized_multiplier_64(acc + bias, m), lo, hi));
}

// Codes drawn mostly from the ends of their ranges, so sums grow as fast as they can.
template <typename T>
std::vector<T> extreme_codes(size_t n, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> pick(0, 9), any(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) {
    const int k = pick(rng);
    x = static_cast<T>(k < 4 ? lo : k < 7 ? hi : any(rng));
  }
  return v;
}

TEST(Q16x8, FullyConnectedEqualsTheInt64Definition) {
  std::mt19937 rng(11);
  // Depths: below one step, odd, around 16, and past 2048 (the int32 lanes are flushed every 128 steps).
  for (int depth : {1, 15, 16, 17, 33, 300, 2048, 2049, 4100}) {
    for (int units : {1, 3, 4, 7}) {
      const int batch = 2;
      const auto x = extreme_codes<int16_t>(static_cast<size_t>(batch) * depth, rng, -32768, 32767);
      const auto w = extreme_codes<int8_t>(static_cast<size_t>(units) * depth, rng, -128, 127);
      std::vector<int64_t> bias(units);
      for (int u = 0; u < units; ++u) bias[u] = (u % 2 ? -1 : 1) * (int64_t{1} << 33) / (u + 1);
      // A multiplier small enough that the largest sums (about 2^34) stay inside int16.
      const std::vector<QuantizedMultiplier> mults(units, quantize_multiplier(1.7e-6));
      const Q16Output q{mults.data(), -32768, 32767};
      std::vector<int16_t> got(static_cast<size_t>(batch) * units);
      fully_connected_16x8(batch, units, depth, x.data(), w.data(), bias.data(), q, got.data());
      for (int b = 0; b < batch; ++b) {
        for (int u = 0; u < units; ++u) {
          int64_t acc = 0;
          for (int d = 0; d < depth; ++d) acc += int64_t{x[b * depth + d]} * w[u * depth + d];
          ASSERT_EQ(got[b * units + u], finish(acc, bias[u], mults[u], -32768, 32767))
              << "depth " << depth << " units " << units << " batch " << b << " unit " << u;
        }
      }
    }
  }
}

TEST(Q16x8, FullyConnectedLargestSumsStayExact) {
  // Every product +2^22: an int32 lane left alone for 256 steps would wrap (256 * 2^23 = 2^31).
  const int depth = 4100, units = 5;
  const std::vector<int16_t> x(depth, -32768);
  const std::vector<int8_t> w(static_cast<size_t>(units) * depth, -128);
  const std::vector<QuantizedMultiplier> mults(units, quantize_multiplier(1.5e-6));
  const Q16Output q{mults.data(), -32768, 32767};
  std::vector<int16_t> got(units);
  fully_connected_16x8(1, units, depth, x.data(), w.data(), nullptr, q, got.data());
  const int64_t acc = int64_t{depth} << 22;
  for (int u = 0; u < units; ++u) EXPECT_EQ(got[u], finish(acc, 0, mults[u], -32768, 32767)) << "unit " << u;
  EXPECT_GT(got[0], 25000);  // 1.72e10 * 1.5e-6: not clamped, so a wrapped sum would show
}

TEST(Q16x8, ConvEqualsTheInt64Definition) {
  std::mt19937 rng(12);
  struct Case {
    int in_h, in_w, in_c, out_c, filter_h, filter_w, stride, dilation;
    Padding padding;
  };
  const Case cases[] = {
      {5, 6, 3, 5, 3, 3, 1, 1, Padding::kSame},     // 27-value windows: one step and a tail
      {7, 5, 16, 4, 3, 3, 2, 1, Padding::kSame},    // stride 2, edges padded
      {6, 6, 5, 9, 2, 3, 1, 2, Padding::kValid},    // dilated, 9 channels (two groups of 4 and one)
      {4, 4, 300, 3, 3, 3, 1, 1, Padding::kSame},   // 2700-value windows: past one flush
      {1, 1, 17, 6, 1, 1, 1, 1, Padding::kValid},   // 1x1
  };
  for (const Case& c : cases) {
    ConvParams p;
    p.batch = 2;
    p.in_h = c.in_h;
    p.in_w = c.in_w;
    p.in_c = c.in_c;
    p.out_c = c.out_c;
    p.filter_h = c.filter_h;
    p.filter_w = c.filter_w;
    p.stride_h = p.stride_w = c.stride;
    p.dilation_h = p.dilation_w = c.dilation;
    conv_compute_geometry(c.padding, p);
    const auto x = extreme_codes<int16_t>(static_cast<size_t>(p.batch) * p.in_h * p.in_w * p.in_c, rng, -32768, 32767);
    const size_t k = conv_16x8_patch_size(p);
    const auto w = extreme_codes<int8_t>(k * p.out_c, rng, -128, 127);
    std::vector<int64_t> bias(p.out_c);
    for (int o = 0; o < p.out_c; ++o) bias[o] = 1000 * o - 2500;
    std::vector<QuantizedMultiplier> mults;
    for (int o = 0; o < p.out_c; ++o) mults.push_back(quantize_multiplier(3e-6 * (1 + o % 3)));
    const Q16Output q{mults.data(), -30000, 32767};
    std::vector<int16_t> patch(k), got(static_cast<size_t>(p.batch) * p.out_h * p.out_w * p.out_c);
    conv_16x8(p, x.data(), w.data(), bias.data(), q, patch.data(), got.data());
    size_t at = 0;
    for (int b = 0; b < p.batch; ++b) {
      for (int oy = 0; oy < p.out_h; ++oy) {
        for (int ox = 0; ox < p.out_w; ++ox) {
          for (int oc = 0; oc < p.out_c; ++oc, ++at) {
            int64_t acc = 0;
            for (int fy = 0; fy < p.filter_h; ++fy) {
              for (int fx = 0; fx < p.filter_w; ++fx) {
                const int iy = oy * p.stride_h - p.pad_top + fy * p.dilation_h;
                const int ix = ox * p.stride_w - p.pad_left + fx * p.dilation_w;
                if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
                for (int ic = 0; ic < p.in_c; ++ic) {
                  acc += int64_t{x[((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c + ic]} *
                         w[((static_cast<size_t>(oc) * p.filter_h + fy) * p.filter_w + fx) * p.in_c + ic];
                }
              }
            }
            ASSERT_EQ(got[at], finish(acc, bias[oc], mults[oc], -30000, 32767))
                << "in_c " << p.in_c << " pixel " << oy << "," << ox << " channel " << oc;
          }
        }
      }
    }
  }
}

TEST(Q16x8, BinaryRunsEqualTheScalarRuleWithBroadcasts) {
  std::mt19937 rng(13);
  const int32_t a_shape[] = {2, 3, 37}, b_shapes[][3] = {{2, 3, 37}, {1, 1, 37}, {2, 3, 1}};
  for (const auto& b_shape : b_shapes) {
    const BroadcastPlan plan = plan_broadcast(a_shape, 3, b_shape, 3);
    const auto a = extreme_codes<int16_t>(2 * 3 * 37, rng, -32768, 32767);
    const auto b = extreme_codes<int16_t>(static_cast<size_t>(b_shape[0]) * b_shape[1] * b_shape[2], rng, -32768, 32767);
    for (QBinaryOp op : {QBinaryOp::kAdd, QBinaryOp::kSub, QBinaryOp::kMul}) {
      QBinaryParams p;
      p.op = op;
      p.lo = -32768;
      p.hi = op == QBinaryOp::kSub ? 20000 : 32767;  // a fused activation's clamp
      ASSERT_TRUE(qbinary_prepare(p, 0.0011f, 0.0007f, op == QBinaryOp::kMul ? 0.02f : 0.0015f));
      if (op != QBinaryOp::kMul) {
        // As the 16x8 prepare sets it: 15 bits of headroom.
        p.left_shift = 15;
        p.out_mult = quantize_multiplier(2.0 * 0.0011 / ((1 << 15) * 0.0015));
      }
      std::vector<int16_t> want(a.size());
      for (int i0 = 0; i0 < 2; ++i0) {
        for (int i1 = 0; i1 < 3; ++i1) {
          for (int i2 = 0; i2 < 37; ++i2) {
            const int ai = (i0 * 3 + i1) * 37 + i2;
            const int bi = b.size() == a.size() ? ai : b_shape[2] == 1 ? i0 * 3 + i1 : i2;
            want[ai] = static_cast<int16_t>(qbinary_one(p, a[ai], b[bi]));
          }
        }
      }
      // The rule itself saturates at both ends here, so the clamps are exercised.
      EXPECT_NE(std::find(want.begin(), want.end(), int16_t{-32768}), want.end());
      for (QuantIsa isa : isas()) {
        std::vector<int16_t> got(a.size());
        qbinary16(isa, p, plan, a.data(), b.data(), got.data());
        EXPECT_EQ(got, want) << quant_isa_name(isa) << " op " << static_cast<int>(op);
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
