// Ops that move data: PAD and PADV2, RESHAPE, CONCATENATION, DEPTH_TO_SPACE, RESIZE_BILINEAR,
// RESIZE_NEAREST_NEIGHBOR, STRIDED_SLICE and TRANSPOSE. Where channels stay in whole vec4s the shaders copy
// vec4s; where they do not (a channel offset or count that is not a multiple of 4, a TRANSPOSE that moves
// the last axis) they gather lane by lane. Their int32 forms are in ops_int.cc.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {

void plan_reshape_into(GraphBuilder& g, int dst, int src) {
  const Shape4 to = g.shape(dst), from = g.shape(src);
  if (to.c == from.c) {
    g.copy(dst, src, to.padded_bytes(g.element_bytes()));  // same rows of the same vec4s
    return;
  }
  Params p{};
  set4(p, 0, static_cast<int32_t>(to.vec4s()), to.c, to.c4(), from.c);
  set4(p, 1, from.c4());
  g.dispatch("reshape", {}, grid_1d(to.vec4s()), {dst, src}, p);
}

int reshaped(GraphBuilder& g, int src, const Dims& dims) {
  const int dst = g.scratch(dims);
  plan_reshape_into(g, dst, src);
  return dst;
}

void plan_reshape(GraphBuilder& g, const NodeView& node) {
  const bool ints = node.int32_input(0);  // dense ints: the same bytes under the new shape
  const baton_tensor* output = ints ? node.int32_output() : node.float_output();
  const int in = ints ? g.indices(node, node.input(0)) : g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  std::vector<int64_t> target;
  if (node.optional_input(1)) {
    target = node.constant_ints(1, "shape");
  } else if (node.options().u.reshape.new_shape_count >= 0) {
    const baton_reshape_options& o = node.options().u.reshape;
    target.assign(o.new_shape, o.new_shape + o.new_shape_count);
  } else {
    for (int32_t x : node.shape(output)) target.push_back(x);
  }
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && unknown < 0) {
      unknown = static_cast<int>(i);
    } else if (target[i] <= 0) {
      refuse("new shape has a dimension of " + str(target[i]));
    } else {
      known *= target[i];
    }
  }
  const int64_t total = element_count(d);
  if (unknown >= 0) {
    if (total % known != 0) refuse("new shape does not divide the input's " + str(total) + " elements");
    target[static_cast<size_t>(unknown)] = total / known;
  }
  if (target.size() > 5 || (target.size() == 5 && target[0] != 1)) {
    refuse("new shape of rank " + str(target.size()) + " (at most 4, or 5 with a first dimension of 1)");
  }
  Dims out_dims(target.begin(), target.end());
  if (element_count(out_dims) != total) refuse("new shape " + dims_text(out_dims) + " does not hold input " + dims_text(d));
  if (ints) {
    g.copy(g.define_int32(output, out_dims), in, total * 4);
    return;
  }
  const int out = g.define(output, out_dims);
  plan_reshape_into(g, out, in);
}

PadView resolve_pad(const NodeView& node, const Dims& d) {
  const std::vector<int64_t> pads = node.constant_ints(1, "paddings");
  if (d.size() > 4 || pads.size() != 2 * d.size()) refuse("paddings do not have two values per input dimension");
  PadView v;
  v.out_dims.resize(d.size());
  const size_t lead = 4 - d.size();
  for (size_t i = 0; i < d.size(); ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) refuse("negative padding (cropping)");
    if (pads[2 * i] + pads[2 * i + 1] + d[i] > (int64_t{1} << 30)) refuse("padding too large");
    v.before[lead + i] = static_cast<int32_t>(pads[2 * i]);
    v.out_dims[i] = d[i] + static_cast<int32_t>(pads[2 * i] + pads[2 * i + 1]);
  }
  return v;
}

void plan_pad(GraphBuilder& g, const NodeView& node) {
  if (node.int32_input(0)) return plan_int_pad(g, node);
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const PadView pad = resolve_pad(node, g.dims(in));
  float value = 0.0f;
  if (node.code() == BATON_OP_PADV2 && node.optional_input(2)) {
    const baton_tensor* v = node.constant_float_input(2, "constant value");
    if (element_count(node.shape(v)) != 1) refuse("constant value is not a scalar");
    std::memcpy(&value, node.floats(v), sizeof value);
  }
  const int out = g.define(output, pad.out_dims);
  const Shape4 s = g.shape(out), si = g.shape(in);
  const int32_t* before = pad.before;
  const bool vec = before[3] % 4 == 0 && si.c % 4 == 0;
  Params p{};
  set4(p, 0, s.n, s.h, s.w, s.c);
  set4(p, 1, si.n, si.h, si.w, si.c);
  set4(p, 2, before[0], before[1], before[2], before[3]);
  set4(p, 3, float_bits(value), 0, s.c4(), si.c4());
  g.dispatch("pad", {{"CH_VEC", vec ? "1" : "0"}}, grid_3d(s.c4(), s.w, static_cast<int64_t>(s.n) * s.h), {out, in}, p);
}

