#include "kernels/qelementwise.h"

#include <algorithm>

namespace baton::builtin {
namespace {

bool fits(QuantizedMultiplier m) { return m.shift <= 30; }

template <typename T>
void run(const QBinaryParams& p, const BroadcastPlan& plan, const T* a, const T* b, T* out) {
  if (plan.count == 0) return;
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  const int64_t as = plan.a_strides[last], bs = plan.b_strides[last];
  int64_t index[kMaxBroadcastRank] = {};
  int64_t a_off = 0, b_off = 0;
  for (int64_t o = 0; o < plan.count; o += n) {
    const T* pa = a + a_off;
    const T* pb = b + b_off;
    T* po = out + o;
    for (int64_t i = 0; i < n; ++i) po[i] = static_cast<T>(qbinary_one(p, pa[i * as], pb[i * bs]));
    for (int d = last - 1; d >= 0; --d) {
      a_off += plan.a_strides[d];
      b_off += plan.b_strides[d];
      if (++index[d] < plan.dims[d]) break;
      a_off -= plan.a_strides[d] * plan.dims[d];
      b_off -= plan.b_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace

bool qbinary_prepare(QBinaryParams& p, float a_scale, float b_scale, float out_scale) {
  if (!(a_scale > 0 && b_scale > 0 && out_scale > 0)) return false;
  if (p.op == QBinaryOp::kMul) {
    // float arithmetic first, then widened: TFLite writes `double m = s1 * s2 / so` with float operands.
    const float real = a_scale * b_scale / out_scale;
    p.out_mult = quantize_multiplier(static_cast<double>(real));
    return fits(p.out_mult);
  }
  p.left_shift = 20;
  const double twice_max = 2.0 * static_cast<double>(std::max(a_scale, b_scale));
  p.a_mult = quantize_multiplier(static_cast<double>(a_scale) / twice_max);
  p.b_mult = quantize_multiplier(static_cast<double>(b_scale) / twice_max);
  p.out_mult = quantize_multiplier(twice_max / ((1 << p.left_shift) * static_cast<double>(out_scale)));
  return p.a_mult.shift <= 0 && p.b_mult.shift <= 0 && p.out_mult.shift <= 0;
}

int32_t qbinary_one(const QBinaryParams& p, int32_t a, int32_t b) {
  const int32_t x = a - p.a_zero;
  const int32_t y = b - p.b_zero;
  int32_t raw;
  if (p.op == QBinaryOp::kMul) {
    raw = multiply_by_quantized_multiplier(x * y, p.out_mult);
  } else {
    const int32_t sx = multiply_by_quantized_multiplier(shift_left_wrapping(x, p.left_shift), p.a_mult);
    const int32_t sy = multiply_by_quantized_multiplier(shift_left_wrapping(y, p.left_shift), p.b_mult);
    raw = multiply_by_quantized_multiplier(p.op == QBinaryOp::kAdd ? sx + sy : sx - sy, p.out_mult);
  }
  return std::clamp(raw + p.out_zero, p.lo, p.hi);
}

void qbinary(const QBinaryParams& p, const BroadcastPlan& plan, const uint8_t* a, const uint8_t* b, uint8_t* out) {
  if (p.is_signed) {
    run(p, plan, reinterpret_cast<const int8_t*>(a), reinterpret_cast<const int8_t*>(b), reinterpret_cast<int8_t*>(out));
  } else {
    run(p, plan, a, b, out);
  }
}

}  // namespace baton::builtin
