// The matrix product behind CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV:
//   C[m][n] = act(bias[n] + sum_k A[m][k] * B[n][k])
// Both operands are "k-contiguous", which is how TFLite stores activations (NHWC rows) and weights
// (OHWI / [units, depth]). B is packed once (weights are usually constant) into panels of kGemmNR
// columns; A is packed block by block from a row source, so a convolution can im2col straight into the
// packed block instead of materialising the whole im2col matrix. The micro-kernel keeps a
// kGemmMR x kGemmNR tile of C in registers; blocks of kGemmKC depth keep a B panel in L1 and an A block
// in L2. The tile has kGemmNR columns and gemm_rows_per_tile(isa) rows: 12 with AVX-512 (twelve 16-lane
// accumulators, enough to cover the FMA latency), 6 with AVX2 and baseline (twelve 8-lane ones).
#ifndef BATON_BUILTIN_KERNELS_GEMM_H
#define BATON_BUILTIN_KERNELS_GEMM_H

#include <cstddef>

#include "kernels/common.h"
#include "kernels/parallel.h"

namespace baton::builtin {

inline constexpr int kGemmNR = 16;
inline constexpr int kGemmKC = 256;
inline constexpr int kGemmMC = 72;  // a multiple of every tile's row count (6 and 12)

// Writes A[row][k0 .. k0+count) to dst[0], dst[stride], dst[2*stride], ...
struct GemmRowSource {
  void (*fill)(const void* context, int row, int k0, int count, float* dst, int stride);
  const void* context;
};

// A plain row-major A with leading dimension lda.
struct DenseRows {
  const float* a;
  int lda;
  GemmRowSource source() const;
};

// An A stored transposed, A[row][kk] = a[kk * lda + row] (a BATCH_MATMUL left operand with adj_x).
struct TransposedRows {
  const float* a;
  int lda;
  GemmRowSource source() const;
};

struct GemmEpilogue {
  const float* bias = nullptr;  // n entries, or null
  ActivationRange range;
};

// Floats needed by gemm_pack_b for an n x k matrix B.
size_t gemm_packed_b_size(int n, int k);
void gemm_pack_b(const float* b, int ldb, int n, int k, float* packed);
// The same packing of a B stored the other way round, b[kk * ldb + j] (a BATCH_MATMUL right operand
// without adj_y): each panel row is a contiguous run of the source.
void gemm_pack_b_k_major(const float* b, int ldb, int n, int k, float* packed);

// Rows of the micro-kernel's tile at `isa`'s width.
int gemm_rows_per_tile(VectorIsa isa);

// Floats of scratch gemm() needs per worker.
size_t gemm_scratch_per_worker();

// C (m x n, leading dimension ldc) from rows of A and a packed B. `scratch` holds
// worker_count(parallel) * gemm_scratch_per_worker() floats.
void gemm(GemmRowSource a, int m, int n, int k, const float* packed_b, float* c, int ldc,
          const GemmEpilogue& epilogue, float* scratch, Parallel* parallel);
// The same with the micro-kernel of `isa` (best_vector_isa() or one below it): 16 lanes with AVX-512, 8
// with AVX2 and baseline; AVX2 and AVX-512 give the same floats. For tests.
void gemm(VectorIsa isa, GemmRowSource a, int m, int n, int k, const float* packed_b, float* c, int ldc,
          const GemmEpilogue& epilogue, float* scratch, Parallel* parallel);

// Row-by-row dot products for tiny m (a fully connected layer with batch 1): reads B unpacked, which
// for a matrix-vector product is what bounds the speed anyway.
void gemv_rows(const float* a, int lda, int m, int n, int k, const float* b, int ldb, float* c, int ldc,
               const GemmEpilogue& epilogue, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_GEMM_H
