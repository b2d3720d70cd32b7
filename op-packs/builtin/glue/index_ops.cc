// Ops that put values at positions given by index tensors: ONE_HOT (int32 or int64 indices; float32,
// int32, int64, int8, uint8 or bool values, as TFLite 2.9's kernel runs them (it fails int16 at invoke);
// on / off read at invoke); TOPK_V2, SCATTER_ND, SEGMENT_SUM, EMBEDDING_LOOKUP. ONE_HOT's depth, TOPK_V2's
// k, SCATTER_ND's shape and SEGMENT_SUM's ids set the output shape: read at prepare when constant, else
// the output is dynamic and prepare runs again at invoke with the values (OpContext::shape_ints).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "glue/op_context.h"
#include "kernels/dequantize.h"
#include "kernels/element_copy.h"
#include "baton/tflite_ops.h"

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
  const auto depth_value = ctx.shape_ints(depth, "depth (input 1)");
  if (!depth_value) return;  // computed: prepared again at invoke with the value
  ctx.require(depth_value->size() == 1, "depth (input 1) must be a scalar");
  ctx.require((*depth_value)[0] >= 0, "depth " + std::to_string((*depth_value)[0]) + " is negative");
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
  s.depth = (*depth_value)[0];
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
  bool hybrid = false;  // int8 or int4 table, float output
  bool int4 = false;    // two codes a byte (kernels/dequantize.h)
  std::vector<float> scales;  // one, or one per row (LiteRT's per-channel tables)
  int64_t block_size = 0;     // blockwise INT4 tables: a scale per block_size codes of a row,
  std::vector<float> block_scales;  // row-major, widened from FLOAT16 at prepare
};