void plan_concatenation(GraphBuilder& g, const NodeView& node) {
  if (node.input_count() > 0 && node.int32_input(0)) return plan_int_concatenation(g, node);
  const baton_tensor* output = node.float_output();
  const int32_t count = node.input_count();
  if (count < 1) refuse("no inputs");
  const baton_concat_options& o = node.options().u.concat;
  const int act = g.activation(node, o.activation);
  std::vector<int> ins;
  for (int32_t i = 0; i < count; ++i) ins.push_back(g.value(node, node.float_input(i)));
  const Dims first = g.dims(ins[0]);
  const int32_t rank = static_cast<int32_t>(first.size());
  int32_t axis = o.axis < 0 ? o.axis + rank : o.axis;
  if (axis < 0 || axis >= rank) refuse("axis " + str(o.axis) + " for inputs of rank " + str(rank));
  Dims out_dims = first;
  out_dims[axis] = 0;
  for (int id : ins) {
    const Dims& d = g.dims(id);
    if (static_cast<int32_t>(d.size()) != rank) refuse("inputs of different ranks");
    for (int32_t k = 0; k < rank; ++k) {
      if (k != axis && d[k] != first[k]) refuse("inputs " + dims_text(first) + " and " + dims_text(d) + " differ off the axis");
    }
    out_dims[axis] += d[axis];
  }
  const int out = g.define(output, out_dims);
  const Shape4 so = g.shape(out);
  const int32_t axis4 = axis + (4 - rank);
  if (axis4 < 0) refuse("a CONCATENATION along the first axis of rank 5");
  int32_t offset = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Shape4 si = g.shape(ins[i]);
    int32_t off[4] = {0, 0, 0, 0};
    off[axis4] = offset;
    const int32_t extent = axis4 == 0 ? si.n : axis4 == 1 ? si.h : axis4 == 2 ? si.w : si.c;
    const bool last = i + 1 == ins.size();
    // Whole vec4s when the channel offset is a multiple of 4 and the input's zero lanes land nowhere a
    // neighbour writes: its channels fill whole vec4s, it is the last along the channels (its zero lanes
    // are the output's), or the axis is not the channels (same channels in and out).
    const bool vec = off[3] % 4 == 0 && (si.c % 4 == 0 || last || axis4 != 3);
    Params p{};
    set4(p, 0, si.n, si.h, si.w, si.c);
    set4(p, 1, so.n, so.h, so.w, so.c);
    set4(p, 2, off[0], off[1], off[2], off[3]);
    set4(p, 3, 0, si.c4(), so.c4());
    g.dispatch("concat", {{"VEC", vec ? "1" : "0"}, {"ZERO_TAIL", !vec && last && axis4 == 3 ? "1" : "0"}, {"ACT", str(act)}},
               grid_3d(si.c4(), si.w, static_cast<int64_t>(si.n) * si.h), {out, ins[i]}, p);
    offset += extent;
  }
}

void plan_depth_to_space(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  if (d.size() != 4) refuse("input of rank " + str(d.size()) + " (NHWC rank 4 only)");
  const int32_t block = node.options().u.block.block_size;
  if (block < 1) refuse("block size " + str(block));
  if (d[3] % (block * block) != 0) refuse("channels " + str(d[3]) + " are not a multiple of block size squared");
  const int out = g.define(output, {d[0], d[1] * block, d[2] * block, d[3] / (block * block)});
  const Shape4 s = g.shape(out);
  Params p{};
  set4(p, 0, s.n, s.h, s.w, s.c);
  set4(p, 1, d[1], d[2], d[3], block);
  set4(p, 2, 0, s.c4(), g.shape(in).c4());
  g.dispatch("depth_to_space", {{"VEC", s.c % 4 == 0 ? "1" : "0"}}, grid_3d(s.c4(), s.w, static_cast<int64_t>(s.n) * s.h),
             {out, in}, p);
}

namespace {

// A RESIZE_*'s output height and width (input 1), after checking the input is NHWC.
std::pair<int32_t, int32_t> resize_size(const NodeView& node, const Dims& d) {
  if (d.size() != 4) refuse("input of rank " + str(d.size()) + " (NHWC rank 4 only)");
  const std::vector<int64_t> size = node.constant_ints(1, "size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1 || size[0] > (1 << 20) || size[1] > (1 << 20)) {
    refuse("size is not two positive values");
  }
  return {static_cast<int32_t>(size[0]), static_cast<int32_t>(size[1])};
}

}  // namespace

