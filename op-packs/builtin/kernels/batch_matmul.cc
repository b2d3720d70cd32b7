#include "kernels/batch_matmul.h"

#include <algorithm>
#include <cstddef>
#include <limits>

#include "kernels/gemm.h"
#include "kernels/qgemm.h"

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

// One int16 product: int64 sums, the 64-bit multiply of TFLite's reference kernel.
void matmul_one_int16(const BatchMatMulParams& p, const QBatchMatMulParams& q, const int16_t* lhs, const int16_t* rhs,
                      int16_t* out) {
  constexpr int32_t lo = std::numeric_limits<int16_t>::min(), hi = std::numeric_limits<int16_t>::max();
  const size_t m = p.m, k = p.k, n = p.n;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      int64_t total = 0;
      for (size_t kk = 0; kk < k; ++kk) {
        const int64_t l = static_cast<int64_t>(p.adj_x ? lhs[kk * m + i] : lhs[i * k + kk]) - q.lhs_zero;
        const int64_t r = static_cast<int64_t>(p.adj_y ? rhs[j * k + kk] : rhs[kk * n + j]) - q.rhs_zero;
        total += l * r;
      }
      const int32_t v = multiply_by_quantized_multiplier_64(total, q.m);
      out[i * n + j] = static_cast<int16_t>(std::clamp(v + q.out_zero, lo, hi));
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

void batch_matmul_int16(const BatchMatMulParams& p, const QBatchMatMulParams& q, const int16_t* lhs,
                        const int16_t* rhs, int16_t* out) {
  if (empty_output(p)) return;
  for_each_batch(p, [&](int64_t lo, int64_t ro, size_t oo) { matmul_one_int16(p, q, lhs + lo, rhs + ro, out + oo); });
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

namespace {

size_t align64(size_t n) { return (n + 63) & ~size_t{63}; }

// The left operand's rows: row r of an [m, k] lhs, or column r of a [k, m] one (adj_x) gathered.
struct LhsRows {
  const int8_t* lhs;
  int m, k;
  bool transposed;
  static const uint8_t* row(const void* context, int r, uint8_t* scratch) {
    const auto* self = static_cast<const LhsRows*>(context);
    if (!self->transposed) return reinterpret_cast<const uint8_t*>(self->lhs + static_cast<size_t>(r) * self->k);
    for (int kk = 0; kk < self->k; ++kk) scratch[kk] = static_cast<uint8_t>(self->lhs[static_cast<size_t>(kk) * self->m + r]);
    return scratch;
  }
};

}  // namespace

void batch_matmul_int8_columns(const BatchMatMulParams& p, const QBatchMatMulParams& q, QBatchMatMulColumns& c) {
  c.multiplier.assign(qgemm_n_padded(p.n), q.m.multiplier);
  c.shift.assign(qgemm_n_padded(p.n), q.m.shift);
}

// One worker's room for a batch: the packed right operand, its column sums and offsets, and the right
// operand turned into rows (without adj_y). The GEMM's scratch for every worker follows all of them.
size_t int8_batch_room(const BatchMatMulParams& p) {
  const size_t np = qgemm_n_padded(p.n);
  return align64(qgemm_packed_b_size(p.n, p.k)) + 2 * align64(np * sizeof(int32_t)) +
         align64(static_cast<size_t>(p.n) * p.k);
}

size_t batch_matmul_int8_scratch(const BatchMatMulParams& p, int workers) {
  return static_cast<size_t>(workers) * (int8_batch_room(p) + qgemm_scratch_per_worker(p.k));
}

void batch_matmul_int8(const BatchMatMulParams& p, const QBatchMatMulParams& q, const QBatchMatMulColumns& c,
                       const int8_t* lhs, const int8_t* rhs, int8_t* out, uint8_t* scratch, Parallel* parallel) {
  if (empty_output(p)) return;
  const size_t np = qgemm_n_padded(p.n);
  const QuantIsa isa = best_quant_isa();
  const int32_t a_zero = q.lhs_zero + 128;  // the int8 lhs is read as uint8 (top bit flipped)
  const int workers = worker_count(parallel);
  uint8_t* gemm_scratch = scratch + static_cast<size_t>(workers) * int8_batch_room(p);
  // One batch in worker `room`'s memory, its product split across `inner`'s workers.
  auto one = [&](int64_t lo, int64_t ro, size_t oo, int room, Parallel* inner) {
    uint8_t* at = scratch + static_cast<size_t>(room) * int8_batch_room(p);
    auto* packed = reinterpret_cast<int8_t*>(at);
    at += align64(qgemm_packed_b_size(p.n, p.k));
    auto* col_sums = reinterpret_cast<int32_t*>(at);
    at += align64(np * sizeof(int32_t));
    auto* col_offset = reinterpret_cast<int32_t*>(at);
    at += align64(np * sizeof(int32_t));
    const auto* r = reinterpret_cast<const uint8_t*>(rhs + ro);
    if (!p.adj_y) {
      for (int kk = 0; kk < p.k; ++kk) {
        for (int j = 0; j < p.n; ++j) at[static_cast<size_t>(j) * p.k + kk] = r[static_cast<size_t>(kk) * p.n + j];
      }
      r = at;
    }
    qgemm_pack_b(r, p.k, p.n, p.k, false, packed, col_sums);
    qgemm_column_offsets(p.n, p.k, nullptr, col_sums, a_zero, q.rhs_zero, col_offset);
    QGemmRequantOutput o;
    o.col_offset = col_offset;
    o.b_zero = q.rhs_zero;
    o.multiplier = c.multiplier.data();
    o.shift = c.shift.data();
    o.zero_point = q.out_zero;
    o.lo = -128;
    o.hi = 127;
    o.ties_upward = true;
    o.out = reinterpret_cast<uint8_t*>(out + oo);
    o.ldc = p.n;
    const LhsRows rows{lhs + lo, p.m, p.k, p.adj_x};
    qgemm(isa, QGemmRows{LhsRows::row, &rows, true}, p.m, p.n, p.k, packed, o,
          gemm_scratch + static_cast<size_t>(room) * qgemm_scratch_per_worker(p.k), inner);
  };
  const int64_t batches = batch_count(p);
  if (workers > 1 && batches >= workers) {
    // As many batches as workers or more (attention's heads): each worker multiplies whole batches.
    parallel_run(parallel, static_cast<int>(batches), [&](int b, int worker) {
      const BatchOffsets at = batch_offsets(p, b);
      one(at.lhs, at.rhs, at.out, worker, nullptr);
    });
    return;
  }
  for_each_batch(p, [&](int64_t lo, int64_t ro, size_t oo) { one(lo, ro, oo, 0, parallel); });
}

}  // namespace baton::builtin
