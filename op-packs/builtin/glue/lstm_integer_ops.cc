// LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM with an int8 input: TFLite's full-integer kernel
// (kernels/lstm_integer.h), with the tensors numbered as in glue/lstm_ops.cc. Types, as TFLite 2.9 takes
// them: int8 input, output and output state; int8 weights (one scale each); int32 gate and projection
// biases; int16 peepholes and layer-norm coefficients; an int16 cell state whose scale is 2^k, k <= -9.
// The node's five intermediate tensors (ABI 1.3) give the scales of the gates' matmul outputs (used with
// layer norm; Q3.12 without) and the scale and zero point of the hidden value. Everything the step needs
// (multipliers, the biases with the zero points folded in) is computed here, in prepare, from constant
// weights. The LSTM op with 12 intermediate tensors runs TFLite's other integer kernel, "8x8_8"
// (lstm_8x8_8_prepare). Refused with the reason: int16 activations (TFLite 2.9 has no 16x8 LSTM: its
// library fails such a model), the 8x8_8 form of the sequence op (which TFLite 2.9 lacks), non-constant
// weights.
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "glue/lstm_integer_ops.h"
#include "glue/recurrent_checks.h"
#include "kernels/lstm_integer.h"

namespace baton::builtin {
namespace {

struct LstmIntegerState : OpState {
  LstmIntegerParams p;  // p.batch: the whole batch when time-major, else 1
  int time = 1, batch = 1, input_size = 1;
  bool time_major = true;
  std::vector<int16_t> scratch16;
  std::vector<int8_t> scratch8;
};

float scale_of(const OpContext& ctx, const baton_tensor* t, const std::string& role) {
  const TensorQuant q = ctx.quant(t);
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()),
              role + " (" + ctx.tensor_label(t) + ") needs one positive scale");
  return q.scale();
}

// A constant tensor of the given type and shape, or null when the slot is empty.
const baton_tensor* constant_input(const OpContext& ctx, int index, const std::string& role, baton_tensor_type type,
                                   std::initializer_list<int32_t> dims, bool required) {
  const baton_tensor* t = ctx.optional_input(index);
  if (!t) {
    ctx.require(!required, role + " (input " + std::to_string(index) + ") is missing");
    return nullptr;
  }
  ctx.require_type(t, role.c_str(), {type});
  require_dims(ctx, t, role.c_str(), dims);
  if (!ctx.is_constant(t)) {
    ctx.fail(BATON_UNSUPPORTED, role + " (" + ctx.tensor_label(t) + ") must be constant for the integer LSTM");
  }
  return t;
}

// bias[r] + zero_point * sum of row r of w (TFLite's precomputed zero-point terms, int32 arithmetic).
std::vector<int32_t> folded_bias(const int32_t* bias, int32_t zero_point, const int8_t* w, int rows, int depth) {
  std::vector<int32_t> out(static_cast<size_t>(rows), 0);
  for (int r = 0; r < rows; ++r) {
    int32_t row_sum = 0;
    for (int d = 0; d < depth; ++d) row_sum += w[static_cast<int64_t>(r) * depth + d];
    out[r] = static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[r] : 0) +
                                  static_cast<uint32_t>(row_sum) * static_cast<uint32_t>(zero_point));
  }
  return out;
}

void lstm_integer_invoke(OpContext& ctx) {
  auto& s = ctx.state<LstmIntegerState>();
  const LstmIntegerParams& p = s.p;
  const int8_t* input = ctx.data<int8_t>(ctx.input(0));
  int8_t* output_state = ctx.mutable_data<int8_t>(ctx.input(18));
  int16_t* cell_state = ctx.mutable_data<int16_t>(ctx.input(19));
  int8_t* output = ctx.mutable_data<int8_t>(ctx.output(0));
  const int sequences = s.time_major ? 1 : s.batch;
  for (int b = 0; b < sequences; ++b) {
    int8_t* h = output_state + static_cast<int64_t>(b) * p.outputs;
    int16_t* c = cell_state + static_cast<int64_t>(b) * p.cells;
    for (int t = 0; t < s.time; ++t) {
      const int64_t row = s.time_major ? static_cast<int64_t>(t) * p.batch : static_cast<int64_t>(b) * s.time + t;
      lstm_integer_step(p, input + row * s.input_size, h, c, output + row * p.outputs, s.scratch16.data(),
                        s.scratch8.data());
    }
  }
}

