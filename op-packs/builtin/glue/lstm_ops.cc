// LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM, float32: TFLite's full kernel
// (kernels/lstm.h) with whichever of CIFG, peephole, layer norm and projection the node's optional inputs
// give. The one-direction ops' inputs, as TFLite numbers them: 0 input; 1-4 input-to-{input, forget, cell,
// output} weights; 5-8 recurrent-to-{...} weights; 9-11 cell-to-{input, forget, output} peepholes; 12-15
// {input, forget, cell, output} gate biases; 16 projection weights, 17 projection bias; 18 output state and
// 19 cell state (variable tensors the op updates); 20-23 the gates' layer-norm coefficients. LSTM's input
// is [batch, inputs]; the sequence ops' [time, batch, inputs] when time_major, else [batch, time, inputs].
// The bidirectional op has 48: the forward direction's weights at 1-17 as above, the backward one's at
// 18-34, the states at 35-38 (forward output and cell, backward output and cell), no layer norm, and an
// auxiliary input with its weights at 39-47; it gives two outputs, or one with both directions side by side
// (merge_outputs). Int8 weights with a float input run TFLite's hybrid kernel (rows quantized
// symmetrically, or asymmetrically with asymmetric_quantize_inputs); an int8 input the full-integer kernel
// (glue/lstm_integer_ops.cc). LSTM's BASIC kernel type (5 inputs, 4 outputs: TOCO's cell, float32 or
// uint8 with an int16 state) is lstm_basic_prepare's. Refused: the bidirectional op's integer form (TFLite
// 2.9 has none).
#include <cmath>
#include <string>
#include <vector>

#include "glue/lstm_integer_ops.h"
#include "glue/op_context.h"
#include "glue/recurrent_checks.h"
#include "kernels/lstm.h"
#include "kernels/lstm_integer.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// Where a direction's tensors are among the node's inputs (-1: none).
struct LstmSlots {
  int input_weights[4], recurrent_weights[4];  // gates input, forget, cell, output
  int peephole[3];                              // input, forget, output
  int bias[4];
  int projection, projection_bias;
  int output_state, cell_state;
  int norm[4];
  int aux_weights[4];  // the bidirectional op's auxiliary-input weights
};

constexpr LstmSlots kUnidirectional = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11}, {12, 13, 14, 15}, 16, 17, 18, 19,
                                       {20, 21, 22, 23}, {-1, -1, -1, -1}};
constexpr LstmSlots kForward = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11}, {12, 13, 14, 15}, 16, 17, 35, 36,
                                {-1, -1, -1, -1}, {40, 41, 42, 43}};
constexpr LstmSlots kBackward = {{18, 19, 20, 21}, {22, 23, 24, 25}, {26, 27, 28}, {29, 30, 31, 32}, 33, 34, 37, 38,
                                 {-1, -1, -1, -1}, {44, 45, 46, 47}};
constexpr int kAuxInput = 39;

// What the bidirectional op's auxiliary input (39) does, as TFLite 2.9 decides it: with its weights, both
// directions add it to their gates (stacked layers with cross links); without them, the backward
// direction reads it instead of the input (the backward output of the layer before).
enum class AuxMode { none, cross, backward_input };

struct LstmDirection {
  LstmParams step;  // step.batch: the whole batch when time-major, else 1 (one sequence at a time)
  const LstmSlots* slots = &kUnidirectional;
  int output = 0, output_offset = 0;
  bool backward = false;
  std::vector<float> scratch;
  // Hybrid layers: the weights' scales (pointers are set at invoke), the int8 rows and their scales.
  LstmWeights hybrid_scales;
  std::vector<int8_t> quantized;
  std::vector<float> row_scales;
  std::vector<int32_t> row_zero_points;
};

struct LstmState : OpState {
  LstmDirection directions[2];
  int direction_count = 1;
  AuxMode aux = AuxMode::none;
  int aux_size = 0;
  int time = 1, batch = 1, input_size = 1;
  bool time_major = true;
};

