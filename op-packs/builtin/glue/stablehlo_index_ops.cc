// STABLEHLO_GATHER and STABLEHLO_SCATTER, StableHLO's indexed reads and writes, as the StableHLO spec
// defines them and current LiteRT runs them (its kernels' choices where the spec leaves one: gather clamps
// each start so that the slice fits; scatter skips an update whose position falls outside the operand).
// Their one-op cases (tools/op-models-stablehlo.mjs) are checked against LiteRT 2.5.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "glue/stablehlo_util.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

inline constexpr int kMaxIndexRank = 8;
static_assert(kMaxIndexRank <= kMaxStablehloRank);

bool sorted_unique_within(const int64_t* v, int32_t n, int64_t end) {
  for (int32_t i = 0; i < n; ++i) {
    if (v[i] < 0 || v[i] >= end || (i > 0 && v[i] <= v[i - 1])) return false;
  }
  return true;
}

// An option's array as messages show it: [0,2].
std::string list_text(const int64_t* v, int32_t n) {
  return kit::dims_text(std::span<const int64_t>(v, n > 0 ? n : 0));
}

void require_data_type(OpContext& ctx, baton_tensor* t, const char* what) {
  ctx.require_type(t, what, {BATON_TYPE_FLOAT16, BATON_TYPE_FLOAT32, BATON_TYPE_FLOAT64, BATON_TYPE_INT8, BATON_TYPE_INT16,
                             BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8, BATON_TYPE_UINT16, BATON_TYPE_UINT32,
                             BATON_TYPE_UINT64});
}

// Where the index vectors lie: index_vector_dim and the start_index_map (scatter_dims_to_operand_dims),
// checked against the indices' shape and the operand's rank. `what` names the map in messages.
struct IndexVectors {
  int64_t vector_dim = 0;
  int length = 1;
  int64_t operand_dim[kMaxIndexRank] = {};
};

IndexVectors index_vectors(OpContext& ctx, std::span<const int32_t> indices_shape, int64_t vector_dim,
                           const int64_t* map, int32_t map_count, int operand_rank, const char* what) {
  const int rank = static_cast<int>(indices_shape.size());
  ctx.require(vector_dim >= 0 && vector_dim <= rank, "index_vector_dim " + std::to_string(vector_dim) +
                                                         " is outside 0.." + std::to_string(rank) + " (the indices' rank)");
  IndexVectors v;
  v.vector_dim = vector_dim;
  v.length = vector_dim < rank ? indices_shape[static_cast<size_t>(vector_dim)] : 1;
  ctx.require(map_count == v.length && v.length <= kMaxIndexRank,
              std::string(what) + " has " + std::to_string(map_count) + " entries; the index vectors have " +
                  std::to_string(v.length));
  for (int32_t i = 0; i < map_count; ++i) {
    ctx.require(map[i] >= 0 && map[i] < operand_rank, std::string(what) + " " + list_text(map, map_count) +
                                                          " names a dimension outside the operand's rank " +
                                                          std::to_string(operand_rank));
    for (int32_t j = 0; j < i; ++j) {
      ctx.require(map[j] != map[i], std::string(what) + " " + list_text(map, map_count) + " names a dimension twice");
    }
    v.operand_dim[i] = map[i];
  }
  return v;
}

int64_t index_at(const void* indices, bool is_64, int64_t i) {
  return is_64 ? static_cast<const int64_t*>(indices)[i] : static_cast<const int32_t*>(indices)[i];
}

// ---- STABLEHLO_GATHER: slices of the operand at start indices read from the second input ----

// Each result position splits into batch coordinates (the dimensions not in offset_dims, which walk the
// start indices but for index_vector_dim) and offset coordinates (within the slice: the operand
// dimensions not collapsed, in order). The start vector read at the batch coordinates goes to the operand
// dimensions start_index_map names, each start clamped so that the whole slice fits.
struct GatherState : OpState {
  int operand_rank = 0, result_rank = 0;
  IndexVectors vectors;
  size_t element = 0;
  bool indices_64 = false;
  int64_t operand_dims[kMaxIndexRank] = {}, operand_strides[kMaxIndexRank] = {}, slice[kMaxIndexRank] = {};
  int64_t indices_strides[kMaxIndexRank + 1] = {};  // one past the rank: 0 (an implicit index vector)
  // Per result dimension: its size, and the operand dimension an offset coordinate steps or (-1) the
  // indices dimension a batch coordinate steps.
  int64_t result_dims[kMaxIndexRank] = {};
  int offset_operand_dim[kMaxIndexRank] = {}, batch_indices_dim[kMaxIndexRank] = {};
};

