// CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV (and MediaPipe's Convolution2DTransposeBias) and
// FULLY_CONNECTED: weights repacked once into vec4 blocks the shaders
// read in order, bias padded to whole vec4s (zeros when absent). BATCH_MATMUL reads both operands in the
// activation layout as they are (attention's products: neither is a weight).
//
// CONV_2D weights: for each block of 4 output channels, each tap (ky, kx) and each block of 4 input
// channels, four vec4s; vec4 j holds the weights of input channel j of the block for the 4 output
// channels, so acc += in.x * w0 + in.y * w1 + in.z * w2 + in.w * w3 (conv2d.comp, transpose_conv.comp). FULLY_CONNECTED uses
// the same blocks without taps. DEPTHWISE_CONV_2D weights are one vec4 of output channels per tap.
#include <algorithm>

#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {
namespace {

const Dims& rank4(const GraphBuilder& g, int id) {
  const Dims& d = g.dims(id);
  if (d.size() != 4) refuse("input of rank " + std::to_string(d.size()) + " (NHWC rank 4 only)");
  return d;
}

// The bias as whole vec4s: the model's [channels] values, or zeros.
int bias_tensor(GraphBuilder& g, const NodeView& node, int32_t index, int32_t channels) {
  const int32_t c4 = static_cast<int32_t>(ceil_div(channels, 4));
  const float* data = nullptr;
  if (node.optional_input(index)) {
    const baton_tensor* bias = node.constant_float_input(index, "bias");
    if (element_count(node.shape(bias)) != channels) {
      refuse("bias of shape " + dims_text(node.shape(bias)) + " for " + str(channels) + " channels");
    }
    data = node.floats(bias);
  }
  return g.constant(static_cast<size_t>(c4) * 4, [data, channels, c4](float* out) {
    for (int32_t c = 0; c < c4 * 4; ++c) out[c] = data && c < channels ? data[c] : 0.0f;
  });
}

// CONV_2D's (and TRANSPOSE_CONV's) OHWI weights as the blocks conv2d.comp reads.
int conv_weights(GraphBuilder& g, const float* wdata, int32_t oc, int32_t kh, int32_t kw, int32_t ic) {
  const int32_t oc4 = static_cast<int32_t>(ceil_div(oc, 4)), ic4 = static_cast<int32_t>(ceil_div(ic, 4));
  return g.constant(static_cast<size_t>(oc4) * kh * kw * ic4 * 16, [=](float* out) {
    std::fill(out, out + static_cast<size_t>(oc4) * kh * kw * ic4 * 16, 0.0f);
    for (int32_t o = 0; o < oc; ++o) {
      for (int32_t y = 0; y < kh; ++y) {
        for (int32_t x = 0; x < kw; ++x) {
          for (int32_t i = 0; i < ic; ++i) {
            const size_t block = ((static_cast<size_t>(o / 4) * kh + y) * kw + x) * ic4 + i / 4;
            out[(block * 4 + i % 4) * 4 + o % 4] = wdata[((static_cast<size_t>(o) * kh + y) * kw + x) * ic + i];
          }
        }
      }
    }
  });
}

}  // namespace

void plan_conv2d(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* filter = node.constant_float_input(1, "filter");
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = rank4(g, in);
  const Dims f = node.shape(filter);
  if (f.size() != 4) refuse("filter of rank " + str(f.size()));
  if (f[3] != d[3]) {
    refuse("filter of " + str(f[3]) + " input channels for an input of " + str(d[3]) + " (grouped convolution not supported)");
  }
  const baton_conv_options& o = node.options().u.conv;
  const int act = g.activation(node, o.activation);
  const Window h = window(o.padding, d[1], f[1], o.stride_h, o.dilation_h, "height");
  const Window w = window(o.padding, d[2], f[2], o.stride_w, o.dilation_w, "width");
  const int32_t oc = f[0], kh = f[1], kw = f[2], ic = f[3];
  const int32_t oc4 = static_cast<int32_t>(ceil_div(oc, 4)), ic4 = static_cast<int32_t>(ceil_div(ic, 4));
  const int weights = conv_weights(g, node.floats(filter), oc, kh, kw, ic);
  const int bias = bias_tensor(g, node, 2, oc);
  const int out = g.define(output, {d[0], h.out, w.out, oc});
  // Each invocation computes TILE_X neighbouring pixels of a row for TILE_OC blocks of 4 channels: the
  // input vec4s are loaded once for TILE_OC blocks, the weights once for TILE_X pixels.
  const int32_t tile_x = w.out >= 4 ? 4 : w.out >= 2 ? 2 : 1;
  const int32_t tile_oc = oc4 >= 4 ? 4 : oc4 >= 2 ? 2 : 1;
  const int32_t oc_tiles = static_cast<int32_t>(ceil_div(oc4, tile_oc));
  Params p{};
  set4(p, 0, d[1], d[2], ic4, d[0]);
  set4(p, 1, h.out, w.out, oc4, oc);
  set4(p, 2, h.before, w.before, oc_tiles);
  g.dispatch("conv2d",
             {{"KH", str(kh)}, {"KW", str(kw)}, {"SH", str(o.stride_h)}, {"SW", str(o.stride_w)},
              {"DH", str(o.dilation_h)}, {"DW", str(o.dilation_w)}, {"ACT", str(act)}, {"TILE_X", str(tile_x)},
              {"TILE_OC", str(tile_oc)}},
             grid_3d(ceil_div(w.out, tile_x), h.out, static_cast<int64_t>(d[0]) * oc_tiles), {out, in, weights, bias}, p);
}