// An optional float input of the given shape, or null.
const baton_tensor* optional_float(const OpContext& ctx, int index, const std::string& role,
                                   std::initializer_list<int32_t> dims) {
  const baton_tensor* t = index < 0 ? nullptr : ctx.optional_input(index);
  if (!t) return nullptr;
  if (ctx.type(t) == BATON_TYPE_INT8 || ctx.type(t) == BATON_TYPE_UINT8 || ctx.type(t) == BATON_TYPE_INT16) {
    ctx.fail(BATON_UNSUPPORTED, role + " must be float32 here (integer LSTMs are not supported yet)");
  }
  ctx.require_float(t, role.c_str());
  require_dims(ctx, t, role.c_str(), dims);
  return t;
}

// An optional weight tensor: float32, or for a hybrid layer int8 with one scale and zero point 0 (its
// scale is stored in `scale`).
const baton_tensor* optional_weights(const OpContext& ctx, int index, const std::string& role,
                                     std::initializer_list<int32_t> dims, bool hybrid, float* scale) {
  if (!hybrid) return optional_float(ctx, index, role, dims);
  const baton_tensor* t = index < 0 ? nullptr : ctx.optional_input(index);
  if (!t) return nullptr;
  ctx.require_type(t, role.c_str(), {BATON_TYPE_INT8});
  require_dims(ctx, t, role.c_str(), dims);
  const TensorQuant q = ctx.quant(t);
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()) && q.zero_point() == 0,
              role + " (" + ctx.tensor_label(t) + ") needs one positive scale and zero point 0");
  *scale = q.scale();
  return t;
}

const baton_tensor* required_weights(const OpContext& ctx, int index, const std::string& role,
                                     std::initializer_list<int32_t> dims, bool hybrid, float* scale) {
  const baton_tensor* t = optional_weights(ctx, index, role, dims, hybrid, scale);
  ctx.require(t != nullptr, role + " (input " + std::to_string(index) + ") is missing");
  return t;
}

const baton_tensor* required_float(const OpContext& ctx, int index, const std::string& role,
                                   std::initializer_list<int32_t> dims) {
  const baton_tensor* t = optional_float(ctx, index, role, dims);
  ctx.require(t != nullptr, role + " (input " + std::to_string(index) + ") is missing");
  return t;
}