void stablehlo_gather_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(12, "STABLEHLO_GATHER's options");
  auto& s = ctx.state<GatherState>();
  baton_tensor* operand = ctx.input(0);
  baton_tensor* indices = ctx.input(1);
  require_data_type(ctx, operand, "operand");
  ctx.require_type(indices, "start indices (input 1)", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(ctx.output(0), "output", {ctx.type(operand)});
  const auto& o = ctx.options();
  ctx.require(o.kind == BATON_OPTIONS_2_KIND + kStablehloGatherOptionsType, "no StablehloGatherOptions");
  const auto& p = o.u.stablehlo_gather;
  const auto operand_shape = ctx.shape(operand), indices_shape = ctx.shape(indices);
  s.operand_rank = static_cast<int>(operand_shape.size());
  const int indices_rank = static_cast<int>(indices_shape.size());
  ctx.require(s.operand_rank >= 1 && s.operand_rank <= kMaxIndexRank && indices_rank <= kMaxIndexRank,
              "operand rank " + std::to_string(s.operand_rank) + " and indices rank " +
                  std::to_string(indices_rank) + " must lie in 1.." + std::to_string(kMaxIndexRank) + " and 0.." +
                  std::to_string(kMaxIndexRank));
  const int r = s.operand_rank;
  ctx.require(p.slice_sizes_count == r, "slice_sizes has " + std::to_string(p.slice_sizes_count) +
                                            " entries; the operand has rank " + std::to_string(r));
  s.vectors = index_vectors(ctx, indices_shape, p.index_vector_dim, p.start_index_map, p.start_index_map_count, r,
                            "start_index_map");
  ctx.require(sorted_unique_within(p.collapsed_slice_dims, p.collapsed_slice_dims_count, r),
              "collapsed_slice_dims " + list_text(p.collapsed_slice_dims, p.collapsed_slice_dims_count) +
                  " must be increasing dimensions of the operand");
  bool collapsed[kMaxIndexRank] = {};
  for (int32_t i = 0; i < p.collapsed_slice_dims_count; ++i) collapsed[p.collapsed_slice_dims[i]] = true;
  for (int d = 0; d < r; ++d) {
    s.operand_dims[d] = operand_shape[d];
    s.slice[d] = p.slice_sizes[d];
    ctx.require(s.slice[d] >= 0 && s.slice[d] <= s.operand_dims[d],
                "slice size " + std::to_string(s.slice[d]) + " of dimension " + std::to_string(d) +
                    " is outside 0.." + std::to_string(s.operand_dims[d]) + " (the operand's size there)");
    ctx.require(!collapsed[d] || s.slice[d] == 1, "collapsed dimension " + std::to_string(d) +
                                                      " has slice size " + std::to_string(s.slice[d]) + ", not 1");
  }
  const int batch_dims = indices_rank - (p.index_vector_dim < indices_rank ? 1 : 0);
  s.result_rank = p.offset_dims_count + batch_dims;
  ctx.require(p.offset_dims_count == r - p.collapsed_slice_dims_count && s.result_rank <= kMaxIndexRank,
              "offset_dims " + list_text(p.offset_dims, p.offset_dims_count) + " must have one entry per "
              "operand dimension not collapsed (" + std::to_string(r - p.collapsed_slice_dims_count) + ")");
  ctx.require(sorted_unique_within(p.offset_dims, p.offset_dims_count, s.result_rank),
              "offset_dims " + list_text(p.offset_dims, p.offset_dims_count) +
                  " must be increasing dimensions of the result (rank " + std::to_string(s.result_rank) + ")");
  std::vector<int32_t> out_shape;
  int next_operand = 0, next_indices = 0, next_offset = 0;
  for (int d = 0; d < s.result_rank; ++d) {
    if (next_offset < p.offset_dims_count && p.offset_dims[next_offset] == d) {
      while (collapsed[next_operand]) ++next_operand;
      s.offset_operand_dim[d] = next_operand;
      s.result_dims[d] = s.slice[next_operand++];
      ++next_offset;
    } else {
      if (next_indices == p.index_vector_dim) ++next_indices;
      s.offset_operand_dim[d] = -1;
      s.batch_indices_dim[d] = next_indices;
      s.result_dims[d] = indices_shape[static_cast<size_t>(next_indices++)];
    }
    out_shape.push_back(static_cast<int32_t>(s.result_dims[d]));
  }
  row_major_strides(operand_shape, s.operand_strides);
  row_major_strides(indices_shape, s.indices_strides);
  s.indices_strides[indices_rank] = 0;
  s.element = element_size(ctx.type(operand));
  s.indices_64 = ctx.type(indices) == BATON_TYPE_INT64;
  ctx.set_output_shape(ctx.output(0), out_shape);
}

