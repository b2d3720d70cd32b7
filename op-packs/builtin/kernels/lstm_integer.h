// One time step of TFLite's full-integer LSTM cell (its "8x8_16" kernel): int8 input and output state,
// int8 weights, int32 biases, an int16 cell state whose scale is a power of two, int16 peepholes and
// layer-norm coefficients. Each gate is an int16 value in Q3.12 (or, with layer norm, at the scale of the
// node's intermediate tensor for that gate before normalization):
//   gate = W x + R h (each an int32 dot product plus a precomputed bias that folds in the zero points,
//          rescaled to the gate's scale and added with int16 saturation) + peephole . c
//   with layer norm: TFLite's integer normalization (mean and variance in int64, an inverse square root
//          multiplier), times the coefficients, plus the bias, rescaled to Q3.12
//   i, f, o = sigmoid (gemmlowp's fixed-point logistic, Q3.12 in, Q0.15 out); g = tanh (Q3.12 in)
//   c' = f . c >> 15 + i . g >> (30 + log2 of the cell scale), saturated, clipped
//   h = o . tanh(c') rescaled to the hidden intermediate's scale, the projection (if any) to the output
// The arithmetic follows TFLite 2.9's reference (portable) kernels, rounding for rounding.
#ifndef BATON_BUILTIN_KERNELS_LSTM_INTEGER_H
#define BATON_BUILTIN_KERNELS_LSTM_INTEGER_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/quant_math.h"

