#include "kernels/fully_connected.h"

#include "kernels/gemm.h"

namespace baton::builtin {

bool fully_connected_uses_gemm(const FullyConnectedParams& p) { return p.batch >= 4; }

size_t fully_connected_packed_weights_size(const FullyConnectedParams& p) {
  return gemm_packed_b_size(p.units, p.depth);
}

void fully_connected_pack_weights(const FullyConnectedParams& p, const float* weights, float* packed) {
  gemm_pack_b(weights, p.depth, p.units, p.depth, packed);
}

size_t fully_connected_scratch_size(const FullyConnectedParams& p, int workers) {
  return fully_connected_uses_gemm(p) ? static_cast<size_t>(workers) * gemm_scratch_per_worker() : 0;
}

void fully_connected(const FullyConnectedParams& p, const float* input, const float* weights,
                     const float* packed_weights, const float* bias, float* output, float* scratch,
                     Parallel* parallel) {
  const GemmEpilogue epilogue{bias, p.range};
  if (fully_connected_uses_gemm(p)) {
    const DenseRows rows{input, p.depth};
    gemm(rows.source(), p.batch, p.units, p.depth, packed_weights, output, p.units, epilogue, scratch, parallel);
  } else {
    gemv_rows(input, p.depth, p.batch, p.units, p.depth, weights, p.depth, output, p.units, epilogue, parallel);
  }
}

}  // namespace baton::builtin
