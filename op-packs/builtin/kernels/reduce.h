// MEAN over any set of axes. The plan (made in prepare) drops size-1 dimensions and merges neighbours
// that are both reduced or both kept, so NHWC global pooling becomes [N, H*W, C] with a contiguous
// inner run.
#ifndef BATON_BUILTIN_KERNELS_REDUCE_H
#define BATON_BUILTIN_KERNELS_REDUCE_H

#include <cstdint>

namespace baton::builtin {

inline constexpr int kMaxReduceRank = 8;

struct ReducePlan {
  int rank = 0;
  int64_t dims[kMaxReduceRank] = {};
  bool reduced[kMaxReduceRank] = {};
  int64_t in_count = 0, out_count = 0;
};

// `axes_mask` bit i set = dimension i is reduced. rank <= kMaxReduceRank.
ReducePlan plan_reduce(const int32_t* dims, int rank, uint32_t axes_mask);

void reduce_mean(const ReducePlan& plan, const float* in, float* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_REDUCE_H
