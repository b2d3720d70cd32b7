// Broadcasting elementwise ops on any type TFLite 2.9's kernels take for them: the comparisons (EQUAL,
// NOT_EQUAL, also on strings; LESS, LESS_EQUAL, GREATER, GREATER_EQUAL; bool out), LOGICAL_AND / OR / NOT, SELECT and
// SELECT_V2, FLOOR_DIV, FLOOR_MOD and POW, and ADD_N (same shapes). The broadcast is planned in prepare (kernels/broadcast_index.h);
// invoke is one loop per type. 8-bit comparisons compare as TFLite does: both sides moved to a common
// fixed-point scale (offset by the zero point, shifted left by 8, multiplied by the scale's quantized
// multiplier), so ties fall exactly where TFLite's fall.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "baton/string_tensor.hpp"
#include "glue/op_context.h"
#include "kernels/binary.h"
#include "kernels/broadcast_index.h"
#include "kernels/compare.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct LogicState : OpState {
  IndexPlan plan;
  baton_tensor_type type = BATON_TYPE_FLOAT32;  // of the compared / computed / selected values
  // 8-bit comparisons: each side's zero point and multiplier.
  int32_t offset[2] = {};
  QuantizedMultiplier multiplier[2];
  VectorIsa isa = VectorIsa::kBaseline;  // of the comparisons' runs
  int power = 0;  // float POW by a constant 2 or 3 (the cube of a tanh-approximated GELU): x*x, x*x*x
  int64_t power_count = 0;
};

// The broadcast shape of the node's inputs `first`..`first + n - 1`, set on output 0, and the plan.
IndexPlan broadcast_inputs(OpContext& ctx, int first, int n) {
  std::vector<int32_t> out;
  std::vector<std::span<const int32_t>> shapes;
  for (int i = first; i < first + n; ++i) {
    const auto s = ctx.shape(ctx.input(i));
    ctx.require(static_cast<int>(s.size()) <= kMaxIndexRank,
                "rank above " + std::to_string(kMaxIndexRank) + " not supported");
    shapes.push_back(s);
    if (i == first) {
      out.assign(s.begin(), s.end());
      continue;
    }
    std::vector<int32_t> next;
    if (!broadcast_shape(out.data(), static_cast<int>(out.size()), s.data(), static_cast<int>(s.size()), next)) {
      ctx.fail(BATON_INVALID_ARGUMENT, "input shapes " + shape_text(out) + " and " + shape_text(s) + " do not broadcast");
    }
    out = std::move(next);
  }
  ctx.set_output_shape(ctx.output(0), out);
  return plan_index(out, shapes);
}

void require_same_type(OpContext& ctx, int a, int b) {
  const baton_tensor_type ta = ctx.type(ctx.input(a)), tb = ctx.type(ctx.input(b));
  ctx.require(ta == tb, "input " + std::to_string(b) + " type " + type_name(tb) + " differs from input " +
                            std::to_string(a) + "'s " + type_name(ta));
}

void require_output_type(OpContext& ctx, baton_tensor_type t) {
  baton_tensor* out = ctx.output(0);
  ctx.require(ctx.type(out) == t, std::string("output type ") + type_name(ctx.type(out)) + " must be " + type_name(t));
}

// Calls f(T{}) with the C++ type of `t`.
template <typename F>
void with_value_type(baton_tensor_type t, F&& f) {
  switch (t) {
    case BATON_TYPE_FLOAT32: return f(float{});
    case BATON_TYPE_INT32: return f(int32_t{});
    case BATON_TYPE_INT64: return f(int64_t{});
    case BATON_TYPE_UINT8: return f(uint8_t{});
    case BATON_TYPE_INT8: return f(int8_t{});
    case BATON_TYPE_INT16: return f(int16_t{});
    case BATON_TYPE_BOOL: return f(bool{});
    default: return;
  }
}

// ---- comparisons ----

