// Ops that put values at positions given by index tensors: ONE_HOT (int32 or int64 indices; float32,
// int32, int64, int8, uint8 or bool values, as TFLite 2.9's kernel runs them (it fails int16 at invoke);
// on / off read at invoke). The depth must be constant:
// prepare sets the output shape.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "glue/op_context.h"
#include "kernels/element_copy.h"
#include "op_codes.h"

namespace baton::builtin {
namespace {

struct OneHotState : OpState {
  int64_t prefix = 1, depth = 0, suffix = 1;  // output [prefix, depth, suffix]
  size_t element = 0;
};

void one_hot_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(2, "ONE_HOT's axis");
  baton_tensor* indices = ctx.input(0);
  baton_tensor* depth = ctx.input(1);
  baton_tensor* on = ctx.input(2);
  baton_tensor* off = ctx.input(3);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(indices, "indices (input 0)", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(depth, "depth (input 1)", {BATON_TYPE_INT32});
  ctx.require_type(out, "output", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT8, BATON_TYPE_UINT8, BATON_TYPE_BOOL});
  for (baton_tensor* v : {on, off}) {
    ctx.require(ctx.type(v) == ctx.type(out), std::string(v == on ? "on_value" : "off_value") + " type " +
                                                  type_name(ctx.type(v)) + " differs from the output's " +
                                                  type_name(ctx.type(out)));
    ctx.require(ctx.element_count(v) == 1, std::string(v == on ? "on_value" : "off_value") + " must be a scalar");
  }
  const std::vector<int64_t> depth_value = ctx.constant_ints(depth, "depth (input 1)");
  ctx.require(depth_value.size() == 1, "depth (input 1) must be a scalar");
  ctx.require(depth_value[0] >= 0, "depth " + std::to_string(depth_value[0]) + " is negative");
  const auto shape = ctx.shape(indices);
  const int rank = static_cast<int>(shape.size());
  const int32_t axis_option = ctx.options().u.one_hot.axis;
  ctx.require(axis_option >= -1 && axis_option <= rank,
              "axis " + std::to_string(axis_option) + " out of range for an output of rank " + std::to_string(rank + 1) +
                  " (-1 to " + std::to_string(rank) + ")");
  const int axis = axis_option == -1 ? rank : axis_option;
  auto& s = ctx.state<OneHotState>();
  s.prefix = s.suffix = 1;
  for (int d = 0; d < axis; ++d) s.prefix *= shape[d];
  for (int d = axis; d < rank; ++d) s.suffix *= shape[d];
  s.depth = depth_value[0];
  s.element = element_size(ctx.type(out));
  std::vector<int32_t> out_shape(shape.begin(), shape.end());
  out_shape.insert(out_shape.begin() + axis, static_cast<int32_t>(s.depth));
  ctx.set_output_shape(out, out_shape);
}

template <typename T, typename I>
void one_hot(const OneHotState& s, const I* indices, T on, T off, T* out) {
  for (int64_t p = 0; p < s.prefix; ++p) {
    const I* row = indices + p * s.suffix;
    for (int64_t d = 0; d < s.depth; ++d) {
      for (int64_t i = 0; i < s.suffix; ++i) *out++ = static_cast<int64_t>(row[i]) == d ? on : off;
    }
  }
}

void one_hot_invoke(OpContext& ctx) {
  const auto& s = ctx.state<OneHotState>();
  baton_tensor* indices = ctx.input(0);
  const bool wide = ctx.type(indices) == BATON_TYPE_INT64;
  with_element_type(s.element, [&](auto zero) {
    using T = decltype(zero);
    T on, off;
    std::memcpy(&on, ctx.data<void>(ctx.input(2)), sizeof(T));
    std::memcpy(&off, ctx.data<void>(ctx.input(3)), sizeof(T));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    if (wide) one_hot(s, ctx.data<int64_t>(indices), on, off, out);
    else one_hot(s, ctx.data<int32_t>(indices), on, off, out);
  });
}

// ---- EMBEDDING_LOOKUP ----

struct EmbeddingState : OpState {
  int64_t rows = 0, row_size = 0;  // the table's rows and elements per row
  size_t element = 0;
  bool hybrid = false;  // int8 table, float output
  float scale = 1.0f;
};

void embedding_lookup_prepare(OpContext& ctx) {
  baton_tensor* ids = ctx.input(0);
  baton_tensor* table = ctx.input(1);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(ids, "ids (input 0)", {BATON_TYPE_INT32});
  ctx.require_rank(ids, "ids (input 0)", 1);
  ctx.require_type(table, "table (input 1)", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  const auto shape = ctx.shape(table);
  ctx.require(shape.size() >= 2, "table (input 1) must have rank >= 2");
  auto& s = ctx.state<EmbeddingState>();
  s.hybrid = ctx.type(table) != BATON_TYPE_FLOAT32 && ctx.type(out) == BATON_TYPE_FLOAT32;
  if (s.hybrid) {
    ctx.require(ctx.type(table) == BATON_TYPE_INT8, "a uint8 table with a float output not supported (int8 only)");
    const TensorQuant q = ctx.quant(table);
    ctx.require(q.count == 1, "an int8 table with a float output needs one scale");
    s.scale = q.scale();
  } else {
    require_like_input(ctx, table, out);
  }
  s.rows = shape[0];
  s.row_size = 1;
  for (size_t d = 1; d < shape.size(); ++d) s.row_size *= shape[d];
  s.element = element_size(ctx.type(table));
  std::vector<int32_t> out_shape(shape.begin(), shape.end());
  out_shape[0] = ctx.shape(ids)[0];
  ctx.set_output_shape(out, out_shape);
}

void embedding_lookup_invoke(OpContext& ctx) {
  const auto& s = ctx.state<EmbeddingState>();
  baton_tensor* ids_tensor = ctx.input(0);
  const int32_t* ids = ctx.data<int32_t>(ids_tensor);
  const int64_t n = ctx.element_count(ids_tensor);
  const auto* table = ctx.data<uint8_t>(ctx.input(1));
  void* out = ctx.mutable_data<void>(ctx.output(0));
  const size_t row_bytes = static_cast<size_t>(s.row_size) * s.element;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t id = ids[i];
    if (id < 0 || id >= s.rows) {
      ctx.fail(BATON_INVALID_ARGUMENT, "id " + std::to_string(id) + " at position " + std::to_string(i) +
                                           " outside the table's " + std::to_string(s.rows) + " rows");
    }
    if (s.hybrid) {
      const auto* row = reinterpret_cast<const int8_t*>(table) + id * s.row_size;
      float* dst = static_cast<float*>(out) + i * s.row_size;
      for (int64_t j = 0; j < s.row_size; ++j) dst[j] = static_cast<float>(row[j] * static_cast<double>(s.scale));
    } else if (row_bytes) {
      std::memcpy(static_cast<uint8_t*>(out) + i * row_bytes, table + id * row_bytes, row_bytes);
    }
  }
}

// ---- TOPK_V2 ----

struct TopKState : OpState {
  int64_t rows = 0, depth = 0, k = 0;
  std::vector<int32_t> order;  // one row's positions, sorted in place
};

void topk_prepare(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT32, BATON_TYPE_INT64});
  require_like_input(ctx, in, ctx.output(0));
  ctx.require_type(ctx.output(1), "indices (output 1)", {BATON_TYPE_INT32});
  const auto shape = ctx.shape(in);
  ctx.require(!shape.empty(), "input must have rank >= 1");
  const std::vector<int64_t> k = ctx.constant_ints(ctx.input(1), "k (input 1)");
  ctx.require(k.size() == 1, "k (input 1) must hold one value");
  auto& s = ctx.state<TopKState>();
  s.depth = shape.back();
  ctx.require(k[0] >= 0 && k[0] <= s.depth, "k " + std::to_string(k[0]) + " outside [0, " + std::to_string(s.depth) +
                                                "] (the last dimension)");
  s.k = k[0];
  s.rows = s.depth > 0 ? ctx.element_count(in) / s.depth : 0;
  s.order.resize(static_cast<size_t>(s.depth));
  std::vector<int32_t> out_shape(shape.begin(), shape.end());
  out_shape.back() = static_cast<int32_t>(s.k);
  ctx.set_output_shape(ctx.output(0), out_shape);
  ctx.set_output_shape(ctx.output(1), out_shape);
}

