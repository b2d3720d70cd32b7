// The GEMM against a naive triple loop (an independent reference) on sizes that cross every blocking
// boundary: m around kGemmMC and the tile's rows (6 and 12), n around kGemmNR, k around kGemmKC; serial
// and threaded.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/fully_connected.h"
#include "kernels/gemm.h"
#include "kernels/thread_pool.h"
#include "tests/test_util.h"

namespace baton::builtin::testing {
namespace {

std::vector<float> naive(const std::vector<float>& a, const std::vector<float>& b, const float* bias, int m, int n,
                         int k, ActivationRange range) {
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = bias ? bias[j] : 0.0;
      for (int kk = 0; kk < k; ++kk) sum += static_cast<double>(a[i * k + kk]) * b[j * k + kk];
      c[i * n + j] = std::min(std::max(static_cast<float>(sum), range.lo), range.hi);
    }
  }
  return c;
}

// C of the case, by the micro-kernel of `isa`.
std::vector<float> run_gemm(VectorIsa isa, int m, int n, int k, const std::vector<float>& a, const std::vector<float>& b,
                            const float* bias, ActivationRange range, Parallel* parallel) {
  std::vector<float> packed(gemm_packed_b_size(n, k));
  gemm_pack_b(b.data(), k, n, k, packed.data());
  std::vector<float> scratch(worker_count(parallel) * gemm_scratch_per_worker());
  std::vector<float> c(static_cast<size_t>(m) * n, -777.0f);
  const DenseRows rows{a.data(), k};
  gemm(isa, rows.source(), m, n, k, packed.data(), c.data(), n, GemmEpilogue{bias, range}, scratch.data(), parallel);
  return c;
}

void check_gemm(int m, int n, int k, Parallel* parallel, bool with_bias, ActivationRange range, unsigned seed) {
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
  const auto a = random_floats(static_cast<size_t>(m) * k, seed);
  const auto b = random_floats(static_cast<size_t>(n) * k, seed + 1);
  const auto bias = random_floats(n, seed + 2);
  std::vector<float> packed(gemm_packed_b_size(n, k));
  gemm_pack_b(b.data(), k, n, k, packed.data());
  std::vector<float> scratch(worker_count(parallel) * gemm_scratch_per_worker());
  std::vector<float> c(static_cast<size_t>(m) * n, -777.0f);
  const GemmEpilogue epilogue{with_bias ? bias.data() : nullptr, range};
  const DenseRows rows{a.data(), k};
  gemm(rows.source(), m, n, k, packed.data(), c.data(), n, epilogue, scratch.data(), parallel);
  expect_near_all(naive(a, b, with_bias ? bias.data() : nullptr, m, n, k, range), c);
}

TEST(Gemm, MatchesNaiveAcrossBlockBoundaries) {
  unsigned seed = 1;
  for (int m : {1, 5, 6, 7, 11, 12, 13, 71, 72, 73, 150}) {
    for (int n : {1, 15, 16, 17, 40}) {
      for (int k : {1, 3, 255, 256, 257, 600}) check_gemm(m, n, k, nullptr, true, {}, seed++);
    }
  }
}

// A dense A is read in place when a task crosses at most 12 panels (n <= 192 here) and packed otherwise:
// both sides of that line, and the two paths give the same floats (the same A given as a transposed
// source, which is always packed).
TEST(Gemm, DenseInPlaceAndPackedAgree) {
  unsigned seed = 500;
  for (int m : {5, 12, 13, 150}) {
    for (int n : {17, 192, 193, 250}) {
      for (int k : {7, 300}) {
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        check_gemm(m, n, k, nullptr, true, {-1.0f, 1.0f}, seed++);
        const auto a = random_floats(static_cast<size_t>(m) * k, seed++);
        const auto b = random_floats(static_cast<size_t>(n) * k, seed++);
        std::vector<float> at(a.size());
        for (int i = 0; i < m; ++i) {
          for (int kk = 0; kk < k; ++kk) at[static_cast<size_t>(kk) * m + i] = a[static_cast<size_t>(i) * k + kk];
        }
        std::vector<float> packed(gemm_packed_b_size(n, k));
        gemm_pack_b(b.data(), k, n, k, packed.data());
        std::vector<float> scratch(gemm_scratch_per_worker());
        std::vector<float> dense_c(static_cast<size_t>(m) * n), packed_c(dense_c.size());
        const DenseRows dense{a.data(), k};
        const TransposedRows transposed{at.data(), m};
        gemm(dense.source(), m, n, k, packed.data(), dense_c.data(), n, {}, scratch.data(), nullptr);
        gemm(transposed.source(), m, n, k, packed.data(), packed_c.data(), n, {}, scratch.data(), nullptr);
        EXPECT_EQ(dense_c, packed_c);
      }
    }
  }
}