void stablehlo_gather_invoke(OpContext& ctx) {
  const auto& s = ctx.state<GatherState>();
  const auto* operand = ctx.data<unsigned char>(ctx.input(0));
  const void* indices = ctx.data<unsigned char>(ctx.input(1));
  auto* out = ctx.mutable_data<unsigned char>(ctx.output(0));
  int64_t total = 1;
  for (int d = 0; d < s.result_rank; ++d) total *= s.result_dims[d];
  int64_t pos[kMaxIndexRank] = {};
  const int64_t vector_stride = s.indices_strides[s.vectors.vector_dim];
  for (int64_t o = 0; o < total; ++o) {
    int64_t at[kMaxIndexRank] = {};  // operand coordinates: start plus offset
    int64_t base = 0;                // the index vector's first entry in the indices
    for (int d = 0; d < s.result_rank; ++d) {
      if (s.offset_operand_dim[d] >= 0) at[s.offset_operand_dim[d]] = pos[d];
      else base += pos[d] * s.indices_strides[s.batch_indices_dim[d]];
    }
    for (int j = 0; j < s.vectors.length; ++j) {
      const int64_t dim = s.vectors.operand_dim[j];
      const int64_t start = index_at(indices, s.indices_64, base + j * vector_stride);
      at[dim] += std::max<int64_t>(0, std::min(start, s.operand_dims[dim] - s.slice[dim]));
    }
    int64_t src = 0;
    for (int d = 0; d < s.operand_rank; ++d) src += at[d] * s.operand_strides[d];
    std::memcpy(out + o * s.element, operand + src * s.element, s.element);
    for (int d = s.result_rank - 1; d >= 0; --d) {
      if (++pos[d] < s.result_dims[d]) break;
      pos[d] = 0;
    }
  }
}

// ---- STABLEHLO_SCATTER: the operand with the updates combined in at indexed positions ----

// Each update position splits into window coordinates (update_window_dims, which step the operand
// dimensions not in inserted_window_dims, in order) and scatter coordinates (the rest, which walk the
// indices but for index_vector_dim). The index vector goes to the operand dimensions
// scatter_dims_to_operand_dims names. Updates are combined in row-major order of the updates (an index
// twice combines twice); one whose position leaves the operand is skipped.
struct ScatterState : OpState {
  int operand_rank = 0, updates_rank = 0;
  IndexVectors vectors;
  int32_t body = BATON_WINDOW_REDUCTION_UNSUPPORTED;
  bool indices_64 = false;
  int64_t operand_dims[kMaxIndexRank] = {}, operand_strides[kMaxIndexRank] = {};
  int64_t indices_strides[kMaxIndexRank + 1] = {};
  int64_t updates_dims[kMaxIndexRank] = {};
  int window_operand_dim[kMaxIndexRank] = {}, scatter_indices_dim[kMaxIndexRank] = {};
};

