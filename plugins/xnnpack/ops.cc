// Each op: the checks XNNPACK's subgraph API (Debian's 0.0~git20220216) needs, the shape of its output
// computed from its inputs, and the xnn_define_* call. TFLite's SAME padding becomes explicit paddings
// (computed here the way TFLite does), which also covers dilation.
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "baton/tflite_ops.h"

namespace baton::xnnpack {
namespace {


constexpr float kInf = std::numeric_limits<float>::infinity();

struct Range {
  float min = -kInf, max = kInf;
};

Range activation_range(int32_t activation) {
  switch (activation) {
    case BATON_ACT_NONE: return {};
    case BATON_ACT_RELU: return {0.0f, kInf};
    case BATON_ACT_RELU_N1_TO_1: return {-1.0f, 1.0f};
    case BATON_ACT_RELU6: return {0.0f, 6.0f};
    case BATON_ACT_TANH: refuse("fused TANH activation not supported");
    case BATON_ACT_SIGN_BIT: refuse("fused SIGN_BIT activation not supported");
  }
  refuse("unknown fused activation " + std::to_string(activation));
}

// One spatial dimension of a window op (convolution, pooling) as TFLite computes it.
struct Window {
  size_t out = 0, before = 0, after = 0;
};

Window window(int32_t padding, size_t in, int64_t kernel, int64_t stride, int64_t dilation, const char* axis) {
  if (kernel < 1 || stride < 1 || dilation < 1) {
    refuse(std::string("non-positive kernel, stride or dilation along ") + axis);
  }
  const size_t effective = static_cast<size_t>((kernel - 1) * dilation + 1);
  Window w;
  if (padding == BATON_PADDING_SAME) {
    w.out = (in + static_cast<size_t>(stride) - 1) / static_cast<size_t>(stride);
    const size_t needed = (w.out - 1) * static_cast<size_t>(stride) + effective;
    const size_t total = needed > in ? needed - in : 0;
    w.before = total / 2;
    w.after = total - w.before;
  } else if (padding == BATON_PADDING_VALID) {
    if (in < effective) refuse(std::string("the window does not fit the input along ") + axis + " (VALID padding)");
    w.out = (in - effective) / static_cast<size_t>(stride) + 1;
  } else {
    refuse("unknown padding " + std::to_string(padding));
  }
  return w;
}

const Dims& rank4_input(SubgraphBuilder& b, const NodeView& node, const baton_tensor* t) {
  const Dims& d = b.dims(node, t);
  if (d.size() != 4) refuse("input of rank " + std::to_string(d.size()) + " (NHWC rank 4 only)");
  return d;
}

size_t element_count(const Dims& d) {
  size_t n = 1;
  for (size_t x : d) n *= x;
  return n;
}

// The weights of a convolution or fully connected node. Float activations take constant float32
// weights (8-bit weights with float activations are dynamic-range quantization, which this XNNPACK does
// not have); quantized activations take constant weights of the same 8-bit type, per tensor, or for int8
// per output channel along `channel_dim`.
const baton_tensor* weights_input(const NodeView& node, int32_t i, const baton_tensor* input, size_t channel_dim,
                                  const char* what) {
  const baton_host_api* api = node.api();
  const baton_tensor* w = node.input(i);
  const baton_tensor_type type = api->tensor_type(w);
  if (!node.is_quantized(input)) {
    if (type == BATON_TYPE_INT8 || type == BATON_TYPE_UINT8) {
      refuse(std::string(baton_tensor_type_name(type)) + " " + what +
             " with float32 activations (dynamic-range quantization is not in this XNNPACK)");
    }
    return node.constant_float_input(i, what);
  }
  if (type != api->tensor_type(input)) {
    refuse(std::string(baton_tensor_type_name(type)) + " " + what + " with " +
           baton_tensor_type_name(api->tensor_type(input)) + " activations");
  }
  if (!api->tensor_is_constant(w) || !api->tensor_data(w)) refuse(std::string("non-constant ") + what);
  const ValueType t = value_type(api, w);
  if (t.channel_scales && t.channel_dim != channel_dim) {
    refuse(std::string(what) + " quantized per channel along dimension " + std::to_string(t.channel_dim) + " (" +
           std::to_string(channel_dim) + " expected)");
  }
  if (t.datatype == xnn_datatype_qint8 && t.zero_point != 0) refuse(std::string("INT8 ") + what + " with a non-zero zero point");
  return w;
}

// A bias: the model's constant [channels], or zeros the builder keeps alive. Quantized nodes take an
// INT32 bias (scale input_scale * weight_scale, per channel with per-channel weights); an absent one is
// zeros of that type (float zeros and int32 zeros have the same bits, so one kind of owned buffer serves).
uint32_t bias_value(SubgraphBuilder& b, const NodeView& node, int32_t index, size_t channels,
                    const baton_tensor* input = nullptr, const baton_tensor* weights = nullptr) {
  const baton_host_api* api = node.api();
  const bool quantized = input && node.is_quantized(input);
  if (!node.optional_input(index)) {
    if (!quantized) return b.owned_static(std::vector<float>(channels, 0.0f), {channels});
    const ValueType in = value_type(api, input), w = value_type(api, weights);
    ValueType t;
    if (w.channel_scales) {
      std::vector<float> scales(channels);
      for (size_t c = 0; c < channels; ++c) scales[c] = in.scale * w.channel_scales[c];
      t.datatype = xnn_datatype_qcint32;
      t.channel_scales = b.owned_scales(std::move(scales));
      t.channels = channels;
    } else {
      t.datatype = xnn_datatype_qint32;
      t.scale = in.scale * w.scale;
    }
    return b.owned_static(std::vector<float>(channels, 0.0f), {channels}, t);
  }
  const baton_tensor* bias = quantized ? node.input(index) : node.constant_float_input(index, "bias");
  if (element_count(node.shape(bias)) != channels) {
    refuse("bias of shape " + dims_text(node.shape(bias)) + " for " + std::to_string(channels) + " channels");
  }
  if (!quantized) return b.static_value(api->tensor_data(bias), {channels});
  if (api->tensor_type(bias) != BATON_TYPE_INT32) refuse(std::string(baton_tensor_type_name(api->tensor_type(bias))) + " bias (INT32 expected)");
  if (!api->tensor_is_constant(bias) || !api->tensor_data(bias)) refuse("non-constant bias");
  return b.static_value(api->tensor_data(bias), {channels}, value_type(api, bias));
}

// Quantized ops that only move or clamp values (reshape, pad, pooling by max, ReLU) keep the scale and
// zero point: TFLite requires it and XNNPACK assumes it.
void require_same_quantization(const NodeView& node, const baton_tensor* input, const baton_tensor* output) {
  if (!node.is_quantized(input)) return;
  if (!value_type(node.api(), input).same_quantization(value_type(node.api(), output))) {
    refuse("quantized input and output with different scales or zero points");
  }
}

void define_conv2d(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* filter = weights_input(node, 1, input, 0, "filter");
  const baton_tensor* output = node.value_output(input);
  const Dims in = rank4_input(b, node, input);
  const Dims f = node.shape(filter);
  if (f.size() != 4) refuse("filter of rank " + std::to_string(f.size()));
  const size_t groups = f[3] ? in[3] / f[3] : 0;
  if (groups == 0 || in[3] % f[3] != 0 || f[0] % groups != 0) {
    refuse("input channels " + std::to_string(in[3]) + " do not match the filter " + dims_text(f));
  }
  const baton_conv_options& o = node.options().u.conv;
  // A patch embedding (a ViT's first layer): windows of 8x8 or more that do not overlap, over an image's
  // few channels. XNNPACK's indirect convolution steps through such a window a pixel (3 values) at a
  // time; an im2col product takes its whole depth at once, faster at every size measured (0.45 against
  // 0.53 ms for 16x16 patches of 224x224 into 192 channels, 1.65 against 2.6 into 768, one thread).
  // From 4x4 down XNNPACK is the faster one, so those stay.
  if (!node.is_quantized(input) && f[1] * f[2] >= 64 && o.stride_h == static_cast<int32_t>(f[1]) &&
      o.stride_w == static_cast<int32_t>(f[2]) && o.dilation_h == 1 && o.dilation_w == 1 && in[3] <= 4) {
    refuse("a patch embedding (" + std::to_string(f[1]) + "x" + std::to_string(f[2]) +
           " windows that do not overlap, on " + std::to_string(in[3]) +
           " channels): XNNPACK's indirect convolution reads each window a pixel at a time, slower than an "
           "op pack's im2col product");
  }
  const Range range = activation_range(o.activation);
  const Window h = window(o.padding, in[1], static_cast<int64_t>(f[1]), o.stride_h, o.dilation_h, "height");
  const Window w = window(o.padding, in[2], static_cast<int64_t>(f[2]), o.stride_w, o.dilation_w, "width");
  const uint32_t filter_id = b.input(node, filter);
  const uint32_t bias_id = bias_value(b, node, 2, f[0], input, filter);
  const uint32_t input_id = b.input(node, input);
  const uint32_t output_id = b.output(node, output, {in[0], h.out, w.out, f[0]});
  b.check(xnn_define_convolution_2d(b.subgraph(), static_cast<uint32_t>(h.before), static_cast<uint32_t>(w.after),
                                    static_cast<uint32_t>(h.after), static_cast<uint32_t>(w.before),
                                    static_cast<uint32_t>(f[1]), static_cast<uint32_t>(f[2]),
                                    static_cast<uint32_t>(o.stride_h), static_cast<uint32_t>(o.stride_w),
                                    static_cast<uint32_t>(o.dilation_h), static_cast<uint32_t>(o.dilation_w),
                                    static_cast<uint32_t>(groups), f[3], f[0] / groups, range.min, range.max,
                                    input_id, filter_id, bias_id, output_id, 0),
          "the convolution");
}

void define_depthwise_conv2d(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* filter = weights_input(node, 1, input, 3, "filter");
  const baton_tensor* output = node.value_output(input);
  const Dims in = rank4_input(b, node, input);
  const Dims f = node.shape(filter);
  if (f.size() != 4 || f[0] != 1) refuse("depthwise filter of shape " + dims_text(f) + " (want [1,KH,KW,C*M])");
  // The multiplier is what the filter holds; TFLite's option is only a hint in newer versions.
  if (f[3] % in[3] != 0) {
    refuse("filter channels " + std::to_string(f[3]) + " are not a multiple of input channels " + std::to_string(in[3]));
  }
  const size_t multiplier = f[3] / in[3];
  const baton_conv_options& o = node.options().u.conv;
  const Range range = activation_range(o.activation);
  const Window h = window(o.padding, in[1], static_cast<int64_t>(f[1]), o.stride_h, o.dilation_h, "height");
  const Window w = window(o.padding, in[2], static_cast<int64_t>(f[2]), o.stride_w, o.dilation_w, "width");
  const uint32_t filter_id = b.input(node, filter);
  const uint32_t bias_id = bias_value(b, node, 2, f[3], input, filter);
  const uint32_t input_id = b.input(node, input);
  const uint32_t output_id = b.output(node, output, {in[0], h.out, w.out, f[3]});
  b.check(xnn_define_depthwise_convolution_2d(
              b.subgraph(), static_cast<uint32_t>(h.before), static_cast<uint32_t>(w.after),
              static_cast<uint32_t>(h.after), static_cast<uint32_t>(w.before), static_cast<uint32_t>(f[1]),
              static_cast<uint32_t>(f[2]), static_cast<uint32_t>(o.stride_h), static_cast<uint32_t>(o.stride_w),
              static_cast<uint32_t>(o.dilation_h), static_cast<uint32_t>(o.dilation_w),
              static_cast<uint32_t>(multiplier), in[3], range.min, range.max, input_id, filter_id, bias_id,
              output_id, 0),
          "the depthwise convolution");
}

void define_fully_connected(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* weights = weights_input(node, 1, input, 0, "weights");
  const baton_tensor* output = node.value_output(input);
  const baton_fully_connected_options& o = node.options().u.fully_connected;
  if (node.is_quantized(input) && value_type(node.api(), weights).channel_scales) {
    refuse("weights quantized per channel (this XNNPACK's quantized fully connected takes one scale)");
  }
  if (o.weights_format != 0) refuse("shuffled weights format");
  const Range range = activation_range(o.activation);
  const Dims wd = node.shape(weights);
  if (wd.size() != 2) refuse("weights of rank " + std::to_string(wd.size()) + " (want [units, depth])");
  const Dims in = b.dims(node, input);
  Dims out;
  uint32_t flags = 0;
  if (o.keep_num_dims) {
    if (in.empty() || in.back() != wd[1]) {
      refuse("input " + dims_text(in) + " does not end in the weights' depth " + std::to_string(wd[1]));
    }
    out = in;
    out.back() = wd[0];
  } else {
    const size_t n = element_count(in);
    if (n % wd[1] != 0) refuse("input " + dims_text(in) + " is not a whole number of rows of " + std::to_string(wd[1]));
    out = {n / wd[1], wd[0]};
    flags = XNN_FLAG_TENSORFLOW_RESHAPE_2D;
  }
  const uint32_t weights_id = b.input(node, weights);
  uint32_t bias_id = XNN_INVALID_VALUE_ID;
  if (node.optional_input(2)) bias_id = bias_value(b, node, 2, wd[0], input, weights);
  const uint32_t input_id = b.input(node, input);
  const uint32_t output_id = b.output(node, output, out);
  b.check(xnn_define_fully_connected(b.subgraph(), range.min, range.max, input_id, weights_id, bias_id, output_id,
                                     flags),
          "the fully connected layer");
}

void define_transpose_conv(SubgraphBuilder& b, const NodeView& node) {
  const std::vector<int64_t> shape = node.constant_ints(0, "output_shape");
  const baton_tensor* filter = node.constant_float_input(1, "filter");
  const baton_tensor* input = node.float_input(2);
  const baton_tensor* output = node.float_output();
  const Dims in = rank4_input(b, node, input);
  const Dims f = node.shape(filter);
  if (f.size() != 4 || f[3] != in[3]) refuse("filter " + dims_text(f) + " does not match input " + dims_text(in));
  if (shape.size() != 4 || shape[1] < 1 || shape[2] < 1 || shape[0] != static_cast<int64_t>(in[0]) ||
      shape[3] != static_cast<int64_t>(f[0])) {
    refuse("output_shape does not match the input batch and the filter's output channels");
  }
  const baton_transpose_conv_options& o = node.options().u.transpose_conv;
  const Range range = activation_range(o.activation);
  // TFLite pads as the forward convolution from the output back to the input would; XNNPACK takes the
  // padding of the full transposed output, plus an adjustment at the bottom/right to reach the size.
  struct Axis {
    uint32_t before = 0, after = 0, adjustment = 0;
  };
  auto axis = [&](size_t out, size_t input_size, size_t kernel, int32_t stride, const char* name) {
    const Window conv = window(o.padding, out, static_cast<int64_t>(kernel), stride, 1, name);
    Axis a;
    const int64_t full = static_cast<int64_t>((input_size - 1) * static_cast<size_t>(stride) + kernel);
    const int64_t before = static_cast<int64_t>(conv.before);
    const int64_t rest = full - before - static_cast<int64_t>(out);  // padding after minus adjustment
    a.before = static_cast<uint32_t>(before);
    if (rest >= 0) {
      a.after = static_cast<uint32_t>(rest);
    } else if (-rest < stride) {
      a.adjustment = static_cast<uint32_t>(-rest);
    } else {
      refuse(std::string("output_shape is larger than the transposed convolution reaches along ") + name);
    }
    return a;
  };
  const Axis h = axis(static_cast<size_t>(shape[1]), in[1], f[1], o.stride_h, "height");
  const Axis w = axis(static_cast<size_t>(shape[2]), in[2], f[2], o.stride_w, "width");
  const uint32_t filter_id = b.input(node, filter);
  const uint32_t bias_id = node.optional_input(3) ? bias_value(b, node, 3, f[0]) : XNN_INVALID_VALUE_ID;
  const uint32_t input_id = b.input(node, input);
  const uint32_t output_id =
      b.output(node, output, {in[0], static_cast<size_t>(shape[1]), static_cast<size_t>(shape[2]), f[0]});
  b.check(xnn_define_deconvolution_2d(b.subgraph(), h.before, w.after, h.after, w.before, h.adjustment, w.adjustment,
                                      static_cast<uint32_t>(f[1]), static_cast<uint32_t>(f[2]),
                                      static_cast<uint32_t>(o.stride_h), static_cast<uint32_t>(o.stride_w), 1, 1, 1,
                                      f[3], f[0], range.min, range.max, input_id, filter_id, bias_id, output_id, 0),
          "the transposed convolution");
}

// Numpy broadcasting, as TFLite's binary ops do it.
Dims broadcast(const Dims& a, const Dims& c) {
  Dims out(std::max(a.size(), c.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const size_t y = i < out.size() - c.size() ? 1 : c[i - (out.size() - c.size())];
    if (x != y && x != 1 && y != 1) refuse("shapes " + dims_text(a) + " and " + dims_text(c) + " do not broadcast");
    out[i] = std::max(x, y);
  }
  return out;
}

// ADD, SUB and MUL also run quantized (each operand with its own scale and zero point).
constexpr bool runs_quantized(int32_t code) { return code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL; }

template <int32_t Code>
void define_binary(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* x = runs_quantized(Code) ? node.value_input(0) : node.float_input(0);
  const baton_tensor* y = runs_quantized(Code) ? node.value_input(1) : node.float_input(1);
  const baton_tensor* output = runs_quantized(Code) ? node.value_output(x) : node.float_output();
  if (node.api()->tensor_type(x) != node.api()->tensor_type(y)) {
    refuse(std::string(baton_tensor_type_name(node.api()->tensor_type(x))) + " and " +
           baton_tensor_type_name(node.api()->tensor_type(y)) + " inputs");
  }
  Range range;
  if constexpr (Code == BATON_OP_ADD || Code == BATON_OP_SUB || Code == BATON_OP_MUL || Code == BATON_OP_DIV) {
    range = activation_range(node.options().u.elementwise.activation);
  }
  const Dims out = broadcast(b.dims(node, x), b.dims(node, y));
  const uint32_t x_id = b.input(node, x);
  const uint32_t y_id = b.input(node, y);
  const uint32_t out_id = b.output(node, output, out);
  xnn_subgraph_t s = b.subgraph();
  xnn_status st = xnn_status_success;
  if constexpr (Code == BATON_OP_ADD) st = xnn_define_add2(s, range.min, range.max, x_id, y_id, out_id, 0);
  if constexpr (Code == BATON_OP_SUB) st = xnn_define_subtract(s, range.min, range.max, x_id, y_id, out_id, 0);
  if constexpr (Code == BATON_OP_MUL) st = xnn_define_multiply2(s, range.min, range.max, x_id, y_id, out_id, 0);
  if constexpr (Code == BATON_OP_DIV) st = xnn_define_divide(s, range.min, range.max, x_id, y_id, out_id, 0);
  if constexpr (Code == BATON_OP_MINIMUM) st = xnn_define_minimum2(s, x_id, y_id, out_id, 0);
  if constexpr (Code == BATON_OP_MAXIMUM) st = xnn_define_maximum2(s, x_id, y_id, out_id, 0);
  if constexpr (Code == BATON_OP_SQUARED_DIFFERENCE) st = xnn_define_squared_difference(s, x_id, y_id, out_id, 0);
  b.check(st, "the elementwise op");
}

// Elementwise ops of one input whose output has the input's shape. The ReLUs (clamps, same scale in and
// out) and LOGISTIC (output scale 1/256, which XNNPACK checks) also run quantized.
constexpr bool unary_runs_quantized(int32_t code) {
  return code == BATON_OP_RELU || code == BATON_OP_RELU6 || code == BATON_OP_RELU_N1_TO_1 || code == BATON_OP_LOGISTIC;
}

template <int32_t Code>
void define_unary(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = unary_runs_quantized(Code) ? node.value_input(0) : node.float_input(0);
  const baton_tensor* output = unary_runs_quantized(Code) ? node.value_output(input) : node.float_output();
  if constexpr (Code != BATON_OP_LOGISTIC) require_same_quantization(node, input, output);
  const Dims dims = b.dims(node, input);
  const uint32_t in = b.input(node, input);
  const uint32_t out = b.output(node, output, dims);
  xnn_subgraph_t s = b.subgraph();
  xnn_status st = xnn_status_success;
  if constexpr (Code == BATON_OP_RELU) st = xnn_define_clamp(s, 0.0f, kInf, in, out, 0);
  if constexpr (Code == BATON_OP_RELU6) st = xnn_define_clamp(s, 0.0f, 6.0f, in, out, 0);
  if constexpr (Code == BATON_OP_RELU_N1_TO_1) st = xnn_define_clamp(s, -1.0f, 1.0f, in, out, 0);
  if constexpr (Code == BATON_OP_LOGISTIC) st = xnn_define_sigmoid(s, in, out, 0);
  if constexpr (Code == BATON_OP_HARD_SWISH) st = xnn_define_hardswish(s, in, out, 0);
  if constexpr (Code == BATON_OP_ABS) st = xnn_define_abs(s, in, out, 0);
  if constexpr (Code == BATON_OP_NEG) st = xnn_define_negate(s, in, out, 0);
  if constexpr (Code == BATON_OP_SQUARE) st = xnn_define_square(s, in, out, 0);
  if constexpr (Code == BATON_OP_SQRT) st = xnn_define_square_root(s, in, out, 0);
  if constexpr (Code == BATON_OP_FLOOR) st = xnn_define_floor(s, in, out, 0);
  if constexpr (Code == BATON_OP_CEIL) st = xnn_define_ceiling(s, in, out, 0);
  if constexpr (Code == BATON_OP_ROUND) st = xnn_define_bankers_rounding(s, in, out, 0);  // TFLite rounds half to even
  if constexpr (Code == BATON_OP_ELU) st = xnn_define_elu(s, 1.0f, in, out, 0);
  if constexpr (Code == BATON_OP_LEAKY_RELU) st = xnn_define_leaky_relu(s, node.options().u.leaky_relu.alpha, in, out, 0);
  if constexpr (Code == BATON_OP_SOFTMAX) {
    if (node.options().u.softmax.beta != 1.0f) refuse("softmax beta other than 1 not supported");
    if (dims.empty()) refuse("softmax of a scalar");
    st = xnn_define_softmax(s, in, out, 0);
  }
  b.check(st, "the elementwise op");
}

void define_prelu(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.float_input(0);
  const baton_tensor* slope = node.constant_float_input(1, "slope");
  const baton_tensor* output = node.float_output();
  const Dims in = rank4_input(b, node, input);
  const Dims sd = node.shape(slope);
  const size_t channels = in[3];
  const size_t n = element_count(sd);
  // XNNPACK takes one slope per channel: the model's [1,...,1,C] (or one slope for all) as a [C] vector.
  const bool per_channel = n == channels && (sd.empty() || sd.back() == channels);
  if (!per_channel && n != 1) refuse("slope of shape " + dims_text(sd) + " is not per channel (PReLU)");
  const float* data = static_cast<const float*>(node.api()->tensor_data(slope));
  const uint32_t slope_id = per_channel ? b.static_value(data, {channels})
                                        : b.owned_static(std::vector<float>(channels, data[0]), {channels});
  const uint32_t in_id = b.input(node, input);
  const uint32_t out_id = b.output(node, output, in);
  b.check(xnn_define_prelu(b.subgraph(), in_id, slope_id, out_id, 0), "PReLU");
}

// MAX_POOL_2D also runs quantized; this XNNPACK's average pooling is float32 only.
template <int32_t Code>
void define_pool(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = Code == BATON_OP_MAX_POOL_2D ? node.value_input(0) : node.float_input(0);
  const baton_tensor* output = Code == BATON_OP_MAX_POOL_2D ? node.value_output(input) : node.float_output();
  require_same_quantization(node, input, output);
  const Dims in = rank4_input(b, node, input);
  const baton_pool_options& o = node.options().u.pool;
  const Range range = activation_range(o.activation);
  const uint32_t in_id = b.input(node, input);
  if (o.filter_h == 1 && o.filter_w == 1) {
    // XNNPACK has no 1x1 pooling; with stride 1 it is the identity (plus the activation).
    if (o.stride_h != 1 || o.stride_w != 1) refuse("1x1 pooling with a stride other than 1");
    const uint32_t out_id = b.output(node, output, in);
    b.check(xnn_define_clamp(b.subgraph(), range.min, range.max, in_id, out_id, 0), "1x1 pooling");
    return;
  }
  const Window h = window(o.padding, in[1], o.filter_h, o.stride_h, 1, "height");
  const Window w = window(o.padding, in[2], o.filter_w, o.stride_w, 1, "width");
  const uint32_t out_id = b.output(node, output, {in[0], h.out, w.out, in[3]});
  const auto u = [](size_t v) { return static_cast<uint32_t>(v); };
  if constexpr (Code == BATON_OP_AVERAGE_POOL_2D) {
    b.check(xnn_define_average_pooling_2d(b.subgraph(), u(h.before), u(w.after), u(h.after), u(w.before),
                                          u(o.filter_h), u(o.filter_w), u(o.stride_h), u(o.stride_w), range.min,
                                          range.max, in_id, out_id, 0),
            "average pooling");
  } else {
    b.check(xnn_define_max_pooling_2d(b.subgraph(), u(h.before), u(w.after), u(h.after), u(w.before), u(o.filter_h),
                                      u(o.filter_w), u(o.stride_h), u(o.stride_w), 1, 1, range.min, range.max, in_id,
                                      out_id, 0),
            "max pooling");
  }
}

void define_mean(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* output = node.value_output(input);
  const Dims in = b.dims(node, input);
  std::vector<int64_t> axes = node.constant_ints(1, "axes");
  for (int64_t& a : axes) a = a < 0 ? a + static_cast<int64_t>(in.size()) : a;
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (in.size() != 4 || axes != std::vector<int64_t>{1, 2}) {
    refuse("MEAN only over the spatial axes (1, 2) of a rank-4 input (global average pooling)");
  }
  const uint32_t in_id = b.input(node, input);
  const Dims pooled = {in[0], 1, 1, in[3]};
  if (node.options().u.reducer.keep_dims) {
    const uint32_t out_id = b.output(node, output, pooled);
    b.check(xnn_define_global_average_pooling_2d(b.subgraph(), -kInf, kInf, in_id, out_id, 0), "global average pooling");
    return;
  }
  const uint32_t pooled_id = b.internal(pooled, value_type(node.api(), output));
  b.check(xnn_define_global_average_pooling_2d(b.subgraph(), -kInf, kInf, in_id, pooled_id, 0), "global average pooling");
  const Dims out = {in[0], in[3]};
  const uint32_t out_id = b.output(node, output, out);
  b.check(xnn_define_static_reshape(b.subgraph(), out.size(), out.data(), pooled_id, out_id, 0), "the reshape after MEAN");
}

void define_pad(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* output = node.value_output(input);
  require_same_quantization(node, input, output);
  const Dims in = b.dims(node, input);
  const std::vector<int64_t> pads = node.constant_ints(1, "paddings");
  if (pads.size() != 2 * in.size()) refuse("paddings do not have two values per input dimension");
  // XNNPACK takes the padding value as a real number and quantizes it with the output's parameters, so a
  // quantized PADV2's raw value goes in as (raw - zero_point) * scale and comes back exactly.
  float value = 0.0f;
  if (node.code() == BATON_OP_PADV2 && node.optional_input(2)) {
    const baton_host_api* api = node.api();
    const baton_tensor* v = node.input(2);
    if (api->tensor_type(v) != api->tensor_type(input)) refuse("constant value of another type than the input");
    if (!api->tensor_is_constant(v) || !api->tensor_data(v)) refuse("non-constant constant value");
    if (element_count(node.shape(v)) != 1) refuse("constant value is not a scalar");
    const void* raw = api->tensor_data(v);
    if (!node.is_quantized(input)) {
      std::memcpy(&value, raw, sizeof value);
    } else {
      const ValueType t = value_type(api, output);
      const int32_t q = api->tensor_type(v) == BATON_TYPE_UINT8 ? *static_cast<const uint8_t*>(raw)
                                                                 : *static_cast<const int8_t*>(raw);
      value = static_cast<float>(q - t.zero_point) * t.scale;
    }
  }
  Dims pre(in.size()), post(in.size()), out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) refuse("negative padding (cropping)");
    pre[d] = static_cast<size_t>(pads[2 * d]);
    post[d] = static_cast<size_t>(pads[2 * d + 1]);
    out[d] = in[d] + pre[d] + post[d];
  }
  const uint32_t in_id = b.input(node, input);
  const uint32_t out_id = b.output(node, output, out);
  b.check(xnn_define_static_constant_pad(b.subgraph(), pre.data(), post.data(), value, in_id, out_id, 0), "the pad");
}

void define_reshape(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* output = node.value_output(input);
  require_same_quantization(node, input, output);
  const Dims in = b.dims(node, input);
  std::vector<int64_t> target;
  if (node.optional_input(1)) {
    target = node.constant_ints(1, "shape");
  } else if (node.options().u.reshape.new_shape_count >= 0) {
    const baton_reshape_options& o = node.options().u.reshape;
    target.assign(o.new_shape, o.new_shape + o.new_shape_count);
  } else {
    for (size_t d : node.shape(output)) target.push_back(static_cast<int64_t>(d));
  }
  // One -1 takes what is left.
  size_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1 && unknown < 0) {
      unknown = static_cast<int>(i);
    } else if (target[i] <= 0) {
      refuse("new shape has a dimension of " + std::to_string(target[i]));
    } else {
      known *= static_cast<size_t>(target[i]);
    }
  }
  const size_t total = element_count(in);
  if (unknown >= 0) {
    if (total % known != 0) refuse("new shape does not divide the input's " + std::to_string(total) + " elements");
    target[unknown] = static_cast<int64_t>(total / known);
  }
  Dims out(target.begin(), target.end());
  if (element_count(out) != total) refuse("new shape " + dims_text(out) + " does not hold input " + dims_text(in));
  if (out.size() > XNN_MAX_TENSOR_DIMS) refuse("new shape of rank " + std::to_string(out.size()));
  const uint32_t in_id = b.input(node, input);
  const uint32_t out_id = b.output(node, output, out);
  b.check(xnn_define_static_reshape(b.subgraph(), out.size(), out.data(), in_id, out_id, 0), "the reshape");
}

