// Ops whose values are shapes or are laid out by one: RANK (an input's rank, an int32 scalar),
// BROADCAST_ARGS (the broadcast of two shapes) and SPARSE_TO_DENSE (values placed at indices of a tensor
// of a given shape, the rest a default). SPARSE_TO_DENSE's output shape is an input: constant, or read at
// invoke (the output is dynamic, prepared again with the values).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/element_copy.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// ---- RANK ----

void rank_prepare(OpContext& ctx) {
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_INT32});
  ctx.set_output_shape(ctx.output(0), std::span<const int32_t>());
}

void rank_invoke(OpContext& ctx) { *ctx.mutable_data<int32_t>(ctx.output(0)) = ctx.rank(ctx.input(0)); }

// ---- BROADCAST_ARGS ----

void broadcast_args_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  ctx.require_type(a, "shape", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require(ctx.type(b) == ctx.type(a) && ctx.type(ctx.output(0)) == ctx.type(a),
              "both shapes and the output must have one type");
  ctx.require_rank(a, "input 0", 1);
  ctx.require_rank(b, "input 1", 1);
  ctx.set_output_shape(ctx.output(0), {std::max(ctx.shape(a)[0], ctx.shape(b)[0])});
}

template <typename T>
void broadcast_args(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  const int64_t na = ctx.element_count(a), nb = ctx.element_count(b), n = std::max(na, nb);
  const T* x = ctx.data<T>(a);
  const T* y = ctx.data<T>(b);
  T* out = ctx.mutable_data<T>(ctx.output(0));
  // Aligned at the last dimension; a missing dimension is 1.
  for (int64_t i = 0; i < n; ++i) {
    const T dx = i < n - na ? T{1} : x[i - (n - na)];
    const T dy = i < n - nb ? T{1} : y[i - (n - nb)];
    if (dx != dy && dx != 1 && dy != 1) {
      ctx.fail(BATON_INVALID_ARGUMENT, "shapes do not broadcast: dimension " + std::to_string(i) + " is " +
                                           std::to_string(dx) + " and " + std::to_string(dy));
    }
    out[i] = dx == 1 ? dy : dx;
  }
}

void broadcast_args_invoke(OpContext& ctx) {
  if (ctx.type(ctx.input(0)) == BATON_TYPE_INT32) return broadcast_args<int32_t>(ctx);
  broadcast_args<int64_t>(ctx);
}

// ---- SPARSE_TO_DENSE ----

constexpr int kMaxDenseRank = 4;  // TFLite 2.9 places indices of at most four coordinates

struct SparseToDenseState : OpState {
  int64_t index_count = 0;  // number of indices
  int index_width = 1;      // coordinates per index
  bool scalar_value = false;
};

void sparse_to_dense_prepare(OpContext& ctx) {
  baton_tensor* indices = ctx.input(0);
  baton_tensor* shape = ctx.input(1);
  baton_tensor* values = ctx.input(2);
  baton_tensor* fallback = ctx.input(3);
  ctx.require_type(indices, "indices", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(shape, "output_shape", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(values, "values",
                   {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT8, BATON_TYPE_UINT8});
  ctx.require(ctx.type(fallback) == ctx.type(values), "default_value type differs from the values'");
  ctx.require(ctx.element_count(fallback) == 1, "default_value must have one element");
  require_like_input(ctx, values, ctx.output(0));
  const auto is = ctx.shape(indices);
  const int irank = static_cast<int>(is.size());
  ctx.require(irank <= 2, "indices must have rank 0, 1 or 2");
  ctx.require_rank(shape, "output_shape", 1);
  const int vrank = ctx.rank(values);
  ctx.require(vrank <= 1, "values must have rank 0 or 1");
  auto& s = ctx.state<SparseToDenseState>();
  s.index_count = irank == 0 ? 1 : is[0];
  s.index_width = irank == 2 ? is[1] : 1;
  s.scalar_value = vrank == 0;
  const int64_t out_rank = ctx.element_count(shape);
  ctx.require(out_rank == s.index_width, "indices have " + std::to_string(s.index_width) +
                                             " coordinates, output_shape " + std::to_string(out_rank) + " dimensions");
  ctx.require(out_rank <= kMaxDenseRank, "an output of rank " + std::to_string(out_rank) +
                                             " is not supported (TFLite 2.9 places up to 4 coordinates)");
  // TFLite 2.9 takes a scalar value for a single index only.
  ctx.require(!s.scalar_value || s.index_count == 1, "a scalar value needs exactly one index (TFLite 2.9 refuses more)");
  ctx.require(s.scalar_value || ctx.element_count(values) == s.index_count,
              "values has " + std::to_string(ctx.element_count(values)) + " elements for " +
                  std::to_string(s.index_count) + " indices");
  const auto dims = ctx.shape_ints(shape, "output_shape (input 1)");
  if (!dims) return;
  std::vector<int32_t> out;
  for (int64_t d : *dims) {
    ctx.require(d >= 0 && d <= INT32_MAX, "output dimension " + std::to_string(d) + " out of range");
    out.push_back(static_cast<int32_t>(d));
  }
  ctx.set_output_shape(ctx.output(0), out);
}

void sparse_to_dense_invoke(OpContext& ctx) {
  const auto& s = ctx.state<SparseToDenseState>();
  baton_tensor* indices = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  const auto dims = ctx.shape(output);
  const int64_t count = ctx.element_count(output);
  auto index = [&](int64_t k) -> int64_t {
    return ctx.type(indices) == BATON_TYPE_INT32 ? ctx.data<int32_t>(indices)[k] : ctx.data<int64_t>(indices)[k];
  };
  with_element_type(element_size(ctx.type(output)), [&](auto zero) {
    using T = decltype(zero);
    const T* values = ctx.data<T>(ctx.input(2));
    T* out = ctx.mutable_data<T>(output);
    std::fill(out, out + count, *ctx.data<T>(ctx.input(3)));
    for (int64_t i = 0; i < s.index_count; ++i) {
      int64_t offset = 0;
      for (int d = 0; d < s.index_width; ++d) {
        const int64_t c = index(i * s.index_width + d);
        if (c < 0 || c >= dims[d]) {
          ctx.fail(BATON_INVALID_ARGUMENT, "index " + std::to_string(i) + " has coordinate " + std::to_string(c) +
                                               " outside [0, " + std::to_string(dims[d]) + ") in dimension " +
                                               std::to_string(d));
        }
        offset = offset * dims[d] + c;
      }
      out[offset] = values[s.scalar_value ? 0 : i];
    }
  });
}

constexpr OpDef kOps[] = {
    {BATON_OP_RANK, "RANK", 1, 1, rank_prepare, rank_invoke},
    {BATON_OP_BROADCAST_ARGS, "BROADCAST_ARGS", 1, 1, broadcast_args_prepare, broadcast_args_invoke},
    {BATON_OP_SPARSE_TO_DENSE, "SPARSE_TO_DENSE", 1, 3, sparse_to_dense_prepare, sparse_to_dense_invoke},
};

}  // namespace

std::span<const OpDef> shape_value_ops() { return kOps; }

}  // namespace baton::builtin
