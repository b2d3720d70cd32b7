// The matrix product's body (see kernels.h), for kernels.cc to instantiate per instruction set.
#ifndef BATON_CPU_KERNELS_GEMM_H
#define BATON_CPU_KERNELS_GEMM_H

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels_vector.h"

namespace baton::cpu::detail {

// ---- matrix product -------------------------------------------------------------------------------

// One MR x (NV vectors) tile of C over the whole depth k; `rows` and `cols` say how much of it is real (the
// rest is computed from repeated rows and zero columns, and not stored).
// The panel's rows are `panel_stride` floats apart (its packed width, which may be wider than the tile:
// a narrow tile runs the first columns of a panel whose others are zero). FULL (rows == MR, cols == the
// tile's width) is a copy of its own: with the partial tile's stores in the same body, GCC kept the
// accumulators on the stack for both, eight stores and loads more per tile (hand_landmark_lite's
// expansions of 16 channels, k = 16: 80 -> 107 GFLOP/s; hand_landmark_lite at one thread 3.33 -> 3.07 ms).
template <class V, int MR, int NV, bool FULL>
BATON_INLINE void gemm_tile(int k, const float* a, int lda, const float* panel, int panel_stride, const float* bias,
                            Clamp clamp_to, float* c, int ldc, int rows, int cols) {
  constexpr int L = lanes<V>, NR = L * NV;
  V acc[MR][NV];
  const float* ap[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    ap[i] = a + static_cast<ptrdiff_t>(std::min(i, rows - 1)) * lda;
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = load<V>(bias + L * j);
  }
  for (int p = 0; p < k; ++p) {
    V b[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) b[j] = load<V>(panel + static_cast<ptrdiff_t>(p) * panel_stride + L * j);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const float x = ap[i][p];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] += x * b[j];
    }
  }
  if constexpr (FULL) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) store(c + static_cast<ptrdiff_t>(i) * ldc + L * j, clamp(acc[i][j], clamp_to));
    }
    return;
  }
  for (int i = 0; i < rows; ++i) {
    float tile[NR];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) store(tile + L * j, clamp(acc[i][j], clamp_to));
    std::memcpy(c + static_cast<ptrdiff_t>(i) * ldc, tile, static_cast<size_t>(cols) * sizeof(float));
  }
}

// Panel by panel (a panel of B, k x NR, stays in L1 while every row tile of A passes it). A last panel
// of at most NR / 2 real columns (24, 40 or 56 output channels; 8) runs a tile of half the width, VH x
// MRH: the full tile would spend half its multiply-adds on zero columns there.
template <class V, int MR, int NV, class VH, int MRH>
BATON_INLINE void gemm_impl(int m, int n, int k, const float* a, int lda, const float* packed_b, const float* bias,
                            Clamp clamp_to, float* c, int ldc) {
  constexpr int L = lanes<V>, NR = L * NV;
  static_assert((NR / 2) % lanes<VH> == 0, "the half tile's columns are whole vectors");
  for (int n0 = 0; n0 < n; n0 += NR) {
    const float* panel = packed_b + static_cast<ptrdiff_t>(n0 / NR) * k * NR;
    const int cols = std::min(NR, n - n0);
    if (cols <= NR / 2) {
      constexpr int NVH = NR / 2 / lanes<VH>;
      int m0 = 0;
      if (cols == NR / 2) {
        for (; m0 + MRH <= m; m0 += MRH) {
          gemm_tile<VH, MRH, NVH, true>(k, a + static_cast<ptrdiff_t>(m0) * lda, lda, panel, NR, bias + n0, clamp_to,
                                        c + static_cast<ptrdiff_t>(m0) * ldc + n0, ldc, MRH, NR / 2);
        }
      }
      for (; m0 < m; m0 += MRH) {
        gemm_tile<VH, MRH, NVH, false>(k, a + static_cast<ptrdiff_t>(m0) * lda, lda, panel, NR, bias + n0, clamp_to,
                                       c + static_cast<ptrdiff_t>(m0) * ldc + n0, ldc, std::min(MRH, m - m0), cols);
      }
      continue;
    }
    int m0 = 0;
    if (cols == NR) {
      for (; m0 + MR <= m; m0 += MR) {
        gemm_tile<V, MR, NV, true>(k, a + static_cast<ptrdiff_t>(m0) * lda, lda, panel, NR, bias + n0, clamp_to,
                                   c + static_cast<ptrdiff_t>(m0) * ldc + n0, ldc, MR, NR);
      }
    }
    for (; m0 < m; m0 += MR) {
      gemm_tile<V, MR, NV, false>(k, a + static_cast<ptrdiff_t>(m0) * lda, lda, panel, NR, bias + n0, clamp_to,
                                  c + static_cast<ptrdiff_t>(m0) * ldc + n0, ldc, std::min(MR, m - m0), cols);
    }
  }
}

}  // namespace baton::cpu::detail

#endif  // BATON_CPU_KERNELS_GEMM_H