void compare_prepare(OpContext& ctx) {
  const int32_t code = ctx.op_code();
  const bool equality = code == BATON_OP_EQUAL || code == BATON_OP_NOT_EQUAL;
  baton_tensor* a = ctx.input(0);
  if (equality) {
    ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8,
                                  BATON_TYPE_INT8, BATON_TYPE_BOOL, BATON_TYPE_STRING});
  } else {
    ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8,
                                  BATON_TYPE_INT8});
  }
  require_same_type(ctx, 0, 1);
  require_output_type(ctx, BATON_TYPE_BOOL);
  auto& s = ctx.state<LogicState>();
  s.type = ctx.type(a);
  s.isa = best_vector_isa();
  if (s.type == BATON_TYPE_UINT8 || s.type == BATON_TYPE_INT8) {
    for (int i = 0; i < 2; ++i) {
      const ActQuant q = ctx.act_quant(ctx.input(i), i == 0 ? "first input" : "second input");
      // TFLite takes the scale's multiplier as one smaller than one (a scale of 1 or more aborts it).
      ctx.require(q.scale < 1.0f, (i == 0 ? std::string("first") : std::string("second")) +
                                      " input scale " + std::to_string(q.scale) + " must be below 1");
      s.offset[i] = -q.zero_point;
      s.multiplier[i] = quantize_multiplier(q.scale);
    }
  }
  s.plan = broadcast_inputs(ctx, 0, 2);
}

template <typename T, typename Cmp>
void compare_typed(const IndexPlan& plan, const T* a, const T* b, bool* out, Cmp cmp) {
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = cmp(a[i], b[j]); });
}

// Float, int32 and int64 runs whose steps are 0 or 1 (every broadcast but a middle one) go to the
// vectorised compare_run.
template <typename T>
bool compare_runs(const LogicState& s, CompareOp op, const T* a, const T* b, bool* out) {
  const int last = s.plan.rank - 1;
  const int64_t as = s.plan.strides[0][last], bs = s.plan.strides[1][last];
  if ((as != 0 && as != 1) || (bs != 0 && bs != 1)) return false;
  for_each_run(s.plan, [&](int64_t o, const int64_t* off, int64_t n, const int64_t*) {
    compare_run(s.isa, op, a + off[0], as, b + off[1], bs, out + o, n);
  });
  return true;
}

template <typename Cmp>
void compare_with(OpContext& ctx, const LogicState& s, CompareOp op, Cmp cmp) {
  bool* out = ctx.mutable_data<bool>(ctx.output(0));
  if (s.type == BATON_TYPE_STRING) {  // EQUAL and NOT_EQUAL: byte for byte
    const strings::PackedStrings a(ctx.data<void>(ctx.input(0))), b(ctx.data<void>(ctx.input(1)));
    for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = cmp(a.at(i), b.at(j)); });
    return;
  }
  if (s.type == BATON_TYPE_UINT8 || s.type == BATON_TYPE_INT8) {
    auto scaled = [&](int side, int32_t code) {
      return multiply_by_quantized_multiplier((code + s.offset[side]) * (1 << 8), s.multiplier[side]);
    };
    if (s.type == BATON_TYPE_UINT8) {
      const auto* a = ctx.data<uint8_t>(ctx.input(0));
      const auto* b = ctx.data<uint8_t>(ctx.input(1));
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = cmp(scaled(0, a[i]), scaled(1, b[j])); });
    } else {
      const auto* a = ctx.data<int8_t>(ctx.input(0));
      const auto* b = ctx.data<int8_t>(ctx.input(1));
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = cmp(scaled(0, a[i]), scaled(1, b[j])); });
    }
    return;
  }
  with_value_type(s.type, [&](auto zero) {
    using T = decltype(zero);
    const T* a = ctx.data<T>(ctx.input(0));
    const T* b = ctx.data<T>(ctx.input(1));
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      if (compare_runs(s, op, a, b, out)) return;
    }
    compare_typed(s.plan, a, b, out, cmp);
  });
}

void compare_invoke(OpContext& ctx) {
  const auto& s = ctx.state<LogicState>();
  switch (ctx.op_code()) {
    case BATON_OP_EQUAL: return compare_with(ctx, s, CompareOp::kEqual, [](auto x, auto y) { return x == y; });
    case BATON_OP_NOT_EQUAL: return compare_with(ctx, s, CompareOp::kNotEqual, [](auto x, auto y) { return x != y; });
    case BATON_OP_LESS: return compare_with(ctx, s, CompareOp::kLess, [](auto x, auto y) { return x < y; });
    case BATON_OP_LESS_EQUAL: return compare_with(ctx, s, CompareOp::kLessEqual, [](auto x, auto y) { return x <= y; });
    case BATON_OP_GREATER: return compare_with(ctx, s, CompareOp::kGreater, [](auto x, auto y) { return x > y; });
    default: return compare_with(ctx, s, CompareOp::kGreaterEqual, [](auto x, auto y) { return x >= y; });
  }
}

