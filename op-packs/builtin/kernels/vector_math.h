// exp, tanh, the logistic function and GELU on W floats at a time (GCC vector extensions; W = 8 for AVX2
// and the baseline, 16 for AVX-512), for the float TANH, LOGISTIC, EXP and GELU kernels (exact and
// tanh-approximated). Always inline: the caller's dispatch (BATON_DISPATCH_WIDTHS) decides the instructions
// and the width; every width computes the same value lane by lane.
//
// exp(x) = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (ln 2 in two parts, so r is exact to a
// few ulp), e^r by its Taylor series to r^7 (|r| <= ln 2 / 2: the first term left out is below 6e-9
// relative), 2^n applied in two halves so results near the overflow and in the denormal range come out
// right; over 88.72 gives infinity, under -104 zero. Lanes whose result is zero compute e^0 and are
// replaced at the end, since their tiny 2^n would make denormals on the way, and on many x86 cores each
// instruction that makes or reads a denormal takes a microcode assist of about a hundred cycles, which
// slows the whole vector. exp_lanes<kFlushTiny> also gives zero for results below the smallest normal
// float (x under ln 2^-126 = -87.34), so it never makes a denormal at all: the logistic function, GELU and
// SOFTMAX use it, where such a result is lost beside the 1 it is added to (or makes an output under 1.2e-38,
// which XNNPACK's kernels flush in the same way). The EXP op keeps the exact denormal results.
// tanh(x) = sign(x) (1 - 2 / (e^{2|x|} + 1)) for |x| >= 1/2, and its Taylor series to x^15 below, where
// the subtraction would cancel (the first term left out is below 1e-8 relative there); |x| over 10 gives
// +-1 exactly, as float tanh does (it rounds to 1 from 9.01). The logistic function and GELU below.
// Each is within a few ulp of the correctly rounded value (op-packs/builtin/tests compare them with the
// double-precision functions over a sweep of inputs); NaN stays NaN.
#ifndef BATON_BUILTIN_KERNELS_VECTOR_MATH_H
#define BATON_BUILTIN_KERNELS_VECTOR_MATH_H

#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/simd.h"

// These functions, and the lambdas the including kernels pass map8, take and return vectors but are
// always inlined, so no call (and no calling convention, which differs with and without AVX) is ever made
// with them: the warning about that convention is off for the including file too.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace baton::builtin {

// W float lanes and W int32 lanes of the same size.
template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * W)));
  typedef int32_t I __attribute__((vector_size(4 * W)));
};
// The int32 vector of a float vector's size.
template <typename V>
using IntsOf = typename Lanes<sizeof(V) / 4>::I;

template <typename V>
BATON_INLINE V splat(float v) {
  return V{} + v;
}
// A cast between vector types of one size reinterprets the bits (GCC's vector extensions).
template <typename V>
BATON_INLINE IntsOf<V> bits_of(V v) {
  return (IntsOf<V>)v;
}
template <typename V>
BATON_INLINE V floats_of(IntsOf<V> v) {
  return (V)v;
}

// Lanes of `yes` where `mask` (a comparison's result: all ones or all zeros) is set, else of `no`.
template <typename V>
BATON_INLINE V select(IntsOf<V> mask, V yes, V no) {
  return floats_of<V>((bits_of(yes) & mask) | (bits_of(no) & ~mask));
}

// 2^n for n in [-126, 127].
template <typename V>
BATON_INLINE V pow2i(IntsOf<V> n) {
  return floats_of<V>((n + 127) << 23);
}

constexpr bool kFlushTiny = true;

