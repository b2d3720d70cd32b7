#include "kernels/q16_activation.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "kernels/lstm_integer.h"

namespace baton::builtin {
namespace {

// TFLite's gen_lut: `count` entries of f over [lo, hi] in Q0.15, each sample lowered by half the error
// linear interpolation makes at the midpoint after it; the last entry only gives the last slope.
template <typename F>
void make_table(F f, double lo, double hi, int16_t* table, int count) {
  const double step = (hi - lo) / (count - 1);
  const double half_step = step / 2.0;
  auto clamp16 = [](double v) { return std::min(std::max(v, -32768.0), 32767.0); };
  for (int i = 0; i < count - 1; ++i) {
    const double sample = std::round(f(lo + i * step) * 32768.0);
    const double interpolated = std::round((f(lo + (i + 1) * step) * 32768.0 + std::round(f(lo + i * step) * 32768.0)) / 2.0);
    const double midpoint = std::round(f(lo + i * step + half_step) * 32768.0);
    const double bias = std::round((interpolated - midpoint) / 2.0);
    table[i] = static_cast<int16_t>(clamp16(sample - bias));
  }
  table[count - 1] = static_cast<int16_t>(clamp16(std::round(f(hi) * 32768.0)));
}

// TFLite's generic_int16_table_lookup: 512 segments over the int16 range, 7 fractional bits each.
int16_t table_lookup(int16_t value, const int16_t* table) {
  const uint16_t index = static_cast<uint16_t>(256 + (value >> 7));
  const int16_t offset = static_cast<int16_t>(value & 0x7f);
  const int16_t base = table[index];
  const int16_t slope = static_cast<int16_t>(table[index + 1] - table[index]);
  const int32_t delta = (static_cast<int32_t>(slope) * offset + 64) >> 7;
  return static_cast<int16_t>(base + delta);
}

// sigmoid(i / 24) in 0.16 fixed point, each entry lowered by half the error linear interpolation makes
// at the midpoint after it (as TFLite's table is); the last entry is 65535, as in TFLite's.
const std::array<uint32_t, 256>& sigmoid_table() {
  static const std::array<uint32_t, 256> table = [] {
    auto f = [](double i) { return 65536.0 / (1.0 + std::exp(-i / 24.0)); };
    std::array<uint32_t, 256> t{};
    for (int i = 0; i < 255; ++i) {
      const double midpoint_error = (f(i) + f(i + 1)) / 2.0 - f(i + 0.5);
      t[i] = static_cast<uint32_t>(std::min(std::round(f(i) - midpoint_error / 2.0), 65535.0));
    }
    t[255] = 65535;
    return t;
  }();
  return table;
}

int32_t rescale(const Q16SigmoidParams& p, int16_t x) {
  const int32_t round = p.left_shift > 0 ? 1 << (p.left_shift - 1) : 0;
  return (static_cast<int32_t>(x) * p.multiplier + round) >> p.left_shift;
}

}  // namespace

void q16_softmax_prepare(Q16SoftmaxParams& p, float in_scale, float beta) {
  make_table([](double x) { return std::exp(x); }, -10.0, 0.0, p.exp_table, 513);
  make_table([](double x) { return 1.0 / (1.0 + x); }, 0.0, 1.0, p.reciprocal_table, 513);
  p.input = quantize_multiplier(static_cast<double>(in_scale * beta) / (10.0 / 65535.0));
}

void q16_softmax(const Q16SoftmaxParams& p, const int16_t* in, int16_t* out, int64_t rows, int64_t depth,
                 int16_t* exps) {
  for (int64_t r = 0; r < rows; ++r, in += depth, out += depth) {
    int16_t max = -32768;
    for (int64_t c = 0; c < depth; ++c) max = std::max(max, in[c]);
    int32_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t scaled = multiply_by_quantized_multiplier(static_cast<int32_t>(in[c]) - max, p.input);
      const int16_t centred = static_cast<int16_t>(std::clamp(scaled + 32767, -32768, 32767));
      exps[c] = table_lookup(centred, p.exp_table);
      sum += exps[c];
    }
    const int headroom_plus_one = std::countl_zero(static_cast<uint32_t>(sum));
    const int32_t shifted = static_cast<int32_t>(((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int16_t centred_sum = static_cast<int16_t>(std::clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767));
    const int16_t reciprocal = table_lookup(centred_sum, p.reciprocal_table);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t v = static_cast<int32_t>((static_cast<int64_t>(exps[c]) * reciprocal + round) >> right_shift);
      out[c] = static_cast<int16_t>(std::clamp(v, 0, 32767));
    }
  }
}

void q16_sigmoid_prepare(Q16SigmoidParams& p, float in_scale, bool tanh) {
  // TFLite's CheckedLog2, in float as it is: a power of two within 1e-3 of log2.
  const float log2_scale = std::log(in_scale) * (1.0f / std::log(2.0f));
  const float rounded = std::round(log2_scale);
  const int shift = 12 + static_cast<int>(rounded);  // (15 - 3 integer bits) + log2(scale)
  if (std::abs(log2_scale - rounded) < 1e-3f && (shift == 0 || (tanh && shift == 1))) {
    p.pot_shift = shift;
    return;
  }
  p.pot_shift = -1;
  double multiplier = static_cast<double>(in_scale) * 4096.0 * 3.0;
  p.left_shift = 0;
  while (multiplier <= 32767.0 / 2.0 && p.left_shift <= 30) {
    ++p.left_shift;
    multiplier *= 2.0;
  }
  p.multiplier = static_cast<int32_t>(multiplier);
}

void q16_logistic(const Q16SigmoidParams& p, const int16_t* in, int16_t* out, int64_t n) {
  if (p.pot_shift >= 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = fixed_logistic16(in[i]);
    return;
  }
  const auto& table = sigmoid_table();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = rescale(p, in[i]);
    const uint32_t magnitude = static_cast<uint32_t>(std::abs(x));
    const uint32_t high = magnitude >> 9;
    uint32_t result;
    if (high >= 255) {
      result = 0x7FFFu << 10;
    } else {
      const uint32_t a = table[high], b = table[high + 1];
      result = (a << 9) + (magnitude & 0x1ff) * (b - a);
    }
    result = x >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1;
    out[i] = static_cast<int16_t>(result >> 10);
  }
}

void q16_tanh(const Q16SigmoidParams& p, const int16_t* in, int16_t* out, int64_t n) {
  if (p.pot_shift >= 0) {
    // gemmlowp's SaturatingRoundingMultiplyByPOT: the doubled code, saturated to int16.
    for (int64_t i = 0; i < n; ++i) {
      const int32_t x = std::clamp(static_cast<int32_t>(in[i]) << p.pot_shift, -32768, 32767);
      out[i] = fixed_tanh16(static_cast<int16_t>(x), 3);
    }
    return;
  }
  const auto& table = sigmoid_table();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = rescale(p, in[i]);
    const uint32_t magnitude = static_cast<uint32_t>(std::abs(x));
    const uint32_t high = magnitude >> 8;
    int32_t result;
    if (high >= 255) {
      result = 0xFFFF << 8;
    } else {
      const uint32_t a = table[high], b = table[high + 1];
      result = static_cast<int32_t>((a << 8) + static_cast<uint8_t>(magnitude & 0xFF) * (b - a));
    }
    result = x >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
    out[i] = static_cast<int16_t>(result >> 8);
  }
}

}  // namespace baton::builtin