// The cell count and the output width, from the input-to-output ([cells, inputs], input 4) and
// recurrent-to-output ([cells, outputs], input 8) weights.
std::pair<int, int> cells_and_outputs(const OpContext& ctx) {
  const baton_tensor* to_output = ctx.input(4);
  const baton_tensor* recurrent_output = ctx.input(8);
  ctx.require_rank(to_output, "input-to-output weights", 2);
  ctx.require_rank(recurrent_output, "recurrent-to-output weights", 2);
  return {ctx.shape(to_output)[0], ctx.shape(recurrent_output)[1]};
}

// The two variable tensors, inputs 18 and 19: the output state (int8, [batch, outputs]) and the cell state
// (int16, [batch, cells]). Gives the output state's quantization and the cell state's scale.
struct IntegerStates {
  ActQuant output_state;
  float cell_scale;
};
IntegerStates integer_states(const OpContext& ctx, int batch, int outputs, int cells) {
  baton_tensor* output_state = state_input(ctx, 18, "output state");
  baton_tensor* cell_state = state_input(ctx, 19, "cell state");
  ctx.require_type(output_state, "output state", {BATON_TYPE_INT8});
  ctx.require_type(cell_state, "cell state", {BATON_TYPE_INT16});
  require_dims(ctx, output_state, "output state", {batch, outputs});
  require_dims(ctx, cell_state, "cell state", {batch, cells});
  return {ctx.act_quant(output_state, "output state"), scale_of(ctx, cell_state, "cell state")};
}

// The int8 output, TFLite's quantized clips (the cell's in the cell state's scale, the projection's in
// the output's; 0: none) and the activation: TFLite's integer kernels compute tanh whatever the node's
// option says, so only TANH means what they do.
void output_clips(const OpContext& ctx, float cell_scale, bool cell_clip_below_one, int16_t* cell_clip,
                  int8_t* proj_clip) {
  const auto& o = ctx.options().u.recurrent;
  baton_tensor* output = ctx.output(0);
  ctx.require_type(output, "output", {BATON_TYPE_INT8});
  const ActQuant out_q = ctx.act_quant(output, "output");
  ctx.require(o.cell_clip >= 0.0f && o.proj_clip >= 0.0f, "cell_clip and proj_clip must not be negative");
  *cell_clip = o.cell_clip > 0.0f && (!cell_clip_below_one || o.cell_clip < 1.0f)
                   ? static_cast<int16_t>(std::min(std::max(o.cell_clip / cell_scale, -32768.0f), 32767.0f))
                   : 0;
  *proj_clip = o.proj_clip > 0.0f
                   ? static_cast<int8_t>(std::min(std::max(o.proj_clip / out_q.scale, -128.0f), 127.0f))
                   : 0;
  if (o.activation != BATON_ACT_TANH) {
    ctx.fail(BATON_UNSUPPORTED, "the integer LSTM takes the TANH activation only (TFLite 2.9's integer kernel "
                                "computes tanh whatever the option says)");
  }
}

// ---- the 8x8_8 kernel: the LSTM op's int8 form with 12 intermediates (per gate input, forget, cell,
// output: the sum of its two products, the input's product, the output state's product) ----

struct Lstm8x8_8State : OpState {
  Lstm8x8_8Params p;
  std::vector<int16_t> scratch16;
  std::vector<int8_t> scratch8;
};

