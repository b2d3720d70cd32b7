// FULLY_CONNECTED: output[b][u] = act(bias[u] + sum_d input[b][d] * weights[u][d]). Batches of a few
// rows take the dot-product path over the weights as stored; larger ones go through the packed GEMM.
#ifndef BATON_BUILTIN_KERNELS_FULLY_CONNECTED_H
#define BATON_BUILTIN_KERNELS_FULLY_CONNECTED_H

#include <cstddef>

#include "kernels/common.h"
#include "kernels/parallel.h"

namespace baton::builtin {

struct FullyConnectedParams {
  int batch = 1, depth = 1, units = 1;
  ActivationRange range;
};

// Whether this shape uses the packed GEMM (then the weights must be packed, and scratch given).
bool fully_connected_uses_gemm(const FullyConnectedParams& p);
size_t fully_connected_packed_weights_size(const FullyConnectedParams& p);
void fully_connected_pack_weights(const FullyConnectedParams& p, const float* weights, float* packed);
size_t fully_connected_scratch_size(const FullyConnectedParams& p, int workers);

// `packed_weights` and `scratch` are used (and required) only when fully_connected_uses_gemm(p).
void fully_connected(const FullyConnectedParams& p, const float* input, const float* weights,
                     const float* packed_weights, const float* bias, float* output, float* scratch,
                     Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_FULLY_CONNECTED_H
