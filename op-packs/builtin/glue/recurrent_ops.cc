// RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN and SVDF: the recurrent ops whose state is a
// variable tensor per direction (an input the kernel updates in place; the runtime zeroes it at load and at
// reset_variables, as TFLite zeroes its variable tensors). Float32 throughout, and TFLite's full-integer
// SVDF; the RNNs and SVDF also with int8 weights (TFLite's hybrid kernels, their rows quantized symmetrically
// or, with asymmetric_quantize_inputs, asymmetrically). Their TFLite options are ABI 1.3's `recurrent` member.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "glue/recurrent_checks.h"
#include "kernels/recurrent.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// ---- RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN ----
// A direction's inputs: weights [units, input_size], recurrent weights [units, units], bias [units],
// hidden state [batch, units]. RNN's input is [batch, input_size]; the sequence ops' [time, batch,
// input_size] when time_major, else [batch, time, input_size]; they run the cell once per step (the
// backward direction from the last step to the first, writing each step's output in its place).
struct RnnDirection {
  RnnStepParams step;  // step.batch: the whole batch when time-major, else 1 (one sequence at a time)
  int input = 0;        // the sequence it reads: the input, or the auxiliary input (see below)
  int first_input = 1;  // weights, recurrent weights, bias, hidden state follow
  int aux_weights = -1;  // the auxiliary input's weights, or -1
  float aux_scale = 1.0f;  // their scale when int8
  int output = 0, output_offset = 0;
  bool backward = false;
  bool hybrid = false;  // int8 weights: hybrid_scales holds their scales (the pointers are set at invoke)
  RnnHybridWeights hybrid_scales;
};

struct RnnState : OpState {
  RnnDirection directions[2];
  int direction_count = 1;
  int time = 1, batch = 1, input_size = 1;
  bool time_major = true;
  // BIDIRECTIONAL_SEQUENCE_RNN's auxiliary input with weights: its width, and the values between the
  // rows TFLite 2.9 reads (its own width batch-major in the float kernel; elsewhere the input's).
  int aux_size = 0, aux_row_width = 0;
  std::vector<int8_t> quantized;  // the hybrid kernel's int8 rows
};

// The scale of symmetric int8 weights (one scale, zero point 0), as TFLite's hybrid kernels read it.
float symmetric_weights_scale(const OpContext& ctx, const baton_tensor* t, const char* role) {
  const TensorQuant q = ctx.quant(t);
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()) && q.zero_point() == 0,
              std::string(role) + " (" + ctx.tensor_label(t) + ") needs one positive scale and zero point 0");
  return q.scale();
}

// Checks one direction's four inputs against the input; returns its units.
int rnn_direction_prepare(OpContext& ctx, RnnDirection& d, int input_size, int batch, int32_t activation) {
  baton_tensor* weights = ctx.input(d.first_input);
  baton_tensor* recurrent = ctx.input(d.first_input + 1);
  baton_tensor* bias = ctx.input(d.first_input + 2);
  d.hybrid = ctx.type(weights) == BATON_TYPE_INT8;
  if (d.hybrid) {
    // TFLite's hybrid kernel: int8 weights and recurrent weights, float bias and state.
    ctx.require_type(recurrent, "recurrent weights", {BATON_TYPE_INT8});
    d.hybrid_scales.asymmetric = ctx.options().u.recurrent.asymmetric_quantize_inputs != 0;
    d.hybrid_scales.weights_scale = symmetric_weights_scale(ctx, weights, "weights");
    d.hybrid_scales.recurrent_scale = symmetric_weights_scale(ctx, recurrent, "recurrent weights");
  } else {
    ctx.require_float(weights, "weights");
    ctx.require_float(recurrent, "recurrent weights");
  }
  ctx.require_float(bias, "bias");
  ctx.require_rank(weights, "weights", 2);
  RnnStepParams& p = d.step;
  p.units = ctx.shape(weights)[0];
  p.input_size = input_size;
  p.activation = cell_activation(ctx, activation);
  require_dims(ctx, weights, "weights", {p.units, input_size});
  require_dims(ctx, recurrent, "recurrent weights", {p.units, p.units});
  require_dims(ctx, bias, "bias", {p.units});
  baton_tensor* hidden = state_input(ctx, d.first_input + 3, "hidden state");
  ctx.require_float(hidden, "hidden state");
  require_dims(ctx, hidden, "hidden state", {batch, p.units});
  return p.units;
}