// Checks one direction's tensors and options, fills its step parameters; returns its output width.
// aux_size: the auxiliary input's width when the direction adds it to its gates, else 0.
int lstm_direction_prepare(OpContext& ctx, LstmDirection& d, int input_size, int batch, const char* prefix,
                           int aux_size) {
  const auto& o = ctx.options().u.recurrent;
  const LstmSlots& sl = *d.slots;
  const std::string pre = prefix;
  LstmParams& p = d.step;
  const baton_tensor* to_output = ctx.input(sl.input_weights[3]);
  const baton_tensor* recurrent_output = ctx.input(sl.recurrent_weights[3]);
  ctx.require_rank(to_output, (pre + "input-to-output weights").c_str(), 2);
  ctx.require_rank(recurrent_output, (pre + "recurrent-to-output weights").c_str(), 2);
  p.cells = ctx.shape(to_output)[0];
  p.inputs = input_size;
  p.outputs = ctx.shape(recurrent_output)[1];
  const int c = p.cells, n_in = p.inputs, n_out = p.outputs;
  // int8 weights with the float input: TFLite's hybrid kernel.
  const bool hybrid = ctx.type(to_output) == BATON_TYPE_INT8;
  p.hybrid = hybrid;
  p.asymmetric = hybrid && o.asymmetric_quantize_inputs != 0;
  LstmWeights& hs = d.hybrid_scales;
  hs = LstmWeights{};
  LstmGate* gates[4] = {&hs.input, &hs.forget, &hs.cell, &hs.output};
  static const char* const kGates[4] = {"input", "forget", "cell", "output"};
  const baton_tensor* in_in = optional_weights(ctx, sl.input_weights[0], pre + "input-to-input weights", {c, n_in},
                                               hybrid, &hs.input.input_scale);
  const baton_tensor* rec_in = optional_weights(ctx, sl.recurrent_weights[0], pre + "recurrent-to-input weights",
                                                {c, n_out}, hybrid, &hs.input.recurrent_scale);
  for (int g = 1; g < 4; ++g) {
    required_weights(ctx, sl.input_weights[g], pre + "input-to-" + kGates[g] + " weights", {c, n_in}, hybrid,
                     &gates[g]->input_scale);
    required_weights(ctx, sl.recurrent_weights[g], pre + "recurrent-to-" + kGates[g] + " weights", {c, n_out}, hybrid,
                     &gates[g]->recurrent_scale);
    required_float(ctx, sl.bias[g], pre + kGates[g] + " gate bias", {c});
  }
  p.cifg = in_in == nullptr;
  ctx.require((rec_in == nullptr) == p.cifg, pre + "input gate's weights must be all given or all omitted (CIFG)");
  const baton_tensor* peep_in = optional_weights(ctx, sl.peephole[0], pre + "cell-to-input weights", {c}, hybrid,
                                                 &hs.input.peephole_scale);
  const baton_tensor* peep_forget = optional_weights(ctx, sl.peephole[1], pre + "cell-to-forget weights", {c}, hybrid,
                                                     &hs.forget.peephole_scale);
  const baton_tensor* peep_out = optional_weights(ctx, sl.peephole[2], pre + "cell-to-output weights", {c}, hybrid,
                                                  &hs.output.peephole_scale);
  const bool peephole = peep_forget != nullptr;
  ctx.require((peep_out != nullptr) == peephole && (peep_in == nullptr || peephole) && (p.cifg || !peephole || peep_in),
              pre + "peephole weights must be all given (cell-to-input omitted under CIFG) or all omitted");
  const baton_tensor* bias_in = optional_float(ctx, sl.bias[0], pre + "input gate bias", {c});
  ctx.require((bias_in == nullptr) == p.cifg, p.cifg ? pre + "input gate bias given without input gate weights (CIFG)"
                                                     : pre + "input gate bias is missing");
  const baton_tensor* projection = optional_weights(ctx, sl.projection, pre + "projection weights", {n_out, c}, hybrid,
                                                    &hs.projection_scale);
  const baton_tensor* projection_bias = optional_float(ctx, sl.projection_bias, pre + "projection bias", {n_out});
  ctx.require(projection || !projection_bias, pre + "projection bias given without projection weights");
  ctx.require(projection || n_out == c, pre + "output size (" + std::to_string(n_out) + ") must equal the cell count (" +
                                            std::to_string(c) + ") without a projection");
  baton_tensor* output_state = state_input(ctx, sl.output_state, (pre + "output state").c_str());
  baton_tensor* cell_state = state_input(ctx, sl.cell_state, (pre + "cell state").c_str());
  ctx.require_float(output_state, "output state");
  ctx.require_float(cell_state, "cell state");
  require_dims(ctx, output_state, (pre + "output state").c_str(), {batch, n_out});
  require_dims(ctx, cell_state, (pre + "cell state").c_str(), {batch, c});
  const baton_tensor* norms[4];
  for (int g = 0; g < 4; ++g) norms[g] = optional_float(ctx, sl.norm[g], pre + kGates[g] + " layer-norm coefficients", {c});
  p.layer_norm = norms[1] != nullptr;
  ctx.require((norms[2] != nullptr) == p.layer_norm && (norms[3] != nullptr) == p.layer_norm &&
                  (norms[0] != nullptr) == (p.layer_norm && !p.cifg),
              pre + "layer-norm coefficients must be all given (the input gate's omitted under CIFG) or all omitted");
  p.aux_inputs = aux_size;
  if (aux_size > 0) {
    for (int g = 0; g < 4; ++g) {
      const std::string role = pre + "aux-input-to-" + kGates[g] + " weights";
      const baton_tensor* t = optional_weights(ctx, sl.aux_weights[g], role, {c, aux_size}, hybrid,
                                               &gates[g]->aux_scale);
      ctx.require(t != nullptr || (g == 0 && p.cifg), role + " (input " + std::to_string(sl.aux_weights[g]) + ") is missing");
      ctx.require(t == nullptr || g != 0 || !p.cifg, role + " given under CIFG (no input gate)");
    }
  }
  p.activation = cell_activation(ctx, o.activation);
  ctx.require(o.cell_clip >= 0.0f && o.proj_clip >= 0.0f, "cell_clip and proj_clip must not be negative");
  p.cell_clip = o.cell_clip;
  p.proj_clip = o.proj_clip;
  return n_out;
}

