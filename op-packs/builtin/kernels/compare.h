// The comparisons' inner runs on float, int32 and int64 values (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL,
// GREATER, GREATER_EQUAL): bool out, one byte each. Compiled for AVX-512, AVX2 and the baseline and chosen
// at run time; the result is the same on each (a comparison has no rounding).
#ifndef BATON_BUILTIN_KERNELS_COMPARE_H
#define BATON_BUILTIN_KERNELS_COMPARE_H

#include <cstdint>

#include "kernels/common.h"

namespace baton::builtin {

enum class CompareOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual };

// out[i] = a[i * a_step] op b[i * b_step] for i < n, each step 0 (one value for the whole run) or 1.
void compare_run(VectorIsa isa, CompareOp op, const float* a, int64_t a_step, const float* b, int64_t b_step,
                 bool* out, int64_t n);
void compare_run(VectorIsa isa, CompareOp op, const int32_t* a, int64_t a_step, const int32_t* b, int64_t b_step,
                 bool* out, int64_t n);
void compare_run(VectorIsa isa, CompareOp op, const int64_t* a, int64_t a_step, const int64_t* b, int64_t b_step,
                 bool* out, int64_t n);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_COMPARE_H