// ---- LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT ----

void logical_prepare(OpContext& ctx) {
  const int n = ctx.op_code() == BATON_OP_LOGICAL_NOT ? 1 : 2;
  for (int i = 0; i < n; ++i) ctx.require_type(ctx.input(i), "input", {BATON_TYPE_BOOL});
  require_output_type(ctx, BATON_TYPE_BOOL);
  auto& s = ctx.state<LogicState>();
  s.type = BATON_TYPE_BOOL;
  s.plan = broadcast_inputs(ctx, 0, n);
}

void logical_invoke(OpContext& ctx) {
  const auto& s = ctx.state<LogicState>();
  const bool* a = ctx.data<bool>(ctx.input(0));
  bool* out = ctx.mutable_data<bool>(ctx.output(0));
  if (ctx.op_code() == BATON_OP_LOGICAL_NOT) {
    for (int64_t i = 0; i < s.plan.count; ++i) out[i] = !a[i];
    return;
  }
  const bool* b = ctx.data<bool>(ctx.input(1));
  if (ctx.op_code() == BATON_OP_LOGICAL_AND) {
    for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = a[i] && b[j]; });
  } else {
    for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = a[i] || b[j]; });
  }
}

// ---- SELECT, SELECT_V2 ----

constexpr std::initializer_list<baton_tensor_type> kSelectTypes = {
    BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8,
    BATON_TYPE_INT8,    BATON_TYPE_INT16, BATON_TYPE_BOOL};

void select_prepare(OpContext& ctx) {
  baton_tensor* cond = ctx.input(0);
  ctx.require_type(cond, "condition", {BATON_TYPE_BOOL});
  ctx.require_type(ctx.input(1), "input", kSelectTypes);
  require_same_type(ctx, 1, 2);
  require_output_type(ctx, ctx.type(ctx.input(1)));
  auto& s = ctx.state<LogicState>();
  s.type = ctx.type(ctx.input(1));
  if (ctx.op_code() == BATON_OP_SELECT_V2) {
    s.plan = broadcast_inputs(ctx, 0, 3);
    return;
  }
  // SELECT (v1): the same shapes everywhere, or a rank-1 condition that picks whole rows.
  const auto sc = ctx.shape(cond), sx = ctx.shape(ctx.input(1)), sy = ctx.shape(ctx.input(2));
  ctx.require(std::equal(sx.begin(), sx.end(), sy.begin(), sy.end()),
              "SELECT needs inputs of one shape, not " + shape_text(sx) + " and " + shape_text(sy));
  ctx.require(static_cast<int>(sx.size()) <= kMaxIndexRank, "rank above " + std::to_string(kMaxIndexRank) + " not supported");
  const bool same = std::equal(sc.begin(), sc.end(), sx.begin(), sx.end());
  const bool rows = sc.size() == 1 && !sx.empty() && sc[0] == sx[0];
  ctx.require(same || rows, "condition shape " + shape_text(sc) + " is neither the inputs' " + shape_text(sx) +
                                " nor their first dimension");
  ctx.set_output_shape(ctx.output(0), sx);
  // A row condition broadcasts like a [N, 1, 1, ...] tensor.
  std::vector<int32_t> cond_shape(sx.begin(), sx.end());
  if (!same) std::fill(cond_shape.begin() + 1, cond_shape.end(), 1);
  const std::span<const int32_t> shapes[] = {cond_shape, sx, sy};
  s.plan = plan_index(sx, shapes);
}

// One inner run of SELECT with the condition contiguous and each value input contiguous (step 1) or
// broadcast (step 0): both values read, the condition turned into an all-ones or all-zeros mask and the
// bits chosen with it, so the loop has no branch and vectorises.
template <typename T, int XS, int YS>
void select_run(const bool* __restrict cond, const T* __restrict x, const T* __restrict y, T* __restrict out,
                int64_t n) {
  using Bits = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 2, uint16_t,
               std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  for (int64_t i = 0; i < n; ++i) {
    Bits a, b;
    std::memcpy(&a, x + i * XS, sizeof(T));
    std::memcpy(&b, y + i * YS, sizeof(T));
    const Bits mask = static_cast<Bits>(Bits{0} - static_cast<Bits>(cond[i]));
    const Bits r = static_cast<Bits>((a & mask) | (b & static_cast<Bits>(~mask)));
    std::memcpy(out + i, &r, sizeof(T));
  }
}