void stablehlo_scatter_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(12, "STABLEHLO_SCATTER's options");
  auto& s = ctx.state<ScatterState>();
  baton_tensor* operand = ctx.input(0);
  baton_tensor* indices = ctx.input(1);
  baton_tensor* updates = ctx.input(2);
  require_data_type(ctx, operand, "operand");
  ctx.require_type(indices, "scatter indices (input 1)", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(updates, "updates (input 2)", {ctx.type(operand)});
  ctx.require_type(ctx.output(0), "output", {ctx.type(operand)});
  const auto& o = ctx.options();
  ctx.require(o.kind == BATON_OPTIONS_2_KIND + kStablehloScatterOptionsType,
              "no StablehloScatterOptions");
  const auto& p = o.u.stablehlo_scatter;
  s.body = p.body;
  const bool arithmetic = s.body == BATON_WINDOW_REDUCTION_ADD || s.body == BATON_WINDOW_REDUCTION_MUL ||
                          s.body == BATON_WINDOW_REDUCTION_MAXIMUM || s.body == BATON_WINDOW_REDUCTION_MINIMUM;
  ctx.require(arithmetic || s.body == BATON_WINDOW_REDUCTION_REPLACE,
              "its update computation (subgraph " + std::to_string(p.update_computation_subgraph_index) +
                  ") is neither empty (the update replaces) nor one STABLEHLO_ADD, MULTIPLY, MAXIMUM or MINIMUM, "
                  "the computations LiteRT runs");
  const auto operand_shape = ctx.shape(operand), indices_shape = ctx.shape(indices), updates_shape = ctx.shape(updates);
  s.operand_rank = static_cast<int>(operand_shape.size());
  s.updates_rank = static_cast<int>(updates_shape.size());
  const int indices_rank = static_cast<int>(indices_shape.size());
  ctx.require(s.operand_rank >= 1 && s.operand_rank <= kMaxIndexRank && indices_rank <= kMaxIndexRank &&
                  s.updates_rank <= kMaxIndexRank,
              "ranks above " + std::to_string(kMaxIndexRank) + " (or a scalar operand) are not supported");
  const int r = s.operand_rank;
  s.vectors = index_vectors(ctx, indices_shape, p.index_vector_dim, p.scatter_dims_to_operand_dims,
                            p.scatter_dims_to_operand_dims_count, r, "scatter_dims_to_operand_dims");
  ctx.require(sorted_unique_within(p.inserted_window_dims, p.inserted_window_dims_count, r),
              "inserted_window_dims " + list_text(p.inserted_window_dims, p.inserted_window_dims_count) +
                  " must be increasing dimensions of the operand");
  ctx.require(sorted_unique_within(p.update_window_dims, p.update_window_dims_count, s.updates_rank) &&
                  p.update_window_dims_count + p.inserted_window_dims_count == r,
              "update_window_dims " + list_text(p.update_window_dims, p.update_window_dims_count) +
                  " must be increasing dimensions of the updates, one per operand dimension not inserted (" +
                  std::to_string(r - p.inserted_window_dims_count) + ")");
  const int scatter_dims = indices_rank - (p.index_vector_dim < indices_rank ? 1 : 0);
  ctx.require(s.updates_rank == p.update_window_dims_count + scatter_dims,
              "updates " + shape_text(updates_shape) + " must have rank " +
                  std::to_string(p.update_window_dims_count + scatter_dims) + " (window and scatter dimensions)");
  bool inserted[kMaxIndexRank] = {};
  for (int32_t i = 0; i < p.inserted_window_dims_count; ++i) inserted[p.inserted_window_dims[i]] = true;
  int next_operand = 0, next_indices = 0, next_window = 0;
  for (int d = 0; d < s.updates_rank; ++d) {
    s.updates_dims[d] = updates_shape[d];
    if (next_window < p.update_window_dims_count && p.update_window_dims[next_window] == d) {
      while (inserted[next_operand]) ++next_operand;
      ctx.require(s.updates_dims[d] <= operand_shape[next_operand],
                  "window dimension " + std::to_string(d) + " of the updates (" +
                      std::to_string(s.updates_dims[d]) + ") is larger than operand dimension " +
                      std::to_string(next_operand) + " (" + std::to_string(operand_shape[next_operand]) + ")");
      s.window_operand_dim[d] = next_operand++;
      ++next_window;
    } else {
      if (next_indices == p.index_vector_dim) ++next_indices;
      ctx.require(s.updates_dims[d] == indices_shape[static_cast<size_t>(next_indices)],
                  "scatter dimension " + std::to_string(d) + " of the updates " +
                      shape_text(updates_shape) + " differs from indices dimension " + std::to_string(next_indices) +
                      " " + shape_text(indices_shape));
      s.window_operand_dim[d] = -1;
      s.scatter_indices_dim[d] = next_indices++;
    }
  }
  for (int d = 0; d < r; ++d) s.operand_dims[d] = operand_shape[d];
  row_major_strides(operand_shape, s.operand_strides);
  row_major_strides(indices_shape, s.indices_strides);
  s.indices_strides[indices_rank] = 0;
  s.indices_64 = ctx.type(indices) == BATON_TYPE_INT64;
  ctx.set_output_shape(ctx.output(0), operand_shape);
}

