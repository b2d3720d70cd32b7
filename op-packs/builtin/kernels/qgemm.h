// The 8-bit matrix product behind quantized CONV_2D and FULLY_CONNECTED, and behind the int8-weight
// (dynamic-range) kernels:
//   acc[m][n] = sum_k (A[m][k] - a_zero[m]) * (B[n][k] - b_zero) + col_offset[n]
// exactly, in int32, then either requantized to 8-bit codes (TFLite's fixed-point output stage, per
// output channel) or scaled to float. A holds activations (uint8, or int8 seen as uint8 by flipping the
// top bit), B weights (uint8 with a zero point, or int8), both "k-contiguous" as TFLite stores them.
//
// How: B is packed once (prepare) as signed bytes (uint8 weights minus 128) in panels of kQGemmNR
// columns and groups of 4 consecutive k per column, the layout of the AVX-512 VNNI instruction vpdpbusd
// (unsigned x signed bytes, four products summed into each int32 lane, no saturation). A is packed per
// block of rows into panels of kQGemmMR rows with the same groups of 4. The raw sum of A x B_signed is
// corrected with the row sums of A, the column sums of B and the zero points, all exact. Three
// micro-kernels compute the raw sum: AVX-512 VNNI, AVX2 (bytes widened to int16, vpmaddwd) and plain C;
// the best the CPU has is chosen at run time, and all three give the same bits. The VNNI kernel takes two
// neighbouring B panels at once where there are two (an 8 x 32 tile): each broadcast of A's bytes then
// serves two products.
#ifndef BATON_BUILTIN_KERNELS_QGEMM_H
#define BATON_BUILTIN_KERNELS_QGEMM_H

#include <cstddef>
#include <cstdint>

#include "kernels/common.h"
#include "kernels/parallel.h"

namespace baton::builtin {

inline constexpr int kQGemmNR = 16;  // columns per packed B panel
inline constexpr int kQGemmMR = 8;   // rows per packed A panel
inline constexpr int kQGemmMC = 64;  // rows per block of A a task packs (a multiple of kQGemmMR)

enum class QuantIsa { kScalar = 0, kAvx2 = 1, kAvx512Vnni = 2 };

// The best instruction set this CPU runs (cached), and a name for messages.
QuantIsa best_quant_isa();
const char* quant_isa_name(QuantIsa isa);

// k rounded up to whole groups of 4, and n to whole panels.
inline int qgemm_k_padded(int k) { return (k + 3) & ~3; }
inline int qgemm_n_padded(int n) { return (n + kQGemmNR - 1) / kQGemmNR * kQGemmNR; }

// Bytes of the packed B of an n x k matrix.
size_t qgemm_packed_b_size(int n, int k);

// Packs B (n rows of k bytes, leading dimension ldb). `b_unsigned`: the bytes are uint8 codes, stored as
// code - 128; otherwise int8 codes, stored as they are. col_sums (n_padded entries, zero past n) gets
// the sum over k of each stored column.
void qgemm_pack_b(const uint8_t* b, int ldb, int n, int k, bool b_unsigned, int8_t* packed, int32_t* col_sums);

// Where the rows of A come from: `row` returns the k bytes of row r, either pointing into the source or
// after writing them to `scratch` (k bytes, e.g. for im2col).
struct QGemmRows {
  const uint8_t* (*row)(const void* context, int r, uint8_t* scratch);
  const void* context;
  bool a_signed = false;  // int8 codes: flipped to uint8 while packing
};

// The per-column part of the correction, computed in prepare for constant weights:
//   col_offset[n] = bias[n] - a_zero * col_sums[n] + k * a_zero * b_zero
// with a_zero in the uint8 domain (int8 zero point + 128) and b_zero in the stored signed domain (uint8
// zero point - 128, or the int8 zero point). n_padded entries, zero past n.
void qgemm_column_offsets(int n, int k, const int32_t* bias, const int32_t* col_sums, int32_t a_zero,
                          int32_t b_zero, int32_t* col_offset);

// 8-bit output: out[m][n] = clamp(requantize(acc) + zero_point, lo, hi), per-column multiplier and shift
// (n_padded entries each). acc uses one A zero point for every row (in col_offset) and b_zero.
struct QGemmRequantOutput {
  const int32_t* col_offset = nullptr;
  int32_t b_zero = 0;  // stored-domain zero point of B (its rows sums of A are subtracted times this)
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
  int32_t zero_point = 0, lo = 0, hi = 255;
  bool ties_upward = true;  // the final shift's ties: upward as TFLite's GEMM (ruy) does, or away from zero
  uint8_t* out = nullptr;  // int8 outputs are written as their two's-complement bytes
  int ldc = 0;
};

// Float output (dynamic-range kernels): acc uses a zero point per row (uint8 domain) and b_zero = 0;
//   out[m][n] = clamp(float(acc) * (row_scale[m] * col_scale[n]) + bias[n])
// col_scale and bias have n_padded entries (bias may be null), row_scale and row_zero m entries.
struct QGemmFloatOutput {
  const int32_t* col_sums = nullptr;
  const int32_t* row_zero = nullptr;
  const float* row_scale = nullptr;
  const float* col_scale = nullptr;
  const float* bias = nullptr;
  ActivationRange range;
  float* out = nullptr;
  int ldc = 0;
};

// The corrected sums themselves, in int32 (TRANSPOSE_CONV's products before it adds them up per output
// pixel): out[m][n] = acc, wrapping as TFLite's int32 accumulators do. acc uses one A zero point for
// every row (in col_offset) and b_zero, as the 8-bit output does.
struct QGemmInt32Output {
  const int32_t* col_offset = nullptr;
  int32_t b_zero = 0;
  int32_t* out = nullptr;
  int ldc = 0;
};

// Bytes of scratch one worker needs for a product of depth k.
size_t qgemm_scratch_per_worker(int k);

// `scratch` holds worker_count(parallel) * qgemm_scratch_per_worker(k) bytes, 64-byte aligned.
void qgemm(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const QGemmRequantOutput& out,
           uint8_t* scratch, Parallel* parallel);
void qgemm(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const QGemmFloatOutput& out,
           uint8_t* scratch, Parallel* parallel);
void qgemm(QuantIsa isa, QGemmRows a, int m, int n, int k, const int8_t* packed_b, const QGemmInt32Output& out,
           uint8_t* scratch, Parallel* parallel);

// Requantizes `count` int32 values with per-element (per-channel) multipliers and shifts, as the GEMM's
// output stage does; the SIMD forms are exposed so tests can hold them to the scalar rule.
void requantize_row(QuantIsa isa, const int32_t* acc, const int32_t* multiplier, const int32_t* shift,
                    int32_t zero_point, int32_t lo, int32_t hi, bool ties_upward, uint8_t* out, int count);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QGEMM_H
