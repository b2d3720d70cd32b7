// BATCH_MATMUL: out[..., m, n] = sum_k lhs[..., m, k] * rhs[..., k, n], with numpy broadcasting of the
// batch dimensions and optional transposition (adj_x, adj_y) of either operand.
#ifndef BATON_BUILTIN_KERNELS_BATCH_MATMUL_H
#define BATON_BUILTIN_KERNELS_BATCH_MATMUL_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/quant_math.h"

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

// Float: each batch's right operand packed into `scratch` and multiplied by the GEMM of
// FULLY_CONNECTED, split across `parallel`'s workers; tiny products (fewer than 4 rows or 8 columns) by
// plain loops. `scratch` holds batch_matmul_scratch_size(p, workers) floats, 64-byte aligned.
size_t batch_matmul_scratch_size(const BatchMatMulParams& p, int workers);
void batch_matmul(const BatchMatMulParams& p, const float* lhs, const float* rhs, float* out, float* scratch,
                  Parallel* parallel);

// The quantization of an 8-bit or int16 BATCH_MATMUL: codes minus zero points, products summed, rescaled
// by lhs_scale * rhs_scale / out_scale, plus the output zero point, clamped to the type.
struct QBatchMatMulParams {
  bool int16 = false;
  int32_t lhs_zero = 0, rhs_zero = 0, out_zero = 0;
  QuantizedMultiplier m;
};

// int16 (16x8-style, zero points 0) as TFLite 2.9 computes it: int64 sums and the int64 multiply of its
// reference kernel.
void batch_matmul_int16(const BatchMatMulParams& p, const QBatchMatMulParams& q, const int16_t* lhs,
                        const int16_t* rhs, int16_t* out);

// int8 as TFLite 2.9's x86 build computes it (int32 sums, ruy's upward rounding of ties), by the 8-bit
// matrix product of CONV_2D (qgemm: VNNI, AVX2 or plain C, the same bits on each): each batch's right operand packed (transposed first without adj_y), then multiplied and
// requantized, the product split across `parallel`'s workers. The multiplier and shift per column are
// q.m's, made once (batch_matmul_int8_columns). `scratch` holds batch_matmul_int8_scratch(p, workers)
// bytes, 64-byte aligned.
struct QBatchMatMulColumns {
  std::vector<int32_t> multiplier, shift;  // n, padded to whole panels
};
void batch_matmul_int8_columns(const BatchMatMulParams& p, const QBatchMatMulParams& q, QBatchMatMulColumns& c);
size_t batch_matmul_int8_scratch(const BatchMatMulParams& p, int workers);
void batch_matmul_int8(const BatchMatMulParams& p, const QBatchMatMulParams& q, const QBatchMatMulColumns& c,
                       const int8_t* lhs, const int8_t* rhs, int8_t* out, uint8_t* scratch, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_BATCH_MATMUL_H