template <typename T>
T combine(int32_t body, T old_value, T update) {
  switch (body) {
    case BATON_WINDOW_REDUCTION_ADD: return wrapping_add(old_value, update);
    case BATON_WINDOW_REDUCTION_MUL: return wrapping_mul(old_value, update);
    case BATON_WINDOW_REDUCTION_MAXIMUM: return std::max(old_value, update);
    case BATON_WINDOW_REDUCTION_MINIMUM: return std::min(old_value, update);
    default: return update;
  }
}

template <typename T>
void scatter(const ScatterState& s, const void* indices, const T* updates, T* out) {
  int64_t total = 1;
  for (int d = 0; d < s.updates_rank; ++d) total *= s.updates_dims[d];
  int64_t pos[kMaxIndexRank] = {};
  const int64_t vector_stride = s.indices_strides[s.vectors.vector_dim];
  for (int64_t u = 0; u < total; ++u) {
    int64_t at[kMaxIndexRank] = {};
    int64_t base = 0;
    for (int d = 0; d < s.updates_rank; ++d) {
      if (s.window_operand_dim[d] >= 0) at[s.window_operand_dim[d]] = pos[d];
      else base += pos[d] * s.indices_strides[s.scatter_indices_dim[d]];
    }
    for (int j = 0; j < s.vectors.length; ++j) {
      at[s.vectors.operand_dim[j]] += index_at(indices, s.indices_64, base + j * vector_stride);
    }
    int64_t dst = 0;
    bool inside = true;
    for (int d = 0; d < s.operand_rank; ++d) {
      inside = inside && at[d] >= 0 && at[d] < s.operand_dims[d];
      dst += at[d] * s.operand_strides[d];
    }
    if (inside) out[dst] = combine(s.body, out[dst], updates[u]);
    for (int d = s.updates_rank - 1; d >= 0; --d) {
      if (++pos[d] < s.updates_dims[d]) break;
      pos[d] = 0;
    }
  }
}

void stablehlo_scatter_invoke(OpContext& ctx) {
  const auto& s = ctx.state<ScatterState>();
  baton_tensor* operand = ctx.input(0);
  auto* out = ctx.mutable_data<unsigned char>(ctx.output(0));
  const auto* in = ctx.data<unsigned char>(operand);
  if (out != in) std::memcpy(out, in, static_cast<size_t>(ctx.element_count(operand)) * element_size(ctx.type(operand)));
  const void* indices = ctx.data<unsigned char>(ctx.input(1));
  const void* updates = ctx.data<unsigned char>(ctx.input(2));
  if (ctx.type(operand) == BATON_TYPE_FLOAT16) {
    scatter(s, indices, static_cast<const Half*>(updates), reinterpret_cast<Half*>(out));
    return;
  }
  with_stablehlo_type(ctx.type(operand), [&](auto zero) {
    using T = decltype(zero);
    scatter(s, indices, static_cast<const T*>(updates), reinterpret_cast<T*>(out));
  });
}

constexpr OpDef kOps[] = {
    {BATON_OP_STABLEHLO_GATHER, "STABLEHLO_GATHER", 1, 1, stablehlo_gather_prepare, stablehlo_gather_invoke},
    {BATON_OP_STABLEHLO_SCATTER, "STABLEHLO_SCATTER", 1, 1, stablehlo_scatter_prepare, stablehlo_scatter_invoke},
};

}  // namespace

std::span<const OpDef> stablehlo_index_ops() { return kOps; }

}  // namespace baton::builtin
