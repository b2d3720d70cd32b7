// Reductions over any set of axes (SUM, MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, with keep_dims or not)
// and ARG_MAX / ARG_MIN along one axis to int32 (reduce.comp): each output element reads its run of
// inputs in one invocation, in float32 whatever the storage. MEAN's common cases (the spatial axes, a
// sequence, the last axis of a layer norm) keep their workgroup-wide shaders (ops_pool.cc).
#include <algorithm>
#include <array>
#include <cstdint>

#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {
namespace {

// The axes (input 1), made non-negative, sorted and deduplicated; each within the input's rank.
std::vector<int64_t> reduced_axes(const NodeView& node, size_t rank) {
  std::vector<int64_t> axes = node.constant_ints(1, "axes");
  for (int64_t& a : axes) {
    const int64_t given = a;
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) refuse("axis " + str(given) + " for an input of rank " + str(rank));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

// The dispatch parameters shared by both: the input's dims with the reduced axes one long (`kept`), the
// input's rows, and the reduced extents, all in the [N, H, W, C] view.
void set_reduction(Params& p, const Shape4& in, const std::vector<int64_t>& axes, size_t rank) {
  std::array<int32_t, 4> kept{in.n, in.h, in.w, in.c}, extents{1, 1, 1, 1};
  for (int64_t a : axes) {
    if (a + 4 < static_cast<int64_t>(rank)) continue;  // the first axis of rank 5, one long
    const size_t k = static_cast<size_t>(a) + 4 - rank;
    extents[k] = kept[k];
    kept[k] = 1;
  }
  set4(p, 1, kept[0], kept[1], kept[2], kept[3]);
  set4(p, 2, in.h, in.w, in.c4());
  set4(p, 3, extents[0], extents[1], extents[2], extents[3]);
}

}  // namespace

void plan_reduce(GraphBuilder& g, const NodeView& node) {
  int op = 0;
  switch (node.code()) {
    case BATON_OP_SUM:
    case BATON_OP_MEAN: op = 0; break;
    case BATON_OP_REDUCE_MAX: op = 1; break;
    case BATON_OP_REDUCE_MIN: op = 2; break;
    case BATON_OP_REDUCE_PROD: op = 3; break;
    default: refuse("not a reduction");
  }
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  const std::vector<int64_t> axes = reduced_axes(node, d.size());
  const bool keep = node.options().u.reducer.keep_dims;
  Dims out_dims;
  int64_t count = 1;
  for (size_t i = 0; i < d.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    if (reduced) count *= d[i];
    if (!reduced) out_dims.push_back(d[i]);
    if (reduced && keep) out_dims.push_back(1);
  }
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  const float scale = node.code() == BATON_OP_MEAN ? 1.0f / static_cast<float>(count) : 1.0f;
  Params p{};
  set4(p, 0, static_cast<int32_t>(s.vec4s()), s.c, s.c4(), float_bits(scale));
  set_reduction(p, g.shape(in), axes, d.size());
  g.dispatch("reduce", {{"OP", str(op)}}, grid_1d(s.vec4s()), {out, in}, p);
}

void plan_arg_extreme(GraphBuilder& g, const NodeView& node) {
  const bool is_max = node.code() == BATON_OP_ARG_MAX;
  const int in = g.value(node, node.float_input(0));
  const baton_tensor* output = node.int32_output();
  const Dims d = g.dims(in);
  const std::vector<int64_t> axes = reduced_axes(node, d.size());
  if (axes.size() != 1) refuse("an axis input of " + str(axes.size()) + " values (one)");
  Dims out_dims;
  for (size_t i = 0; i < d.size(); ++i) {
    if (static_cast<int64_t>(i) != axes[0]) out_dims.push_back(d[i]);
  }
  const int out = g.define_int32(output, out_dims);
  const int64_t count = element_count(out_dims);
  Params p{};
  set4(p, 0, static_cast<int32_t>(count));
  set_reduction(p, g.shape(in), axes, d.size());
  g.dispatch("reduce", {{"ARG", is_max ? "1" : "2"}}, grid_1d(count), {out, in}, p);
}

}  // namespace baton::vulkan
