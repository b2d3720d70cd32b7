#include "kernels/reduce.h"

#include <cstring>

#include "kernels/common.h"
#include "kernels/vector_math.h"

namespace baton::builtin {
namespace {

// The sum of a contiguous row: 32 running partial sums (lane i takes the elements at i mod 32) over whole
// blocks of 32, the partial sums added in lane order, then the tail one by one: another order than TFLite's
// one by one (float outputs agree to rounding), and the same order, so the same float, on every ISA (W = 8
// keeps four vectors, W = 16 two, and both fold them to the same 16 lanes first).
template <int W>
BATON_INLINE float row_sum_impl(const float* x, int64_t n) {
  using V = typename Lanes<W>::F;
  constexpr int kVectors = 32 / W;
  V acc[kVectors] = {};
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    for (int k = 0; k < kVectors; ++k) {
      V v;
      std::memcpy(&v, x + j + k * W, sizeof(v));
      acc[k] += v;
    }
  }
  float sum = 0.0f;
  if (j > 0) {
    float lanes[32];
    std::memcpy(lanes, acc, sizeof(lanes));
    for (int i = 0; i < 16; ++i) sum += lanes[i] + lanes[i + 16];
  }
  for (; j < n; ++j) sum += x[j];
  return sum;
}

BATON_DISPATCH_WIDTHS(float, row_sum, (const float* x, int64_t n), (x, n))

}  // namespace

ReducePlan plan_reduce(const int32_t* dims, int rank, uint32_t axes_mask) {
  ReducePlan plan;
  plan.in_count = plan.out_count = 1;
  for (int i = 0; i < rank; ++i) {
    const bool reduced = (axes_mask >> i) & 1u;
    plan.in_count *= dims[i];
    if (!reduced) plan.out_count *= dims[i];
    if (dims[i] == 1) continue;
    if (plan.rank > 0 && plan.reduced[plan.rank - 1] == reduced) {
      plan.dims[plan.rank - 1] *= dims[i];
    } else {
      plan.reduced[plan.rank] = reduced;
      plan.dims[plan.rank++] = dims[i];
    }
  }
  if (plan.rank == 0) {
    plan.rank = 1;
    plan.dims[0] = plan.in_count;
    plan.reduced[0] = false;
  }
  return plan;
}

void reduce_mean(const ReducePlan& plan, const float* in, float* out) {
  for (int64_t i = 0; i < plan.out_count; ++i) out[i] = 0.0f;
  if (plan.in_count == 0) return;
  // Output strides: 0 along reduced dimensions.
  int64_t out_strides[kMaxReduceRank] = {};
  int64_t stride = 1;
  for (int d = plan.rank - 1; d >= 0; --d) {
    out_strides[d] = plan.reduced[d] ? 0 : stride;
    if (!plan.reduced[d]) stride *= plan.dims[d];
  }
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  int64_t index[kMaxReduceRank] = {};
  int64_t out_off = 0;
  for (int64_t i = 0; i < plan.in_count; i += n) {
    const float* __restrict src = in + i;
    float* __restrict dst = out + out_off;
    if (plan.reduced[last]) {
      *dst += row_sum(src, n);
    } else {
      for (int64_t j = 0; j < n; ++j) dst[j] += src[j];
    }
    for (int d = last - 1; d >= 0; --d) {
      out_off += out_strides[d];
      if (++index[d] < plan.dims[d]) break;
      out_off -= out_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
  const float count = static_cast<float>(plan.in_count / (plan.out_count > 0 ? plan.out_count : 1));
  for (int64_t i = 0; i < plan.out_count; ++i) out[i] /= count;
}

}  // namespace baton::builtin
