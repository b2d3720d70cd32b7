#include "kernels/qactivation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "kernels/ql2norm.h"
#include "kernels/qlog_softmax.h"

namespace baton::builtin {
namespace {

constexpr int32_t kInt16Min = std::numeric_limits<int16_t>::min();
constexpr int32_t kInt16Max = std::numeric_limits<int16_t>::max();

// gemmlowp's int16 fixed-point primitives, in the int arithmetic C++ promotes int16 to.
int16_t rounding_doubling_high_mul16(int16_t a, int16_t b) {
  if (a == b && a == kInt16Min) return kInt16Max;
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

// Without the rounding nudge (TFLite's SaturatingDoublingHighMul).
int16_t doubling_high_mul16(int16_t a, int16_t b) {
  if (a == b && a == kInt16Min) return kInt16Max;
  return static_cast<int16_t>((static_cast<int32_t>(a) * b) / (1 << 15));
}

int16_t rounding_divide_by_pot16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((int64_t{1} << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

int16_t saturating_left_shift16(int16_t x, int amount) {
  const int64_t v = static_cast<int64_t>(x) * (int64_t{1} << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(v, kInt16Min, kInt16Max));
}

// TFLite's DownScaleInt32ToInt16Multiplier.
int16_t to_int16_multiplier(int32_t m) {
  constexpr int32_t kRounding = 1 << 15;
  if (m >= std::numeric_limits<int32_t>::max() - kRounding) return kInt16Max;
  return static_cast<int16_t>((m + kRounding) >> 16);
}

template <typename T>
void hard_swish_typed(const QHardSwishParams& p, const T* in, T* out, int64_t n) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < n; ++i) {
    const int16_t value = static_cast<int16_t>(static_cast<int32_t>(in[i]) - p.in_zero);
    const int16_t hires = static_cast<int16_t>(value * (1 << 7));
    const int16_t preshift_out = rounding_doubling_high_mul16(hires, p.output_multiplier);
    int16_t reluish = hires;
    // All but the last bit of a left shift before the multiply, so that saturation lands after it.
    if (p.reluish_exponent > 0) reluish = saturating_left_shift16(reluish, p.reluish_exponent - 1);
    reluish = rounding_doubling_high_mul16(reluish, p.reluish_multiplier);
    if (p.reluish_exponent > 0) reluish = saturating_left_shift16(reluish, 1);
    if (p.reluish_exponent < 0) reluish = rounding_divide_by_pot16(reluish, -p.reluish_exponent);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);  // [-1, 1] to [0, 1]
    const int16_t preshift = doubling_high_mul16(reluish, preshift_out);
    int16_t v = rounding_divide_by_pot16(preshift, -p.output_exponent);
    v = static_cast<int16_t>(v + p.out_zero);
    out[i] = static_cast<T>(std::clamp<int32_t>(v, lo, hi));
  }
}

template <typename T>
T prelu_code(const QPreluParams& p, T in, T alpha) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const int32_t x = static_cast<int32_t>(in) - p.in_zero;
  int32_t v;
  if (x >= 0) {
    v = multiply_by_quantized_multiplier(x, p.positive);
  } else {
    v = multiply_by_quantized_multiplier(x * (static_cast<int32_t>(alpha) - p.alpha_zero), p.negative);
  }
  return static_cast<T>(std::clamp(v + p.out_zero, lo, hi));
}

template <typename T>
void prelu_typed(const QPreluParams& p, const IndexPlan& plan, const T* in, const T* alpha, T* out) {
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t a, int64_t) { out[o] = prelu_code(p, in[i], alpha[a]); });
}

template <typename T>
void prelu_table_typed(const QPreluParams& p, const T* alpha, int64_t alpha_count, uint8_t* table) {
  for (int64_t a = 0; a < alpha_count; ++a) {
    for (int code = 0; code < 256; ++code) {
      const T in = static_cast<T>(static_cast<uint8_t>(code));
      table[a * 256 + code] = static_cast<uint8_t>(prelu_code(p, in, alpha[a]));
    }
  }
}