template <typename T>
void topk(TopKState& s, const T* in, T* values, int32_t* indices) {
  for (int64_t r = 0; r < s.rows; ++r, in += s.depth, values += s.k, indices += s.k) {
    std::iota(s.order.begin(), s.order.end(), 0);
    std::partial_sort(s.order.begin(), s.order.begin() + s.k, s.order.end(), [in](int32_t a, int32_t b) {
      if (in[a] != in[b]) return in[a] > in[b];
      return a < b;
    });
    for (int64_t i = 0; i < s.k; ++i) {
      indices[i] = s.order[i];
      values[i] = in[s.order[i]];
    }
  }
}

void topk_invoke(OpContext& ctx) {
  auto& s = ctx.state<TopKState>();
  baton_tensor* in = ctx.input(0);
  int32_t* indices = ctx.mutable_data<int32_t>(ctx.output(1));
  auto run = [&](auto zero) {
    using T = decltype(zero);
    topk(s, ctx.data<T>(in), ctx.mutable_data<T>(ctx.output(0)), indices);
  };
  switch (ctx.type(in)) {
    case BATON_TYPE_FLOAT32: return run(float{});
    case BATON_TYPE_UINT8: return run(uint8_t{});
    case BATON_TYPE_INT8: return run(int8_t{});
    case BATON_TYPE_INT32: return run(int32_t{});
    default: return run(int64_t{});
  }
}

constexpr OpDef kOps[] = {
    {op::kOneHot, "ONE_HOT", 1, 1, one_hot_prepare, one_hot_invoke},
    {op::kEmbeddingLookup, "EMBEDDING_LOOKUP", 1, 3, embedding_lookup_prepare, embedding_lookup_invoke},
    {op::kTopkV2, "TOPK_V2", 1, 2, topk_prepare, topk_invoke},
};

}  // namespace

std::span<const OpDef> index_ops() { return kOps; }

}  // namespace baton::builtin
