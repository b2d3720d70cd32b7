// Ops that read int32 tensors (dense ints on the device, gpu_graph.h): GATHER, GATHER_ND and SCATTER_ND by
// int32 indices (constant, a partition input, or computed in the partition by a CAST), and CAST between
// int32 and float32. An index out of range fails the run with its value, as TFLite's kernels do.
#include <cstdint>

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

// GATHER_ND's and SCATTER_ND's P.p[2] and P.p[3]: the first `depth` dimensions of the tensor the index
// tuples point into, and their strides in elements (`slice` for the last of them).
void set_indexed_dims(Params& p, const Dims& dims, int depth, int64_t slice) {
  int64_t stride = slice;
  for (int i = depth - 1; i >= 0; --i) {
    p[8 + i] = dims[static_cast<size_t>(i)];
    p[12 + i] = static_cast<int32_t>(stride);
    stride *= dims[static_cast<size_t>(i)];
  }
}

void plan_cast(GraphBuilder& g, const NodeView& node) {
  if (node.input_count() != 1 || node.output_count() != 1) refuse("a CAST of " + str(node.input_count()) + " inputs");
  const baton_tensor* in = node.input(0);
  const baton_tensor_type from = node.api()->tensor_type(in), to = node.api()->tensor_type(node.output(0));
  const bool to_int = from == BATON_TYPE_FLOAT32 && to == BATON_TYPE_INT32;
  if (!to_int && !(from == BATON_TYPE_INT32 && to == BATON_TYPE_FLOAT32)) {
    refuse(std::string("a cast from ") + baton_tensor_type_name(from) + " to " + baton_tensor_type_name(to) +
           " (float32 to int32 and back only)");
  }
  const int src = to_int ? g.value(node, node.float_input(0)) : g.indices(node, in);
  const Dims dims = g.dims(src);
  const int dst = to_int ? g.define_int32(node.int32_output(), dims) : g.define(node.float_output(), dims);
  const Shape4 s = g.shape(dst);
  const int64_t count = to_int ? s.elements() : s.vec4s();
  Params p{};
  set4(p, 0, static_cast<int32_t>(count), s.c, s.c4());
  // A float the host gave is cast from its float32 value, also where the device holds it as float16 (an
  // index one below would pick another row); a float computed on the device is cast as stored.
  const int host = to_int ? g.host_copy(src) : -1;
  g.dispatch("cast", {{"TO_INT", to_int ? (host >= 0 ? "2" : "1") : "0"}}, grid_1d(count), {dst, host >= 0 ? host : src}, p);
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
  set_indexed_dims(p, d, depth, slice);
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  set4(p, 0, static_cast<int32_t>(s.vec4s()), s.c, s.c4(), static_cast<int32_t>(slice));
  const int check = g.check_word(g.label() + ": a GATHER_ND index outside its dimension");
  g.dispatch("gather_nd", {}, grid_1d(s.vec4s()), {out, check, params, ids}, p, 2);
}

// Each output element reads every index tuple (no atomics, and sums in TFLite's order): bounded so a
// large scatter goes to a CPU kernel that walks the tuples once.
constexpr int64_t kMaxScatterPairs = int64_t{1} << 26;

void plan_scatter_nd(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int ids = g.indices(node, node.input(0));
  const int updates = g.value(node, node.float_input(1));
  const std::vector<int64_t> shape = node.constant_ints(2, "shape");
  const Dims index_dims = g.dims(ids), ud = g.dims(updates);
  if (index_dims.empty()) refuse("scalar indices (rank 1 or more)");
  const int depth = index_dims.back();
  if (depth < 1 || depth > static_cast<int>(shape.size())) {
    refuse("index tuples of length " + str(depth) + " for an output of rank " + str(shape.size()));
  }
  if (shape.size() > 4) refuse("an output of rank " + str(shape.size()) + " (at most 4)");
  Dims out_dims;
  int64_t out_count = 1;  // checked as it grows: a shape of large dimensions must not overflow it
  for (int64_t d : shape) {
    if (d <= 0 || d > INT32_MAX) refuse("an output dimension of " + str(d));
    out_dims.push_back(static_cast<int32_t>(d));
    out_count *= d;
    if (out_count > INT32_MAX) refuse("an output shape of more than 2^31 elements");
  }
  Dims expected(index_dims.begin(), index_dims.end() - 1);
  expected.insert(expected.end(), out_dims.begin() + depth, out_dims.end());
  if (expected != ud) refuse("updates " + dims_text(ud) + " do not match indices and the shape (" + dims_text(expected) + ")");
  const int64_t tuples = element_count(index_dims) / depth;
  if (tuples * out_count > kMaxScatterPairs) {
    refuse(str(tuples) + " index tuples into " + str(out_count) + " elements (at most 2^26 pairs)");
  }
  int64_t slice = 1;
  for (size_t i = static_cast<size_t>(depth); i < out_dims.size(); ++i) slice *= out_dims[i];
  Params p{};
  const Shape4 us = g.shape(updates);
  set4(p, 1, depth, us.c, us.c4(), static_cast<int32_t>(tuples));
  set_indexed_dims(p, out_dims, depth, slice);
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  set4(p, 0, static_cast<int32_t>(s.vec4s()), s.c, s.c4(), static_cast<int32_t>(slice));
  const int check = g.check_word(g.label() + ": a SCATTER_ND index outside its dimension");
  g.dispatch("scatter_nd", {}, grid_1d(s.vec4s()), {out, check, updates, ids}, p, 2);
}

}  // namespace baton::vulkan
