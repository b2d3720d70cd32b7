// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED with 8-bit activations (uint8 asymmetric with a
// uint8 filter, or int8 with an int8 filter per tensor or per output channel, int32 bias), and CONV_2D /
// FULLY_CONNECTED with float activations and int8 weights (TFLite's dynamic-range kernels). Weights
// and biases must be constant: they are packed, summed and turned into per-channel multipliers here,
// once.
//
// Multipliers follow TFLite 2.9's Prepare arithmetic, which differs by type: for uint8 (and every
// FULLY_CONNECTED) the real multiplier is float(input_scale * filter_scale), widened, divided by the
// output scale in double; for int8 convolutions it is input_scale * filter_scale[c] / output_scale all
// in double. The last bit of the multiplier, and so of some outputs, depends on it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "glue/quantized_ops.h"
#include "glue/scratch_buffer.h"
#include "kernels/dequantize.h"
#include "kernels/hybrid.h"
#include "kernels/qconv.h"
#include "kernels/qdepthwise.h"
#include "kernels/qgemm.h"

namespace baton::builtin {
namespace {

// The weights' quantization, checked: per tensor, or per channel along `channel_dim` with one scale per
// output channel (`channels`, which the caller read from that dimension). Borrowed from the model: nothing
// is sized by `channels` here, so a filter that declares a billion empty channels costs nothing.
using WeightQuant = ChannelQuant;

WeightQuant weight_quant(const OpContext& ctx, const baton_tensor* w, const char* role, int channels,
                         int channel_dim, bool allow_per_channel) {
  const WeightQuant q = ctx.channel_quant(w, role, channel_dim, allow_per_channel);
  if (q.per_channel() && static_cast<int64_t>(q.scales.size()) != channels) {
    ctx.fail(BATON_INVALID_ARGUMENT, std::string(role) + " (" + ctx.tensor_label(w) + ") has " +
                                         std::to_string(q.scales.size()) + " scales for " + std::to_string(channels) +
                                         " output channels");
  }
  return q;
}

// The weights of an int8 kernel: int8, or INT4 (two codes a byte, as LiteRT packs them; LiteRT's int8
// kernels unpack them to int8 first), which must be symmetric. Returns int8 codes as bytes; INT4 codes are
// unpacked into `unpacked`.
const uint8_t* int8_weights(const OpContext& ctx, baton_tensor* w, const WeightQuant& wq, std::vector<uint8_t>& unpacked) {
  if (ctx.type(w) != BATON_TYPE_INT4) return ctx.constant_data<uint8_t>(w, "filter");
  for (size_t c = 0; c < wq.zero_points.size(); ++c) {
    ctx.require(wq.zero_points[c] == 0, "filter (" + ctx.tensor_label(w) + ") has zero point " +
                                            std::to_string(wq.zero_points[c]) + " (INT4 weights are symmetric)");
  }
  const uint8_t* packed = ctx.constant_data<uint8_t>(w, "filter");
  const int64_t n = ctx.element_count(w);
  unpacked.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) unpacked[i] = static_cast<uint8_t>(static_cast<int8_t>(int4_code(packed, i)));
  return unpacked.data();
}

// The optional constant bias (input `index`) of `type` with one value per output channel. Checked against
// the channel count before anything is sized by that count.
void check_bias(const OpContext& ctx, int index, int channels, baton_tensor_type type) {
  baton_tensor* t = ctx.optional_input(index);
  if (!t) return;
  ctx.require_type(t, "bias", {type});
  ctx.require(ctx.element_count(t) == channels, "bias (" + ctx.tensor_label(t) + ") has " +
                                                    std::to_string(ctx.element_count(t)) + " elements, the output has " +
                                                    std::to_string(channels) + " channels");
  ctx.require_constant(t, "bias");
}

// A constant int32 bias of `channels` entries (zeros when the node has none).
std::vector<int32_t> int32_bias(const OpContext& ctx, int index, int channels) {
  check_bias(ctx, index, channels, BATON_TYPE_INT32);
  baton_tensor* t = ctx.optional_input(index);
  if (!t) return std::vector<int32_t>(channels, 0);
  const auto* data = ctx.data<int32_t>(t);
  return std::vector<int32_t>(data, data + channels);
}

// TFLite's sanity check of a per-tensor bias scale against input_scale * filter_scale.
void check_bias_scale(const OpContext& ctx, int index, double product_scale, float out_scale) {
  baton_tensor* t = ctx.optional_input(index);
  if (!t) return;
  const TensorQuant q = ctx.quant(t);
  if (q.count != 1) return;
  const double diff = std::abs(product_scale - static_cast<double>(q.scale()));
  ctx.require(diff / out_scale <= 0.02, "bias (" + ctx.tensor_label(t) + ") scale " + std::to_string(q.scale()) +
                                            " does not match input scale x filter scale " +
                                            std::to_string(product_scale));
}

QuantizedMultiplier checked_multiplier(const OpContext& ctx, double real) {
  const QuantizedMultiplier m = quantize_multiplier(real);
  ctx.require(m.shift <= 30, "the output scale is too small for the input and filter scales (rescale factor " +
                                 std::to_string(real) + ")");
  return m;
}

// The float weights scale of a dynamic-range kernel: int8, symmetric. Older converters wrote the same
// symmetric int8 codes as a UINT8 tensor; TFLite reads its bytes as int8 and ignores its zero point, and
// so does the builtin pack (`allow_uint8`, where TFLite's kernel does).
// INT4 (two codes a byte, `allow_int4`) is symmetric too: its codes are unpacked to int8 by int8_weights.
WeightQuant hybrid_weight_quant(const OpContext& ctx, const baton_tensor* w, int channels, int channel_dim,
                                bool allow_per_channel, bool allow_uint8 = false, bool allow_int4 = false) {
  if (allow_uint8 && allow_int4) ctx.require_type(w, "filter", {BATON_TYPE_INT8, BATON_TYPE_UINT8, BATON_TYPE_INT4});
  else if (allow_uint8) ctx.require_type(w, "filter", {BATON_TYPE_INT8, BATON_TYPE_UINT8});
  else ctx.require_type(w, "filter", {BATON_TYPE_INT8});
  WeightQuant q = weight_quant(ctx, w, "filter", channels, channel_dim, allow_per_channel);
  if (ctx.type(w) == BATON_TYPE_UINT8) return q;
  for (int64_t z : q.zero_points) {
    if (z != 0) {
      ctx.fail(BATON_UNSUPPORTED, "filter (" + ctx.tensor_label(w) + ") has zero point " + std::to_string(z) +
                                      "; int8 weights with float activations must be symmetric (zero point 0)");
    }
  }
  return q;
}

std::vector<float> float_bias(const OpContext& ctx, int index, int channels) {
  check_bias(ctx, index, channels, BATON_TYPE_FLOAT32);
  baton_tensor* t = ctx.optional_input(index);
  if (!t) return {};
  const float* data = ctx.data<float>(t);
  std::vector<float> bias(qgemm_n_padded(channels), 0.0f);
  std::copy(data, data + channels, bias.begin());
  return bias;
}

// ---- the shared 8-bit GEMM setup (CONV_2D and FULLY_CONNECTED) ------------------------------------------

struct QGemmSetup {
  QuantIsa isa = QuantIsa::kScalar;
  bool is_signed = false;
  int n = 0, k = 0;
  std::vector<int8_t> packed;
  std::vector<int32_t> col_sums, col_offset, multiplier, shift;
  QGemmRequantOutput out;
  NodeScratch scratch;  // in the host's arena where it gives it: shared with every other node's
};

// Packs the constant weights (n x k) and precomputes every per-column term.
void setup_qgemm(OpContext& ctx, QGemmSetup& g, baton_tensor* input, baton_tensor* weights, int n, int k,
                 bool allow_per_channel, bool double_product, int32_t fused_activation) {
  baton_tensor* output = ctx.output(0);
  const ActQuant in = ctx.act_quant(input, "input");
  if (in.is_signed) ctx.require_type(weights, "filter", {BATON_TYPE_INT8, BATON_TYPE_INT4});
  else ctx.require_type(weights, "filter", {BATON_TYPE_UINT8});
  ctx.require_type(output, "output", {ctx.type(input)});
  const ActQuant out = ctx.act_quant(output, "output");
  const WeightQuant wq = weight_quant(ctx, weights, "filter", n, 0, allow_per_channel && in.is_signed);
  if (wq.per_channel()) {
    for (int64_t z : wq.zero_points) {
      ctx.require(z == 0, "filter (" + ctx.tensor_label(weights) + ") has per-channel zero point " + std::to_string(z) +
                              " (int8 per-channel weights must be symmetric)");
    }
  }
  // Every check before the first allocation sized by n: the bias must agree with it, and the output
  // (whose shape the caller has set, within the host's tensor limit) holds n values per row.
  check_bias(ctx, 2, n, BATON_TYPE_INT32);
  if (!wq.per_channel()) {
    check_bias_scale(ctx, 2, static_cast<double>(in.scale * wq.scale(0)), out.scale);
  }
  std::vector<uint8_t> unpacked;
  const uint8_t* w = int8_weights(ctx, weights, wq, unpacked);
  const CodeRange range = ctx.quantized_activation(fused_activation, out);
  const std::vector<int32_t> bias = int32_bias(ctx, 2, n);
  g.isa = best_quant_isa();
  g.is_signed = in.is_signed;
  g.n = n;
  g.k = k;
  const int np = qgemm_n_padded(n);
  g.packed.assign(qgemm_packed_b_size(n, k), 0);
  g.col_sums.assign(np, 0);
  qgemm_pack_b(w, k, n, k, !in.is_signed, g.packed.data(), g.col_sums.data());
  ctx.release_constant(weights);  // invoke reads the packed copy
  const int32_t a_zero = in.zero_point + (in.is_signed ? 128 : 0);
  const int32_t b_zero = static_cast<int32_t>(wq.zero_point(0)) - (in.is_signed ? 0 : 128);
  g.col_offset.assign(np, 0);
  qgemm_column_offsets(n, k, bias.data(), g.col_sums.data(), a_zero, b_zero, g.col_offset.data());
  g.multiplier.assign(np, 0);
  g.shift.assign(np, 0);
  for (int c = 0; c < n; ++c) {
    const double real = double_product ? static_cast<double>(in.scale) * static_cast<double>(wq.scale(c)) /
                                             static_cast<double>(out.scale)
                                       : static_cast<double>(in.scale * wq.scale(c)) / static_cast<double>(out.scale);
    const QuantizedMultiplier m = checked_multiplier(ctx, real);
    g.multiplier[c] = m.multiplier;
    g.shift[c] = m.shift;
  }
  g.out.col_offset = g.col_offset.data();
  g.out.b_zero = b_zero;
  g.out.multiplier = g.multiplier.data();
  g.out.shift = g.shift.data();
  g.out.zero_point = out.zero_point;
  g.out.lo = range.lo;
  g.out.hi = range.hi;
  g.out.ldc = n;
  g.scratch.prepare(ctx, static_cast<size_t>(ctx.workers()) * qgemm_scratch_per_worker(k));
}

// ---- CONV_2D -------------------------------------------------------------------------------------------

struct QConvState : OpState {
  ConvParams p;
  QGemmSetup g;
  std::vector<uint8_t> pad_bytes;  // per batch
};

void quantized_conv_invoke(OpContext& ctx) {
  auto& s = ctx.state<QConvState>();
  QGemmRequantOutput out = s.g.out;
  out.out = ctx.mutable_data<uint8_t>(ctx.output(0));
  const QConvRows rows{&s.p, ctx.data<uint8_t>(ctx.input(0)), s.pad_bytes.data()};
  qgemm(s.g.isa, rows.rows(s.g.is_signed), conv_rows(s.p), s.p.out_c, conv_depth(s.p), s.g.packed.data(), out,
        s.g.scratch.data(ctx), ctx.parallel());
}

struct HybridGemm {
  QuantIsa isa = QuantIsa::kScalar;
  std::vector<int8_t> packed;
  std::vector<int32_t> col_sums;
  std::vector<float> col_scale, bias;
  NodeScratch scratch;
  // Filled at invoke, sized here.
  std::vector<int8_t> quantized;    // the input, quantized batch row by batch row
  std::vector<float> row_scale;     // per GEMM row
  std::vector<int32_t> row_zero;    // per GEMM row, uint8 domain
};

void setup_hybrid(OpContext& ctx, HybridGemm& h, baton_tensor* weights, const WeightQuant& wq, int n, int k,
                  int rows, int64_t input_elements) {
  check_bias(ctx, 2, n, BATON_TYPE_FLOAT32);
  const int np = qgemm_n_padded(n);
  h.isa = best_quant_isa();
  h.packed.assign(qgemm_packed_b_size(n, k), 0);
  h.col_sums.assign(np, 0);
  std::vector<uint8_t> unpacked;  // INT4 codes as int8, packed below and dropped
  qgemm_pack_b(int8_weights(ctx, weights, wq, unpacked), k, n, k, false, h.packed.data(), h.col_sums.data());
  ctx.release_constant(weights);  // invoke reads the packed copy
  h.col_scale.assign(np, 0.0f);
  for (int c = 0; c < n; ++c) h.col_scale[c] = wq.scale(c);
  h.bias = float_bias(ctx, 2, n);
  h.scratch.prepare(ctx, static_cast<size_t>(ctx.workers()) * qgemm_scratch_per_worker(k));
  h.quantized.assign(static_cast<size_t>(input_elements), 0);
  h.row_scale.assign(rows, 0.0f);
  h.row_zero.assign(rows, 0);
}

QGemmFloatOutput hybrid_output(HybridGemm& h, ActivationRange range, float* out, int ldc) {
  QGemmFloatOutput o;
  o.col_sums = h.col_sums.data();
  o.row_zero = h.row_zero.data();
  o.row_scale = h.row_scale.data();
  o.col_scale = h.col_scale.data();
  o.bias = h.bias.empty() ? nullptr : h.bias.data();
  o.range = range;
  o.out = out;
  o.ldc = ldc;
  return o;
}

struct HybridConvState : OpState {
  ConvParams p;
  bool asymmetric = false;
  HybridGemm h;
  std::vector<uint8_t> pad_bytes;
};

void hybrid_conv_invoke(OpContext& ctx) {
  auto& s = ctx.state<HybridConvState>();
  const ConvParams& p = s.p;
  const float* input = ctx.data<float>(ctx.input(0));
  const int image = p.in_h * p.in_w * p.in_c;
  const int rows_per_image = p.out_h * p.out_w;
  for (int b = 0; b < p.batch; ++b) {
    float scale = 1.0f;
    int32_t zero = 0;
    int8_t* q = s.h.quantized.data() + static_cast<size_t>(b) * image;
    if (s.asymmetric) asymmetric_quantize_row(input + static_cast<size_t>(b) * image, image, q, &scale, &zero);
    else symmetric_quantize_row(input + static_cast<size_t>(b) * image, image, q, &scale);
    s.pad_bytes[b] = static_cast<uint8_t>(static_cast<int8_t>(zero));
    std::fill_n(s.h.row_scale.begin() + static_cast<size_t>(b) * rows_per_image, rows_per_image, scale);
    std::fill_n(s.h.row_zero.begin() + static_cast<size_t>(b) * rows_per_image, rows_per_image, zero + 128);
  }
  const QConvRows rows{&p, reinterpret_cast<const uint8_t*>(s.h.quantized.data()), s.pad_bytes.data()};
  qgemm(s.h.isa, rows.rows(true), conv_rows(p), p.out_c, conv_depth(p), s.h.packed.data(),
        hybrid_output(s.h, p.range, ctx.mutable_data<float>(ctx.output(0)), p.out_c), s.h.scratch.data(ctx),
        ctx.parallel());
}

// ---- DEPTHWISE_CONV_2D ---------------------------------------------------------------------------------

struct QDepthwiseState : OpState {
  QDepthwiseParams q;
  QuantIsa isa = QuantIsa::kScalar;
  std::vector<int32_t> filter, bias, multiplier, shift, interior_bias;
  std::vector<ptrdiff_t> tap_offset;
};

void quantized_depthwise_invoke(OpContext& ctx) {
  auto& s = ctx.state<QDepthwiseState>();
  qdepthwise_conv2d(s.isa, s.q, ctx.data<uint8_t>(ctx.input(0)), ctx.mutable_data<uint8_t>(ctx.output(0)),
                    ctx.parallel());
}

struct HybridDepthwiseState : OpState {
  DepthwiseParams p;
  std::vector<float> filter_scale, bias;
  std::vector<int8_t> filter;  // [taps][out_c]
  // Filled at invoke, sized here: the input quantized image by image, and each image's parameters.
  std::vector<int8_t> quantized;
  std::vector<float> input_scale;
  std::vector<int32_t> zero_point;
};

void hybrid_depthwise_invoke(OpContext& ctx) {
  auto& s = ctx.state<HybridDepthwiseState>();
  const DepthwiseParams& p = s.p;
  const float* input = ctx.data<float>(ctx.input(0));
  const int64_t image = static_cast<int64_t>(p.in_h) * p.in_w * p.in_c;
  for (int b = 0; b < p.batch; ++b) {
    asymmetric_quantize_row(input + b * image, static_cast<int>(image), s.quantized.data() + b * image, &s.input_scale[b],
                            &s.zero_point[b]);
  }
  hybrid_depthwise_conv2d(p, s.quantized.data(), s.zero_point.data(), s.input_scale.data(), s.filter.data(),
                          s.filter_scale.data(), s.bias.empty() ? nullptr : s.bias.data(),
                          ctx.mutable_data<float>(ctx.output(0)), ctx.parallel());
}

// ---- FULLY_CONNECTED -----------------------------------------------------------------------------------

struct QFullyConnectedState : OpState {
  int batch = 0;
  QGemmSetup g;
};

void quantized_fully_connected_invoke(OpContext& ctx) {
  auto& s = ctx.state<QFullyConnectedState>();
  QGemmRequantOutput out = s.g.out;
  out.out = ctx.mutable_data<uint8_t>(ctx.output(0));
  const QDenseRows rows{ctx.data<uint8_t>(ctx.input(0)), s.g.k};
  qgemm(s.g.isa, rows.rows(s.g.is_signed), s.batch, s.g.n, s.g.k, s.g.packed.data(), out, s.g.scratch.data(ctx),
        ctx.parallel());
}

struct HybridFullyConnectedState : OpState {
  int units = 0, depth = 0, batch = 0;
  bool asymmetric = false;
  ActivationRange range;
  HybridGemm h;
};

void hybrid_fully_connected_invoke(OpContext& ctx) {
  auto& s = ctx.state<HybridFullyConnectedState>();
  const float* input = ctx.data<float>(ctx.input(0));
  for (int b = 0; b < s.batch; ++b) {
    float scale = 1.0f;
    int32_t zero = 0;
    const float* row = input + static_cast<size_t>(b) * s.depth;
    int8_t* q = s.h.quantized.data() + static_cast<size_t>(b) * s.depth;
    if (s.asymmetric) asymmetric_quantize_row(row, s.depth, q, &scale, &zero);
    else symmetric_quantize_row(row, s.depth, q, &scale);
    s.h.row_scale[b] = scale;
    s.h.row_zero[b] = zero + 128;
  }
  const QDenseRows rows{reinterpret_cast<const uint8_t*>(s.h.quantized.data()), s.depth};
  qgemm(s.h.isa, rows.rows(true), s.batch, s.units, s.depth, s.h.packed.data(),
        hybrid_output(s.h, s.range, ctx.mutable_data<float>(ctx.output(0)), s.units), s.h.scratch.data(ctx),
        ctx.parallel());
}

}  // namespace

