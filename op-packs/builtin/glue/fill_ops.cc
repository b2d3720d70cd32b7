// Tensors made from scalars: FILL (a value, a string too, repeated over the given dims) and RANGE (start, start + delta,
// ... below limit). Computed dims, start, limit or delta make the output dynamic: prepare runs again at
// invoke with the values.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "glue/string_output.h"
#include "kernels/broadcast_index.h"
#include "kernels/element_copy.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

constexpr int kMaxRank = kMaxIndexRank;

// ---- FILL, RANGE ----

void fill_prepare(OpContext& ctx) {
  baton_tensor* value = ctx.input(1);
  ctx.require_type(value, "value", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT8,
                                    BATON_TYPE_INT16, BATON_TYPE_BOOL, BATON_TYPE_STRING});
  ctx.require(ctx.element_count(value) == 1, "value must be a scalar");
  ctx.require(ctx.type(ctx.output(0)) == ctx.type(value), "output type differs from the value's");
  const auto dims_value = ctx.shape_ints(ctx.input(0), "dims (input 0)");
  if (!dims_value) return;
  const std::vector<int64_t>& dims = *dims_value;
  ctx.require(static_cast<int>(dims.size()) <= kMaxRank, "rank above " + std::to_string(kMaxRank) + " not supported");
  std::vector<int32_t> out;
  for (int64_t d : dims) {
    ctx.require(d >= 0 && d <= INT32_MAX, "dimension " + std::to_string(d) + " out of range");
    out.push_back(static_cast<int32_t>(d));
  }
  ctx.set_output_shape(ctx.output(0), out);
  if (ctx.type(value) == BATON_TYPE_STRING) {
    const int64_t n = ctx.element_count(ctx.output(0));
    prepare_string_move(ctx, value, [n](const int32_t* from, int32_t* to) { std::fill(to, to + n, from[0]); });
  }
}

void fill_invoke(OpContext& ctx) {
  baton_tensor* value = ctx.input(1);
  baton_tensor* out = ctx.output(0);
  const int64_t n = ctx.element_count(out);
  with_element_type(element_size(ctx.type(value)), [&](auto zero) {
    using T = decltype(zero);
    const T v = *ctx.data<T>(value);
    T* o = ctx.mutable_data<T>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  });
}

// RANGE needs constant start, limit and delta to know its length in prepare; then constant folding
// computes it once at load.
template <typename T>
int64_t range_length(const OpContext& ctx, T start, T limit, T delta) {
  ctx.require(delta != 0, "delta is zero");
  ctx.require(delta > 0 ? start <= limit : start >= limit, "start, limit and delta give a negative length");
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    return static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
  }
}

void range_prepare(OpContext& ctx) {
  baton_tensor* start = ctx.input(0);
  ctx.require_type(start, "start", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64});
  for (int i = 0; i < 3; ++i) {
    ctx.require(ctx.type(ctx.input(i)) == ctx.type(start), "start, limit and delta must have one type");
    ctx.require(ctx.element_count(ctx.input(i)) == 1, "start, limit and delta must be scalars");
  }
  ctx.require(ctx.type(ctx.output(0)) == ctx.type(start), "output type differs from the inputs'");
  // Computed values: the length is known at invoke, when the host prepares this node again with them.
  for (int i = 0; i < 3; ++i) {
    if (!ctx.is_constant(ctx.input(i)) && !ctx.data<void>(ctx.input(i))) return ctx.set_dynamic(ctx.output(0));
  }
  int64_t n = 0;
  switch (ctx.type(start)) {
    case BATON_TYPE_FLOAT32:
      n = range_length(ctx, *ctx.data<float>(start), *ctx.data<float>(ctx.input(1)), *ctx.data<float>(ctx.input(2)));
      break;
    case BATON_TYPE_INT32:
      n = range_length(ctx, *ctx.data<int32_t>(start), *ctx.data<int32_t>(ctx.input(1)), *ctx.data<int32_t>(ctx.input(2)));
      break;
    default:
      n = range_length(ctx, *ctx.data<int64_t>(start), *ctx.data<int64_t>(ctx.input(1)), *ctx.data<int64_t>(ctx.input(2)));
      break;
  }
  ctx.require(n <= INT32_MAX, "range too long");
  ctx.set_output_shape(ctx.output(0), {static_cast<int32_t>(n)});
}

// start, start + delta, ... accumulated as TFLite accumulates them.
void range_invoke(OpContext& ctx) {
  baton_tensor* out = ctx.output(0);
  const int64_t n = ctx.element_count(out);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T value = *ctx.data<T>(ctx.input(0));
    const T delta = *ctx.data<T>(ctx.input(2));
    T* o = ctx.mutable_data<T>(out);
    for (int64_t i = 0; i < n; ++i) {
      o[i] = value;
      value += delta;
    }
  };
  switch (ctx.type(out)) {
    case BATON_TYPE_FLOAT32: return run(float{});
    case BATON_TYPE_INT32: return run(int32_t{});
    default: return run(int64_t{});
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_FILL, "FILL", 1, 4, fill_prepare, fill_invoke},
    {BATON_OP_RANGE, "RANGE", 1, 2, range_prepare, range_invoke},
};

}  // namespace

std::span<const OpDef> fill_ops() { return kOps; }

}  // namespace baton::builtin