void plan_depthwise_conv2d(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* filter = node.constant_float_input(1, "filter");
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const Dims d = rank4(g, in);
  const Dims f = node.shape(filter);
  if (f.size() != 4 || f[0] != 1) refuse("depthwise filter of shape " + dims_text(f) + " (want [1,KH,KW,C*M])");
  if (f[3] % d[3] != 0) {
    refuse("filter channels " + str(f[3]) + " are not a multiple of input channels " + str(d[3]));
  }
  const int32_t multiplier = f[3] / d[3];
  const baton_conv_options& o = node.options().u.conv;
  const int act = g.activation(node, o.activation);
  const Window h = window(o.padding, d[1], f[1], o.stride_h, o.dilation_h, "height");
  const Window w = window(o.padding, d[2], f[2], o.stride_w, o.dilation_w, "width");
  const int32_t kh = f[1], kw = f[2], oc = f[3];
  const int32_t oc4 = static_cast<int32_t>(ceil_div(oc, 4));
  const float* wdata = node.floats(filter);
  const int weights = g.constant(static_cast<size_t>(kh) * kw * oc4 * 4, [=](float* out) {
    for (int32_t t = 0; t < kh * kw; ++t) {
      for (int32_t c = 0; c < oc4 * 4; ++c) out[static_cast<size_t>(t) * oc4 * 4 + c] = c < oc ? wdata[static_cast<size_t>(t) * oc + c] : 0.0f;
    }
  });
  const int bias = bias_tensor(g, node, 2, oc);
  const int out = g.define(output, {d[0], h.out, w.out, oc});
  const int32_t tile_x = w.out >= 4 ? 4 : w.out >= 2 ? 2 : 1;
  Params p{};
  set4(p, 0, d[1], d[2], g.shape(in).c4(), d[3]);
  set4(p, 1, h.out, w.out, oc4, d[0]);
  set4(p, 2, h.before, w.before);
  g.dispatch("depthwise_conv2d",
             {{"KH", str(kh)}, {"KW", str(kw)}, {"SH", str(o.stride_h)}, {"SW", str(o.stride_w)},
              {"DH", str(o.dilation_h)}, {"DW", str(o.dilation_w)}, {"ACT", str(act)}, {"TILE_X", str(tile_x)},
              {"DM", str(multiplier)}},
             grid_3d(oc4, ceil_div(w.out, tile_x), static_cast<int64_t>(d[0]) * h.out), {out, in, weights, bias}, p);
}

