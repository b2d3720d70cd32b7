#include "kernels/compare.h"

#include <cstring>

#include "kernels/simd.h"

namespace baton::builtin {
namespace {

// One comparison over the run, with each side's step known to the compiler, so that the loop vectorises
// in each ISA's copy: a compare into a mask, narrowed to bytes.
template <typename T, typename Cmp>
BATON_INLINE void run_with(const T* a, int64_t a_step, const T* b, int64_t b_step, bool* __restrict out, int64_t n,
                           Cmp cmp) {
  if (a_step != 0 && b_step != 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = cmp(a[i], b[i]);
  } else if (a_step != 0) {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = cmp(a[i], y);
  } else if (b_step != 0) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = cmp(x, b[i]);
  } else {
    std::memset(out, cmp(a[0], b[0]) ? 1 : 0, static_cast<size_t>(n));
  }
}

template <typename T>
BATON_INLINE void compare_impl(CompareOp op, const T* a, int64_t a_step, const T* b, int64_t b_step, bool* out,
                               int64_t n) {
  switch (op) {
    case CompareOp::kEqual: return run_with(a, a_step, b, b_step, out, n, [](T x, T y) BATON_LAMBDA { return x == y; });
    case CompareOp::kNotEqual: return run_with(a, a_step, b, b_step, out, n, [](T x, T y) BATON_LAMBDA { return x != y; });
    case CompareOp::kLess: return run_with(a, a_step, b, b_step, out, n, [](T x, T y) BATON_LAMBDA { return x < y; });
    case CompareOp::kLessEqual: return run_with(a, a_step, b, b_step, out, n, [](T x, T y) BATON_LAMBDA { return x <= y; });
    case CompareOp::kGreater: return run_with(a, a_step, b, b_step, out, n, [](T x, T y) BATON_LAMBDA { return x > y; });
    case CompareOp::kGreaterEqual:
      return run_with(a, a_step, b, b_step, out, n, [](T x, T y) BATON_LAMBDA { return x >= y; });
  }
}

// The lane count of BATON_DISPATCH_WIDTHS is not used: the compiler picks the vectors of each copy's ISA.
template <int W>
BATON_INLINE void compare_f32_impl(CompareOp op, const float* a, int64_t as, const float* b, int64_t bs, bool* out,
                                   int64_t n) {
  compare_impl(op, a, as, b, bs, out, n);
}
template <int W>
BATON_INLINE void compare_i32_impl(CompareOp op, const int32_t* a, int64_t as, const int32_t* b, int64_t bs,
                                   bool* out, int64_t n) {
  compare_impl(op, a, as, b, bs, out, n);
}
template <int W>
BATON_INLINE void compare_i64_impl(CompareOp op, const int64_t* a, int64_t as, const int64_t* b, int64_t bs,
                                   bool* out, int64_t n) {
  compare_impl(op, a, as, b, bs, out, n);
}

BATON_DISPATCH_WIDTHS(void, compare_f32,
                      (CompareOp op, const float* a, int64_t as, const float* b, int64_t bs, bool* out, int64_t n),
                      (op, a, as, b, bs, out, n))
BATON_DISPATCH_WIDTHS(void, compare_i32,
                      (CompareOp op, const int32_t* a, int64_t as, const int32_t* b, int64_t bs, bool* out, int64_t n),
                      (op, a, as, b, bs, out, n))
BATON_DISPATCH_WIDTHS(void, compare_i64,
                      (CompareOp op, const int64_t* a, int64_t as, const int64_t* b, int64_t bs, bool* out, int64_t n),
                      (op, a, as, b, bs, out, n))

}  // namespace

void compare_run(VectorIsa isa, CompareOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                 bool* out, int64_t n) {
  compare_f32_for(isa)(op, a, a_step, b, b_step, out, n);
}

void compare_run(VectorIsa isa, CompareOp op, const int32_t* a, int64_t a_step, const int32_t* b, int64_t b_step,
                 bool* out, int64_t n) {
  compare_i32_for(isa)(op, a, a_step, b, b_step, out, n);
}

void compare_run(VectorIsa isa, CompareOp op, const int64_t* a, int64_t a_step, const int64_t* b, int64_t b_step,
                 bool* out, int64_t n) {
  compare_i64_for(isa)(op, a, a_step, b, b_step, out, n);
}

}  // namespace baton::builtin