template <typename V, bool FlushTiny = false>
BATON_INLINE V exp_lanes(V x) {
  using I = IntsOf<V>;
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const I over = x > 88.7228394f, under = x < (FlushTiny ? -87.3365447f : -104.0f);
  x = select(under, V{}, x);
  const V t = x * kLog2e + kRound;
  const V n = t - kRound;
  const V r = (x - n * kLn2Hi) - n * kLn2Lo;
  V p = splat<V>(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // n from t's low mantissa bits; applied as 2^(n/2) * 2^(n - n/2) so that neither factor leaves the
  // normal range for any n in [-150, 128].
  I ni = bits_of(t) - 0x4B400000;
  ni = ni > 128 ? I{} + 128 : ni;
  ni = ni < -150 ? I{} - 150 : ni;
  const I half = ni >> 1;
  const V y = p * pow2i<V>(half) * pow2i<V>(ni - half);
  return select(over, splat<V>(std::numeric_limits<float>::infinity()), select(under, V{}, y));
}

template <typename V>
BATON_INLINE V tanh_lanes(V x) {
  using I = IntsOf<V>;
  const I sign_bit = I{} + static_cast<int32_t>(0x80000000u);
  const I sign = bits_of(x) & sign_bit;
  const V abs = floats_of<V>(bits_of(x) & ~sign_bit);
  // Near zero: x (1 + x^2 (-1/3 + x^2 (2/15 + ...))), the series' terms to x^15 (x times 1 keeps -0).
  const V x2 = x * x;
  V s = splat<V>(-929569.0f / 638512875.0f);
  s = s * x2 + 21844.0f / 6081075.0f;
  s = s * x2 - 1382.0f / 155925.0f;
  s = s * x2 + 62.0f / 2835.0f;
  s = s * x2 - 17.0f / 315.0f;
  s = s * x2 + 2.0f / 15.0f;
  s = s * x2 - 1.0f / 3.0f;
  const V small = x * (1.0f + x2 * s);
  const V a = select(abs > 10.0f, splat<V>(10.0f), abs);
  const V e = exp_lanes(a + a);
  const V large = floats_of<V>(bits_of(1.0f - 2.0f / (e + 1.0f)) | sign);
  return select(abs < 0.5f, small, large);
}

// 1 / (1 + e^{-x}) for x >= 0, e^x / (1 + e^x) below: one exp of -|x|, which never overflows, so both
// tails keep their precision (down to the smallest normal float; below it zero).
template <typename V>
BATON_INLINE V logistic_lanes(V x) {
  const V e = exp_lanes<V, kFlushTiny>(floats_of<V>(bits_of(x) | static_cast<int32_t>(0x80000000u)));
  const V r = 1.0f / (1.0f + e);
  return select(x < 0.0f, e * r, r);
}

// GELU, x (1 + erf(x / sqrt 2)) / 2, with erfc(z) for z >= 0 as Abramowitz and Stegun's 7.1.26 gives it,
// t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^{-z^2} with t = 1 / (1 + p z) (erf's absolute error at most
// 1.5e-7). For x < 0, 1 + erf(x / sqrt 2) is that erfc itself, so the small outputs of negative inputs
// carry no cancellation.
template <typename V>
BATON_INLINE V gelu_lanes(V x) {
  const V z = floats_of<V>(bits_of(x) & 0x7fffffff) * 0.70710678118654752f;
  const V t = 1.0f / (1.0f + 0.3275911f * z);
  V p = splat<V>(1.061405429f);
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const V erfc = p * t * exp_lanes<V, kFlushTiny>(-(z * z));
  return 0.5f * x * select(x < 0.0f, erfc, 2.0f - erfc);
}

// out[i] = f(in[i]) W at a time; the tail through a zero-padded block.
template <int W, typename F>
BATON_INLINE void map_lanes(const float* in, float* out, int64_t n, F f) {
  using V = typename Lanes<W>::F;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V v;
    std::memcpy(&v, in + i, sizeof(v));
    v = f(v);
    std::memcpy(out + i, &v, sizeof(v));
  }
  if (i < n) {
    float block[W] = {};
    std::memcpy(block, in + i, sizeof(float) * (n - i));
    V v;
    std::memcpy(&v, block, sizeof(v));
    v = f(v);
    std::memcpy(block, &v, sizeof(v));
    std::memcpy(out + i, block, sizeof(float) * (n - i));
  }
}

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_VECTOR_MATH_H
