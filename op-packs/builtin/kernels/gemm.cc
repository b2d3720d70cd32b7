#include "kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/simd.h"
#include "kernels/vector_math.h"

namespace baton::builtin {
namespace {

// Rows of the tile at W lanes: twelve accumulators either way (12 x one 16-lane vector, 6 x two 8-lane).
template <int W>
inline constexpr int kTileRows = W == 16 ? 12 : 6;
static_assert(kGemmNR == 16 && kGemmMC % kTileRows<16> == 0 && kGemmMC % kTileRows<8> == 0);

void fill_dense(const void* context, int row, int k0, int count, float* dst, int stride) {
  const auto* d = static_cast<const DenseRows*>(context);
  const float* src = d->a + static_cast<size_t>(row) * d->lda + k0;
  for (int i = 0; i < count; ++i) dst[static_cast<size_t>(i) * stride] = src[i];
}

void fill_transposed(const void* context, int row, int k0, int count, float* dst, int stride) {
  const auto* d = static_cast<const TransposedRows*>(context);
  const float* src = d->a + static_cast<size_t>(k0) * d->lda + row;
  for (int i = 0; i < count; ++i) dst[static_cast<size_t>(i) * stride] = src[static_cast<size_t>(i) * d->lda];
}

// The most panels (of kGemmNR columns) a task reads a dense A in place for (see gemm_with).
constexpr int kDirectMaxPanels = 12;

struct BlockArgs {
  int kc;
  int m_rows;  // valid rows in this A block
  const float* packed_a;
  // A read in place instead (a dense A): this block's first row at this depth block's first column, rows
  // lda apart; null when A is packed.
  const float* direct_a = nullptr;
  int lda = 0;
  const float* packed_b;  // this depth block
  int panel_begin, panel_end;
  int n;
  float* c;  // row 0 of this A block
  int ldc;
  bool first, last;
  const float* bias;
  ActivationRange range;
};

// Stores one accumulator tile: adds what C holds unless this is the first depth block, adds the bias
// and clamps after the last one.
template <int MR>
BATON_INLINE void store_tile(const BlockArgs& args, const float (&tile)[MR][kGemmNR], int row0,
                             int col0, int rows, int cols) {
  for (int i = 0; i < rows; ++i) {
    float* out = args.c + static_cast<size_t>(row0 + i) * args.ldc + col0;
    for (int j = 0; j < cols; ++j) {
      float v = tile[i][j];
      if (!args.first) v += out[j];
      if (args.last) {
        if (args.bias) v += args.bias[col0 + j];
        v = clamp_activation(v, args.range);
      }
      out[j] = v;
    }
  }
}

// The micro-kernel at W float lanes: an MR x kGemmNR tile in MR x (kGemmNR / W) vectors (6 rows of two
// 8-lane vectors with AVX2, 12 rows of one 16-lane vector with AVX-512). Every lane sums its column over k
// in the same order at either width, so the two give the same floats.
template <int W>
BATON_INLINE void compute_block_impl(const BlockArgs& args) {
  constexpr int MR = kTileRows<W>;
  using V = typename Lanes<W>::F;
  constexpr int kVecs = kGemmNR / W;
  static_assert(kGemmNR % W == 0);
  const int m_panels = (args.m_rows + MR - 1) / MR;
  for (int p = args.panel_begin; p < args.panel_end; ++p) {
    const float* b_panel = args.packed_b + static_cast<size_t>(p) * args.kc * kGemmNR;
    const int col0 = p * kGemmNR;
    const int cols = std::min(kGemmNR, args.n - col0);
    for (int mp = 0; mp < m_panels; ++mp) {
      const int row0 = mp * MR;
      const int rows = std::min(MR, args.m_rows - row0);
      V acc[MR][kVecs] = {};
      // acc[i] += A[i][kk] * B[kk] over the depth block, kk in order, A[i][kk] given by a_at(i, kk).
      auto accumulate = [&](auto a_at) BATON_LAMBDA {
        const float* b = b_panel;
#pragma GCC unroll 4
        for (int kk = 0; kk < args.kc; ++kk) {
          V bv[kVecs];
          std::memcpy(bv, b, sizeof(bv));
#pragma GCC unroll 12
          for (int i = 0; i < MR; ++i) {
            const float av = a_at(i, kk);
#pragma GCC unroll 2
            for (int v = 0; v < kVecs; ++v) acc[i][v] += av * bv[v];
          }
          b += kGemmNR;
        }
      };
      if (args.direct_a) {
        // Rows past the block's end repeat its last row (computed, never stored).
        const float* a_rows[MR];
        for (int i = 0; i < MR; ++i) a_rows[i] = args.direct_a + static_cast<size_t>(row0 + std::min(i, rows - 1)) * args.lda;
        accumulate([&](int i, int kk) BATON_LAMBDA { return a_rows[i][kk]; });
      } else {
        const float* a = args.packed_a + static_cast<size_t>(mp) * args.kc * MR;
        accumulate([&](int i, int kk) BATON_LAMBDA { return a[kk * MR + i]; });
      }
      if (rows == MR && cols == kGemmNR) {
        // Whole tile: the common case, in vector registers.
        const V lo = V{} + args.range.lo, hi = V{} + args.range.hi;
#pragma GCC unroll 12
        for (int i = 0; i < MR; ++i) {
          float* out = args.c + static_cast<size_t>(row0 + i) * args.ldc + col0;
#pragma GCC unroll 2
          for (int v = 0; v < kVecs; ++v) {
            V x = acc[i][v];
            if (!args.first) {
              V o;
              std::memcpy(&o, out + v * W, sizeof(o));
              x += o;
            }
            if (args.last) {
              if (args.bias) {
                V bias;
                std::memcpy(&bias, args.bias + col0 + v * W, sizeof(bias));
                x += bias;
              }
              x = x < lo ? lo : x;
              x = x > hi ? hi : x;
            }
            std::memcpy(out + v * W, &x, sizeof(x));
          }
        }
      } else {
        float tile[MR][kGemmNR];
        std::memcpy(tile, acc, sizeof(tile));
        store_tile<MR>(args, tile, row0, col0, rows, cols);
      }
    }
  }
}

BATON_DISPATCH_WIDTHS(void, compute_block, (const BlockArgs& args), (args))

BATON_INLINE float dot_impl(const float* a, const float* b, int k) {
  Float8 acc0 = {}, acc1 = {};
  int i = 0;
  for (; i + 16 <= k; i += 16) {
    Float8 a0, a1, b0, b1;
    std::memcpy(&a0, a + i, sizeof(a0));
    std::memcpy(&a1, a + i + 8, sizeof(a1));
    std::memcpy(&b0, b + i, sizeof(b0));
    std::memcpy(&b1, b + i + 8, sizeof(b1));
    acc0 += a0 * b0;
    acc1 += a1 * b1;
  }
  acc0 += acc1;
  float sum = 0.0f;
  for (int j = 0; j < 8; ++j) sum += acc0[j];
  for (; i < k; ++i) sum += a[i] * b[i];
  return sum;
}

BATON_INLINE void gemv_block_impl(const float* a, int lda, int m, int n0, int n1, int k, const float* b,
                                  int ldb, float* c, int ldc, const GemmEpilogue* epilogue) {
  for (int r = 0; r < m; ++r) {
    const float* row = a + static_cast<size_t>(r) * lda;
    float* out = c + static_cast<size_t>(r) * ldc;
    for (int j = n0; j < n1; ++j) {
      float v = dot_impl(row, b + static_cast<size_t>(j) * ldb, k);
      if (epilogue->bias) v += epilogue->bias[j];
      out[j] = clamp_activation(v, epilogue->range);
    }
  }
}

BATON_DISPATCH_AVX2(void, gemv_block,
                    (const float* a, int lda, int m, int n0, int n1, int k, const float* b, int ldb,
                     float* c, int ldc, const GemmEpilogue* epilogue),
                    (a, lda, m, n0, n1, k, b, ldb, c, ldc, epilogue))

}  // namespace

GemmRowSource DenseRows::source() const { return {fill_dense, this}; }
GemmRowSource TransposedRows::source() const { return {fill_transposed, this}; }

size_t gemm_packed_b_size(int n, int k) {
  const size_t panels = (static_cast<size_t>(n) + kGemmNR - 1) / kGemmNR;
  return panels * kGemmNR * static_cast<size_t>(k);
}

namespace {

// B packed block of depth by block, panel of kGemmNR columns by panel: fill(panel, first column, columns
// (kGemmNR but in the last panel), k0, kc) writes the panel's kc rows of kGemmNR, zeros past the columns.
template <typename Fill>
void pack_panels(int n, int k, float* packed, Fill fill) {
  const int panels = (n + kGemmNR - 1) / kGemmNR;
  const size_t n_padded = static_cast<size_t>(panels) * kGemmNR;
  for (int k0 = 0; k0 < k; k0 += kGemmKC) {
    const int kc = std::min(kGemmKC, k - k0);
    float* block = packed + static_cast<size_t>(k0) * n_padded;
    for (int p = 0; p < panels; ++p) {
      const int j0 = p * kGemmNR;
      fill(block + static_cast<size_t>(p) * kc * kGemmNR, j0, std::min(kGemmNR, n - j0), k0, kc);
    }
  }
}

}  // namespace

void gemm_pack_b(const float* b, int ldb, int n, int k, float* packed) {
  pack_panels(n, k, packed, [&](float* panel, int j0, int width, int k0, int kc) {
    for (int j = 0; j < kGemmNR; ++j) {
      if (j < width) {
        const float* src = b + static_cast<size_t>(j0 + j) * ldb + k0;
        for (int kk = 0; kk < kc; ++kk) panel[kk * kGemmNR + j] = src[kk];
      } else {
        for (int kk = 0; kk < kc; ++kk) panel[kk * kGemmNR + j] = 0.0f;
      }
    }
  });
}

void gemm_pack_b_k_major(const float* b, int ldb, int n, int k, float* packed) {
  pack_panels(n, k, packed, [&](float* panel, int j0, int width, int k0, int kc) {
    for (int kk = 0; kk < kc; ++kk) {
      float* dst = panel + static_cast<size_t>(kk) * kGemmNR;
      std::memcpy(dst, b + static_cast<size_t>(k0 + kk) * ldb + j0, sizeof(float) * width);
      for (int j = width; j < kGemmNR; ++j) dst[j] = 0.0f;
    }
  });
}

int gemm_rows_per_tile(VectorIsa isa) {
#if defined(BATON_BUILTIN_HAS_AVX2_DISPATCH)
  if (isa == VectorIsa::kAvx512) return kTileRows<16>;
#endif
  (void)isa;
  return kTileRows<8>;
}

size_t gemm_scratch_per_worker() { return static_cast<size_t>(kGemmMC) * kGemmKC; }

namespace {

void gemm_with(void (*compute)(const BlockArgs&), int mr, GemmRowSource a, int m, int n, int k, const float* packed_b,
               float* c, int ldc, const GemmEpilogue& epilogue, float* scratch, Parallel* parallel) {
  if (m <= 0 || n <= 0) return;
  const int panels = (n + kGemmNR - 1) / kGemmNR;
  const size_t n_padded = static_cast<size_t>(panels) * kGemmNR;
  // Too few row blocks to keep every worker busy: smaller blocks first (down to two tiles), since each task
  // fills its own rows of A (an im2col gather for a convolution) and a split of the columns would fill
  // the same rows once per chunk; then split columns too if that is still not enough.
  const int workers = worker_count(parallel);
  int block_rows = kGemmMC;
  int m_blocks = (m + kGemmMC - 1) / kGemmMC;
  if (workers > 1 && m_blocks < 2 * workers) {
    const int want = (m + 4 * workers - 1) / (4 * workers);
    block_rows = std::min(kGemmMC, std::max(2 * mr, (want + mr - 1) / mr * mr));
    m_blocks = (m + block_rows - 1) / block_rows;
  }
  int n_chunks = 1;
  if (workers > 1 && m_blocks < 2 * workers) {
    n_chunks = std::min(panels, (2 * workers + m_blocks - 1) / m_blocks);
  }
  if (k <= 0) {
    // An empty sum: C is the bias, clamped.
    for (int r = 0; r < m; ++r) {
      for (int j = 0; j < n; ++j) {
        c[static_cast<size_t>(r) * ldc + j] = clamp_activation(epilogue.bias ? epilogue.bias[j] : 0.0f,
                                                               epilogue.range);
      }
    }
    return;
  }
  parallel_run(parallel, m_blocks * n_chunks, [&](int task, int worker) {
    const int mb = task / n_chunks;
    const int chunk = task % n_chunks;
    const int m0 = mb * block_rows;
    const int mc = std::min(block_rows, m - m0);
    const int m_panels = (mc + mr - 1) / mr;
    float* packed_a = scratch + static_cast<size_t>(worker) * gemm_scratch_per_worker();
    BlockArgs args;
    args.m_rows = mc;
    args.packed_a = packed_a;
    args.panel_begin = static_cast<int>(static_cast<int64_t>(panels) * chunk / n_chunks);
    args.panel_end = static_cast<int>(static_cast<int64_t>(panels) * (chunk + 1) / n_chunks);
    args.n = n;
    args.c = c + static_cast<size_t>(m0) * ldc;
    args.ldc = ldc;
    args.bias = epilogue.bias;
    args.range = epilogue.range;
    // A dense A is read where it is when this task crosses few panels: packing it costs more than it
    // saves there (128 x 64 x 128: 52 -> 72 GMAC/s), while across many panels the packed block's
    // contiguous rows win (196 x 768 x 192: 80 against 74).
    const DenseRows* dense = a.fill == fill_dense && args.panel_end - args.panel_begin <= kDirectMaxPanels
                                 ? static_cast<const DenseRows*>(a.context)
                                 : nullptr;
    for (int k0 = 0; k0 < k; k0 += kGemmKC) {
      const int kc = std::min(kGemmKC, k - k0);
      args.kc = kc;
      args.packed_b = packed_b + static_cast<size_t>(k0) * n_padded;
      args.first = k0 == 0;
      args.last = k0 + kc >= k;
      if (dense) {
        args.direct_a = dense->a + static_cast<size_t>(m0) * dense->lda + k0;
        args.lda = dense->lda;
        compute(args);
        continue;
      }
      for (int r = 0; r < mc; ++r) {
        a.fill(a.context, m0 + r, k0, kc, packed_a + static_cast<size_t>(r / mr) * kc * mr + r % mr, mr);
      }
      for (int r = mc; r < m_panels * mr; ++r) {
        float* dst = packed_a + static_cast<size_t>(r / mr) * kc * mr + r % mr;
        for (int kk = 0; kk < kc; ++kk) dst[kk * mr] = 0.0f;
      }
      compute(args);
    }
  });
}

}  // namespace

void gemm(GemmRowSource a, int m, int n, int k, const float* packed_b, float* c, int ldc,
          const GemmEpilogue& epilogue, float* scratch, Parallel* parallel) {
  static const auto kernel = compute_block_for(best_vector_isa());
  static const int mr = gemm_rows_per_tile(best_vector_isa());
  gemm_with(kernel, mr, a, m, n, k, packed_b, c, ldc, epilogue, scratch, parallel);
}

void gemm(VectorIsa isa, GemmRowSource a, int m, int n, int k, const float* packed_b, float* c, int ldc,
          const GemmEpilogue& epilogue, float* scratch, Parallel* parallel) {
  gemm_with(compute_block_for(isa), gemm_rows_per_tile(isa), a, m, n, k, packed_b, c, ldc, epilogue, scratch, parallel);
}

void gemv_rows(const float* a, int lda, int m, int n, int k, const float* b, int ldb, float* c, int ldc,
               const GemmEpilogue& epilogue, Parallel* parallel) {
  // Chunks of 64 output columns: enough work per task, small enough to spread.
  const int chunks = std::max(1, std::min((n + 63) / 64, 4 * worker_count(parallel)));
  parallel_run(parallel, chunks, [&](int task, int) {
    const int n0 = static_cast<int>(static_cast<int64_t>(n) * task / chunks);
    const int n1 = static_cast<int>(static_cast<int64_t>(n) * (task + 1) / chunks);
    gemv_block(a, lda, m, n0, n1, k, b, ldb, c, ldc, &epilogue);
  });
}

}  // namespace baton::builtin
