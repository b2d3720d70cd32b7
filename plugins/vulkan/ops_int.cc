// Ops on int32 tensors, which stay dense ints on the device (gpu_graph.h): the arithmetic of a detector's
// post-processing (ADD, SUB, MUL, MINIMUM, MAXIMUM, DIV, FLOOR_DIV, FLOOR_MOD, broadcasting like numpy, as
// TFLite's integer kernels compute; a zero divisor fails the run) and the moves of index tensors
// (CONCATENATION, STRIDED_SLICE, TRANSPOSE, PAD and PADV2), each one strided copy per input (int_copy.comp).
// Fused activations on ints are refused, as the builtin pack refuses them.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {
namespace {

using Dims4 = std::array<int32_t, 4>;

// An int32 operand: a constant, a partition input or an earlier node's int output, of rank at most 4.
int int_operand(GraphBuilder& g, const NodeView& node, int32_t i) {
  const int id = g.indices(node, node.input(i));
  if (g.dims(id).size() > 4) refuse("int32 input " + str(i) + " of rank " + str(g.dims(id).size()) + " (at most 4)");
  if (element_count(g.dims(id)) == 0) refuse("an empty int32 input " + str(i));
  return id;
}

Dims4 dims4(const Dims& d) {
  Dims4 r{1, 1, 1, 1};
  std::copy(d.begin(), d.end(), r.begin() + static_cast<std::ptrdiff_t>(4 - d.size()));
  return r;
}

// Dense strides (in ints) of a [N, H, W, C] view.
Dims4 strides4(const Dims4& d) { return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}; }

// One int_copy dispatch: `region` of the output at `out_offset` through `out_strides`, from the input at
// `in_offset` through `in_strides`.
void int_copy(GraphBuilder& g, int out, int in, const Dims4& region, const Dims4& out_strides, int32_t out_offset,
              const Dims4& in_strides, int32_t in_offset) {
  const int64_t count = static_cast<int64_t>(region[0]) * region[1] * region[2] * region[3];
  Params p{};
  set4(p, 0, region[0], region[1], region[2], region[3]);
  set4(p, 1, out_strides[0], out_strides[1], out_strides[2], out_strides[3]);
  set4(p, 2, in_strides[0], in_strides[1], in_strides[2], in_strides[3]);
  set4(p, 3, static_cast<int32_t>(count), out_offset, in_offset);
  g.dispatch("int_copy", {}, grid_1d(count), {out, in}, p);
}

// An operand's dense strides against the output's [N, H, W, C]: zero along a dimension it is broadcast on.
Dims4 broadcast_strides(const Dims& d, const Dims4& out) {
  const Dims4 d4 = dims4(d), s = strides4(d4);
  Dims4 r{};
  for (size_t k = 0; k < 4; ++k) r[k] = d4[k] == out[k] ? s[k] : 0;
  return r;
}

}  // namespace

void plan_int_binary(GraphBuilder& g, const NodeView& node) {
  int op = 0;
  switch (node.code()) {
    case BATON_OP_ADD: op = 0; break;
    case BATON_OP_SUB: op = 1; break;
    case BATON_OP_MUL: op = 2; break;
    case BATON_OP_MINIMUM: op = 3; break;
    case BATON_OP_MAXIMUM: op = 4; break;
    case BATON_OP_DIV: op = 5; break;
    case BATON_OP_FLOOR_DIV: op = 6; break;
    case BATON_OP_FLOOR_MOD: op = 7; break;
    default: refuse("int32 inputs (float32 only)");
  }
  const bool fused = op <= 2 || op == 5;
  if (fused && g.activation(node, node.options().u.elementwise.activation) != 0) {
    refuse("a fused activation on int32 inputs");
  }
  if (!node.int32_input(1)) refuse("inputs of different types");
  const baton_tensor* output = node.int32_output();
  const int a = int_operand(g, node, 0);
  const int b = int_operand(g, node, 1);
  const Dims out_dims = broadcast_dims(g.dims(a), g.dims(b));
  const int out = g.define_int32(output, out_dims);
  const Dims4 o4 = dims4(out_dims), sa = broadcast_strides(g.dims(a), o4), sb = broadcast_strides(g.dims(b), o4);
  const int64_t count = element_count(out_dims);
  Params p{};
  set4(p, 0, o4[0], o4[1], o4[2], o4[3]);
  set4(p, 1, sa[0], sa[1], sa[2], sa[3]);
  set4(p, 2, sb[0], sb[1], sb[2], sb[3]);
  set4(p, 3, static_cast<int32_t>(count));
  if (op < 5) {
    g.dispatch("int_binary", {{"OP", str(op)}}, grid_1d(count), {out, a, b}, p);
    return;
  }
  const int check = g.check_word(g.label() + ": an int32 division by zero (or of INT32_MIN by -1), the divisor");
  g.dispatch("int_binary", {{"OP", str(op)}}, grid_1d(count), {out, check, a, b}, p, 2);
}