void plan_resize_bilinear(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  const auto [oh, ow] = resize_size(node, d);
  const baton_resize_options& o = node.options().u.resize;
  if (o.align_corners && o.half_pixel_centers) refuse("align_corners together with half_pixel_centers");
  const int out = g.define(output, {d[0], oh, ow, d[3]});
  auto scale = [&](int32_t in_size, int32_t out_size) {
    return o.align_corners && out_size > 1 ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                                           : static_cast<float>(in_size) / static_cast<float>(out_size);
  };
  const Shape4 s = g.shape(out);
  Params p{};
  set4(p, 0, s.n, oh, ow, s.c4());
  set4(p, 1, d[1], d[2]);
  set4(p, 2, float_bits(scale(d[1], oh)), float_bits(scale(d[2], ow)));
  g.dispatch("resize_bilinear", {{"HALF_PIXEL", o.half_pixel_centers ? "1" : "0"}},
             grid_3d(s.c4(), ow, static_cast<int64_t>(s.n) * oh), {out, in}, p);
}

std::array<int32_t, 4> transpose_perm4(const NodeView& node, const Dims& d, Dims& out_dims) {
  const std::vector<int64_t> perm = node.constant_ints(1, "perm");
  const int rank = static_cast<int>(d.size());
  if (rank < 1 || rank > 5 || static_cast<int>(perm.size()) != rank) refuse("TRANSPOSE of rank 1 to 5 with a whole perm");
  if (rank == 5 && perm[0] != 0) refuse("a rank-5 TRANSPOSE that moves the first axis");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : perm) {
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)]) refuse("perm is not a permutation of the axes");
    seen[static_cast<size_t>(a)] = true;
  }
  // Leading axes of a lower rank are ones and stay in place; so does the first axis (of size 1) of rank 5.
  const int lead = 4 - rank;
  std::array<int32_t, 4> perm4{0, 1, 2, 3};
  out_dims.assign(static_cast<size_t>(rank), 0);
  for (int i = 0; i < rank; ++i) {
    if (lead + i >= 0) perm4[static_cast<size_t>(lead + i)] = lead + static_cast<int32_t>(perm[static_cast<size_t>(i)]);
    out_dims[static_cast<size_t>(i)] = d[static_cast<size_t>(perm[static_cast<size_t>(i)])];
  }
  return perm4;
}

void plan_transpose(GraphBuilder& g, const NodeView& node) {
  if (node.int32_input(0)) return plan_int_transpose(g, node);
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  Dims out_dims;
  const std::array<int32_t, 4> perm4 = transpose_perm4(node, g.dims(in), out_dims);
  const Shape4 si = g.shape(in);
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  Params p{};
  set4(p, 0, s.n, s.h, s.w, s.c4());
  const Grid grid = grid_3d(s.c4(), s.w, static_cast<int64_t>(s.n) * s.h);
  if (perm4[3] == 3) {
    // The last axis stays last: whole vec4s from the input row of each output row (in rows of the input).
    const int32_t rows[3] = {si.h * si.w, si.w, 1};
    set4(p, 1, rows[perm4[0]], rows[perm4[1]], rows[perm4[2]]);
    g.dispatch("transpose", {}, grid, {out, in}, p);
    return;
  }
  // The channels move: lane by lane, at the input's element strides of the axes the output's come from.
  const int32_t row = si.c4() * 4;
  const int32_t elements[4] = {si.h * si.w * row, si.w * row, row, 1};
  set4(p, 1, elements[perm4[0]], elements[perm4[1]], elements[perm4[2]], elements[perm4[3]]);
  set4(p, 2, s.c);
  g.dispatch("transpose", {{"LANES", "1"}}, grid, {out, in}, p);
}

// TFLite's source row (or column) of an output row of RESIZE_NEAREST_NEIGHBOR, in its float arithmetic.
int32_t nearest_source(int32_t out_at, int32_t in_size, int32_t out_size, bool align_corners, bool half_pixel) {
  const float scale = align_corners && out_size > 1 ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                                                    : static_cast<float>(in_size) / static_cast<float>(out_size);
  const float v = (static_cast<float>(out_at) + (half_pixel ? 0.5f : 0.0f)) * scale;
  // align_corners rounds half away from zero, else floor.
  int32_t at = std::min(static_cast<int32_t>(align_corners ? std::round(v) : std::floor(v)), in_size - 1);
  return half_pixel ? std::max(at, 0) : at;
}

