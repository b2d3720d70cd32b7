#include "kernels/binary.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/vector_math.h"

namespace baton::builtin {
namespace {

// Integer ADD, SUB and MUL wrap around on overflow (computed unsigned), as TFLite's kernels do in practice.
template <typename T, bool = std::is_integral_v<T>>
struct WrapType { using type = T; };
template <typename T>
struct WrapType<T, true> { using type = std::make_unsigned_t<T>; };
template <typename T>
using Wide = typename WrapType<T>::type;
// Each op's scalar function, and its tag for the vector loops (arith_run) that take float32 runs.
struct AddOp {
  static constexpr BinaryOp kTag = BinaryOp::kAdd;
  template <typename T> static T f(T x, T y) { return static_cast<T>(Wide<T>(x) + Wide<T>(y)); }
};
struct SubOp {
  static constexpr BinaryOp kTag = BinaryOp::kSub;
  template <typename T> static T f(T x, T y) { return static_cast<T>(Wide<T>(x) - Wide<T>(y)); }
};
struct MulOp {
  static constexpr BinaryOp kTag = BinaryOp::kMul;
  template <typename T> static T f(T x, T y) { return static_cast<T>(Wide<T>(x) * Wide<T>(y)); }
};
struct DivOp {
  static constexpr BinaryOp kTag = BinaryOp::kDiv;
  static float f(float x, float y) { return x / y; }
};
struct SquaredDifferenceOp {
  static constexpr BinaryOp kTag = BinaryOp::kSquaredDifference;
  static float f(float x, float y) { const float d = x - y; return d * d; }
};
struct MinimumOp {
  static constexpr BinaryOp kTag = BinaryOp::kMinimum;
  template <typename T> static T f(T x, T y) { return std::min(x, y); }
};
struct MaximumOp {
  static constexpr BinaryOp kTag = BinaryOp::kMaximum;
  template <typename T> static T f(T x, T y) { return std::max(x, y); }
};
struct PreluOp {
  static constexpr BinaryOp kTag = BinaryOp::kPrelu;
  static float f(float x, float alpha) { return x >= 0.0f ? x : x * alpha; }
};

// The inner run: a_step and b_step are 0 (scalar) or 1 (contiguous), fixed at compile time so each
// variant vectorises.
template <typename Op, int AStep, int BStep, typename T>
void run(const T* __restrict a, const T* __restrict b, T* __restrict out, int64_t n, ActivationRange range) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t i = 0; i < n; ++i) out[i] = clamp_activation(Op::f(a[i * AStep], b[i * BStep]), range);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = Op::f(a[i * AStep], b[i * BStep]);
  }
}

// Float runs W lanes at a time (a side of step 0 is one value for the whole run), then the tail element by
// element: each lane is the one float operation and clamp `run` does (MINIMUM and MAXIMUM as std::min and
// std::max choose, NaNs and signed zeros included), so the floats are the same whichever ISA runs it.
template <int W>
BATON_INLINE void arith_run_impl(BinaryOp op, int64_t as, int64_t bs, const float* a, const float* b, float* out,
                                 int64_t n, ActivationRange range) {
  using V = typename Lanes<W>::F;
  const V lo = splat<V>(range.lo), hi = splat<V>(range.hi);
  auto loop = [&](auto f) BATON_LAMBDA {
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      V x, y;
      if (as) std::memcpy(&x, a + i, sizeof(x)); else x = splat<V>(a[0]);
      if (bs) std::memcpy(&y, b + i, sizeof(y)); else y = splat<V>(b[0]);
      V v = f(x, y);
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      std::memcpy(out + i, &v, sizeof(v));
    }
    for (; i < n; ++i) out[i] = clamp_activation(f(a[i * as], b[i * bs]), range);
  };
  switch (op) {
    case BinaryOp::kAdd: return loop([](auto x, auto y) BATON_LAMBDA { return x + y; });
    case BinaryOp::kSub: return loop([](auto x, auto y) BATON_LAMBDA { return x - y; });
    case BinaryOp::kMul: return loop([](auto x, auto y) BATON_LAMBDA { return x * y; });
    case BinaryOp::kDiv: return loop([](auto x, auto y) BATON_LAMBDA { return x / y; });
    case BinaryOp::kSquaredDifference:
      return loop([](auto x, auto y) BATON_LAMBDA {
        const auto d = x - y;
        return d * d;
      });
    case BinaryOp::kMinimum: return loop([](auto x, auto y) BATON_LAMBDA { return y < x ? y : x; });
    case BinaryOp::kMaximum: return loop([](auto x, auto y) BATON_LAMBDA { return x < y ? y : x; });
    case BinaryOp::kPrelu: return loop([](auto x, auto y) BATON_LAMBDA { return x >= 0.0f ? x : x * y; });
  }
}

BATON_DISPATCH_WIDTHS(void, arith_run,
                      (BinaryOp op, int64_t as, int64_t bs, const float* a, const float* b, float* out, int64_t n,
                       ActivationRange range),
                      (op, as, bs, a, b, out, n, range))