void quantized_conv_prepare(OpContext& ctx) {
  auto& s = ctx.state<QConvState>();
  s.p = conv_geometry(ctx);
  baton_tensor* input = ctx.input(0);
  // The output's shape first: the host refuses one over its tensor limit before anything below is sized
  // by the channel count.
  ctx.set_output_shape(ctx.output(0), {s.p.batch, s.p.out_h, s.p.out_w, s.p.out_c});
  setup_qgemm(ctx, s.g, input, ctx.input(1), s.p.out_c, conv_depth(s.p), true, ctx.type(input) == BATON_TYPE_INT8,
              ctx.options().u.conv.activation);
  const ActQuant in = ctx.act_quant(input, "input");
  s.pad_bytes.assign(s.p.batch, static_cast<uint8_t>(in.zero_point));
  ctx.set_invoke(quantized_conv_invoke);
}

void hybrid_conv_prepare(OpContext& ctx) {
  auto& s = ctx.state<HybridConvState>();
  s.p = conv_geometry(ctx);
  s.p.range = ctx.activation(ctx.options().u.conv.activation);
  ctx.require_float(ctx.output(0), "output");
  baton_tensor* filter = ctx.input(1);
  const WeightQuant wq = hybrid_weight_quant(ctx, filter, s.p.out_c, 0, true, true, true);
  // TFLite: per-channel weights quantize the input asymmetrically, per-tensor weights symmetrically.
  s.asymmetric = wq.per_channel();
  ctx.set_output_shape(ctx.output(0), {s.p.batch, s.p.out_h, s.p.out_w, s.p.out_c});
  setup_hybrid(ctx, s.h, filter, wq, s.p.out_c, conv_depth(s.p), conv_rows(s.p), ctx.element_count(ctx.input(0)));
  s.pad_bytes.assign(s.p.batch, 0);
  ctx.set_invoke(hybrid_conv_invoke);
}