void define_resize_bilinear(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.value_input(0);
  const baton_tensor* output = node.value_output(input);
  require_same_quantization(node, input, output);
  const Dims in = rank4_input(b, node, input);
  const std::vector<int64_t> size = node.constant_ints(1, "size");
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) refuse("size is not two positive values");
  const baton_resize_options& o = node.options().u.resize;
  uint32_t flags = 0;  // XNNPACK's default is TFLite's half_pixel_centers
  if (o.align_corners && o.half_pixel_centers) refuse("align_corners together with half_pixel_centers");
  if (o.align_corners) flags = XNN_FLAG_ALIGN_CORNERS;
  if (!o.align_corners && !o.half_pixel_centers) flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  const uint32_t in_id = b.input(node, input);
  const uint32_t out_id =
      b.output(node, output, {in[0], static_cast<size_t>(size[0]), static_cast<size_t>(size[1]), in[3]});
  b.check(xnn_define_static_resize_bilinear_2d(b.subgraph(), static_cast<size_t>(size[0]),
                                               static_cast<size_t>(size[1]), in_id, out_id, flags),
          "the bilinear resize");
}

void define_depth_to_space(SubgraphBuilder& b, const NodeView& node) {
  const baton_tensor* input = node.float_input(0);
  const baton_tensor* output = node.float_output();
  const Dims in = rank4_input(b, node, input);
  const int32_t block = node.options().u.block.block_size;
  if (block < 2) refuse("block size " + std::to_string(block) + " (at least 2)");
  const size_t bb = static_cast<size_t>(block) * static_cast<size_t>(block);
  if (in[3] % bb != 0) refuse("channels are not a multiple of block size squared");
  const uint32_t in_id = b.input(node, input);
  const uint32_t out_id = b.output(node, output, {in[0], in[1] * block, in[2] * block, in[3] / bb});
  b.check(xnn_define_depth_to_space(b.subgraph(), in_id, out_id, static_cast<uint32_t>(block), 0), "depth to space");
}