void plan_fully_connected(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* weights_t = node.constant_float_input(1, "weights");
  const baton_tensor* output = node.float_output();
  const baton_fully_connected_options& o = node.options().u.fully_connected;
  if (o.weights_format != 0) refuse("shuffled weights format");
  const int act = g.activation(node, o.activation);
  int in = g.value(node, node.float_input(0));
  const Dims d = g.dims(in);
  const Dims wd = node.shape(weights_t);
  if (wd.size() != 2) refuse("weights of rank " + str(wd.size()) + " (want [units, depth])");
  const int32_t units = wd[0], depth = wd[1];
  const int64_t n = element_count(d);
  if (n % depth != 0) refuse("input " + dims_text(d) + " is not a whole number of rows of " + str(depth));
  const int32_t rows = static_cast<int32_t>(n / depth);
  Dims out_dims;
  if (o.keep_num_dims) {
    if (d.back() != depth) refuse("input " + dims_text(d) + " does not end in the weights' depth " + str(depth));
    out_dims = d;
    out_dims.back() = units;
  } else {
    out_dims = {rows, units};
  }
  // The shader reads rows of `depth`: an input whose last dimension is not the depth is regrouped first.
  if (d.back() != depth) in = reshaped(g, in, {rows, depth});
  const int32_t k4 = static_cast<int32_t>(ceil_div(depth, 4)), u4 = static_cast<int32_t>(ceil_div(units, 4));
  const float* wdata = node.floats(weights_t);
  const int weights = g.constant(static_cast<size_t>(u4) * k4 * 16, [=](float* out) {
    std::fill(out, out + static_cast<size_t>(u4) * k4 * 16, 0.0f);
    for (int32_t u = 0; u < units; ++u) {
      for (int32_t k = 0; k < depth; ++k) {
        out[((static_cast<size_t>(u / 4) * k4 + k / 4) * 4 + k % 4) * 4 + u % 4] = wdata[static_cast<size_t>(u) * depth + k];
      }
    }
  });
  const int bias = bias_tensor(g, node, 2, units);
  const int out = g.define(output, out_dims);
  // One workgroup per block of 4 units and row; its invocations split the depth and add up in shared
  // memory, so a single row (the usual case) still spreads over the device.
  Grid grid;
  uint32_t lx = 1;
  while (lx < 64 && static_cast<int32_t>(lx) < k4) lx *= 2;
  grid.local = {lx, 1, 1};
  grid.groups = {1, static_cast<uint32_t>(u4), static_cast<uint32_t>(rows)};
  Params p{};
  set4(p, 0, k4, u4, rows, units);
  g.dispatch("fully_connected", {{"ACT", str(act)}}, grid, {out, in, weights, bias}, p);
}

void plan_batch_matmul(GraphBuilder& g, const NodeView& node) {
  const baton_tensor* output = node.float_output();
  const int lhs = g.value(node, node.float_input(0));
  const int rhs = g.value(node, node.float_input(1));
  const auto& o = node.options().u.batch_matmul;
  if (o.adj_x) refuse("BATCH_MATMUL with adj_x");
  const bool adj_y = o.adj_y != 0;
  const Dims l = g.dims(lhs), r = g.dims(rhs);
  if (l.size() < 2 || r.size() < 2) refuse("BATCH_MATMUL operands need rank 2 or more");
  const int32_t m = l[l.size() - 2], k = l.back();
  const int32_t rk = adj_y ? r.back() : r[r.size() - 2], n = adj_y ? r[r.size() - 2] : r.back();
  if (rk != k) refuse("inner dimensions " + std::to_string(k) + " and " + std::to_string(rk) + " differ");
  // The batch dimensions, padded to two (the device view holds rank 4), broadcast like numpy.
  auto batch2 = [](const Dims& d) {
    Dims b(2, 1);
    for (size_t i = 0; i + 2 < d.size(); ++i) b[2 - (d.size() - 2) + i] = d[i];
    return b;
  };
  const Dims lb = batch2(l), rb = batch2(r);
  Dims out_dims;
  const size_t batch_rank = std::max(l.size(), r.size()) - 2;
  Dims ob(2);
  for (size_t i = 0; i < 2; ++i) {
    if (lb[i] != rb[i] && lb[i] != 1 && rb[i] != 1) refuse("batch dimensions " + dims_text(l) + " and " + dims_text(r) + " do not broadcast");
    ob[i] = std::max(lb[i], rb[i]);
  }
  for (size_t i = 2 - batch_rank; i < 2; ++i) out_dims.push_back(ob[i]);
  out_dims.push_back(m);
  out_dims.push_back(n);
  const int out = g.define(output, out_dims);
  const int32_t l_rows = m, r_rows = adj_y ? n : k;  // rows per batch of each operand
  const int32_t n4 = static_cast<int32_t>(ceil_div(n, 4));
  Params p{};
  set4(p, 0, n4, m, ob[0] * ob[1], ob[1]);
  set4(p, 1, k, static_cast<int32_t>(ceil_div(k, 4)), n, 0);
  set4(p, 2, lb[0] == 1 ? 0 : lb[1] * l_rows, lb[1] == 1 ? 0 : l_rows, 0, 0);
  set4(p, 3, rb[0] == 1 ? 0 : rb[1] * r_rows, rb[1] == 1 ? 0 : r_rows, 0, 0);
  g.dispatch("batch_matmul", {{"ADJ_Y", adj_y ? "1" : "0"}}, grid_3d(n4, m, static_cast<int64_t>(ob[0]) * ob[1]),
             {out, lhs, rhs}, p);
}