void select_invoke(OpContext& ctx) {
  const auto& s = ctx.state<LogicState>();
  const bool* cond = ctx.data<bool>(ctx.input(0));
  with_value_type(s.type, [&](auto zero) {
    using T = decltype(zero);
    const T* x = ctx.data<T>(ctx.input(1));
    const T* y = ctx.data<T>(ctx.input(2));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    for_each_run(s.plan, [&](int64_t o, const int64_t* off, int64_t n, const int64_t* step) {
      const bool* c = cond + off[0];
      const T* a = x + off[1];
      const T* b = y + off[2];
      if (step[0] == 1 && (step[1] | step[2]) <= 1 && step[1] >= 0 && step[2] >= 0) {
        switch (step[1] * 2 + step[2]) {
          case 3: return select_run<T, 1, 1>(c, a, b, out + o, n);
          case 2: return select_run<T, 1, 0>(c, a, b, out + o, n);
          case 1: return select_run<T, 0, 1>(c, a, b, out + o, n);
          default: return select_run<T, 0, 0>(c, a, b, out + o, n);
        }
      }
      for (int64_t i = 0; i < n; ++i) out[o + i] = c[i * step[0]] ? a[i * step[1]] : b[i * step[2]];
    });
  });
}

// ---- FLOOR_DIV, FLOOR_MOD, POW ----

void arithmetic_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  switch (ctx.op_code()) {
    case BATON_OP_FLOOR_DIV: ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32}); break;
    case BATON_OP_FLOOR_MOD: ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64}); break;
    default: ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32}); break;
  }
  require_same_type(ctx, 0, 1);
  require_output_type(ctx, ctx.type(a));
  auto& s = ctx.state<LogicState>();
  s.type = ctx.type(a);
  s.plan = broadcast_inputs(ctx, 0, 2);
  // A constant exponent of 2 or 3 for every element is multiplication: within an ulp of powf, and a
  // loop that vectorises instead of a library call per element.
  s.power = 0;
  baton_tensor* b = ctx.input(1);
  if (ctx.op_code() == BATON_OP_POW && s.type == BATON_TYPE_FLOAT32 && ctx.is_constant(b) &&
      ctx.element_count(b) == 1 && ctx.element_count(ctx.output(0)) == ctx.element_count(a)) {
    const float e = ctx.data<float>(b)[0];
    if (e == 2.0f || e == 3.0f) s.power = static_cast<int>(e);
    s.power_count = ctx.element_count(a);
  }
}

void power_invoke(const LogicState& s, const float* __restrict x, float* __restrict out) {
  const int64_t n = s.power_count;
  if (s.power == 2) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * x[i] * x[i];
  }
}

template <typename T>
T floor_mod(T x, T y) {
  T r;
  if constexpr (std::is_floating_point_v<T>) {
    r = std::fmod(x, y);
  } else {
    if (y == -1) return 0;  // the type's minimum % -1 traps on x86, where the remainder is 0
    r = x % y;
  }
  return r != 0 && ((y < 0) != (r < 0)) ? r + y : r;
}

template <typename T>
T floor_div(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(x / y);
  } else {
    const T q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  }
}

// x^n for n >= 0 by squaring, wrapping like int32 multiplication in two's complement.
int32_t int_pow(int32_t x, int32_t n) {
  uint32_t result = 1, base = static_cast<uint32_t>(x);
  for (uint32_t e = static_cast<uint32_t>(n); e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return static_cast<int32_t>(result);
}

void arithmetic_invoke(OpContext& ctx) {
  const auto& s = ctx.state<LogicState>();
  const int32_t code = ctx.op_code();
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* a = ctx.data<T>(ctx.input(0));
    const T* b = ctx.data<T>(ctx.input(1));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    if constexpr (std::is_integral_v<T>) {
      // TFLite refuses these at run time; so does this kernel, before writing anything. The type's minimum
      // floor-divided by -1 does not fit the type (TFLite's kernel traps on x86): refused too.
      bool bad = false, overflow = false;
      for_each_index(s.plan, [&](int64_t, int64_t i, int64_t j, int64_t) {
        bad = bad || (code == BATON_OP_POW ? b[j] < 0 : b[j] == 0);
        overflow = overflow || (code == BATON_OP_FLOOR_DIV && b[j] == -1 && a[i] == std::numeric_limits<T>::min());
      });
      if (bad) ctx.fail(BATON_ERROR, code == BATON_OP_POW ? "negative exponent in integer POW" : "division by zero");
      if (overflow) ctx.fail(BATON_ERROR, "integer FLOOR_DIV of the type's minimum by -1 overflows");
    }
    if (code == BATON_OP_FLOOR_DIV) {
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = floor_div(a[i], b[j]); });
    } else if (code == BATON_OP_FLOOR_MOD) {
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = floor_mod(a[i], b[j]); });
    } else if constexpr (std::is_same_v<T, int32_t>) {
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = int_pow(a[i], b[j]); });
    } else if constexpr (std::is_same_v<T, float>) {
      if (s.power) return power_invoke(s, a, out);
      for_each_index(s.plan, [&](int64_t o, int64_t i, int64_t j, int64_t) { out[o] = std::pow(a[i], b[j]); });
    }
  };
  switch (s.type) {
    case BATON_TYPE_FLOAT32: return run(float{});
    case BATON_TYPE_INT32: return run(int32_t{});
    case BATON_TYPE_INT64: return run(int64_t{});
    default: return;
  }
}