// ---- the BASIC kernel: inputs 0 input [batch, inputs], 1 previous activation [batch, cells], 2 weights
// [4 cells, inputs + cells], 3 biases [4 cells], 4 previous state [batch, cells]; outputs 0 activation,
// 1 state, 2 the concatenation [batch, inputs + cells], 3 the gate values [batch, 4 cells] ----

struct LstmBasicState : OpState {
  LstmBasicParams p;  // p.weights_zero_point and p.accum: uint8 only
  bool quantized = false;
};

void lstm_basic_invoke(OpContext& ctx) {
  const auto& s = ctx.state<LstmBasicState>();
  const LstmBasicParams& p = s.p;
  if (s.quantized) {
    lstm_basic_uint8(p, ctx.data<uint8_t>(ctx.input(0)), ctx.data<uint8_t>(ctx.input(1)), ctx.data<uint8_t>(ctx.input(2)),
                     ctx.data<int32_t>(ctx.input(3)), ctx.data<int16_t>(ctx.input(4)),
                     ctx.mutable_data<int16_t>(ctx.output(1)), ctx.mutable_data<uint8_t>(ctx.output(0)),
                     ctx.mutable_data<uint8_t>(ctx.output(2)), ctx.mutable_data<int16_t>(ctx.output(3)));
    return;
  }
  lstm_basic_float(p.batch, p.inputs, p.cells, ctx.data<float>(ctx.input(0)), ctx.data<float>(ctx.input(1)),
                   ctx.data<float>(ctx.input(2)), ctx.data<float>(ctx.input(3)), ctx.data<float>(ctx.input(4)),
                   ctx.mutable_data<float>(ctx.output(1)), ctx.mutable_data<float>(ctx.output(0)),
                   ctx.mutable_data<float>(ctx.output(2)), ctx.mutable_data<float>(ctx.output(3)));
}

void lstm_basic_prepare(OpContext& ctx) {
  ctx.require(ctx.input_count() == 5, "the BASIC kernel type takes 5 inputs (input, previous activation, weights, "
                                      "biases, previous state), the node has " + std::to_string(ctx.input_count()));
  ctx.require(ctx.output_count() == 4, "the BASIC kernel type gives 4 outputs (activation, state, concatenation, "
                                       "gate values), the node has " + std::to_string(ctx.output_count()));
  const baton_tensor* input = ctx.input(0);
  const baton_tensor* prev_activation = ctx.input(1);
  const baton_tensor* weights = ctx.input(2);
  const baton_tensor* bias = ctx.input(3);
  const baton_tensor* prev_state = ctx.input(4);
  ctx.require_rank(input, "input", 2);
  ctx.require_rank(prev_activation, "previous activation", 2);
  auto& s = ctx.state<LstmBasicState>();
  LstmBasicParams& p = s.p;
  p.batch = ctx.shape(input)[0];
  p.inputs = ctx.shape(input)[1];
  p.cells = ctx.shape(prev_activation)[1];
  require_dims(ctx, prev_activation, "previous activation", {p.batch, p.cells});
  require_dims(ctx, weights, "weights", {4 * p.cells, p.inputs + p.cells});
  require_dims(ctx, bias, "biases", {4 * p.cells});
  require_dims(ctx, prev_state, "previous state", {p.batch, p.cells});
  // TFLite's two forms: everything float32, or TOCO's quantized cell.
  baton_tensor* outs[4] = {ctx.output(0), ctx.output(1), ctx.output(2), ctx.output(3)};
  static const char* const kRoles[9] = {"input", "previous activation", "weights", "biases", "previous state",
                                        "activation output", "state output", "concatenation output", "gate values output"};
  const baton_tensor* all[9] = {input, prev_activation, weights, bias, prev_state, outs[0], outs[1], outs[2], outs[3]};
  s.quantized = ctx.type(input) == BATON_TYPE_UINT8;
  static const baton_tensor_type kQuantized[9] = {BATON_TYPE_UINT8, BATON_TYPE_UINT8, BATON_TYPE_UINT8, BATON_TYPE_INT32,
                                                  BATON_TYPE_INT16, BATON_TYPE_UINT8, BATON_TYPE_INT16, BATON_TYPE_UINT8,
                                                  BATON_TYPE_INT16};
  for (int i = 0; i < 9; ++i) {
    const baton_tensor_type want = s.quantized ? kQuantized[i] : BATON_TYPE_FLOAT32;
    ctx.require(ctx.type(all[i]) == want, std::string(kRoles[i]) + " is " + type_name(ctx.type(all[i])) + "; the BASIC "
                "kernel type takes all float32, or uint8 input, activations and weights with int32 biases and int16 "
                "states and gate values");
  }
  if (s.quantized) {
    const TensorQuant state_q = ctx.quant(outs[1]);
    const TensorQuant bias_q = ctx.quant(bias);
    const TensorQuant weights_q = ctx.quant(weights);
    ctx.require(state_q.count == 1 && bias_q.count == 1 && weights_q.count == 1,
                "the weights, biases and state output need one scale each");
    // TFLite's CheckedLog2 on the state's scale (a power of two within 1e-3 in log2), and the only state
    // format its quantized cell has: 4 integer bits (scale 2^-11).
    const float log2_scale = std::log(state_q.scale()) * (1.0f / std::log(2.0f));
    const float rounded = std::round(log2_scale);
    ctx.require(std::abs(log2_scale - rounded) < 1e-3f, "state output scale " + std::to_string(state_q.scale()) +
                                                            " is not a power of two (the quantized cell's state is)");
    ctx.require(15 + static_cast<int>(rounded) == 4, "state output scale " + std::to_string(state_q.scale()) +
                                                         " is not 2^-11 (4 integer bits, the one state format of "
                                                         "TFLite's quantized cell)");
    p.weights_zero_point = static_cast<int32_t>(weights_q.zero_point());
    p.accum = quantize_multiplier(4096.0 * static_cast<double>(bias_q.scale()));
  }
  ctx.set_output_shape(outs[0], {p.batch, p.cells});
  ctx.set_output_shape(outs[1], {p.batch, p.cells});
  ctx.set_output_shape(outs[2], {p.batch, p.inputs + p.cells});
  ctx.set_output_shape(outs[3], {p.batch, 4 * p.cells});
  ctx.set_invoke(lstm_basic_invoke);
}

