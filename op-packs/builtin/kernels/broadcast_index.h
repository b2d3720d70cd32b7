// Element-by-element loops over any element type with numpy broadcasting of up to three inputs (the
// comparisons, logical ops, SELECT_V2, FLOOR_DIV, FLOOR_MOD, POW, BROADCAST_TO). The plan is made once
// in prepare: shapes aligned on the right, size-1 output dimensions dropped, neighbours that every input
// walks contiguously merged; invoke walks the output with an odometer and hands each element's input
// offsets to a small functor that the compiler inlines.
#ifndef BATON_BUILTIN_KERNELS_BROADCAST_INDEX_H
#define BATON_BUILTIN_KERNELS_BROADCAST_INDEX_H

#include <cstdint>
#include <span>

namespace baton::builtin {

inline constexpr int kMaxIndexRank = 8;
inline constexpr int kMaxIndexInputs = 3;

struct IndexPlan {
  int rank = 0;  // merged dimensions; at least 1
  int inputs = 0;
  int64_t dims[kMaxIndexRank] = {};
  int64_t strides[kMaxIndexInputs][kMaxIndexRank] = {};  // 0 along a broadcast dimension
  int64_t count = 0;                                       // output elements
};

// `out` is the broadcast shape of `ins` (checked by the caller); every rank <= kMaxIndexRank.
inline IndexPlan plan_index(std::span<const int32_t> out, std::span<const std::span<const int32_t>> ins) {
  IndexPlan p;
  p.inputs = static_cast<int>(ins.size());
  const int rank = static_cast<int>(out.size());
  p.count = 1;
  for (int32_t d : out) p.count *= d;
  // Row-major strides of each input in the output's frame, 0 where it is broadcast.
  int64_t full[kMaxIndexInputs][kMaxIndexRank] = {};
  for (int k = 0; k < p.inputs; ++k) {
    const auto in = ins[k];
    const int offset = rank - static_cast<int>(in.size());
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t size = d < offset ? 1 : in[d - offset];
      full[k][d] = size == 1 ? 0 : stride;
      stride *= size;
    }
  }
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    bool merge = p.rank > 0;
    for (int k = 0; k < p.inputs && merge; ++k) {
      merge = p.strides[k][p.rank - 1] == full[k][d] * out[d];
    }
    if (merge) {
      p.dims[p.rank - 1] *= out[d];
      for (int k = 0; k < p.inputs; ++k) p.strides[k][p.rank - 1] = full[k][d];
      continue;
    }
    p.dims[p.rank] = out[d];
    for (int k = 0; k < p.inputs; ++k) p.strides[k][p.rank] = full[k][d];
    ++p.rank;
  }
  if (p.rank == 0) {  // a scalar (or all ones): one element
    p.rank = 1;
    p.dims[0] = 1;
  }
  return p;
}

namespace detail {

// The inner run with each input's step fixed at compile time (0: broadcast, 1: contiguous), so the
// loop vectorises; `Any` marks a step only known at run time.
inline constexpr int kAnyStep = -1;

template <int S0, int S1, int S2, typename F>
inline void index_run(int64_t o, const int64_t* off, int64_t n, int64_t s0, int64_t s1, int64_t s2, F& f) {
  const int64_t t0 = S0 == kAnyStep ? s0 : S0, t1 = S1 == kAnyStep ? s1 : S1, t2 = S2 == kAnyStep ? s2 : S2;
  const int64_t a = off[0], b = off[1], c = off[2];
  for (int64_t i = 0; i < n; ++i) f(o + i, a + i * t0, b + i * t1, c + i * t2);
}

}  // namespace detail

// Calls f(output offset, input offsets[3], run length, input steps[3]) once per inner run, for kernels
// that write their own inner loop (typed, restrict-qualified, vectorised).
template <typename F>
void for_each_run(const IndexPlan& p, F&& f) {
  if (p.count == 0) return;
  const int last = p.rank - 1;
  const int64_t n = p.dims[last];
  const int64_t steps[kMaxIndexInputs] = {p.strides[0][last], p.strides[1][last], p.strides[2][last]};
  int64_t index[kMaxIndexRank] = {};
  int64_t off[kMaxIndexInputs] = {};
  for (int64_t o = 0; o < p.count; o += n) {
    f(o, static_cast<const int64_t*>(off), n, static_cast<const int64_t*>(steps));
    for (int d = last - 1; d >= 0; --d) {
      for (int k = 0; k < p.inputs; ++k) off[k] += p.strides[k][d];
      if (++index[d] < p.dims[d]) break;
      for (int k = 0; k < p.inputs; ++k) off[k] -= p.strides[k][d] * p.dims[d];
      index[d] = 0;
    }
  }
}

// Calls f(output offset, offset in input 0, in input 1, in input 2) for every output element in order.
template <typename F>
void for_each_index(const IndexPlan& p, F&& f) {
  if (p.count == 0) return;
  const int last = p.rank - 1;
  const int64_t s0 = p.strides[0][last], s1 = p.strides[1][last], s2 = p.strides[2][last];
  using detail::index_run;
  using detail::kAnyStep;
  // The common inner runs: every step 0 or 1 (an unused input's step is 0).
  void (*run)(int64_t, const int64_t*, int64_t, int64_t, int64_t, int64_t, F&) = index_run<kAnyStep, kAnyStep, kAnyStep, F>;
  if ((s0 == 0 || s0 == 1) && (s1 == 0 || s1 == 1) && (s2 == 0 || s2 == 1)) {
    const int key = static_cast<int>(s0 * 4 + s1 * 2 + s2);
    switch (key) {
      case 0: run = index_run<0, 0, 0, F>; break;
      case 1: run = index_run<0, 0, 1, F>; break;
      case 2: run = index_run<0, 1, 0, F>; break;
      case 3: run = index_run<0, 1, 1, F>; break;
      case 4: run = index_run<1, 0, 0, F>; break;
      case 5: run = index_run<1, 0, 1, F>; break;
      case 6: run = index_run<1, 1, 0, F>; break;
      default: run = index_run<1, 1, 1, F>; break;
    }
  }
  for_each_run(p, [&](int64_t o, const int64_t* off, int64_t len, const int64_t*) { run(o, off, len, s0, s1, s2, f); });
}

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_BROADCAST_INDEX_H