// TRANSPOSE_CONV: output_shape (constant), OHWI weights, input, optional bias; padding as TFLite computes it
// for the output size. Convolution2DTransposeBias: input, weights, bias, and options of three int32
// (padding 1 SAME / 2 VALID, stride_w, stride_h) from which MediaPipe derives the output size.
void plan_transpose_conv(GraphBuilder& g, const NodeView& node) {
  const bool builtin = node.code() == BATON_OP_TRANSPOSE_CONV;
  const baton_tensor* filter = node.constant_float_input(1, "weights");
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(builtin ? 2 : 0));
  const Dims d = rank4(g, in);
  const Dims f = node.shape(filter);
  if (f.size() != 4) refuse("weights of rank " + str(f.size()));
  if (f[3] != d[3]) refuse("weights of " + str(f[3]) + " input channels for an input of " + str(d[3]));
  const int32_t oc = f[0], kh = f[1], kw = f[2];
  int32_t stride_h = 1, stride_w = 1, out_h = 0, out_w = 0, pad_top = 0, pad_left = 0, act = 0;
  if (builtin) {
    const baton_transpose_conv_options& o = node.options().u.transpose_conv;
    act = g.activation(node, o.activation);
    const std::vector<int64_t> shape = node.constant_ints(0, "output_shape");
    if (shape.size() != 4 || shape[0] != d[0] || shape[3] != oc) {
      refuse("output_shape " + dims_text(Dims(shape.begin(), shape.end())) + " for input " + dims_text(d) + " and " +
             str(oc) + " output channels");
    }
    if (shape[1] < 1 || shape[2] < 1 || shape[1] > (1 << 24) || shape[2] > (1 << 24)) refuse("output_shape out of range");
    out_h = static_cast<int32_t>(shape[1]);
    out_w = static_cast<int32_t>(shape[2]);
    stride_h = o.stride_h;
    stride_w = o.stride_w;
    pad_top = window(o.padding, out_h, kh, stride_h, 1, "height").before;
    pad_left = window(o.padding, out_w, kw, stride_w, 1, "width").before;
  } else {
    if (node.input_count() != 3) refuse("Convolution2DTransposeBias without input, weights and bias");
    size_t size = 0;
    const uint8_t* opts = node.api()->node_custom_options(node.node(), &size);
    if (!opts || size < 12) refuse("Convolution2DTransposeBias options shorter than 12 bytes");
    auto le32 = [&](size_t at) {
      return static_cast<int32_t>(static_cast<uint32_t>(opts[at]) | static_cast<uint32_t>(opts[at + 1]) << 8 |
                                  static_cast<uint32_t>(opts[at + 2]) << 16 | static_cast<uint32_t>(opts[at + 3]) << 24);
    };
    const int32_t padding = le32(0);
    stride_w = le32(4);
    stride_h = le32(8);
    if (padding != 1 && padding != 2) refuse("Convolution2DTransposeBias padding " + str(padding) + " (1 SAME or 2 VALID)");
    if (stride_h < 1 || stride_w < 1 || stride_h > 4096 || stride_w > 4096) refuse("strides out of 1..4096");
    const int32_t total_h = padding == 1 ? std::max(0, kh - (d[1] - 1) % stride_h - 1) : 0;
    const int32_t total_w = padding == 1 ? std::max(0, kw - (d[2] - 1) % stride_w - 1) : 0;
    const int64_t h = int64_t{stride_h} * (d[1] - 1) + kh - total_h, w = int64_t{stride_w} * (d[2] - 1) + kw - total_w;
    if (h < 1 || w < 1 || h > (1 << 24) || w > (1 << 24)) refuse("an output size out of range");
    out_h = static_cast<int32_t>(h);
    out_w = static_cast<int32_t>(w);
    pad_top = total_h / 2;
    pad_left = total_w / 2;
  }
  if (stride_h < 1 || stride_w < 1) refuse("non-positive strides");
  const int weights = conv_weights(g, node.floats(filter), oc, kh, kw, d[3]);
  const int bias = bias_tensor(g, node, builtin ? 3 : 2, oc);
  const int out = g.define(output, {d[0], out_h, out_w, oc});
  const Shape4 s = g.shape(out);
  Params p{};
  set4(p, 0, d[1], d[2], g.shape(in).c4(), d[0]);
  set4(p, 1, out_h, out_w, s.c4());
  set4(p, 2, pad_top, pad_left);
  g.dispatch("transpose_conv",
             {{"KH", str(kh)}, {"KW", str(kw)}, {"SH", str(stride_h)}, {"SW", str(stride_w)}, {"ACT", str(act)}},
             grid_3d(s.c4(), out_w, static_cast<int64_t>(d[0]) * out_h), {out, in, weights, bias}, p);
}

}  // namespace baton::vulkan
