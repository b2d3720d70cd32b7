// Ops that read int32 tensors (dense ints on the device, gpu_graph.h): GATHER and GATHER_ND by int32
// indices (constant, a partition input, or computed in the partition by a CAST), and CAST between int32
// and float32. An index out of range fails the run with its value, as TFLite's kernels do.
#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {

void plan_gather(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int params = g.value(node, node.float_input(0));
  const baton_gather_options& o = node.options().u.gather;
  const Dims d = g.dims(params);
  const int rank = static_cast<int>(d.size());
  if (o.batch_dims != 0) refuse("batch_dims " + str(o.batch_dims) + " (0 only)");
  const int axis = o.axis < 0 ? o.axis + rank : o.axis;
  if (axis < 0 || axis >= rank) refuse("axis " + str(o.axis) + " outside the params' rank " + str(rank));
  if (axis == rank - 1) refuse("a gather along the last axis (the channels)");
  const int ids = g.indices(node, node.input(1));
  const Dims index_dims = g.dims(ids);
  Dims out_dims(d.begin(), d.begin() + axis);
  out_dims.insert(out_dims.end(), index_dims.begin(), index_dims.end());
  out_dims.insert(out_dims.end(), d.begin() + axis + 1, d.end());
  if (out_dims.size() > 4) refuse("an output of rank " + str(out_dims.size()) + " (at most 4)");
  int64_t inner = 1;
  for (int i = axis + 1; i < rank - 1; ++i) inner *= d[static_cast<size_t>(i)];
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  const int check = g.check_word(g.label() + ": a GATHER index outside [0, " + str(d[static_cast<size_t>(axis)]) + ")");
  Params p{};
  set4(p, 0, static_cast<int32_t>(s.vec4s()), s.c4(), static_cast<int32_t>(inner), static_cast<int32_t>(element_count(index_dims)));
  set4(p, 1, d[static_cast<size_t>(axis)]);
  g.dispatch("gather", {}, grid_1d(s.vec4s()), {out, check, params, ids}, p, 2);
}

void plan_cast(GraphBuilder& g, const NodeView& node) {
  if (node.input_count() != 1 || node.output_count() != 1) refuse("a CAST of " + str(node.input_count()) + " inputs");
  const baton_tensor* in = node.input(0);
  const baton_tensor* out = node.output(0);
  const baton_tensor_type from = node.api()->tensor_type(in), to = node.api()->tensor_type(out);
  const bool to_int = from == BATON_TYPE_FLOAT32 && to == BATON_TYPE_INT32;
  if (!to_int && !(from == BATON_TYPE_INT32 && to == BATON_TYPE_FLOAT32)) {
    refuse(std::string("a cast from ") + baton_tensor_type_name(from) + " to " + baton_tensor_type_name(to) +
           " (float32 to int32 and back only)");
  }
  if (node.api()->tensor_is_constant(out)) refuse("constant output");
  const Dims dims = node.shape(in);
  if (dims.size() > 4) refuse("an input of rank " + str(dims.size()) + " (at most 4)");
  const int src = to_int ? g.value(node, node.float_input(0)) : g.indices(node, in);
  const int dst = to_int ? g.define_int32(out, dims) : g.define(out, dims);
  const Shape4 s = g.shape(dst);
  const int64_t count = to_int ? s.elements() : s.vec4s();
  Params p{};
  set4(p, 0, static_cast<int32_t>(count), s.c, s.c4());
  g.dispatch("cast", {{"TO_INT", to_int ? "1" : "0"}}, grid_1d(count), {dst, src}, p);
}

void plan_gather_nd(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int params = g.value(node, node.float_input(0));
  const int ids = g.indices(node, node.input(1));
  const Dims d = g.dims(params), index_dims = g.dims(ids);
  if (index_dims.empty()) refuse("scalar indices (rank 1 or more)");
  const int depth = index_dims.back();
  if (depth < 1 || depth > static_cast<int>(d.size())) {
    refuse("an index depth of " + str(depth) + " for params of rank " + str(d.size()));
  }
  Dims out_dims(index_dims.begin(), index_dims.end() - 1);
  out_dims.insert(out_dims.end(), d.begin() + depth, d.end());
  if (out_dims.size() > 4) refuse("an output of rank " + str(out_dims.size()) + " (at most 4)");
  int64_t slice = 1;
  for (size_t i = static_cast<size_t>(depth); i < d.size(); ++i) slice *= d[i];
  Params p{};
  const Shape4 ps = g.shape(params);
  set4(p, 1, depth, ps.c, ps.c4());
  int64_t stride = slice;
  for (int i = depth - 1; i >= 0; --i) {
    p[8 + i] = d[static_cast<size_t>(i)];
    p[12 + i] = static_cast<int32_t>(stride);
    stride *= d[static_cast<size_t>(i)];
  }
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  set4(p, 0, static_cast<int32_t>(s.vec4s()), s.c, s.c4(), static_cast<int32_t>(slice));
  const int check = g.check_word(g.label() + ": a GATHER_ND index outside its dimension");
  g.dispatch("gather_nd", {}, grid_1d(s.vec4s()), {out, check, params, ids}, p, 2);
}

}  // namespace baton::vulkan
