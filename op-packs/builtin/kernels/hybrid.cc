#include "kernels/hybrid.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace baton::builtin {

void symmetric_quantize_row(const float* x, int n, int8_t* q, float* scale) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    const auto mm = std::minmax_element(x, x + n);
    lo = *mm.first;
    hi = *mm.second;
  }
  const float range = std::max(std::abs(lo), std::abs(hi));
  if (range == 0.0f) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.0f;
    return;
  }
  *scale = range / 127.0f;
  const float inverse = 127.0f / range;
  for (int i = 0; i < n; ++i) {
    // Clamped in float before the conversion, so an infinite or NaN input cannot overflow it.
    const float v = std::fmax(-127.0f, std::fmin(127.0f, std::round(x[i] * inverse)));
    q[i] = static_cast<int8_t>(v);
  }
}

void asymmetric_quantize_row(const float* x, int n, int8_t* q, float* scale, int32_t* zero_point) {
  constexpr double kMin = -128.0, kMax = 127.0;
  double rmin = 0.0, rmax = 0.0;
  if (n > 0) {
    const auto mm = std::minmax_element(x, x + n);
    rmin = std::fmin(0.0, static_cast<double>(*mm.first));
    rmax = std::fmax(0.0, static_cast<double>(*mm.second));
  }
  if (rmin == rmax) {
    std::memset(q, 0, static_cast<size_t>(n));
    *scale = 1.0f;
    *zero_point = 0;
    return;
  }
  const double s = (rmax - rmin) / (kMax - kMin);
  // The zero point from whichever end loses less precision, nudged onto an integer in range.
  const double from_min = kMin - rmin / s;
  const double from_max = kMax - rmax / s;
  const double error_min = std::abs(kMin) + std::abs(rmin / s);
  const double error_max = std::abs(kMax) + std::abs(rmax / s);
  const double zero = error_min < error_max ? from_min : from_max;
  int32_t nudged;
  if (zero <= kMin) nudged = -128;
  else if (zero >= kMax) nudged = 127;
  else nudged = static_cast<int32_t>(std::round(zero));
  *scale = static_cast<float>(s);
  *zero_point = nudged;
  const float inverse = static_cast<float>(1.0 / static_cast<double>(*scale));
  for (int i = 0; i < n; ++i) {
    const float product = x[i] * inverse;
    const float v = std::fmax(-128.0f, std::fmin(127.0f, std::round(static_cast<float>(nudged) + product)));
    q[i] = static_cast<int8_t>(v);
  }
}

}  // namespace baton::builtin
