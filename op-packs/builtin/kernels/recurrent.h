// The recurrent cells of TFLite's stateful ops, float32 and TFLite's integer SVDF. Each call runs one
// time step on a batch and updates the state it is given in place (the model's variable tensor):
//  - RNN: h = act(bias + W x + R h_prev); the output is h, and h becomes the state.
//  - SVDF (a fully connected layer factored into `rank` feature/time filter pairs): each filter's row
//    of the state holds its last memory_size feature activations, oldest first. A step writes the
//    newest column (weights_feature . x), takes each filter's dot product with its time weights, sums
//    every `rank` filters into a unit, adds the bias and applies the activation, then shifts every row
//    left by one (the newest column becomes zero until the next step writes it), as TFLite does.
// The sums are formed in TFLite's order (bias, then the input product, then the recurrent one) so
// float results stay within rounding of TFLite's.
#ifndef BATON_BUILTIN_KERNELS_RECURRENT_H
#define BATON_BUILTIN_KERNELS_RECURRENT_H

#include <cstdint>

#include "kernels/quant_math.h"

namespace baton::builtin {

// TFLite's fused activations on a vector (ApplyActivationToVector's cases that the schema can name,
// SIGN_BIT excepted).
enum class CellActivation { none, relu, relu_n1_to_1, relu6, tanh };
void apply_cell_activation(float* v, int n, CellActivation a);

struct RnnStepParams {
  int batch = 1, input_size = 1, units = 1;
  CellActivation activation = CellActivation::none;
};

// An auxiliary input whose product with its own weights joins the input's, after it (the cross links
// of a stacked BIDIRECTIONAL_SEQUENCE_RNN): [batch, size] rows, weights [units, size], float32 in the
// float step, int8 with one scale in the hybrid one. `input` null: none.
struct RnnAuxInput {
  const float* input = nullptr;
  int size = 0;
  const float* weights = nullptr;
  const int8_t* int8_weights = nullptr;
  float weights_scale = 1.0f;
};

// input [batch, input_size], weights [units, input_size], recurrent [units, units], bias [units],
// hidden [batch, units] (read, then overwritten with the output), output [batch, units] with rows
// `output_stride` apart (a merged bidirectional output interleaves two directions' rows).
void rnn_step(const RnnStepParams& p, const float* input, const float* weights, const float* recurrent,
              const float* bias, float* hidden, float* output, int output_stride, const RnnAuxInput& aux = {});

// TFLite's hybrid RNN step: int8 weights (symmetric, one scale each) with float activations. Each batch
// row of the input and of the hidden state is quantized to int8 on the fly (kernels/hybrid.h's
// symmetric rows, or asymmetric ones whose zero point's term leaves the dot product); each int32 dot product, times the row's scale and the weights', is added to the
// float sum. `quantized` needs max(input_size, units, aux.size) bytes.
struct RnnHybridWeights {
  const int8_t* weights = nullptr;
  const int8_t* recurrent = nullptr;
  float weights_scale = 1.0f, recurrent_scale = 1.0f;
  bool asymmetric = false;  // rows quantized asymmetrically (asymmetric_quantize_inputs)
};
void rnn_step_hybrid(const RnnStepParams& p, const float* input, const RnnHybridWeights& w, const float* bias,
                     float* hidden, float* output, int output_stride, int8_t* quantized, const RnnAuxInput& aux = {});

struct SvdfParams {
  int batch = 1, input_size = 1, filters = 1, memory = 1, rank = 1;
  int units() const { return filters / rank; }
  CellActivation activation = CellActivation::none;
};

// input [batch, input_size], weights_feature [filters, input_size], weights_time [filters, memory],
// bias [units] or null, state [batch, filters * memory], scratch [batch * filters], output [batch, units].
void svdf_float(const SvdfParams& p, const float* input, const float* weights_feature, const float* weights_time,
                const float* bias, float* state, float* scratch, float* output);

// TFLite's hybrid SVDF: int8 feature weights (symmetric, `feature_scale`) applied to each input row
// quantized on the fly (symmetric, or asymmetric); the time weights come dequantized to float (int8 code
// times its scale). `quantized` needs input_size bytes.
void svdf_hybrid(const SvdfParams& p, const float* input, const int8_t* weights_feature, float feature_scale,
                 const float* weights_time, const float* bias, float* state, float* scratch, float* output,
                 int8_t* quantized, bool asymmetric);

// TFLite's full-integer SVDF: int8 input and feature weights, int16 time weights and state (symmetric),
// int32 bias, int8 output. feature_scale = input * weights_feature / state scales; time_scale = state *
// weights_time / output scales. The int32 scratch needs batch * filters + batch * units entries.
struct SvdfInt8Params {
  SvdfParams shape;
  QuantizedMultiplier feature_scale, time_scale;
  int32_t input_zero = 0, output_zero = 0;
};
void svdf_int8(const SvdfInt8Params& p, const int8_t* input, const int8_t* weights_feature,
               const int16_t* weights_time, const int32_t* bias, int16_t* state, int32_t* scratch, int8_t* output);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_RECURRENT_H