enum class LstmKind { single, sequence, bidirectional };

void lstm_prepare_common(OpContext& ctx, LstmKind kind) {
  ctx.require_host_abi_minor(3, "the LSTM ops' options");
  const auto& o = ctx.options().u.recurrent;
  if (kind == LstmKind::bidirectional) {
    ctx.require(ctx.input_count() == 48, "takes 48 inputs, the node has " + std::to_string(ctx.input_count()));
  } else {
    if (kind == LstmKind::single && o.kernel_type == 1) return lstm_basic_prepare(ctx);
    ctx.require(o.kernel_type == 0, kind == LstmKind::single ? "kernel type " + std::to_string(o.kernel_type) +
                                                                   " is neither FULL nor BASIC"
                                                             : std::string("the sequence op takes the FULL kernel type only"));
    ctx.require(ctx.input_count() == 20 || ctx.input_count() == 24,
                "takes 20 or 24 inputs, the node has " + std::to_string(ctx.input_count()));
  }
  baton_tensor* input = ctx.input(0);
  if (kind != LstmKind::bidirectional && ctx.type(input) != BATON_TYPE_FLOAT32) {
    return lstm_integer_prepare(ctx, kind == LstmKind::single);
  }
  ctx.require_float(input, "input");
  auto& s = ctx.state<LstmState>();
  const SequenceLayout layout = sequence_layout(ctx, input, kind == LstmKind::single, o.time_major);
  s.time_major = layout.time_major;
  s.time = layout.time;
  s.batch = layout.batch;
  s.input_size = layout.input_size;
  const auto in = ctx.shape(input);
  const bool merge = kind == LstmKind::bidirectional && o.merge_outputs != 0;
  if (kind == LstmKind::bidirectional) {
    ctx.require(ctx.output_count() == (merge ? 1 : 2), merge ? "merge_outputs takes one output" : "takes two outputs");
    // TFLite 2.9 steps a batch-major sequence's states by the merged output's width, past the end of
    // its state tensors from the second sequence on: no result to match.
    if (merge && !s.time_major && s.batch > 1) {
      ctx.fail(BATON_UNSUPPORTED, "merge_outputs on a batch-major input of batch > 1 is not supported (TFLite 2.9 "
                                  "indexes the states past their end there)");
    }
  }
  s.direction_count = kind == LstmKind::bidirectional ? 2 : 1;
  s.aux = AuxMode::none;
  s.aux_size = 0;
  if (kind == LstmKind::bidirectional) {
    // TFLite's rule: the forget, cell and output gates' aux weights of both directions, all or none.
    const baton_tensor* aux = ctx.optional_input(kAuxInput);
    int given = 0;
    for (int i : {41, 42, 43, 45, 46, 47}) given += ctx.optional_input(i) != nullptr;
    ctx.require(given == 0 || given == 6, "the auxiliary input's forget, cell and output weights (inputs 41-43, 45-47) "
                                          "must be all given or all omitted");
    ctx.require(aux || given == 0, "auxiliary weights given without the auxiliary input (input 39)");
    if (aux) {
      ctx.require_float(aux, "auxiliary input");
      ctx.require_rank(aux, "auxiliary input", 3);
      const auto a = ctx.shape(aux);
      ctx.require(a[0] == in[0] && a[1] == in[1], "auxiliary input shape " + std::to_string(a[0]) + "x" +
                                                     std::to_string(a[1]) + " differs from the input's in its first two "
                                                     "dimensions");
      if (given) {
        // TFLite 2.9 steps through the auxiliary input by the input's width, not its own (so a wider one is
        // read at the input's row offsets, as here); a narrower one it reads past its end: no result to match.
        ctx.require(a[2] >= in[2], "auxiliary input width " + std::to_string(a[2]) + " is below the input's " +
                                       std::to_string(in[2]) + " (TFLite 2.9 steps through it by the input's width, "
                                       "past its end)");
        s.aux = AuxMode::cross;
        s.aux_size = a[2];
      } else {
        // The backward direction's weights are the input's width (TFLite sizes them so).
        ctx.require(a[2] == in[2], "auxiliary input width " + std::to_string(a[2]) + " differs from the input's " +
                                       std::to_string(in[2]) + " (without aux weights the backward direction reads it "
                                       "in place of the input)");
        s.aux = AuxMode::backward_input;
      }
    }
  }
  int widths[2] = {0, 0};
  for (int k = 0; k < s.direction_count; ++k) {
    LstmDirection& d = s.directions[k];
    d.slots = kind != LstmKind::bidirectional ? &kUnidirectional : k == 0 ? &kForward : &kBackward;
    d.backward = k == 1;
    widths[k] = lstm_direction_prepare(ctx, d, s.input_size, s.batch,
                                       kind != LstmKind::bidirectional ? "" : k == 0 ? "forward " : "backward ",
                                       s.aux == AuxMode::cross ? s.aux_size : 0);
    d.step.batch = s.time_major ? s.batch : 1;
    d.output = merge ? 0 : k;
    d.output_offset = merge && k == 1 ? widths[0] : 0;
    d.scratch.resize(d.step.scratch_size());
    d.quantized.resize(d.step.hybrid ? d.step.quantized_size() : 0);
    d.row_scales.resize(d.step.hybrid ? d.step.scales_size() : 0);
    d.row_zero_points.resize(d.step.hybrid ? d.step.zero_points_size() : 0);
  }
  for (int k = 0; k < ctx.output_count(); ++k) {
    baton_tensor* output = ctx.output(k);
    ctx.require_float(output, "output");
    const int width = merge ? widths[0] + widths[1] : widths[k];
    if (kind == LstmKind::single) ctx.set_output_shape(output, {s.batch, width});
    else ctx.set_output_shape(output, {in[0], in[1], width});
  }
}