int32_t read_le32(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                              static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
}

// MediaPipe's Convolution2DTransposeBias: a transposed convolution whose bias is an input. Its custom
// options are not a FlexBuffer but three little-endian int32 (TFLite's TfLitePadding, 1 = SAME and
// 2 = VALID, then stride_w, stride_h). The output is stride*(in-1) + kernel minus the SAME padding
// max(0, kernel - (in-1) % stride - 1), of which the top/left gets half (rounded down): XNNPACK's
// deconvolution with those paddings and no adjustment.
void define_transpose_conv_bias(SubgraphBuilder& b, const NodeView& node) {
  if (node.input_count() != 3) refuse(std::to_string(node.input_count()) + " inputs (input, weights and bias expected)");
  const baton_tensor* input = node.float_input(0);
  const baton_tensor* filter = node.constant_float_input(1, "weights");
  const baton_tensor* output = node.float_output();
  size_t size = 0;
  const uint8_t* opts = node.api()->node_custom_options(node.node(), &size);
  if (!opts || size < 12) refuse("custom options of " + std::to_string(size) + " bytes (12 expected: padding, strides)");
  const int32_t padding = read_le32(opts), stride_w = read_le32(opts + 4), stride_h = read_le32(opts + 8);
  if (padding != 1 && padding != 2) refuse("padding " + std::to_string(padding) + " (1 = SAME or 2 = VALID expected)");
  if (stride_w < 1 || stride_h < 1 || stride_w > 64 || stride_h > 64) {
    refuse("strides " + std::to_string(stride_h) + "x" + std::to_string(stride_w) + " out of range");
  }
  const Dims in = rank4_input(b, node, input);
  const Dims f = node.shape(filter);
  if (f.size() != 4 || f[3] != in[3]) refuse("weights " + dims_text(f) + " do not match input " + dims_text(in) + " (OHWI)");
  auto axis = [&](size_t in_size, size_t kernel, int32_t stride, Window* w) {
    const size_t s = static_cast<size_t>(stride);
    const size_t total = padding == 1 && kernel > (in_size - 1) % s + 1 ? kernel - (in_size - 1) % s - 1 : 0;
    w->before = total / 2;
    w->after = total - w->before;
    w->out = s * (in_size - 1) + kernel - total;
  };
  Window h, w;
  axis(in[1], f[1], stride_h, &h);
  axis(in[2], f[2], stride_w, &w);
  const uint32_t filter_id = b.input(node, filter);
  const uint32_t bias_id = bias_value(b, node, 2, f[0]);
  const uint32_t input_id = b.input(node, input);
  const uint32_t output_id = b.output(node, output, {in[0], h.out, w.out, f[0]});
  const auto u = [](size_t v) { return static_cast<uint32_t>(v); };
  b.check(xnn_define_deconvolution_2d(b.subgraph(), u(h.before), u(w.after), u(h.after), u(w.before), 0, 0, u(f[1]),
                                      u(f[2]), u(stride_h), u(stride_w), 1, 1, 1, f[3], f[0], -kInf, kInf, input_id,
                                      filter_id, bias_id, output_id, 0),
          "the transposed convolution");
}