void lstm_8x8_8_invoke(OpContext& ctx) {
  auto& s = ctx.state<Lstm8x8_8State>();
  lstm_8x8_8_step(s.p, ctx.data<int8_t>(ctx.input(0)), ctx.mutable_data<int8_t>(ctx.input(18)),
                  ctx.mutable_data<int16_t>(ctx.input(19)), ctx.mutable_data<int8_t>(ctx.output(0)),
                  s.scratch16.data(), s.scratch8.data());
}

QuantizedMultiplier multiplier_of(float real) { return quantize_multiplier(static_cast<double>(real)); }

void lstm_8x8_8_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_rank(input, "input", 2);
  auto& s = ctx.state<Lstm8x8_8State>();
  Lstm8x8_8Params& p = s.p;
  p.batch = ctx.shape(input)[0];
  p.inputs = ctx.shape(input)[1];
  std::tie(p.cells, p.outputs) = cells_and_outputs(ctx);
  const int c = p.cells, n_in = p.inputs, n_out = p.outputs;
  // TFLite 2.9's 8x8_8 step reads the layer norm, the projection and its bias whatever the node gives
  // (a model without them crashes it), and computes no input gate (1 - forget) and no peepholes: the
  // input gate's tensors and the peepholes, when given, are left unread, as there.
  ctx.require(ctx.input_count() == 24 && ctx.optional_input(21) != nullptr,
              "the 8x8_8 integer LSTM needs the layer-norm coefficients (TFLite 2.9's kernel always reads them)");
  const baton_tensor* projection = constant_input(ctx, 16, "projection weights", BATON_TYPE_INT8, {n_out, c}, false);
  const baton_tensor* projection_bias = constant_input(ctx, 17, "projection bias", BATON_TYPE_INT32, {n_out}, false);
  ctx.require(projection && projection_bias, "the 8x8_8 integer LSTM needs the projection weights and bias (TFLite "
                                             "2.9's kernel always reads them)");
  const ActQuant in_q = ctx.act_quant(input, "input");
  const auto [state_q, cell_scale] = integer_states(ctx, p.batch, n_out, c);
  ctx.require(cell_scale == 1.0f / 32768, "cell state scale " + std::to_string(cell_scale) + " must be 2^-15 in the "
                                          "8x8_8 integer LSTM (TFLite 2.9 checks it)");
  p.input_zero_point = in_q.zero_point;
  p.output_state_zero_point = state_q.zero_point;
  float scale[12];
  int32_t zero_point[12];
  for (int i = 0; i < 12; ++i) {
    const baton_tensor* t = ctx.intermediate(i);
    scale[i] = scale_of(ctx, t, "intermediate " + std::to_string(i));
    const TensorQuant q = ctx.quant(t);
    zero_point[i] = q.zero_points ? static_cast<int32_t>(q.zero_points[0]) : 0;
  }
  static const char* const kGates[4] = {"input", "forget", "cell", "output"};
  Lstm8x8_8Gate* gates[4] = {nullptr, &p.forget, &p.cell, &p.output};
  QuantizedMultiplier to_sum[8];  // per gate: the input's product, then the output state's, to the sum's scale
  for (int g = 0; g < 4; ++g) {
    to_sum[2 * g] = multiplier_of(scale[3 * g + 1] / scale[3 * g]);
    to_sum[2 * g + 1] = multiplier_of(scale[3 * g + 2] / scale[3 * g]);
  }
  for (int g = 1; g < 4; ++g) {
    Lstm8x8_8Gate& gate = *gates[g];
    const std::string name = kGates[g];
    const baton_tensor* w = constant_input(ctx, 1 + g, "input-to-" + name + " weights", BATON_TYPE_INT8, {c, n_in}, true);
    const baton_tensor* r =
        constant_input(ctx, 5 + g, "recurrent-to-" + name + " weights", BATON_TYPE_INT8, {c, n_out}, true);
    const baton_tensor* bias = constant_input(ctx, 12 + g, name + " gate bias", BATON_TYPE_INT32, {c}, true);
    const baton_tensor* nw = constant_input(ctx, 20 + g, name + " layer-norm coefficients", BATON_TYPE_INT16, {c}, true);
    gate.input_weights = ctx.data<int8_t>(w);
    gate.recurrent_weights = ctx.data<int8_t>(r);
    gate.bias = ctx.data<int32_t>(bias);
    gate.norm = ctx.data<int16_t>(nw);
    gate.norm_scale = multiplier_of(scale_of(ctx, nw, name + " layer-norm coefficients"));
    // float products and quotients, as TFLite's prepare forms them
    gate.input_scale = multiplier_of(scale_of(ctx, w, "input-to-" + name + " weights") * in_q.scale / scale[3 * g + 1]);
    gate.recurrent_scale =
        multiplier_of(scale_of(ctx, r, "recurrent-to-" + name + " weights") * state_q.scale / scale[3 * g + 2]);
    gate.input_zero_point = static_cast<int8_t>(zero_point[3 * g + 1]);
    gate.recurrent_zero_point = static_cast<int8_t>(zero_point[3 * g + 2]);
    gate.input_to_sum = to_sum[2 * g];
    gate.recurrent_to_sum = to_sum[2 * g + 1];
  }
  // TFLite 2.9 hands the output gate's output-state product the cell gate's input zero point
  // (intermediate 7, not 11) and, for its rescale to the sum, a multiplier read past the end of its
  // array of eight: the shift of the forget gate's second rescale, with the right shift. Reproduced.
  p.output.recurrent_zero_point = static_cast<int8_t>(zero_point[7]);
  p.output.recurrent_to_sum = QuantizedMultiplier{to_sum[3].shift, to_sum[7].shift};
  p.projection = ctx.data<int8_t>(projection);
  p.projection_bias = ctx.data<int32_t>(projection_bias);
  p.projection_scale = quantize_multiplier(scale_of(ctx, projection, "projection weights") * std::pow(2, -15) /
                                           state_q.scale);
  baton_tensor* output = ctx.output(0);
  // A cell clip only below 1 (TFLite's rule in this kernel).
  output_clips(ctx, cell_scale, /*cell_clip_below_one=*/true, &p.cell_clip, &p.proj_clip);
  s.scratch16.assign(p.scratch16_size(), 0);
  s.scratch8.assign(p.scratch8_size(), 0);
  ctx.set_output_shape(output, {p.batch, n_out});
  ctx.set_invoke(lstm_8x8_8_invoke);
}

}  // namespace

