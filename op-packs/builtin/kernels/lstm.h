// One time step of TFLite's full LSTM cell, float32, on a batch, with every optional part its options
// and inputs allow: CIFG (no input gate; it is 1 - forget), peephole connections, layer normalization
// of the gates, a projection (with optional bias) and clipping of the cell and the projection.
//   i = sigmoid(norm(W_i x + R_i h + P_i . c) + b_i)      (absent under CIFG: i = 1 - f)
//   f = sigmoid(norm(W_f x + R_f h + P_f . c) + b_f)
//   g = act(norm(W_g x + R_g h) + b_g)
//   c' = clip(f . c + i . g)
//   o = sigmoid(norm(W_o x + R_o h + P_o . c') + b_o)
//   h' = clip(proj(o . act(c')))   or o . act(c') without a projection
// Without layer norm, norm() is the identity and the bias starts the sum (TFLite's order); with it,
// norm(v) = (v - mean) / sqrt(variance + 1e-8) per batch row (the variance from the deviations, two
// passes) times the gate's coefficients. The step reads and overwrites the output state h and cell state c in place.
#ifndef BATON_BUILTIN_KERNELS_LSTM_H
#define BATON_BUILTIN_KERNELS_LSTM_H

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/recurrent.h"

namespace baton::builtin {

// Per gate: input weights [cells, inputs], recurrent weights [cells, outputs], peephole [cells] or
// null, bias [cells], layer-norm coefficients [cells] or null. The input gate's pointers are all null
// under CIFG.
// Hybrid layers (LstmParams::hybrid) give the weights as int8 codes with one scale each instead (the
// *_q pointers and scales); bias, layer-norm coefficients and states stay float.
struct LstmGate {
  const float* input_weights = nullptr;
  const float* recurrent_weights = nullptr;
  const float* peephole = nullptr;
  const float* bias = nullptr;
  const float* norm = nullptr;
  const float* aux_weights = nullptr;  // [cells, aux_inputs]: the bidirectional op's auxiliary input, or null
  const int8_t* input_weights_q = nullptr;
  const int8_t* recurrent_weights_q = nullptr;
  const int8_t* peephole_q = nullptr;
  const int8_t* aux_weights_q = nullptr;
  float input_scale = 1.0f, recurrent_scale = 1.0f, peephole_scale = 1.0f, aux_scale = 1.0f;
};

struct LstmWeights {
  LstmGate input, forget, cell, output;  // cell has no peephole
  const float* projection = nullptr;       // [outputs, cells] or null
  const float* projection_bias = nullptr;  // [outputs] or null
  const int8_t* projection_q = nullptr;
  float projection_scale = 1.0f;
};

struct LstmParams {
  int batch = 1, inputs = 1, cells = 1, outputs = 1;
  int aux_inputs = 0;  // the auxiliary input's width; 0: none
  bool cifg = false, layer_norm = false;
  // TFLite's hybrid kernel: each batch row of the input, of the output state and of the hidden value
  // before the projection is quantized to int8 on the fly (symmetric, or asymmetric with a zero point
  // whose term is taken out of the dot product, kernels/hybrid.h); an int32 dot
  // product times the row's scale and the weights' is added to the float sum; int8 peepholes are
  // dequantized (code times scale) before use. The auxiliary input's rows are quantized as the input's.
  bool hybrid = false;
  bool asymmetric = false;  // the rows quantized asymmetrically (asymmetric_quantize_inputs)
  size_t quantized_size() const {
    return static_cast<size_t>(batch) * (inputs + std::max(outputs, cells) + aux_inputs);
  }
  size_t scales_size() const { return static_cast<size_t>(3 * batch + cells); }
  size_t zero_points_size() const { return static_cast<size_t>(3 * batch); }
  CellActivation activation = CellActivation::tanh;
  float cell_clip = 0.0f, proj_clip = 0.0f;  // 0: none
  size_t scratch_size() const { return static_cast<size_t>(batch) * cells * 4; }
};

// input [batch, inputs]; output_state [batch, outputs]; cell_state [batch, cells]; output [batch,
// outputs] (rows `output_stride` apart); scratch of scratch_size() floats; for a hybrid layer,
// `quantized` of quantized_size() bytes, `scales` of scales_size() floats and `zero_points` of
// zero_points_size() values (else all three unused). `aux_input` [batch, aux_inputs] (or null): each gate adds its
// aux_weights times it after the input's term, before the recurrent one, as TFLite does.
void lstm_step(const LstmParams& p, const LstmWeights& w, const float* input, float* output_state, float* cell_state,
               float* output, int output_stride, float* scratch, int8_t* quantized = nullptr,
               float* scales = nullptr, int32_t* zero_points = nullptr, const float* aux_input = nullptr);

// TFLite's BASIC LSTM cell (the LSTM op's 5-input kernel type), float32: concat = [input, prev_activation]
// per batch row; activ_temp = weights [4 cells, inputs + cells] . concat + bias; then with the four
// blocks of activ_temp in the order input gate, candidate, forget gate, output gate:
//   state = sigmoid(i) . tanh(g) + sigmoid(f) . prev_state;  activation = sigmoid(o) . tanh(state)
// All six arrays are [batch, ...] and written (concat and activ_temp are outputs of the node).
void lstm_basic_float(int batch, int inputs, int cells, const float* input, const float* prev_activation,
                      const float* weights, const float* bias, const float* prev_state, float* state,
                      float* activation, float* concat, float* activ_temp);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_LSTM_H