template <typename T>
void abs_typed(const QAbsParams& p, const T* in, T* out, int64_t n) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = std::abs(static_cast<int32_t>(in[i]) - p.in_zero);
    const int32_t scaled = p.rescale ? multiply_by_quantized_multiplier(v, p.m) : v;
    out[i] = static_cast<T>(std::clamp(scaled + p.out_zero, lo, hi));
  }
}

}  // namespace

bool qrsqrt_i8(const QRsqrtParams& p, const int8_t* in, int8_t* out, int64_t n) {
  constexpr int kShift = 20;  // keeps the inverse square root an integer
  for (int64_t i = 0; i < n; ++i) {
    const int32_t value = static_cast<int32_t>(in[i]) - p.in_zero;
    if (value < 0) return false;
    if (value == 0) {
      out[i] = 127;  // values near 0 give the largest output, as in TFLite
      continue;
    }
    int32_t inv_sqrt = 0;
    int right_shift = 0;
    inv_sqrt_multiplier(value, &inv_sqrt, &right_shift);
    const int32_t data = multiply_by_quantized_multiplier(1, QuantizedMultiplier{inv_sqrt, kShift - right_shift});
    const int32_t v = multiply_by_quantized_multiplier(data, QuantizedMultiplier{p.m.multiplier, p.m.shift - kShift}) + p.out_zero;
    out[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
  }
  return true;
}

bool qdiv_u8(const QDivParams& p, const IndexPlan& plan, const uint8_t* a, const uint8_t* b, uint8_t* out) {
  bool ok = true;
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t j, int64_t) {
    int32_t x = static_cast<int32_t>(a[i]) - p.a_zero;
    int32_t y = static_cast<int32_t>(b[j]) - p.b_zero;
    if (y == 0) {
      ok = false;
      return;
    }
    if (y < 0) {  // the reciprocal must be positive
      x = -x;
      y = -y;
    }
    const int headroom_plus_one = std::countl_zero(static_cast<uint32_t>(y));
    const int recip_shift = 31 - headroom_plus_one;
    const int32_t y_minus_one = static_cast<int32_t>((static_cast<uint32_t>(y) << headroom_plus_one) - (uint32_t{1} << 31));
    const int32_t reciprocal = fixed_one_over_one_plus_x(y_minus_one);
    const int headroom = x == 0 ? 31 : __builtin_clrsb(x);
    const int32_t quotient = saturating_rounding_doubling_high_mul(shift_left_wrapping(x, headroom), reciprocal);
    const int total_shift = p.m.shift - recip_shift - headroom;
    const int32_t v = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(quotient, p.m.multiplier), -total_shift) + p.out_zero;
    out[o] = static_cast<uint8_t>(std::clamp(v, p.lo, p.hi));
  });
  return ok;
}

void qabs_i8(const QAbsParams& p, const int8_t* in, int8_t* out, int64_t n) { abs_typed(p, in, out, n); }
void qabs_i16(const QAbsParams& p, const int16_t* in, int16_t* out, int64_t n) { abs_typed(p, in, out, n); }

bool qhard_swish_prepare(QHardSwishParams& p, float in_scale, float out_scale) {
  const float hires_scale = (1.0f / 128.0f) * in_scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const QuantizedMultiplier out_m = quantize_multiplier(hires_scale / out_scale);
  const QuantizedMultiplier reluish_m = quantize_multiplier(hires_scale / reluish_scale);
  if (out_m.shift > 0) return false;
  p.output_multiplier = to_int16_multiplier(out_m.multiplier);
  p.output_exponent = out_m.shift;
  p.reluish_multiplier = to_int16_multiplier(reluish_m.multiplier);
  p.reluish_exponent = reluish_m.shift;
  return true;
}

