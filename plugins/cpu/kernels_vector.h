// The cpu delegate's kernels' building blocks (kernels.cc includes this and the kernels_*.h bodies, and
// instantiates them per instruction set): GCC vector types and their loads, stores, clamps and sums.
#ifndef BATON_CPU_KERNELS_VECTOR_H
#define BATON_CPU_KERNELS_VECTOR_H

#include <algorithm>
#include <cstring>

#include "kernels.h"

namespace baton::cpu::detail {

// GCC vector types: one body, instantiated with the vector width of each instruction set (16 floats in a
// zmm, 8 in a ymm, 4 in an xmm). Loads and stores go through memcpy (unaligned, no aliasing trouble).
typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));

#define BATON_INLINE inline __attribute__((always_inline))
// A lambda is a function of its own, which does not take the target attribute of the function it is
// written in: unless inlined it is compiled for the baseline ISA, each 16-float vector operation emulated
// in SSE (the depthwise border pixels ran so until this was added to every lambda here).
#define BATON_LAMBDA_INLINE __attribute__((always_inline))

template <class V>
BATON_INLINE V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
BATON_INLINE void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
template <class V>
BATON_INLINE V clamp(V v, Clamp c) {
  const V lo = V{} + c.min, hi = V{} + c.max;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
BATON_INLINE float clamp(float v, Clamp c) { return std::min(std::max(v, c.min), c.max); }

// Horizontal sums. fold4 adds a vector's halves down to four lanes; sum4 turns four such vectors into
// the vector of their four sums (a transpose and two adds), so four dot products end in a handful of
// shuffles instead of a chain of scalar additions each.
BATON_INLINE V4 fold4(V4 v) { return v; }
BATON_INLINE V4 fold4(V8 v) {
  V4 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return lo + hi;
}
BATON_INLINE V4 fold4(V16 v) {
  V8 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return fold4(lo + hi);
}
BATON_INLINE V4 sum4(V4 a, V4 b, V4 c, V4 d) {
  typedef int I4 __attribute__((vector_size(16)));
  const V4 ab = __builtin_shuffle(a, b, I4{0, 4, 1, 5}) + __builtin_shuffle(a, b, I4{2, 6, 3, 7});
  const V4 cd = __builtin_shuffle(c, d, I4{0, 4, 1, 5}) + __builtin_shuffle(c, d, I4{2, 6, 3, 7});
  return __builtin_shuffle(ab, cd, I4{0, 1, 4, 5}) + __builtin_shuffle(ab, cd, I4{2, 3, 6, 7});
}

// Hides a pointer's value from the optimizer, so that it steps it instead of precomputing every offset.
BATON_INLINE void opaque(const float*& p) { __asm__("" : "+r"(p)); }

// Floats in a vector of type V.
template <class V>
constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(float));

}  // namespace baton::cpu::detail

#endif  // BATON_CPU_KERNELS_VECTOR_H