void quantized_depthwise_prepare(OpContext& ctx) {
  auto& s = ctx.state<QDepthwiseState>();
  QDepthwiseParams& q = s.q;
  q.geo = depthwise_geometry(ctx);
  const DepthwiseParams& g = q.geo;
  const int out_c = g.in_c * g.depth_multiplier;
  baton_tensor* input = ctx.input(0);
  baton_tensor* filter = ctx.input(1);
  baton_tensor* output = ctx.output(0);
  const ActQuant in = ctx.act_quant(input, "input");
  if (in.is_signed) ctx.require_type(filter, "filter", {BATON_TYPE_INT8, BATON_TYPE_INT4});
  else ctx.require_type(filter, "filter", {BATON_TYPE_UINT8});
  ctx.require_type(output, "output", {ctx.type(input)});
  const ActQuant out = ctx.act_quant(output, "output");
  const WeightQuant wq = weight_quant(ctx, filter, "filter", out_c, 3, in.is_signed);
  check_bias(ctx, 2, out_c, BATON_TYPE_INT32);
  if (!wq.per_channel()) check_bias_scale(ctx, 2, static_cast<double>(in.scale * wq.scale(0)), out.scale);
  ctx.set_output_shape(output, {g.batch, g.out_h, g.out_w, out_c});
  s.bias = int32_bias(ctx, 2, out_c);
  std::vector<uint8_t> unpacked;
  const uint8_t* w = int8_weights(ctx, filter, wq, unpacked);
  const int taps = g.filter_h * g.filter_w;
  s.filter.assign(static_cast<size_t>(taps) * out_c, 0);
  for (int t = 0; t < taps; ++t) {
    for (int c = 0; c < out_c; ++c) {
      const uint8_t byte = w[static_cast<size_t>(t) * out_c + c];
      const int32_t code = in.is_signed ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte);
      s.filter[static_cast<size_t>(t) * out_c + c] = code - static_cast<int32_t>(wq.zero_point(c));
    }
  }
  ctx.release_constant(filter);  // invoke reads s.filter
  s.multiplier.assign(out_c, 0);
  s.shift.assign(out_c, 0);
  for (int c = 0; c < out_c; ++c) {
    const double real = in.is_signed ? static_cast<double>(in.scale) * static_cast<double>(wq.scale(c)) /
                                           static_cast<double>(out.scale)
                                     : static_cast<double>(in.scale * wq.scale(c)) / static_cast<double>(out.scale);
    const QuantizedMultiplier m = checked_multiplier(ctx, real);
    s.multiplier[c] = m.multiplier;
    s.shift[c] = m.shift;
  }
  const CodeRange range = ctx.quantized_activation(ctx.options().u.conv.activation, out);
  q.is_signed = in.is_signed;
  q.input_zero = in.zero_point;
  q.filter = s.filter.data();
  q.bias = s.bias.data();
  q.multiplier = s.multiplier.data();
  q.shift = s.shift.data();
  q.output_zero = out.zero_point;
  q.lo = range.lo;
  q.hi = range.hi;
  s.isa = best_quant_isa();
  if (s.isa == QuantIsa::kAvx512Vnni && g.depth_multiplier == 1) {
    qdepthwise_interior_tables(q, s.interior_bias, s.tap_offset);
    q.interior_bias = s.interior_bias.data();
    q.tap_offset = s.tap_offset.data();
  }
  ctx.set_invoke(quantized_depthwise_invoke);
}

