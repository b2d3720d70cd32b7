#include "kernels/batch_matmul.h"

#include <cstddef>

namespace baton::builtin {
namespace {

void matmul_one(const BatchMatMulParams& p, const float* lhs, const float* rhs, float* out) {
  const size_t m = p.m, k = p.k, n = p.n;
  for (size_t i = 0; i < m; ++i) {
    float* row = out + i * n;
    for (size_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (size_t kk = 0; kk < k; ++kk) {
      const float l = p.adj_x ? lhs[kk * m + i] : lhs[i * k + kk];
      if (!p.adj_y) {
        const float* r = rhs + kk * n;
        for (size_t j = 0; j < n; ++j) row[j] += l * r[j];
      } else {
        for (size_t j = 0; j < n; ++j) row[j] += l * rhs[j * k + kk];
      }
    }
  }
}

}  // namespace

void batch_matmul(const BatchMatMulParams& p, const float* lhs, const float* rhs, float* out) {
  int64_t batches = 1;
  for (int d = 0; d < p.batch_rank; ++d) batches *= p.out_batch[d];
  const size_t out_step = static_cast<size_t>(p.m) * p.n;
  for (int64_t b = 0; b < batches; ++b) {
    int64_t rest = b, lhs_offset = 0, rhs_offset = 0;
    for (int d = p.batch_rank - 1; d >= 0; --d) {
      const int64_t idx = rest % p.out_batch[d];
      rest /= p.out_batch[d];
      lhs_offset += idx * p.lhs_batch_stride[d];
      rhs_offset += idx * p.rhs_batch_stride[d];
    }
    matmul_one(p, lhs + lhs_offset, rhs + rhs_offset, out + static_cast<size_t>(b) * out_step);
  }
}

}  // namespace baton::builtin