void plan_resize_nearest(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  const std::pair<int32_t, int32_t> size = resize_size(node, d);
  const baton_resize_options o = node.options().u.resize;
  const int32_t oh = size.first, ow = size.second, ih = d[1], iw = d[2];
  const int out = g.define(output, {d[0], oh, ow, d[3]});
  const int tables = g.constant(static_cast<size_t>(oh) + static_cast<size_t>(ow), [=](float* t) {
    for (int32_t y = 0; y < oh; ++y) t[y] = static_cast<float>(nearest_source(y, ih, oh, o.align_corners, o.half_pixel_centers));
    for (int32_t x = 0; x < ow; ++x) t[oh + x] = static_cast<float>(nearest_source(x, iw, ow, o.align_corners, o.half_pixel_centers));
  }, /*exact=*/true);
  const Shape4 s = g.shape(out);
  Params p{};
  set4(p, 0, s.n, oh, ow, s.c4());
  set4(p, 1, ih, iw);
  g.dispatch("resize_nearest", {}, grid_3d(s.c4(), ow, static_cast<int64_t>(s.n) * oh), {out, in, tables}, p);
}

SliceView resolve_strided_slice(const NodeView& node, const Dims& d) {
  const int rank = static_cast<int>(d.size());
  if (rank < 1 || rank > 5) refuse("input of rank " + str(d.size()) + " (1 to 5)");
  const std::vector<int64_t> begin = node.constant_ints(1, "begin"), end = node.constant_ints(2, "end"),
                             strides = node.constant_ints(3, "strides");
  if (static_cast<int>(begin.size()) != rank || end.size() != begin.size() || strides.size() != begin.size()) {
    refuse("begin, end and strides need one value per input axis");
  }
  const baton_strided_slice_options& o = node.options().u.strided_slice;
  if (o.ellipsis_mask || o.new_axis_mask) refuse("ellipsis_mask and new_axis_mask are not supported");
  if (o.offset) refuse("the offset option is not supported");
  // Each axis as TFLite resolves it: masks, negative positions, clamping, the count of steps.
  const int lead = 4 - rank;
  SliceView v;
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = d[static_cast<size_t>(i)], s = strides[static_cast<size_t>(i)];
    if (s == 0) refuse("a stride of 0");
    const bool shrink = (o.shrink_axis_mask >> i) & 1;
    int64_t b = begin[static_cast<size_t>(i)], e = end[static_cast<size_t>(i)];
    if ((o.begin_mask >> i) & 1 && !shrink) {
      b = s > 0 ? 0 : dim - 1;
    } else {
      if (b < 0) b += dim;
      b = s > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, -1, dim - 1);
    }
    int64_t count;
    if (shrink) {
      if (b < 0 || b >= dim) refuse("a shrunk axis begins outside the input");
      count = 1;
    } else {
      if ((o.end_mask >> i) & 1) {
        e = s > 0 ? dim : -1;
      } else {
        if (e < 0) e += dim;
        e = s > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
      }
      count = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s) : std::max<int64_t>(0, (b - e - s - 1) / -s);
    }
    if (count == 0) refuse("an empty slice");
    if (lead + i >= 0) {  // (the first axis of rank 5 is one long: it starts at 0)
      v.start[lead + i] = static_cast<int32_t>(b);
      v.step[lead + i] = shrink ? 0 : static_cast<int32_t>(s);
    }
    if (!shrink) v.out_dims.push_back(static_cast<int32_t>(count));
  }
  if (v.out_dims.empty()) refuse("a slice down to a scalar");
  // Which output axis (of the [N, H, W, C] view of the output) each kept input axis reads.
  const int out_lead = 4 - static_cast<int>(v.out_dims.size());
  for (int i = 0, k = 0; i < rank; ++i) {
    if ((o.shrink_axis_mask >> i) & 1) continue;
    const int out_axis = out_lead + k++;
    if (lead + i >= 0) v.from[lead + i] = out_axis;
  }
  return v;
}

void plan_strided_slice(GraphBuilder& g, const NodeView& node) {
  if (node.int32_input(0)) return plan_int_strided_slice(g, node);
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const SliceView v = resolve_strided_slice(node, g.dims(in));
  const int out = g.define(output, v.out_dims);
  const Shape4 s = g.shape(out), si = g.shape(in);
  Params p{};
  set4(p, 0, s.n, s.h, s.w, s.c4());
  set4(p, 1, s.c, si.h, si.w, si.c4());
  set4(p, 2, v.start[0], v.start[1], v.start[2], v.start[3]);
  set4(p, 3, v.step[0], v.step[1], v.step[2], v.step[3]);
  set4(p, 4, v.from[0], v.from[1], v.from[2], v.from[3]);
  g.dispatch("strided_slice", {}, grid_3d(s.c4(), s.w, static_cast<int64_t>(s.n) * s.h), {out, in}, p);
}

}  // namespace baton::vulkan