void hybrid_depthwise_prepare(OpContext& ctx) {
  auto& s = ctx.state<HybridDepthwiseState>();
  s.p = depthwise_geometry(ctx);
  s.p.range = ctx.activation(ctx.options().u.conv.activation);
  const int out_c = s.p.in_c * s.p.depth_multiplier;
  ctx.require_float(ctx.output(0), "output");
  baton_tensor* filter = ctx.input(1);
  const WeightQuant wq = hybrid_weight_quant(ctx, filter, out_c, 3, true);
  // TFLite's kernel reads one scale per output channel; a single scale it would read past.
  ctx.require(wq.per_channel() || out_c == 1, "filter (" + ctx.tensor_label(filter) + ") has one scale for " +
                                                  std::to_string(out_c) + " channels; dynamic-range DEPTHWISE_CONV_2D "
                                                  "takes one per output channel");
  check_bias(ctx, 2, out_c, BATON_TYPE_FLOAT32);
  ctx.set_output_shape(ctx.output(0), {s.p.batch, s.p.out_h, s.p.out_w, out_c});
  s.filter_scale.assign(wq.scales.begin(), wq.scales.end());
  const int8_t* w = ctx.constant_data<int8_t>(filter, "filter");
  s.filter.assign(w, w + static_cast<size_t>(s.p.filter_h) * s.p.filter_w * out_c);
  ctx.release_constant(filter);  // invoke reads s.filter
  s.bias = float_bias(ctx, 2, out_c);
  const int64_t elements = ctx.element_count(ctx.input(0));
  s.quantized.assign(static_cast<size_t>(elements), 0);
  s.input_scale.assign(s.p.batch, 1.0f);
  s.zero_point.assign(s.p.batch, 0);
  ctx.set_invoke(hybrid_depthwise_invoke);
}