template <typename Op, typename T>
void binary_typed(const BroadcastPlan& plan, const T* a, const T* b, T* out, ActivationRange range) {
  if (plan.count == 0) return;
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  const int64_t as = plan.a_strides[last], bs = plan.b_strides[last];
  auto inner = [&](const T* pa, const T* pb, T* po) {
    if constexpr (std::is_same_v<T, float>) {
      if (n >= 16) return arith_run(Op::kTag, as, bs, pa, pb, po, n, range);
    }
    if (as == 1 && bs == 1) run<Op, 1, 1>(pa, pb, po, n, range);
    else if (as == 1) run<Op, 1, 0>(pa, pb, po, n, range);
    else if (bs == 1) run<Op, 0, 1>(pa, pb, po, n, range);
    else run<Op, 0, 0>(pa, pb, po, n, range);
  };
  for_each_broadcast_run(plan, [&](int64_t o, int64_t a_off, int64_t b_off) { inner(a + a_off, b + b_off, out + o); });
}

}  // namespace

bool broadcast_shape(const int32_t* a, int a_rank, const int32_t* b, int b_rank, std::vector<int32_t>& out) {
  const int rank = std::max(a_rank, b_rank);
  out.assign(rank, 1);
  for (int i = 0; i < rank; ++i) {
    const int32_t da = i < rank - a_rank ? 1 : a[i - (rank - a_rank)];
    const int32_t db = i < rank - b_rank ? 1 : b[i - (rank - b_rank)];
    if (da != db && da != 1 && db != 1) return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

BroadcastPlan plan_broadcast(const int32_t* a, int a_rank, const int32_t* b, int b_rank) {
  const int rank = std::max(a_rank, b_rank);
  BroadcastPlan plan;
  plan.count = 1;
  // Merged dimensions: each with whether a and b are broadcast along it.
  bool a_bcast[kMaxBroadcastRank] = {}, b_bcast[kMaxBroadcastRank] = {};
  for (int i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a_rank ? 1 : a[i - (rank - a_rank)];
    const int64_t db = i < rank - b_rank ? 1 : b[i - (rank - b_rank)];
    const int64_t d = da == 1 ? db : da;
    plan.count *= d;
    if (d == 1) continue;
    const bool ab = da == 1, bb = db == 1;
    if (plan.rank > 0 && a_bcast[plan.rank - 1] == ab && b_bcast[plan.rank - 1] == bb) {
      plan.dims[plan.rank - 1] *= d;
    } else {
      a_bcast[plan.rank] = ab;
      b_bcast[plan.rank] = bb;
      plan.dims[plan.rank++] = d;
    }
  }
  if (plan.rank == 0) {
    plan.rank = 1;
    plan.dims[0] = plan.count;  // 1, or 0 for an empty output
  }
  int64_t a_stride = 1, b_stride = 1;
  for (int d = plan.rank - 1; d >= 0; --d) {
    plan.a_strides[d] = a_bcast[d] ? 0 : a_stride;
    plan.b_strides[d] = b_bcast[d] ? 0 : b_stride;
    if (!a_bcast[d]) a_stride *= plan.dims[d];
    if (!b_bcast[d]) b_stride *= plan.dims[d];
  }
  return plan;
}

void binary(BinaryOp op, const BroadcastPlan& plan, const float* a, const float* b, float* out,
            ActivationRange range) {
  switch (op) {
    case BinaryOp::kAdd: return binary_typed<AddOp>(plan, a, b, out, range);
    case BinaryOp::kSub: return binary_typed<SubOp>(plan, a, b, out, range);
    case BinaryOp::kMul: return binary_typed<MulOp>(plan, a, b, out, range);
    case BinaryOp::kDiv: return binary_typed<DivOp>(plan, a, b, out, range);
    case BinaryOp::kSquaredDifference: return binary_typed<SquaredDifferenceOp>(plan, a, b, out, range);
    case BinaryOp::kMinimum: return binary_typed<MinimumOp>(plan, a, b, out, range);
    case BinaryOp::kMaximum: return binary_typed<MaximumOp>(plan, a, b, out, range);
    case BinaryOp::kPrelu: return binary_typed<PreluOp>(plan, a, b, out, range);
  }
}

}  // namespace baton::builtin

namespace baton::builtin {

template <typename T>
bool binary_integer(BinaryOp op, const BroadcastPlan& plan, const T* a, const T* b, T* out) {
  switch (op) {
    case BinaryOp::kAdd: binary_typed<AddOp>(plan, a, b, out, {}); return true;
    case BinaryOp::kSub: binary_typed<SubOp>(plan, a, b, out, {}); return true;
    case BinaryOp::kMul: binary_typed<MulOp>(plan, a, b, out, {}); return true;
    case BinaryOp::kMinimum: binary_typed<MinimumOp>(plan, a, b, out, {}); return true;
    case BinaryOp::kMaximum: binary_typed<MaximumOp>(plan, a, b, out, {}); return true;
    default: return false;
  }
}

template bool binary_integer<int32_t>(BinaryOp, const BroadcastPlan&, const int32_t*, const int32_t*, int32_t*);
template bool binary_integer<int64_t>(BinaryOp, const BroadcastPlan&, const int64_t*, const int64_t*, int64_t*);

}  // namespace baton::builtin
