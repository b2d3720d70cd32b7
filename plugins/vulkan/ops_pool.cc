// Pooling and reductions: AVERAGE_POOL_2D and MAX_POOL_2D over a window (an average counts only the
// window's elements inside the input, as TFLite does), MEAN over the spatial axes of NHWC, the middle axis
// of [N, S, C] or the last axis with keep_dims (a layer norm's; other axes: ops_reduce.cc), and SOFTMAX
// along the last axis. The
// reductions give each output a workgroup whose invocations share the work and combine it in shared
// memory.
#include <algorithm>

#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {
namespace {

uint32_t pow2_local(int64_t work, uint32_t cap) {
  uint32_t l = 1;
  while (l < cap && static_cast<int64_t>(l) < work) l *= 2;
  return l;
}

}  // namespace

void plan_pool(GraphBuilder& g, const NodeView& node) {
  const bool is_max = node.code() == BATON_OP_MAX_POOL_2D;
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  if (d.size() != 4) refuse("input of rank " + str(d.size()) + " (NHWC rank 4 only)");
  const baton_pool_options& o = node.options().u.pool;
  const int act = g.activation(node, o.activation);
  const Window h = window(o.padding, d[1], o.filter_h, o.stride_h, 1, "height");
  const Window w = window(o.padding, d[2], o.filter_w, o.stride_w, 1, "width");
  const int out = g.define(output, {d[0], h.out, w.out, d[3]});
  const int32_t c4 = g.shape(in).c4();
  Params p{};
  set4(p, 0, d[1], d[2], c4, d[3]);
  set4(p, 1, h.out, w.out, h.before, w.before);
  set4(p, 2, d[0]);
  g.dispatch("pool2d",
             {{"KH", str(o.filter_h)}, {"KW", str(o.filter_w)}, {"SH", str(o.stride_h)}, {"SW", str(o.stride_w)},
              {"ACT", str(act)}, {"MAXPOOL", is_max ? "1" : "0"}},
             grid_3d(c4, w.out, static_cast<int64_t>(d[0]) * h.out), {out, in}, p);
}

void plan_mean(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  std::vector<int64_t> axes = node.constant_ints(1, "axes");
  for (int64_t& a : axes) a = a < 0 ? a + static_cast<int64_t>(d.size()) : a;
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const bool keep = node.options().u.reducer.keep_dims;
  if (d.size() >= 2 && axes == std::vector<int64_t>{static_cast<int64_t>(d.size()) - 1}) {
    // Over the last axis: one mean per row, the output one channel wide.
    if (!keep) return plan_reduce(g, node);
    Dims out_dims = d;
    out_dims.back() = 1;
    const int out = g.define(output, out_dims);
    const Shape4 s = g.shape(in);
    Params p{};
    set4(p, 0, static_cast<int32_t>(s.rows()), s.c4(), s.c, float_bits(1.0f / static_cast<float>(s.c)));
    g.dispatch("mean_last", {}, grid_1d(s.rows()), {out, in}, p);
    return;
  }
  // Over the spatial axes of [N, H, W, C], or the middle axis of [N, S, C] (a sequence pooled): N rows of
  // C out, each the mean of a run of rows of the input.
  const bool spatial = d.size() == 4 && axes == std::vector<int64_t>{1, 2};
  const bool sequence = d.size() == 3 && axes == std::vector<int64_t>{1};
  if (!spatial && !sequence) return plan_reduce(g, node);  // any other axes, one invocation per output
  const int32_t c = d.back();
  Dims out_dims{d[0], c};
  if (keep) out_dims = spatial ? Dims{d[0], 1, 1, c} : Dims{d[0], 1, c};
  const int out = g.define(output, out_dims);
  const int32_t c4 = g.shape(in).c4();
  const int64_t area = spatial ? static_cast<int64_t>(d[1]) * d[2] : d[1];
  Grid grid;
  grid.local = {pow2_local(area, 64), 1, 1};
  grid.groups = {static_cast<uint32_t>(c4), static_cast<uint32_t>(d[0]), 1};
  Params p{};
  set4(p, 0, static_cast<int32_t>(area), c4, d[0], float_bits(1.0f / static_cast<float>(area)));
  g.dispatch("mean", {}, grid, {out, in}, p);
}

void plan_softmax(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  if (d.empty()) refuse("softmax of a scalar");
  const int out = g.define(output, d);
  const Shape4 s = g.shape(in);
  const int64_t rows = s.rows();
  Grid grid;
  grid.local = {pow2_local(s.c4(), 64), 1, 1};
  const int64_t gx = std::min<int64_t>(rows, 65535);
  grid.groups = {static_cast<uint32_t>(gx), static_cast<uint32_t>(ceil_div(rows, gx)), 1};
  Params p{};
  set4(p, 0, s.c4(), s.c, static_cast<int32_t>(rows), float_bits(node.options().u.softmax.beta));
  g.dispatch("softmax", {}, grid, {out, in}, p);
}

}  // namespace baton::vulkan