enum class RnnKind { single, sequence, bidirectional };

// BIDIRECTIONAL_SEQUENCE_RNN's optional inputs 9-11: an auxiliary input [time and batch as the input's,
// aux_size] and its weights per direction [units, aux_size]. With weights (stacked layers with cross
// links), both directions add its product to their gates after the input's; without them, the
// backward direction reads it in place of the input.
void bidirectional_rnn_aux_prepare(OpContext& ctx, RnnState& s) {
  baton_tensor* aux = ctx.optional_input(9);
  baton_tensor* aux_weights[2] = {ctx.optional_input(10), ctx.optional_input(11)};
  ctx.require((aux_weights[0] == nullptr) == (aux_weights[1] == nullptr),
              "takes the auxiliary weights (inputs 10 and 11) for both directions or for neither");
  if (!aux) {
    ctx.require(aux_weights[0] == nullptr, "has auxiliary weights (inputs 10 and 11) but no auxiliary input (input 9)");
    return;
  }
  baton_tensor* input = ctx.input(0);
  const auto in = ctx.shape(input);
  ctx.require_float(aux, "auxiliary input");
  if (!aux_weights[0]) {
    require_dims(ctx, aux, "auxiliary input (read by the backward direction in place of the input)",
                 {in[0], in[1], in[2]});
    // TFLite 2.9 hands it to the backward direction only time-major; batch-major, that direction
    // reads the input all the same.
    if (s.time_major) s.directions[1].input = 9;
    return;
  }
  ctx.require_rank(aux, "auxiliary input", 3);
  const auto a = ctx.shape(aux);
  ctx.require(a[0] == in[0] && a[1] == in[1], "auxiliary input (" + ctx.tensor_label(aux) + ") must have the input's " +
                                                  "first two dimensions (" + std::to_string(in[0]) + ", " +
                                                  std::to_string(in[1]) + ")");
  const bool hybrid = s.directions[0].hybrid;
  s.aux_size = a[2];
  s.aux_row_width = !s.time_major && !hybrid ? s.aux_size : s.input_size;
  ctx.require(s.aux_size >= s.aux_row_width,
              "auxiliary input is narrower (" + std::to_string(s.aux_size) + ") than the input (" +
                  std::to_string(s.input_size) + "): TFLite 2.9 steps through it by the input's width, past its end");
  for (int k = 0; k < 2; ++k) {
    RnnDirection& d = s.directions[k];
    baton_tensor* w = aux_weights[k];
    d.aux_weights = 10 + k;
    if (hybrid) {
      ctx.require_type(w, "auxiliary weights", {BATON_TYPE_INT8});
      d.aux_scale = symmetric_weights_scale(ctx, w, "auxiliary weights");
    } else {
      ctx.require_float(w, "auxiliary weights");
    }
    require_dims(ctx, w, "auxiliary weights", {d.step.units, s.aux_size});
  }
}

