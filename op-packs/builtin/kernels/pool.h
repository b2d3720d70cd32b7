// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D (sqrt of the mean of squares) over NHWC. As in TFLite, a
// window that hangs over the padding averages only the input elements it covers.
#ifndef BATON_BUILTIN_KERNELS_POOL_H
#define BATON_BUILTIN_KERNELS_POOL_H

#include "kernels/common.h"

namespace baton::builtin {

struct PoolParams {
  int batch = 1, in_h = 1, in_w = 1, channels = 1;
  int out_h = 1, out_w = 1;
  int filter_h = 1, filter_w = 1;
  int stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;
  ActivationRange range;
};

void pool_compute_geometry(Padding padding, PoolParams& p);
void average_pool(const PoolParams& p, const float* input, float* output);
void max_pool(const PoolParams& p, const float* input, float* output);
void l2_pool(const PoolParams& p, const float* input, float* output);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_POOL_H