// QUANTIZE (float32 to uint8/int8) and DEQUANTIZE (uint8/int8 activations to float32): XNNPACK's
// convert. Requantizing (8-bit to 8-bit) and float16 are not taken.
void define_convert(SubgraphBuilder& b, const NodeView& node) {
  const baton_host_api* api = node.api();
  const bool quantize = node.code() == BATON_OP_QUANTIZE;
  const baton_tensor* input = node.input(0);
  if (node.output_count() != 1) refuse(std::to_string(node.output_count()) + " outputs (one only)");
  const baton_tensor* output = node.output(0);
  const baton_tensor* q = quantize ? output : input;
  const baton_tensor* f = quantize ? input : output;
  if (api->tensor_type(f) != BATON_TYPE_FLOAT32) {
    refuse(std::string(baton_tensor_type_name(api->tensor_type(f))) + (quantize ? " input" : " output") + " (float32 only)");
  }
  if (api->tensor_is_constant(input)) refuse("constant input (folded at load)");
  if (api->tensor_is_constant(output)) refuse("constant output");
  if (!node.is_quantized(q)) refuse(std::string("float32 ") + (quantize ? "output" : "input") + " (8-bit expected)");
  node.check_value(f, quantize ? "input" : "output");
  node.check_value(q, quantize ? "output" : "input");
  const Dims dims = b.dims(node, input);
  const uint32_t in_id = b.input(node, input);
  const uint32_t out_id = b.output(node, output, dims);
  b.check(xnn_define_convert(b.subgraph(), in_id, out_id, 0), quantize ? "QUANTIZE" : "DEQUANTIZE");
}