void lstm_prepare(OpContext& ctx) { lstm_prepare_common(ctx, LstmKind::single); }
void sequence_lstm_prepare(OpContext& ctx) { lstm_prepare_common(ctx, LstmKind::sequence); }
void bidirectional_lstm_prepare(OpContext& ctx) { lstm_prepare_common(ctx, LstmKind::bidirectional); }

const float* floats(const OpContext& ctx, int index) {
  const baton_tensor* t = index < 0 ? nullptr : ctx.optional_input(index);
  return t ? ctx.data<float>(t) : nullptr;
}

void lstm_invoke(OpContext& ctx) {
  auto& s = ctx.state<LstmState>();
  const float* aux = s.aux == AuxMode::none ? nullptr : ctx.data<float>(ctx.input(kAuxInput));
  for (int k = 0; k < s.direction_count; ++k) {
    LstmDirection& d = s.directions[k];
    const float* input = k == 1 && s.aux == AuxMode::backward_input ? aux : ctx.data<float>(ctx.input(0));
    const float* cross = s.aux == AuxMode::cross ? aux : nullptr;
    const LstmSlots& sl = *d.slots;
    const LstmParams& p = d.step;
    LstmWeights w = d.hybrid_scales;
    LstmGate* gates[4] = {&w.input, &w.forget, &w.cell, &w.output};
    // The weights as float or as int8 codes (the same pointer read as the kernel's type wants).
    auto weights = [&](int index, const float** as_float, const int8_t** as_int8) {
      const baton_tensor* t = index < 0 ? nullptr : ctx.optional_input(index);
      if (!t) return;
      if (p.hybrid) *as_int8 = ctx.data<int8_t>(t);
      else *as_float = ctx.data<float>(t);
    };
    for (int g = 0; g < 4; ++g) {
      weights(sl.input_weights[g], &gates[g]->input_weights, &gates[g]->input_weights_q);
      weights(sl.recurrent_weights[g], &gates[g]->recurrent_weights, &gates[g]->recurrent_weights_q);
      gates[g]->bias = floats(ctx, sl.bias[g]);
      gates[g]->norm = floats(ctx, sl.norm[g]);
      if (cross) weights(sl.aux_weights[g], &gates[g]->aux_weights, &gates[g]->aux_weights_q);
    }
    weights(sl.peephole[0], &w.input.peephole, &w.input.peephole_q);
    weights(sl.peephole[1], &w.forget.peephole, &w.forget.peephole_q);
    weights(sl.peephole[2], &w.output.peephole, &w.output.peephole_q);
    weights(sl.projection, &w.projection, &w.projection_q);
    w.projection_bias = floats(ctx, sl.projection_bias);
    float* output_state = ctx.mutable_data<float>(ctx.input(sl.output_state));
    float* cell_state = ctx.mutable_data<float>(ctx.input(sl.cell_state));
    baton_tensor* out_tensor = ctx.output(d.output);
    const int width = ctx.shape(out_tensor).back();
    float* output = ctx.mutable_data<float>(out_tensor) + d.output_offset;
    const int sequences = s.time_major ? 1 : s.batch;
    for (int b = 0; b < sequences; ++b) {
      float* h = output_state + static_cast<int64_t>(b) * p.outputs;
      float* c = cell_state + static_cast<int64_t>(b) * p.cells;
      for (int i = 0; i < s.time; ++i) {
        const int t = d.backward ? s.time - 1 - i : i;
        // Rows of p.batch vectors: time-major, step t holds the batch; batch-major, row b * time + t.
        const int64_t row = s.time_major ? static_cast<int64_t>(t) * p.batch : static_cast<int64_t>(b) * s.time + t;
        lstm_step(p, w, input + row * s.input_size, h, c, output + row * width, width, d.scratch.data(),
                  d.quantized.data(), d.row_scales.data(), d.row_zero_points.data(),
                  cross ? cross + row * s.input_size : nullptr);  // TFLite's step, see prepare
      }
    }
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_LSTM, "LSTM", 1, 4, lstm_prepare, lstm_invoke},
    {BATON_OP_UNIDIRECTIONAL_SEQUENCE_LSTM, "UNIDIRECTIONAL_SEQUENCE_LSTM", 1, 3, sequence_lstm_prepare, lstm_invoke},
    {BATON_OP_BIDIRECTIONAL_SEQUENCE_LSTM, "BIDIRECTIONAL_SEQUENCE_LSTM", 1, 3, bidirectional_lstm_prepare, lstm_invoke},
};

}  // namespace

std::span<const OpDef> lstm_ops() { return kOps; }

}  // namespace baton::builtin