void quantized_fully_connected_prepare(OpContext& ctx, int units, int depth, int batch) {
  auto& s = ctx.state<QFullyConnectedState>();
  s.batch = batch;
  // One int8 weights scale per output row is current LiteRT's per-channel FULLY_CONNECTED (what
  // ai-edge-quantizer and the converter's per-channel option write): its multipliers are formed in double,
  // as a convolution's. TFLite 2.9 reads no scale at all from such a tensor (its legacy scale is 0) and
  // gives the output zero point everywhere. One scale for the tensor is TFLite 2.9's kernel: the float
  // product for the multiplier.
  const bool per_channel = ctx.quant(ctx.input(1)).count > 1;  // checked by setup_qgemm
  setup_qgemm(ctx, s.g, ctx.input(0), ctx.input(1), units, depth, true, per_channel,
              ctx.options().u.fully_connected.activation);
  ctx.set_invoke(quantized_fully_connected_invoke);
}

void hybrid_fully_connected_prepare(OpContext& ctx, int units, int depth, int batch) {
  auto& s = ctx.state<HybridFullyConnectedState>();
  s.units = units;
  s.depth = depth;
  s.batch = batch;
  ctx.require_float(ctx.output(0), "output");
  const auto& o = ctx.options().u.fully_connected;
  s.asymmetric = o.asymmetric_quantize_inputs != 0;
  s.range = ctx.activation(o.activation);
  baton_tensor* weights = ctx.input(1);
  // int8 weights: one scale (TFLite 2.9 reads no other). INT4 weights, one scale or one per unit, are what
  // LiteRT 2.5 runs only through its XNNPACK delegate, whose dynamically quantized kernel (qd8) quantizes
  // each input row asymmetrically whatever asymmetric_quantize_inputs says: so does this.
  const bool int4 = ctx.type(weights) == BATON_TYPE_INT4;
  const WeightQuant wq = hybrid_weight_quant(ctx, weights, units, 0, int4, true, true);
  if (int4) s.asymmetric = true;
  setup_hybrid(ctx, s.h, weights, wq, units, depth, batch, static_cast<int64_t>(batch) * depth);
  ctx.set_invoke(hybrid_fully_connected_invoke);
}

}  // namespace baton::builtin
