#include "kernels/batch_matmul.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "kernels/gemm.h"

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

template <typename T, typename Acc>
void matmul_one_quantized(const BatchMatMulParams& p, const QBatchMatMulParams& q, const T* lhs, const T* rhs, T* out) {
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const size_t m = p.m, k = p.k, n = p.n;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      Acc total = 0;
      for (size_t kk = 0; kk < k; ++kk) {
        const Acc l = static_cast<Acc>(p.adj_x ? lhs[kk * m + i] : lhs[i * k + kk]) - q.lhs_zero;
        const Acc r = static_cast<Acc>(p.adj_y ? rhs[j * k + kk] : rhs[kk * n + j]) - q.rhs_zero;
        total += l * r;
      }
      int32_t v;
      if constexpr (sizeof(Acc) == 8) {
        v = multiply_by_quantized_multiplier_64(total, q.m);
      } else {
        v = multiply_by_quantized_multiplier(total, q.m, /*ties_upward=*/true);
      }
      out[i * n + j] = static_cast<T>(std::clamp(v + q.out_zero, lo, hi));
    }
  }
}

struct BatchOffsets {
  int64_t lhs, rhs;
  size_t out;
};

// Where output batch `b` reads its operands (broadcast batches read the same one) and writes.
BatchOffsets batch_offsets(const BatchMatMulParams& p, int64_t b) {
  int64_t rest = b, lhs_offset = 0, rhs_offset = 0;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    const int64_t idx = rest % p.out_batch[d];
    rest /= p.out_batch[d];
    lhs_offset += idx * p.lhs_batch_stride[d];
    rhs_offset += idx * p.rhs_batch_stride[d];
  }
  return {lhs_offset, rhs_offset, static_cast<size_t>(b) * p.m * p.n};
}

int64_t batch_count(const BatchMatMulParams& p) {
  int64_t batches = 1;
  for (int d = 0; d < p.batch_rank; ++d) batches *= p.out_batch[d];
  return batches;
}

// No output element: nothing to compute, however many batches the broadcast makes (a fuzzed model had
// four million empty products).
bool empty_output(const BatchMatMulParams& p) { return p.m == 0 || p.n == 0 || batch_count(p) == 0; }

// Calls one(lhs offset, rhs offset, output offset) for each broadcast batch.
template <typename F>
void for_each_batch(const BatchMatMulParams& p, F one) {
  const int64_t batches = batch_count(p);
  for (int64_t b = 0; b < batches; ++b) {
    const BatchOffsets at = batch_offsets(p, b);
    one(at.lhs, at.rhs, at.out);
  }
}

}  // namespace

void batch_matmul_quantized(const BatchMatMulParams& p, const QBatchMatMulParams& q, const void* lhs, const void* rhs,
                            void* out) {
  if (empty_output(p)) return;
  if (q.int16) {
    const auto* l = static_cast<const int16_t*>(lhs);
    const auto* r = static_cast<const int16_t*>(rhs);
    auto* o = static_cast<int16_t*>(out);
    for_each_batch(p, [&](int64_t lo, int64_t ro, size_t oo) { matmul_one_quantized<int16_t, int64_t>(p, q, l + lo, r + ro, o + oo); });
  } else {
    const auto* l = static_cast<const int8_t*>(lhs);
    const auto* r = static_cast<const int8_t*>(rhs);
    auto* o = static_cast<int8_t*>(out);
    for_each_batch(p, [&](int64_t lo, int64_t ro, size_t oo) { matmul_one_quantized<int8_t, int32_t>(p, q, l + lo, r + ro, o + oo); });
  }
}

namespace {

bool uses_gemm(const BatchMatMulParams& p) { return p.m >= 4 && p.n >= 8 && p.k >= 1; }

// Each worker may multiply a batch of its own (see batch_matmul): a packed right operand and GEMM blocks.
size_t scratch_per_worker(const BatchMatMulParams& p) { return gemm_packed_b_size(p.n, p.k) + gemm_scratch_per_worker(); }

}  // namespace

size_t batch_matmul_scratch_size(const BatchMatMulParams& p, int workers) {
  return uses_gemm(p) ? static_cast<size_t>(workers) * scratch_per_worker(p) : 0;
}

void batch_matmul(const BatchMatMulParams& p, const float* lhs, const float* rhs, float* out, float* scratch,
                  Parallel* parallel) {
  if (empty_output(p)) return;
  if (!uses_gemm(p)) {
    for_each_batch(p, [&](int64_t lo, int64_t ro, size_t oo) { matmul_one(p, lhs + lo, rhs + ro, out + oo); });
    return;
  }
  const GemmEpilogue none;
  // One batch: the right operand packed as the GEMM's B (n x k; stored [n, k] with adj_y, [k, n] without),
  // then the product, split across `inner`'s workers.
  auto one = [&](int64_t lo, int64_t ro, size_t oo, float* own, Parallel* inner) {
    float* packed = own;
    float* blocks = own + gemm_packed_b_size(p.n, p.k);
    if (p.adj_y) {
      gemm_pack_b(rhs + ro, p.k, p.n, p.k, packed);
    } else {
      gemm_pack_b_k_major(rhs + ro, p.n, p.n, p.k, packed);
    }
    const DenseRows dense{lhs + lo, p.k};
    const TransposedRows transposed{lhs + lo, p.m};
    gemm(p.adj_x ? transposed.source() : dense.source(), p.m, p.n, p.k, packed, out + oo, p.n, none, blocks, inner);
  };
  const int64_t batches = batch_count(p);
  const int workers = worker_count(parallel);
  if (workers > 1 && batches >= workers) {
    // As many batches as workers or more (attention's heads): each worker multiplies whole batches,
    // packing included, with no hand-over inside a product.
    parallel_run(parallel, static_cast<int>(batches), [&](int b, int worker) {
      const auto [lo, ro, oo] = batch_offsets(p, b);
      one(lo, ro, oo, scratch + static_cast<size_t>(worker) * scratch_per_worker(p), nullptr);
    });
    return;
  }
  for_each_batch(p, [&](int64_t lo, int64_t ro, size_t oo) { one(lo, ro, oo, scratch, parallel); });
}

}  // namespace baton::builtin