void qhard_swish(const QHardSwishParams& p, const uint8_t* in, uint8_t* out, int64_t n) {
  if (p.is_signed) {
    hard_swish_typed(p, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out), n);
  } else {
    hard_swish_typed(p, in, out, n);
  }
}

void qlog_softmax_u8(const float table[256], float in_scale, float out_scale, int32_t out_zero, const uint8_t* in,
                     uint8_t* out, int64_t rows, int64_t depth) {
  const float scale = in_scale / out_scale;
  for (int64_t r = 0; r < rows; ++r, in += depth, out += depth) {
    uint8_t max = 0;
    for (int64_t j = 0; j < depth; ++j) max = std::max(max, in[j]);
    // Entry for x is table[255 - max + x] = expf(-in_scale * (max - x)).
    const float* row_table = table + (255 - max);
    float sum = 0.0f;
    for (int64_t j = 0; j < depth; ++j) sum += row_table[in[j]];
    const float log_sum = std::log(sum);
    const float offset = (in_scale * static_cast<float>(max) + log_sum) / out_scale;
    for (int64_t j = 0; j < depth; ++j) {
      const float log_prob = scale * static_cast<float>(in[j]) - offset;
      const int32_t q = static_cast<int32_t>(std::rint(log_prob) + static_cast<float>(out_zero));
      out[j] = static_cast<uint8_t>(std::clamp(q, 0, 255));
    }
  }
}

void qprelu(const QPreluParams& p, const IndexPlan& plan, const uint8_t* in, const uint8_t* alpha, uint8_t* out) {
  if (p.is_signed) {
    prelu_typed(p, plan, reinterpret_cast<const int8_t*>(in), reinterpret_cast<const int8_t*>(alpha),
                reinterpret_cast<int8_t*>(out));
  } else {
    prelu_typed(p, plan, in, alpha, out);
  }
}

void qprelu_table(const QPreluParams& p, const uint8_t* alpha, int64_t alpha_count, uint8_t* table) {
  if (p.is_signed) prelu_table_typed(p, reinterpret_cast<const int8_t*>(alpha), alpha_count, table);
  else prelu_table_typed(p, alpha, alpha_count, table);
}

void qprelu_lookup(const IndexPlan& plan, const uint8_t* table, const uint8_t* in, uint8_t* out) {
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t a, int64_t) { out[o] = table[a * 256 + in[i]]; });
}

void qsquared_difference_prepare(QSquaredDifferenceParams& p, float a_scale, float b_scale, float out_scale) {
  constexpr int kLeftShift = 7;
  const double twice_max = 2 * std::max(a_scale, b_scale);
  p.a_mult = quantize_multiplier(a_scale / twice_max);
  p.b_mult = quantize_multiplier(b_scale / twice_max);
  p.out_mult = quantize_multiplier((twice_max * twice_max) / ((1 << (kLeftShift * 2)) * out_scale));
  for (int byte = 0; byte < 256; ++byte) {
    const int32_t code = static_cast<int8_t>(byte);
    p.a_rescaled[byte] = multiply_by_quantized_multiplier((code - p.a_zero) * (1 << kLeftShift), p.a_mult);
    p.b_rescaled[byte] = multiply_by_quantized_multiplier((code - p.b_zero) * (1 << kLeftShift), p.b_mult);
  }
}

void qsquared_difference_i8(const QSquaredDifferenceParams& p, const IndexPlan& plan, const int8_t* a,
                            const int8_t* b, int8_t* out) {
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t j, int64_t) {
    const int32_t diff = p.a_rescaled[static_cast<uint8_t>(a[i])] - p.b_rescaled[static_cast<uint8_t>(b[j])];
    const int32_t v = multiply_by_quantized_multiplier(diff * diff, p.out_mult) + p.out_zero;
    out[o] = static_cast<int8_t>(std::clamp(v, -128, 127));
  });
}

}  // namespace baton::builtin