void rnn_prepare_common(OpContext& ctx, RnnKind kind) {
  ctx.require_host_abi_minor(3, "the recurrent ops' options");
  const auto& o = ctx.options().u.recurrent;
  baton_tensor* input = ctx.input(0);
  ctx.require_float(input, "input");
  auto& s = ctx.state<RnnState>();
  const SequenceLayout layout = sequence_layout(ctx, input, kind == RnnKind::single, o.time_major);
  s.time_major = layout.time_major;
  s.time = layout.time;
  s.batch = layout.batch;
  s.input_size = layout.input_size;
  const auto in = ctx.shape(input);
  s.direction_count = kind == RnnKind::bidirectional ? 2 : 1;
  bool merge = false;
  if (kind == RnnKind::bidirectional) {
    merge = o.merge_outputs != 0;
    ctx.require(ctx.output_count() == (merge ? 1 : 2), merge ? "merge_outputs takes one output" : "takes two outputs");
  }
  int widths[2] = {0, 0};
  for (int k = 0; k < s.direction_count; ++k) {
    RnnDirection& d = s.directions[k];
    d = RnnDirection{};
    d.first_input = 1 + 4 * k;
    d.backward = k == 1;
    widths[k] = rnn_direction_prepare(ctx, d, s.input_size, s.batch, o.activation);
    d.step.batch = s.time_major ? s.batch : 1;
    d.output = merge ? 0 : k;
    d.output_offset = merge && k == 1 ? widths[0] : 0;
  }
  s.aux_size = s.aux_row_width = 0;
  if (kind == RnnKind::bidirectional) {
    ctx.require(s.directions[0].hybrid == s.directions[1].hybrid,
                "the two directions' weights must both be float32 or both int8");
    bidirectional_rnn_aux_prepare(ctx, s);
  }
  s.quantized.resize(static_cast<size_t>(std::max({s.input_size, widths[0], widths[1], s.aux_size})));
  const int total = merge ? widths[0] + widths[1] : 0;
  for (int k = 0; k < ctx.output_count(); ++k) {
    baton_tensor* output = ctx.output(k);
    ctx.require_float(output, "output");
    const int width = merge ? total : widths[k];
    if (kind == RnnKind::single) {
      ctx.set_output_shape(output, {s.batch, width});
    } else if (k == 1) {
      // TFLite gives the separate backward output the shape [batch, time, units] even when time-major,
      // and fills it in the input's order all the same.
      ctx.set_output_shape(output, {s.batch, s.time, width});
    } else {
      ctx.set_output_shape(output, {in[0], in[1], width});
    }
  }
}

void rnn_prepare(OpContext& ctx) { rnn_prepare_common(ctx, RnnKind::single); }
void sequence_rnn_prepare(OpContext& ctx) { rnn_prepare_common(ctx, RnnKind::sequence); }
void bidirectional_rnn_prepare(OpContext& ctx) { rnn_prepare_common(ctx, RnnKind::bidirectional); }

void rnn_invoke(OpContext& ctx) {
  auto& s = ctx.state<RnnState>();
  const float* aux_input = s.aux_size ? ctx.data<float>(ctx.input(9)) : nullptr;
  // TFLite 2.9's hybrid BIDIRECTIONAL_SEQUENCE_RNN, time-major, runs the whole sequence (forward, then
  // backward) once per time step, each pass starting from the states the last one left; the same here.
  const bool repeats = s.direction_count == 2 && s.time_major && s.directions[0].hybrid;
  const int passes = repeats ? s.time : 1;
  for (int pass = 0; pass < passes; ++pass)
  for (int k = 0; k < s.direction_count; ++k) {
    const RnnDirection& d = s.directions[k];
    const RnnStepParams& p = d.step;
    RnnHybridWeights hybrid = d.hybrid_scales;
    hybrid.weights = ctx.data<int8_t>(ctx.input(d.first_input));
    hybrid.recurrent = ctx.data<int8_t>(ctx.input(d.first_input + 1));
    const float* weights = ctx.data<float>(ctx.input(d.first_input));
    const float* recurrent = ctx.data<float>(ctx.input(d.first_input + 1));
    const float* bias = ctx.data<float>(ctx.input(d.first_input + 2));
    const float* input = ctx.data<float>(ctx.input(d.input));
    RnnAuxInput aux;
    aux.size = s.aux_size;
    if (aux_input && d.hybrid) {
      aux.int8_weights = ctx.data<int8_t>(ctx.input(d.aux_weights));
      aux.weights_scale = d.aux_scale;
    } else if (aux_input) {
      aux.weights = ctx.data<float>(ctx.input(d.aux_weights));
    }
    float* hidden = ctx.mutable_data<float>(ctx.input(d.first_input + 3));
    baton_tensor* out_tensor = ctx.output(d.output);
    const int width = ctx.shape(out_tensor).back();
    float* output = ctx.mutable_data<float>(out_tensor) + d.output_offset;
    const int sequences = s.time_major ? 1 : s.batch;
    for (int b = 0; b < sequences; ++b) {
      for (int i = 0; i < s.time; ++i) {
        const int t = d.backward ? s.time - 1 - i : i;
        // Rows of p.batch vectors: time-major, step t holds the batch; batch-major, row b * time + t.
        const int64_t row = s.time_major ? static_cast<int64_t>(t) * p.batch : static_cast<int64_t>(b) * s.time + t;
        float* h = hidden + static_cast<int64_t>(b) * p.units;
        if (aux_input) aux.input = aux_input + row * s.aux_row_width;
        if (d.hybrid) {
          rnn_step_hybrid(p, input + row * s.input_size, hybrid, bias, h, output + row * width, width, s.quantized.data(),
                          aux);
        } else {
          rnn_step(p, input + row * s.input_size, weights, recurrent, bias, h, output + row * width, width, aux);
        }
      }
    }
  }
}