namespace baton::builtin {

// One gate's constants. The biases are per cell: the gate bias (0 under layer norm) plus the input zero
// point's term for the input matmul; the output state zero point's term for the recurrent one.
struct LstmIntegerGate {
  const int8_t* input_weights = nullptr;      // [cells, inputs]
  const int8_t* recurrent_weights = nullptr;  // [cells, outputs]
  const int16_t* peephole = nullptr;          // [cells] or null
  const int16_t* norm = nullptr;              // [cells] or null
  const int32_t* norm_bias = nullptr;         // the gate bias, added after the layer norm
  std::vector<int32_t> input_bias, recurrent_bias;
  QuantizedMultiplier input_scale, recurrent_scale, peephole_scale, norm_scale;
  int32_t variance_guard = 1;  // the variance used when a row's is below 1
};

struct LstmIntegerParams {
  int batch = 1, inputs = 1, cells = 1, outputs = 1;
  bool cifg = false;
  LstmIntegerGate input, forget, cell, output;
  int cell_shift = -11;       // log2 of the cell state's scale
  int16_t cell_clip = 0;      // 0: none
  int8_t proj_clip = 0;       // 0: none
  QuantizedMultiplier hidden_scale;
  int32_t hidden_zero_point = 0;
  int32_t output_state_zero_point = 0;
  const int8_t* projection = nullptr;  // [outputs, cells] or null
  std::vector<int32_t> projection_bias;  // with the hidden zero point's term
  QuantizedMultiplier projection_scale;
  // TFLite 2.9 runs each peephole product over `outputs` values per batch row instead of `cells` (the
  // width it passes); the same walk is reproduced (prepare refuses outputs > cells with peepholes).
  int peephole_width() const { return outputs; }
  size_t scratch16_size() const { return static_cast<size_t>(batch) * cells * 4; }
  size_t scratch8_size() const { return static_cast<size_t>(batch) * cells; }
};

// input [batch, inputs]; output_state [batch, outputs] and cell_state [batch, cells], read and
// overwritten; output [batch, outputs]; scratch of scratch16_size() and scratch8_size() values.
void lstm_integer_step(const LstmIntegerParams& p, const int8_t* input, int8_t* output_state, int16_t* cell_state,
                       int8_t* output, int16_t* scratch16, int8_t* scratch8);

// TFLite 2.9's other full-integer LSTM step, its "8x8_8" kernel (the LSTM op with 12 intermediate
// tensors): each gate's two products are int8 values at their own intermediates' scales and zero points,
// added into an int16 sum at the gate's third intermediate's scale, then normalized and activated in
// float (its ApplyLayerNormFloat, ApplySigmoidFloat, ApplyTanhFloat: layer norm in Q3.12, sigmoid and
// tanh in Q0.15, truncated); the cell state is Q0.15. TFLite's step has neither an input gate (it uses
// 1 - forget) nor peepholes, and always applies layer norm and the projection with its bias:
//   f, o = sigmoid(norm(sum)), g = tanh(norm(sum)); c' = f . c + (1 - f) . g (>> 15, saturated, clipped)
//   h = projection(o . tanh(c')) (int64 sums from the bias, rescaled, plus the output state zero point,
//   clipped to proj_clip)
struct Lstm8x8_8Gate {
  const int8_t* input_weights = nullptr;      // [cells, inputs]
  const int8_t* recurrent_weights = nullptr;  // [cells, outputs]
  const int16_t* norm = nullptr;              // [cells]
  const int32_t* bias = nullptr;              // [cells], added after the layer norm
  QuantizedMultiplier input_scale, recurrent_scale;  // a product to its int8 intermediate
  int8_t input_zero_point = 0, recurrent_zero_point = 0;
  QuantizedMultiplier input_to_sum, recurrent_to_sum;  // an int8 intermediate to the sum's scale
  QuantizedMultiplier norm_scale;
};

struct Lstm8x8_8Params {
  int batch = 1, inputs = 1, cells = 1, outputs = 1;
  Lstm8x8_8Gate forget, cell, output;
  int32_t input_zero_point = 0, output_state_zero_point = 0;
  int16_t cell_clip = 0;  // 0: none
  int8_t proj_clip = 0;   // 0: none
  const int8_t* projection = nullptr;        // [outputs, cells]
  const int32_t* projection_bias = nullptr;  // [outputs]
  QuantizedMultiplier projection_scale;
  size_t scratch16_size() const { return static_cast<size_t>(batch) * cells * 4; }
  size_t scratch8_size() const { return static_cast<size_t>(batch) * cells * 2; }
};

// input [batch, inputs]; output_state [batch, outputs] and cell_state [batch, cells], read and
// overwritten; output [batch, outputs].
void lstm_8x8_8_step(const Lstm8x8_8Params& p, const int8_t* input, int8_t* output_state, int16_t* cell_state,
                     int8_t* output, int16_t* scratch16, int8_t* scratch8);

// TFLite's BASIC LSTM cell (the LSTM op's 5-input kernel type), uint8: TOCO's quantized cell. The input
// and the previous activation (uint8 codes read as value - 128 over 128, whatever their scales say) are
// concatenated; a fully connected layer with uint8 weights (minus their zero point) and int32 biases gives
// four gate values rescaled by 4096 x the bias scale to Q3.12 with int16 saturation; then, in gemmlowp's
// 16-bit fixed point: i, f, o = logistic, g = tanh (Q0.15), the state (Q4.11)
// c' = saturating(i . g rescaled to Q4.11 + f . c), and the activation o . tanh(c' as Q3.12) rounded to
// 8 bits plus 128. concat [batch, inputs + cells] and activ_temp [batch, 4 cells] are written too.
struct LstmBasicParams {
  int batch = 1, inputs = 1, cells = 1;
  int32_t weights_zero_point = 0;
  QuantizedMultiplier accum;
};
void lstm_basic_uint8(const LstmBasicParams& p, const uint8_t* input, const uint8_t* prev_activation,
                      const uint8_t* weights, const int32_t* bias, const int16_t* prev_state, int16_t* state,
                      uint8_t* activation, uint8_t* concat, int16_t* activ_temp);

// gemmlowp's fixed-point logistic and tanh on int16 (exposed for tests): logistic takes Q3.12, tanh a
// value with `integer_bits` integer bits (0..6); both give Q0.15.
int16_t fixed_logistic16(int16_t x);
int16_t fixed_tanh16(int16_t x, int integer_bits);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_LSTM_INTEGER_H
