// BATCH_MATMUL: out[..., m, n] = sum_k lhs[..., m, k] * rhs[..., k, n], with numpy broadcasting of the
// batch dimensions and optional transposition (adj_x, adj_y) of either operand.
#ifndef BATON_BUILTIN_KERNELS_BATCH_MATMUL_H
#define BATON_BUILTIN_KERNELS_BATCH_MATMUL_H

#include <cstdint>

namespace baton::builtin {

inline constexpr int kMaxMatmulBatchRank = 4;

struct BatchMatMulParams {
  int batch_rank = 0;  // broadcast batch dimensions of the output
  int out_batch[kMaxMatmulBatchRank] = {};
  int64_t lhs_batch_stride[kMaxMatmulBatchRank] = {};  // 0 where lhs is broadcast
  int64_t rhs_batch_stride[kMaxMatmulBatchRank] = {};
  int m = 1, k = 1, n = 1;
  bool adj_x = false, adj_y = false;
};

void batch_matmul(const BatchMatMulParams& p, const float* lhs, const float* rhs, float* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_BATCH_MATMUL_H