// ---- SVDF ----
// Inputs: input [batch, input_size], weights_feature [filters, input_size], weights_time [filters,
// memory], bias [units] (optional), state [batch, filters * memory]; units = filters / rank.
struct SvdfState : OpState {
  SvdfInt8Params q;  // q.shape serves the float and hybrid kernels too
  std::vector<float> scratch;
  std::vector<int32_t> scratch_int;
  // Hybrid: the feature weights' scale, the time weights' scale and their float values, the int8 row.
  float feature_scale = 1.0f, time_scale = 1.0f;
  std::vector<float> weights_time;
  std::vector<int8_t> quantized;
  bool asymmetric = false;  // asymmetric_quantize_inputs
};

float one_scale(const OpContext& ctx, const baton_tensor* t, const char* role) {
  const TensorQuant q = ctx.quant(t);
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()),
              std::string(role) + " (" + ctx.tensor_label(t) + ") needs one positive scale");
  return q.scale();
}

void svdf_int8_invoke(OpContext& ctx) {
  auto& s = ctx.state<SvdfState>();
  baton_tensor* bias = ctx.optional_input(3);
  svdf_int8(s.q, ctx.data<int8_t>(ctx.input(0)), ctx.data<int8_t>(ctx.input(1)), ctx.data<int16_t>(ctx.input(2)),
            bias ? ctx.data<int32_t>(bias) : nullptr, ctx.mutable_data<int16_t>(ctx.input(4)), s.scratch_int.data(),
            ctx.mutable_data<int8_t>(ctx.output(0)));
}

void svdf_hybrid_invoke(OpContext& ctx) {
  auto& s = ctx.state<SvdfState>();
  const int8_t* time = ctx.data<int8_t>(ctx.input(2));
  for (size_t i = 0; i < s.weights_time.size(); ++i) s.weights_time[i] = static_cast<float>(time[i]) * s.time_scale;
  baton_tensor* bias = ctx.optional_input(3);
  svdf_hybrid(s.q.shape, ctx.data<float>(ctx.input(0)), ctx.data<int8_t>(ctx.input(1)), s.feature_scale,
              s.weights_time.data(), bias ? ctx.data<float>(bias) : nullptr, ctx.mutable_data<float>(ctx.input(4)),
              s.scratch.data(), ctx.mutable_data<float>(ctx.output(0)), s.quantized.data(),
              s.asymmetric);
}