void embedding_lookup_prepare(OpContext& ctx) {
  baton_tensor* ids = ctx.input(0);
  baton_tensor* table = ctx.input(1);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(ids, "ids (input 0)", {BATON_TYPE_INT32});
  ctx.require_rank(ids, "ids (input 0)", 1);
  ctx.require_type(table, "table (input 1)", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT4});
  const auto shape = ctx.shape(table);
  ctx.require(shape.size() >= 2, "table (input 1) must have rank >= 2");
  auto& s = ctx.state<EmbeddingState>();
  s.int4 = ctx.type(table) == BATON_TYPE_INT4;
  s.hybrid = ctx.type(table) != BATON_TYPE_FLOAT32 && ctx.type(out) == BATON_TYPE_FLOAT32;
  if (s.hybrid) {
    ctx.require(ctx.type(table) != BATON_TYPE_UINT8, "a uint8 table with a float output not supported (int8 or int4)");
    const TensorQuant tq = ctx.quant(table);
    s.block_size = tq.block_size;
    if (tq.block_size > 0) {  // blockwise INT4 (load checked the scales' shape), as LiteRT 2.5 runs it
      require_float16_block_scales(ctx, tq, "table (input 1)");
      s.block_scales.resize(static_cast<size_t>(tq.block_count));
      dequantize_f16(static_cast<const uint16_t*>(tq.block_scales), s.block_scales.data(), tq.block_count);
      s.scales.clear();
    } else {
      // One scale, or one per row (LiteRT's per-channel tables, EMBEDDING_LOOKUP v4); zero points are not read.
      const ChannelQuant q = ctx.channel_quant(table, "table (input 1)", 0, true);
      s.scales.assign(q.scales.begin(), q.scales.end());
      s.block_scales.clear();
    }
    // LiteRT starts row r of an int4 table at byte r * row / 2: with rows of odd length it reads from the
    // wrong nibble, so there is no result to match.
    int64_t row = 1;
    for (size_t d = 1; d < shape.size(); ++d) row *= shape[d];
    ctx.require(!s.int4 || row % 2 == 0, "an INT4 table's rows must hold an even number of codes, have " +
                                             std::to_string(row));
  } else {
    ctx.require(!s.int4, "an int4 table needs a float output");
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
    if (s.hybrid && s.block_size > 0) {  // code * its block's scale, exact in float32
      float* dst = static_cast<float*>(out) + i * s.row_size;
      const float* scales = s.block_scales.data() + id * (s.row_size / s.block_size);
      for (int64_t j = 0; j < s.row_size; ++j) {
        dst[j] = static_cast<float>(int4_code(table, id * s.row_size + j)) * scales[j / s.block_size];
      }
    } else if (s.hybrid) {
      const float scale = s.scales[s.scales.size() > 1 ? static_cast<size_t>(id) : 0];
      float* dst = static_cast<float*>(out) + i * s.row_size;
      if (s.int4) {  // codes numbered across rows, as LiteRT packs them
        for (int64_t j = 0; j < s.row_size; ++j) dst[j] = static_cast<float>(int4_code(table, id * s.row_size + j) * static_cast<double>(scale));
      } else {
        const auto* row = reinterpret_cast<const int8_t*>(table) + id * s.row_size;
        for (int64_t j = 0; j < s.row_size; ++j) dst[j] = static_cast<float>(row[j] * static_cast<double>(scale));
      }
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
  const auto k_value = ctx.shape_ints(ctx.input(1), "k (input 1)");
  if (!k_value) return;  // computed: prepared again at invoke with the value
  const std::vector<int64_t>& k = *k_value;
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

// A few of the largest (a classifier's top 5): one pass keeping them sorted, larger values first and,
// among equal ones, the earlier position (as the sort below orders them); most values lose to the
// smallest kept one at one comparison.
constexpr int64_t kTopKInsertion = 16;

template <typename T>
void topk_by_insertion(int64_t k, int64_t depth, const T* in, T* values, int32_t* indices) {
  int64_t kept = 0;
  for (int64_t i = 0; i < depth; ++i) {
    const T v = in[i];
    if (kept == k) {
      if (!(v > values[k - 1])) continue;
      --kept;
    }
    int64_t at = kept;
    for (; at > 0 && values[at - 1] < v; --at) {
      values[at] = values[at - 1];
      indices[at] = indices[at - 1];
    }
    values[at] = v;
    indices[at] = static_cast<int32_t>(i);
    ++kept;
  }
}

template <typename T>
void topk(TopKState& s, const T* in, T* values, int32_t* indices) {
  for (int64_t r = 0; r < s.rows; ++r, in += s.depth, values += s.k, indices += s.k) {
    if (s.k > 0 && s.k <= kTopKInsertion) {
      topk_by_insertion(s.k, s.depth, in, values, indices);
      continue;
    }
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
  with_numeric_type(ctx.type(in), [&](auto zero) {
    using T = decltype(zero);
    topk(s, ctx.data<T>(in), ctx.mutable_data<T>(ctx.output(0)), indices);
  });
}

// ---- SCATTER_ND ----

struct ScatterState : OpState {
  int64_t tuples = 0, depth = 0, slice = 0;  // index tuples, their length, elements per update
  std::vector<int64_t> dims, strides;        // of the output's first `depth` dimensions
  int64_t out_count = 0;
};

void scatter_nd_prepare(OpContext& ctx) {
  baton_tensor* indices = ctx.input(0);
  baton_tensor* updates = ctx.input(1);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(indices, "indices (input 0)", {BATON_TYPE_INT32});
  ctx.require_type(updates, "updates (input 1)", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64,
                                                  BATON_TYPE_UINT8, BATON_TYPE_INT8});
  require_like_input(ctx, updates, out);
  const auto shape_value = ctx.shape_ints(ctx.input(2), "shape (input 2)");
  if (!shape_value) return;  // computed: prepared again at invoke with the values
  const std::vector<int64_t>& shape = *shape_value;
  const auto ishape = ctx.shape(indices);
  const auto ushape = ctx.shape(updates);
  ctx.require(!ishape.empty(), "indices must have rank >= 1");
  auto& s = ctx.state<ScatterState>();
  s.depth = ishape.back();
  ctx.require(s.depth >= 1 && s.depth <= static_cast<int64_t>(shape.size()),
              "index tuples of length " + std::to_string(s.depth) + " for an output of rank " + std::to_string(shape.size()));
  // updates = indices' shape without its last dimension, then the output's dimensions past depth.
  const size_t outer = ishape.size() - 1;
  bool fits = ushape.size() == outer + shape.size() - static_cast<size_t>(s.depth);
  for (size_t d = 0; fits && d < outer; ++d) fits = ushape[d] == ishape[d];
  for (size_t d = outer; fits && d < ushape.size(); ++d) fits = ushape[d] == shape[d - outer + s.depth];
  ctx.require(fits, "updates' shape does not match indices' and the output shape's");
  std::vector<int32_t> out_shape;
  for (int64_t d : shape) {
    ctx.require(d >= 0 && d <= INT32_MAX, "output dimension " + std::to_string(d) + " out of range");
    out_shape.push_back(static_cast<int32_t>(d));
  }
  s.tuples = 1;
  for (size_t d = 0; d < outer; ++d) s.tuples *= ishape[d];
  s.slice = 1;
  for (size_t d = static_cast<size_t>(s.depth); d < shape.size(); ++d) s.slice *= shape[d];
  s.dims.assign(shape.begin(), shape.begin() + s.depth);
  s.strides.assign(static_cast<size_t>(s.depth), 0);
  int64_t stride = s.slice;
  for (int64_t d = s.depth; d-- > 0;) {
    s.strides[d] = stride;
    stride *= shape[d];
  }
  s.out_count = stride;
  ctx.set_output_shape(out, out_shape);
}

template <typename T>
void scatter_nd(const OpContext& ctx, const ScatterState& s, const int32_t* indices, const T* updates, T* out) {
  std::fill(out, out + s.out_count, T(0));
  for (int64_t t = 0; t < s.tuples; ++t) {
    int64_t at = 0;
    for (int64_t d = 0; d < s.depth; ++d) {
      const int32_t i = indices[t * s.depth + d];
      if (i < 0 || i >= s.dims[d]) {
        ctx.fail(BATON_INVALID_ARGUMENT, "index " + std::to_string(i) + " of tuple " + std::to_string(t) +
                                             " outside dimension " + std::to_string(d) + " (size " +
                                             std::to_string(s.dims[d]) + ")");
      }
      at += i * s.strides[d];
    }
    const T* u = updates + t * s.slice;
    for (int64_t j = 0; j < s.slice; ++j) out[at + j] = static_cast<T>(out[at + j] + u[j]);
  }
}

void scatter_nd_invoke(OpContext& ctx) {
  const auto& s = ctx.state<ScatterState>();
  const int32_t* indices = ctx.data<int32_t>(ctx.input(0));
  baton_tensor* updates = ctx.input(1);
  with_numeric_type(ctx.type(updates), [&](auto zero) {
    using T = decltype(zero);
    scatter_nd(ctx, s, indices, ctx.data<T>(updates), ctx.mutable_data<T>(ctx.output(0)));
  });
}

// ---- SEGMENT_SUM ----

struct SegmentState : OpState {
  std::vector<int32_t> ids;
  int64_t row = 0, out_count = 0;  // elements per row, output elements
};

void segment_sum_prepare(OpContext& ctx) {
  baton_tensor* data = ctx.input(0);
  baton_tensor* ids = ctx.input(1);
  ctx.require_type(data, "data (input 0)", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32});
  require_like_input(ctx, data, ctx.output(0));
  ctx.require_type(ids, "segment ids (input 1)", {BATON_TYPE_INT32});
  const auto shape = ctx.shape(data);
  ctx.require(!shape.empty(), "data must have rank >= 1");
  ctx.require(ctx.rank(ids) == 1 && ctx.shape(ids)[0] == shape[0], "segment ids must be one per row of data");
  const auto id_values = ctx.shape_ints(ids, "segment ids (input 1)");
  if (!id_values) return;  // computed: prepared again at invoke with the values
  auto& s = ctx.state<SegmentState>();
  s.ids.clear();
  int64_t previous = 0;
  for (int64_t id : *id_values) {
    ctx.require(id - previous == 0 || (id - previous == 1 && !s.ids.empty()),
                "segment ids must start at 0 and grow by 0 or 1, as TFLite 2.9 requires (" + std::to_string(id) +
                    (s.ids.empty() ? " first)" : " after " + std::to_string(previous) + ")"));
    previous = id;
    s.ids.push_back(static_cast<int32_t>(id));
  }
  std::vector<int32_t> out_shape(shape.begin(), shape.end());
  out_shape[0] = s.ids.empty() ? 0 : s.ids.back() + 1;
  s.row = 1;
  for (size_t d = 1; d < shape.size(); ++d) s.row *= shape[d];
  s.out_count = out_shape[0] * s.row;
  ctx.set_output_shape(ctx.output(0), out_shape);
}

template <typename T>
void segment_sum(const SegmentState& s, const T* data, T* out) {
  std::fill(out, out + s.out_count, T(0));
  for (size_t r = 0; r < s.ids.size(); ++r) {
    T* dst = out + s.ids[r] * s.row;
    const T* src = data + static_cast<int64_t>(r) * s.row;
    for (int64_t j = 0; j < s.row; ++j) dst[j] += src[j];
  }
}

void segment_sum_invoke(OpContext& ctx) {
  const auto& s = ctx.state<SegmentState>();
  baton_tensor* data = ctx.input(0);
  if (ctx.type(data) == BATON_TYPE_FLOAT32) return segment_sum(s, ctx.data<float>(data), ctx.mutable_data<float>(ctx.output(0)));
  segment_sum(s, ctx.data<int32_t>(data), ctx.mutable_data<int32_t>(ctx.output(0)));
}

constexpr OpDef kOps[] = {
    {BATON_OP_SCATTER_ND, "SCATTER_ND", 1, 1, scatter_nd_prepare, scatter_nd_invoke},
    {BATON_OP_SEGMENT_SUM, "SEGMENT_SUM", 1, 1, segment_sum_prepare, segment_sum_invoke},
    {BATON_OP_ONE_HOT, "ONE_HOT", 1, 1, one_hot_prepare, one_hot_invoke},
    {BATON_OP_EMBEDDING_LOOKUP, "EMBEDDING_LOOKUP", 1, 5, embedding_lookup_prepare, embedding_lookup_invoke},
    {BATON_OP_TOPK_V2, "TOPK_V2", 1, 3, topk_prepare, topk_invoke},
};

}  // namespace

std::span<const OpDef> index_ops() { return kOps; }

}  // namespace baton::builtin