void lstm_integer_prepare(OpContext& ctx, bool single_step) {
  const auto& o = ctx.options().u.recurrent;
  baton_tensor* input = ctx.input(0);
  if (ctx.type(input) == BATON_TYPE_INT16) {
    ctx.fail(BATON_UNSUPPORTED, "int16 activations (16x8) are not supported: TFLite 2.9's LSTM kernels have no 16x8 "
                                "form (its library fails such a model)");
  }
  ctx.require_type(input, "input", {BATON_TYPE_INT8});
  const int intermediates = ctx.intermediate_count();
  if (intermediates == 12) {
    if (single_step) return lstm_8x8_8_prepare(ctx);
    ctx.fail(BATON_UNSUPPORTED, "the sequence op has no 8x8_8 integer form (12 intermediate tensors): TFLite 2.9 "
                                "fails such a model");
  }
  ctx.require(intermediates == 5, "an integer LSTM needs its 5 intermediate tensors (the gates' and the hidden "
                                  "value's quantization), the node has " + std::to_string(intermediates) +
                                      (intermediates == 0 ? " (or the host, older than ABI 1.3, gives none)" : ""));
  auto& s = ctx.state<LstmIntegerState>();
  const SequenceLayout layout = sequence_layout(ctx, input, single_step, o.time_major);
  s.time_major = layout.time_major;
  s.time = layout.time;
  s.batch = layout.batch;
  s.input_size = layout.input_size;
  LstmIntegerParams& p = s.p;
  std::tie(p.cells, p.outputs) = cells_and_outputs(ctx);
  p.inputs = layout.input_size;
  p.batch = s.time_major ? s.batch : 1;
  const int c = p.cells, n_in = p.inputs, n_out = p.outputs;

  const ActQuant in_q = ctx.act_quant(input, "input");
  const auto [state_q, cell_scale] = integer_states(ctx, layout.batch, n_out, c);
  p.output_state_zero_point = state_q.zero_point;
  // TFLite's CheckedLog2: the scale must be a power of two (within 1e-3 in log2), at most 2^-9.
  const float log2_scale = std::log(cell_scale) * (1.0f / std::log(2.0f));
  const float rounded = std::round(log2_scale);
  ctx.require(std::abs(log2_scale - rounded) < 1e-3f && static_cast<int>(rounded) <= -9,
              "cell state scale " + std::to_string(cell_scale) + " must be a power of two no larger than 2^-9");
  p.cell_shift = static_cast<int>(rounded);

  // The intermediates' scales (gates: used only with layer norm) and the hidden value's zero point.
  const baton_tensor* norm_forget = ctx.input_count() == 24 ? ctx.optional_input(21) : nullptr;
  const bool layer_norm = norm_forget != nullptr;
  float gate_scale[4];
  for (int g = 0; g < 4; ++g) {
    gate_scale[g] = layer_norm ? scale_of(ctx, ctx.intermediate(g), "intermediate " + std::to_string(g))
                               : static_cast<float>(std::pow(2, -12));
  }
  const baton_tensor* hidden = ctx.intermediate(4);
  const float hidden_scale = scale_of(ctx, hidden, "intermediate 4 (hidden)");
  const TensorQuant hq = ctx.quant(hidden);
  p.hidden_zero_point = hq.zero_points ? static_cast<int32_t>(hq.zero_points[0]) : 0;

  static const char* const kGates[4] = {"input", "forget", "cell", "output"};
  LstmIntegerGate* gates[4] = {&p.input, &p.forget, &p.cell, &p.output};
  const baton_tensor* in_in = ctx.optional_input(1);
  p.cifg = in_in == nullptr;
  ctx.require((ctx.optional_input(5) == nullptr) == p.cifg,
              "input gate's weights must be all given or all omitted (CIFG)");
  const baton_tensor* projection = constant_input(ctx, 16, "projection weights", BATON_TYPE_INT8, {n_out, c}, false);
  const bool peephole = ctx.optional_input(10) != nullptr;
  ctx.require(projection || n_out == c, "output size (" + std::to_string(n_out) + ") must equal the cell count (" +
                                            std::to_string(c) + ") without a projection");
  if (peephole) {
    ctx.require(n_out <= c, "peepholes with more outputs than cells are not supported (TFLite 2.9 walks the "
                            "peephole over the output width and would read past the cells)");
  }
  for (int g = 0; g < 4; ++g) {
    LstmIntegerGate& gate = *gates[g];
    gate = LstmIntegerGate{};
    if (g == 0 && p.cifg) {
      ctx.require(ctx.optional_input(12) == nullptr, "input gate bias given without input gate weights (CIFG)");
      ctx.require(ctx.optional_input(9) == nullptr, "cell-to-input weights given without input gate weights (CIFG)");
      ctx.require(ctx.input_count() < 24 || ctx.optional_input(20) == nullptr,
                  "input layer-norm coefficients given without input gate weights (CIFG)");
      continue;
    }
    const std::string name = kGates[g];
    const baton_tensor* w = constant_input(ctx, 1 + g, "input-to-" + name + " weights", BATON_TYPE_INT8, {c, n_in}, true);
    const baton_tensor* r =
        constant_input(ctx, 5 + g, "recurrent-to-" + name + " weights", BATON_TYPE_INT8, {c, n_out}, true);
    const baton_tensor* bias = constant_input(ctx, 12 + g, name + " gate bias", BATON_TYPE_INT32, {c}, true);
    gate.input_weights = ctx.data<int8_t>(w);
    gate.recurrent_weights = ctx.data<int8_t>(r);
    const float w_scale = scale_of(ctx, w, "input-to-" + name + " weights");
    const float r_scale = scale_of(ctx, r, "recurrent-to-" + name + " weights");
    gate.input_scale = quantize_multiplier(w_scale * in_q.scale / gate_scale[g]);
    gate.recurrent_scale = quantize_multiplier(r_scale * state_q.scale / gate_scale[g]);
    const int32_t* b = ctx.data<int32_t>(bias);
    gate.input_bias = folded_bias(layer_norm ? nullptr : b, -in_q.zero_point, gate.input_weights, c, n_in);
    gate.recurrent_bias = folded_bias(nullptr, -state_q.zero_point, gate.recurrent_weights, c, n_out);
    if (g != 2) {
      const int slot = g == 0 ? 9 : g == 1 ? 10 : 11;
      const baton_tensor* pw = constant_input(ctx, slot, "cell-to-" + name + " weights", BATON_TYPE_INT16, {c}, false);
      ctx.require((pw != nullptr) == peephole, "peephole weights must be all given (cell-to-input omitted under "
                                               "CIFG) or all omitted");
      if (pw) {
        gate.peephole = ctx.data<int16_t>(pw);
        const float pw_scale = scale_of(ctx, pw, "cell-to-" + name + " weights");
        gate.peephole_scale = quantize_multiplier(static_cast<float>(std::pow(2, p.cell_shift) * pw_scale / gate_scale[g]));
      }
    }
    if (layer_norm) {
      const baton_tensor* nw =
          constant_input(ctx, 20 + g, name + " layer-norm coefficients", BATON_TYPE_INT16, {c}, true);
      gate.norm = ctx.data<int16_t>(nw);
      gate.norm_bias = b;
      const float norm_scale = scale_of(ctx, nw, name + " layer-norm coefficients");
      gate.norm_scale = quantize_multiplier(norm_scale);
      gate.variance_guard = std::max(1, static_cast<int32_t>(10000 * norm_scale));
    } else if (ctx.input_count() == 24) {
      ctx.require(ctx.optional_input(20 + g) == nullptr,
                  "layer-norm coefficients must be all given (the input gate's omitted under CIFG) or all omitted");
    }
  }
  p.hidden_scale = quantize_multiplier(static_cast<float>(std::pow(2, -15) / hidden_scale * std::pow(2, -15)));
  p.projection = projection ? ctx.data<int8_t>(projection) : nullptr;
  const baton_tensor* projection_bias = constant_input(ctx, 17, "projection bias", BATON_TYPE_INT32, {n_out}, false);
  ctx.require(projection || !projection_bias, "projection bias given without projection weights");
  if (projection) {
    const float proj_scale = scale_of(ctx, projection, "projection weights");
    p.projection_scale = quantize_multiplier(proj_scale * hidden_scale / state_q.scale);
    p.projection_bias = folded_bias(projection_bias ? ctx.data<int32_t>(projection_bias) : nullptr,
                                    p.hidden_zero_point, p.projection, n_out, c);
  }
  baton_tensor* output = ctx.output(0);
  output_clips(ctx, cell_scale, /*cell_clip_below_one=*/false, &p.cell_clip, &p.proj_clip);
  s.scratch16.assign(p.scratch16_size(), 0);
  s.scratch8.assign(p.scratch8_size(), 0);
  const auto in = ctx.shape(input);
  if (single_step) ctx.set_output_shape(output, {layout.batch, n_out});
  else ctx.set_output_shape(output, {in[0], in[1], n_out});
  ctx.set_invoke(lstm_integer_invoke);
}

}  // namespace baton::builtin