void svdf_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(3, "SVDF's options");
  const auto& o = ctx.options().u.recurrent;
  baton_tensor* input = ctx.input(0);
  baton_tensor* feature = ctx.input(1);
  baton_tensor* time = ctx.input(2);
  baton_tensor* bias = ctx.optional_input(3);
  baton_tensor* state = state_input(ctx, 4, "state");
  baton_tensor* output = ctx.output(0);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8});
  const bool integer = ctx.type(input) == BATON_TYPE_INT8;
  const bool hybrid = !integer && ctx.type(feature) == BATON_TYPE_INT8;
  ctx.require_rank(input, "input", 2);
  ctx.require_rank(feature, "weights_feature", 2);
  ctx.require_rank(time, "weights_time", 2);
  auto& s = ctx.state<SvdfState>();
  SvdfParams& p = s.q.shape;
  p.batch = ctx.shape(input)[0];
  p.input_size = ctx.shape(input)[1];
  p.filters = ctx.shape(feature)[0];
  p.memory = ctx.shape(time)[1];
  p.rank = o.rank;
  ctx.require(p.rank > 0 && p.filters % p.rank == 0, "rank " + std::to_string(p.rank) + " does not divide the " +
                                                         std::to_string(p.filters) + " filters");
  ctx.require(p.memory > 0, "weights_time has no memory columns");
  require_dims(ctx, feature, "weights_feature", {p.filters, p.input_size});
  require_dims(ctx, time, "weights_time", {p.filters, p.memory});
  if (bias) require_dims(ctx, bias, "bias", {p.units()});
  require_dims(ctx, state, "state", {p.batch, p.filters * p.memory});
  ctx.set_output_shape(output, {p.batch, p.units()});
  if (!integer) {
    if (hybrid) {
      // TFLite's hybrid kernel: int8 feature and time weights (symmetric), float bias, state and output.
      ctx.require_type(time, "weights_time", {BATON_TYPE_INT8});
      s.asymmetric = o.asymmetric_quantize_inputs != 0;
      s.feature_scale = one_scale(ctx, feature, "weights_feature");
      s.time_scale = one_scale(ctx, time, "weights_time");
      ctx.require(ctx.quant(feature).zero_point() == 0, "weights_feature must be symmetric (zero point 0)");
      s.weights_time.resize(static_cast<size_t>(p.filters) * p.memory);
      s.quantized.resize(static_cast<size_t>(p.input_size));
      ctx.set_invoke(svdf_hybrid_invoke);
    } else {
      ctx.require_float(feature, "weights_feature");
      ctx.require_float(time, "weights_time");
    }
    if (bias) ctx.require_float(bias, "bias");
    ctx.require_float(state, "state");
    ctx.require_float(output, "output");
    p.activation = cell_activation(ctx, o.activation);
    s.scratch.resize(static_cast<size_t>(p.batch) * p.filters);
    return;
  }
  // TFLite's integer SVDF: int8 feature weights, int16 time weights and state, int32 bias, int8 output;
  // its kernel takes RELU only (and then clamps to the int8 range, nothing tighter).
  ctx.require_type(feature, "weights_feature", {BATON_TYPE_INT8});
  ctx.require_type(time, "weights_time", {BATON_TYPE_INT16});
  if (bias) ctx.require_type(bias, "bias", {BATON_TYPE_INT32});
  ctx.require_type(state, "state", {BATON_TYPE_INT16});
  ctx.require_type(output, "output", {BATON_TYPE_INT8});
  ctx.require(o.activation == BATON_ACT_RELU, "the integer kernel takes fused activation RELU only (as TFLite's)");
  const ActQuant in_q = ctx.act_quant(input, "input");
  const ActQuant out_q = ctx.act_quant(output, "output");
  const float state_scale = one_scale(ctx, state, "state");
  ctx.require(ctx.quant(state).zero_point() == 0, "state must be symmetric (zero point 0)");
  // Float products and quotients, widened to double, as TFLite's Prepare forms them.
  const double scale_1 = in_q.scale * one_scale(ctx, feature, "weights_feature") / state_scale;
  const double scale_2 = state_scale * one_scale(ctx, time, "weights_time") / out_q.scale;
  s.q.feature_scale = quantize_multiplier(scale_1);
  s.q.time_scale = quantize_multiplier(scale_2);
  s.q.input_zero = in_q.zero_point;
  s.q.output_zero = out_q.zero_point;
  s.scratch_int.resize(static_cast<size_t>(p.batch) * (p.filters + p.units()));
  ctx.set_invoke(svdf_int8_invoke);
}

void svdf_invoke(OpContext& ctx) {
  auto& s = ctx.state<SvdfState>();
  baton_tensor* bias = ctx.optional_input(3);
  svdf_float(s.q.shape, ctx.data<float>(ctx.input(0)), ctx.data<float>(ctx.input(1)), ctx.data<float>(ctx.input(2)),
             bias ? ctx.data<float>(bias) : nullptr, ctx.mutable_data<float>(ctx.input(4)), s.scratch.data(),
             ctx.mutable_data<float>(ctx.output(0)));
}

constexpr OpDef kOps[] = {
    {BATON_OP_RNN, "RNN", 1, 3, rnn_prepare, rnn_invoke},
    {BATON_OP_UNIDIRECTIONAL_SEQUENCE_RNN, "UNIDIRECTIONAL_SEQUENCE_RNN", 1, 3, sequence_rnn_prepare, rnn_invoke},
    {BATON_OP_BIDIRECTIONAL_SEQUENCE_RNN, "BIDIRECTIONAL_SEQUENCE_RNN", 1, 3, bidirectional_rnn_prepare, rnn_invoke},
    {BATON_OP_SVDF, "SVDF", 1, 4, svdf_prepare, svdf_invoke},
};

}  // namespace

std::span<const OpDef> recurrent_ops() { return kOps; }

}  // namespace baton::builtin