// ---- ADD_N ----

void add_n_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32});
  const auto shape = ctx.shape(a);
  for (int i = 1; i < ctx.input_count(); ++i) {
    require_same_type(ctx, 0, i);
    const auto other = ctx.shape(ctx.input(i));
    ctx.require(std::equal(shape.begin(), shape.end(), other.begin(), other.end()),
                "input " + std::to_string(i) + " shape " + shape_text(other) + " differs from input 0's " + shape_text(shape));
  }
  require_output_type(ctx, ctx.type(a));
  ctx.set_output_shape(ctx.output(0), shape);
}

// Input by input, in order, as TFLite adds them.
void add_n_invoke(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  const int64_t n = ctx.element_count(a);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* out = ctx.mutable_data<T>(ctx.output(0));
    const T* first = ctx.data<T>(a);
    for (int64_t k = 0; k < n; ++k) out[k] = first[k];
    for (int i = 1; i < ctx.input_count(); ++i) {
      const T* x = ctx.data<T>(ctx.input(i));
      if constexpr (std::is_integral_v<T>) {
        for (int64_t k = 0; k < n; ++k) out[k] = static_cast<T>(static_cast<uint32_t>(out[k]) + static_cast<uint32_t>(x[k]));
      } else {
        for (int64_t k = 0; k < n; ++k) out[k] += x[k];
      }
    }
  };
  if (ctx.type(a) == BATON_TYPE_FLOAT32) run(float{});
  else run(int32_t{});
}

constexpr OpDef kOps[] = {
    {BATON_OP_EQUAL, "EQUAL", 1, 5, compare_prepare, compare_invoke},
    {BATON_OP_NOT_EQUAL, "NOT_EQUAL", 1, 4, compare_prepare, compare_invoke},
    {BATON_OP_LESS, "LESS", 1, 3, compare_prepare, compare_invoke},
    {BATON_OP_LESS_EQUAL, "LESS_EQUAL", 1, 2, compare_prepare, compare_invoke},
    {BATON_OP_GREATER, "GREATER", 1, 2, compare_prepare, compare_invoke},
    {BATON_OP_GREATER_EQUAL, "GREATER_EQUAL", 1, 3, compare_prepare, compare_invoke},
    {BATON_OP_LOGICAL_AND, "LOGICAL_AND", 1, 1, logical_prepare, logical_invoke},
    {BATON_OP_LOGICAL_OR, "LOGICAL_OR", 1, 1, logical_prepare, logical_invoke},
    {BATON_OP_LOGICAL_NOT, "LOGICAL_NOT", 1, 1, logical_prepare, logical_invoke},
    {BATON_OP_SELECT, "SELECT", 1, 4, select_prepare, select_invoke},
    {BATON_OP_SELECT_V2, "SELECT_V2", 1, 2, select_prepare, select_invoke},
    {BATON_OP_FLOOR_DIV, "FLOOR_DIV", 1, 3, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_FLOOR_MOD, "FLOOR_MOD", 1, 2, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_POW, "POW", 1, 1, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_ADD_N, "ADD_N", 1, 1, add_n_prepare, add_n_invoke},
};

}  // namespace

std::span<const OpDef> logic_ops() { return kOps; }

}  // namespace baton::builtin