TEST(Gemm, ClampsAndOmitsBias) {
  check_gemm(13, 33, 20, nullptr, false, {0.0f, 0.5f}, 99);
  check_gemm(80, 20, 300, nullptr, true, {-0.25f, 0.25f}, 100);
}

TEST(Gemm, ThreadedMatchesNaive) {
  ThreadPool pool(3);
  for (int m : {1, 7, 100, 300}) check_gemm(m, 50, 270, &pool, true, {0.0f, 6.0f}, 7 + m);
  for (int m : {1, 7, 100, 300}) check_gemm(m, 230, 270, &pool, true, {0.0f, 6.0f}, 17 + m);
}

// Few row blocks for the workers (a ViT's 196 patches, a 128-token sequence): the rows are cut into smaller
// blocks (and the columns too where that is still not enough). The floats are the one-thread product's.
TEST(Gemm, ThreadedRowBlocksGiveTheSerialFloats) {
  ThreadPool pool(2);
  unsigned seed = 900;
  for (int m : {30, 128, 196}) {
    for (int n : {64, 192}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
      const auto a = random_floats(static_cast<size_t>(m) * 300, seed++);
      const auto b = random_floats(static_cast<size_t>(n) * 300, seed++);
      const auto serial = run_gemm(best_vector_isa(), m, n, 300, a, b, nullptr, {}, nullptr);
      EXPECT_EQ(run_gemm(best_vector_isa(), m, n, 300, a, b, nullptr, {}, &pool), serial);
      expect_near_all(naive(a, b, nullptr, m, n, 300, {}), serial);
    }
  }
}

// Each micro-kernel width this CPU runs against the naive product; AVX2's 8 lanes and AVX-512's 16 to the
// same floats (each lane sums its column in the same order), across tile, panel and depth-block edges.
TEST(Gemm, EveryVectorWidthMatchesNaiveAndAvx2EqualsAvx512) {
  ThreadPool pool(2);
  unsigned seed = 300;
  for (int m : {1, 6, 7, 12, 13, 73}) {
    for (int n : {15, 16, 17, 40, 200}) {
      for (int k : {3, 257}) {
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const auto a = random_floats(static_cast<size_t>(m) * k, seed++);
        const auto b = random_floats(static_cast<size_t>(n) * k, seed++);
        const auto bias = random_floats(n, seed++);
        const ActivationRange range{-0.5f, 6.0f};
        const auto want = naive(a, b, bias.data(), m, n, k, range);
        std::vector<std::vector<float>> got;
        for (int isa = 0; isa <= static_cast<int>(best_vector_isa()); ++isa) {
          got.push_back(run_gemm(static_cast<VectorIsa>(isa), m, n, k, a, b, bias.data(), range, &pool));
          expect_near_all(want, got.back());
        }
        if (got.size() == 3) {
          EXPECT_EQ(got[1], got[2]) << "AVX2 and AVX-512 differ";
        }
      }
    }
  }
  if (best_vector_isa() != VectorIsa::kAvx512) GTEST_SKIP() << "no AVX-512 here: only the widths below it were run";
}

TEST(FullyConnected, GemvAndGemmPathsMatchNaive) {
  for (int batch : {1, 3, 4, 9}) {
    FullyConnectedParams p;
    p.batch = batch;
    p.depth = 37;
    p.units = 21;
    const auto in = random_floats(static_cast<size_t>(batch) * p.depth, 5);
    const auto w = random_floats(static_cast<size_t>(p.units) * p.depth, 6);
    const auto bias = random_floats(p.units, 7);
    std::vector<float> packed(fully_connected_packed_weights_size(p));
    fully_connected_pack_weights(p, w.data(), packed.data());
    std::vector<float> scratch(fully_connected_scratch_size(p, 1) + 1);
    std::vector<float> out(static_cast<size_t>(batch) * p.units);
    fully_connected(p, in.data(), w.data(), packed.data(), bias.data(), out.data(), scratch.data(), nullptr);
    expect_near_all(naive(in, w, bias.data(), batch, p.units, p.depth, {}), out);
  }
}

}  // namespace
}  // namespace baton::builtin::testing