void refuse_tanh(SubgraphBuilder&, const NodeView&) {
  refuse("TANH is not in this XNNPACK version (Debian 0.0~git20220216)");
}

void refuse_concatenation(SubgraphBuilder&, const NodeView&) {
  refuse("CONCATENATION is not in this XNNPACK version (Debian 0.0~git20220216)");
}

}  // namespace

const std::vector<OpDef>& op_defs() {
  // Version ranges: the float32 versions of each op (later versions add integer types, which the type
  // checks refuse node by node).
  static const std::vector<OpDef> defs = {
      {BATON_OP_ADD, "ADD", 1, 5, define_binary<BATON_OP_ADD>},
      {BATON_OP_SUB, "SUB", 1, 5, define_binary<BATON_OP_SUB>},
      {BATON_OP_MUL, "MUL", 1, 7, define_binary<BATON_OP_MUL>},
      {BATON_OP_DIV, "DIV", 1, 2, define_binary<BATON_OP_DIV>},
      {BATON_OP_MINIMUM, "MINIMUM", 1, 4, define_binary<BATON_OP_MINIMUM>},
      {BATON_OP_MAXIMUM, "MAXIMUM", 1, 4, define_binary<BATON_OP_MAXIMUM>},
      {BATON_OP_SQUARED_DIFFERENCE, "SQUARED_DIFFERENCE", 1, 2, define_binary<BATON_OP_SQUARED_DIFFERENCE>},
      {BATON_OP_CONV_2D, "CONV_2D", 1, 8, define_conv2d},
      {BATON_OP_DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", 1, 7, define_depthwise_conv2d},
      {BATON_OP_FULLY_CONNECTED, "FULLY_CONNECTED", 1, 12, define_fully_connected},
      {BATON_OP_TRANSPOSE_CONV, "TRANSPOSE_CONV", 1, 5, define_transpose_conv},
      {BATON_OP_AVERAGE_POOL_2D, "AVERAGE_POOL_2D", 1, 3, define_pool<BATON_OP_AVERAGE_POOL_2D>},
      {BATON_OP_MAX_POOL_2D, "MAX_POOL_2D", 1, 3, define_pool<BATON_OP_MAX_POOL_2D>},
      {BATON_OP_MEAN, "MEAN", 1, 3, define_mean},
      {BATON_OP_PAD, "PAD", 1, 4, define_pad},
      {BATON_OP_PADV2, "PADV2", 1, 4, define_pad},
      {BATON_OP_RESHAPE, "RESHAPE", 1, 1, define_reshape},
      {BATON_OP_RESIZE_BILINEAR, "RESIZE_BILINEAR", 1, 4, define_resize_bilinear},
      {BATON_OP_DEPTH_TO_SPACE, "DEPTH_TO_SPACE", 1, 2, define_depth_to_space},
      {BATON_OP_PRELU, "PRELU", 1, 1, define_prelu},
      {BATON_OP_RELU, "RELU", 1, 3, define_unary<BATON_OP_RELU>},
      {BATON_OP_RELU6, "RELU6", 1, 3, define_unary<BATON_OP_RELU6>},
      {BATON_OP_RELU_N1_TO_1, "RELU_N1_TO_1", 1, 1, define_unary<BATON_OP_RELU_N1_TO_1>},
      {BATON_OP_LEAKY_RELU, "LEAKY_RELU", 1, 2, define_unary<BATON_OP_LEAKY_RELU>},
      {BATON_OP_HARD_SWISH, "HARD_SWISH", 1, 1, define_unary<BATON_OP_HARD_SWISH>},
      {BATON_OP_LOGISTIC, "LOGISTIC", 1, 3, define_unary<BATON_OP_LOGISTIC>},
      {BATON_OP_SOFTMAX, "SOFTMAX", 1, 3, define_unary<BATON_OP_SOFTMAX>},
      {BATON_OP_ELU, "ELU", 1, 1, define_unary<BATON_OP_ELU>},
      {BATON_OP_ABS, "ABS", 1, 5, define_unary<BATON_OP_ABS>},
      {BATON_OP_NEG, "NEG", 1, 2, define_unary<BATON_OP_NEG>},
      {BATON_OP_SQUARE, "SQUARE", 1, 1, define_unary<BATON_OP_SQUARE>},
      {BATON_OP_SQRT, "SQRT", 1, 2, define_unary<BATON_OP_SQRT>},
      {BATON_OP_FLOOR, "FLOOR", 1, 2, define_unary<BATON_OP_FLOOR>},
      {BATON_OP_CEIL, "CEIL", 1, 2, define_unary<BATON_OP_CEIL>},
      {BATON_OP_ROUND, "ROUND", 1, 2, define_unary<BATON_OP_ROUND>},
      // Only with the `quantized` option (the type checks refuse them otherwise, with that reason).
      {BATON_OP_QUANTIZE, "QUANTIZE", 1, 2, define_convert},
      {BATON_OP_DEQUANTIZE, "DEQUANTIZE", 1, 4, define_convert},
      // MediaPipe's custom op (selfie segmentation and other MediaPipe decoders).
      {BATON_OP_CUSTOM, "Convolution2DTransposeBias", 1, 1, define_transpose_conv_bias},
      // Declared so that `baton plan` says why: the library we build against has neither.
      {BATON_OP_TANH, "TANH", 1, 3, refuse_tanh},
      {BATON_OP_CONCATENATION, "CONCATENATION", 1, 4, refuse_concatenation},
  };
  return defs;
}

bool is_clamp(int32_t builtin_code) {
  return builtin_code == BATON_OP_RELU || builtin_code == BATON_OP_RELU6 || builtin_code == BATON_OP_RELU_N1_TO_1;
}

const OpDef* find_op(const baton_host_api* api, const baton_node* node) {
  const int32_t op_code = api->node_builtin_code(node);
  const char* custom = op_code == BATON_OP_CUSTOM ? api->node_custom_name(node) : nullptr;
  for (const OpDef& def : op_defs()) {
    if (def.code != op_code) continue;
    if (!def.custom() || (custom && std::strcmp(custom, def.name) == 0)) return &def;
  }
  return nullptr;
}

}  // namespace baton::xnnpack