void plan_int_concatenation(GraphBuilder& g, const NodeView& node) {
  const baton_concat_options& o = node.options().u.concat;
  if (g.activation(node, o.activation) != 0) refuse("a fused activation on int32 inputs");
  const baton_tensor* output = node.int32_output();
  std::vector<int> ins;
  for (int32_t i = 0; i < node.input_count(); ++i) {
    if (!node.int32_input(i)) refuse("inputs of different types");
    ins.push_back(int_operand(g, node, i));
  }
  const Dims first = g.dims(ins[0]);
  const int32_t rank = static_cast<int32_t>(first.size());
  const int32_t axis = o.axis < 0 ? o.axis + rank : o.axis;
  if (axis < 0 || axis >= rank) refuse("axis " + str(o.axis) + " for inputs of rank " + str(rank));
  Dims out_dims = first;
  out_dims[static_cast<size_t>(axis)] = 0;
  for (int id : ins) {
    const Dims& d = g.dims(id);
    if (static_cast<int32_t>(d.size()) != rank) refuse("inputs of different ranks");
    for (int32_t k = 0; k < rank; ++k) {
      if (k != axis && d[static_cast<size_t>(k)] != first[static_cast<size_t>(k)]) {
        refuse("inputs " + dims_text(first) + " and " + dims_text(d) + " differ off the axis");
      }
    }
    out_dims[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
  }
  const int out = g.define_int32(output, out_dims);
  const Dims4 os = strides4(dims4(out_dims));
  const size_t axis4 = static_cast<size_t>(axis + 4 - rank);
  int32_t offset = 0;
  for (int id : ins) {
    const Dims4 d4 = dims4(g.dims(id));
    int_copy(g, out, id, d4, os, offset * os[axis4], strides4(d4), 0);
    offset += d4[axis4];
  }
}

void plan_int_strided_slice(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.int32_output();
  const int in = int_operand(g, node, 0);
  const SliceView v = resolve_strided_slice(node, g.dims(in));
  const int out = g.define_int32(output, v.out_dims);
  const Dims4 region = dims4(v.out_dims), is = strides4(dims4(g.dims(in)));
  // Each kept input axis steps along the output axis it feeds; the shrunk ones only offset the start.
  Dims4 from_strides{0, 0, 0, 0};
  int32_t in_offset = 0;
  for (size_t i = 0; i < 4; ++i) {
    in_offset += v.start[i] * is[i];
    if (v.from[i] >= 0) from_strides[static_cast<size_t>(v.from[i])] = v.step[i] * is[i];
  }
  int_copy(g, out, in, region, strides4(region), 0, from_strides, in_offset);
}

void plan_int_transpose(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.int32_output();
  const int in = int_operand(g, node, 0);
  Dims out_dims;
  const Dims4 perm4 = transpose_perm4(node, g.dims(in), out_dims);
  const int out = g.define_int32(output, out_dims);
  const Dims4 region = dims4(out_dims), is = strides4(dims4(g.dims(in)));
  Dims4 from_strides{};
  for (size_t k = 0; k < 4; ++k) from_strides[k] = is[static_cast<size_t>(perm4[k])];
  int_copy(g, out, in, region, strides4(region), 0, from_strides, 0);
}

void plan_int_pad(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.int32_output();
  const int in = int_operand(g, node, 0);
  const Dims d = g.dims(in);
  int32_t value = 0;
  if (node.code() == BATON_OP_PADV2 && node.optional_input(2)) {
    const std::vector<int64_t> v = node.constant_ints(2, "constant value");
    if (v.size() != 1) refuse("constant value is not a scalar");
    value = static_cast<int32_t>(v[0]);
  }
  const PadView pad = resolve_pad(node, d);
  const Dims& out_dims = pad.out_dims;
  const int out = g.define_int32(output, out_dims);
  const Dims4 region = dims4(out_dims), in4 = dims4(d), is = strides4(in4), os = strides4(region);
  const int64_t count = element_count(out_dims);
  Params p{};
  set4(p, 0, region[0], region[1], region[2], region[3]);
  set4(p, 1, os[0], os[1], os[2], os[3]);
  set4(p, 2, is[0], is[1], is[2], is[3]);
  set4(p, 3, static_cast<int32_t>(count), 0, 0, value);
  set4(p, 4, pad.before[0], pad.before[1], pad.before[2], pad.before[3]);
  set4(p, 5, in4[0], in4[1], in4[2], in4[3]);
  g.dispatch("int_copy", {{"PAD", "1"}}, grid_1d(count), {out, in}, p);
}

}  // namespace baton::vulkan
