// Elementwise binary ops with numpy broadcasting (ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MINIMUM,
// MAXIMUM, PRELU). Planning happens once in prepare: shapes are aligned on the right, size-1 output
// dimensions dropped and neighbours that broadcast the same way merged, so the hot loop is an odometer
// over a few outer dimensions around a contiguous (or scalar) inner run.
#ifndef BATON_BUILTIN_KERNELS_BINARY_H
#define BATON_BUILTIN_KERNELS_BINARY_H

#include <cstdint>
#include <vector>

#include "kernels/common.h"

namespace baton::builtin {

enum class BinaryOp { kAdd, kSub, kMul, kDiv, kSquaredDifference, kMinimum, kMaximum, kPrelu };

inline constexpr int kMaxBroadcastRank = 8;

// The numpy broadcast of two shapes; false when they are incompatible.
bool broadcast_shape(const int32_t* a, int a_rank, const int32_t* b, int b_rank, std::vector<int32_t>& out);

struct BroadcastPlan {
  int rank = 0;  // merged dimensions, >= 1 unless the output is empty
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t a_strides[kMaxBroadcastRank] = {};  // 0 where `a` is broadcast
  int64_t b_strides[kMaxBroadcastRank] = {};
  int64_t count = 0;  // output elements
};

// Both ranks <= kMaxBroadcastRank and the shapes compatible (checked by broadcast_shape).
BroadcastPlan plan_broadcast(const int32_t* a, int a_rank, const int32_t* b, int b_rank);

// Calls f(output offset, offset in a, offset in b) once per inner run of plan.dims[plan.rank - 1]
// elements (along which a and b step by plan.a_strides / b_strides[rank - 1]), walking the outer
// dimensions like an odometer.
template <typename F>
void for_each_broadcast_run(const BroadcastPlan& plan, F&& f) {
  if (plan.count == 0) return;
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  int64_t index[kMaxBroadcastRank] = {};
  int64_t a_off = 0, b_off = 0;
  for (int64_t o = 0; o < plan.count; o += n) {
    f(o, a_off, b_off);
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

// PRELU: a is the input, b the alpha. The fused activation range applies to every op (NONE = no clamp).
void binary(BinaryOp op, const BroadcastPlan& plan, const float* a, const float* b, float* out,
            ActivationRange range);

// int32 / int64 ADD, SUB, MUL (wrapping), MINIMUM and MAXIMUM, without fused activation; false for the
// other ops.
template <typename T>
bool binary_integer(BinaryOp op, const BroadcastPlan& plan, const T* a, const T* b, T* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_BINARY_H
