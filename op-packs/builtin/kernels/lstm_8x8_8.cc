// TFLite 2.9's "8x8_8" integer LSTM step (kernels/lstm_integer.h), rounding for rounding and float
// operation for float operation: its layer norm, sigmoid and tanh are computed in float (single
// precision, with the powers of two in double, as TFLite writes them), so each line below keeps TFLite's
// order and types.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/lstm_integer.h"

namespace baton::builtin {
namespace {

constexpr int32_t kInt16Min = -32768, kInt16Max = 32767;

int16_t clamp16(int64_t v) {
  return static_cast<int16_t>(std::min<int64_t>(std::max<int64_t>(v, kInt16Min), kInt16Max));
}

// rows [batch, rows] of int8: (x - zero_point) . w, rescaled, plus the output zero point, clamped.
void product_to_int8(const int8_t* x, int32_t x_zero_point, const int8_t* w, QuantizedMultiplier scale, int batch,
                     int depth, int rows, int8_t out_zero_point, int8_t* out) {
  for (int b = 0; b < batch; ++b) {
    const int8_t* v = x + static_cast<int64_t>(b) * depth;
    for (int r = 0; r < rows; ++r) {
      const int8_t* row = w + static_cast<int64_t>(r) * depth;
      int32_t acc = 0;
      for (int d = 0; d < depth; ++d) acc += (static_cast<int32_t>(v[d]) - x_zero_point) * row[d];
      acc = multiply_by_quantized_multiplier(acc, scale) + out_zero_point;
      out[static_cast<int64_t>(b) * rows + r] = static_cast<int8_t>(std::min(std::max(acc, -128), 127));
    }
  }
}

// TFLite's ApplyLayerNormFloat: Q3.12 out.
void layer_norm_float(int16_t* v, const Lstm8x8_8Gate& g, int batch, int n) {
  const float norm_scale =
      static_cast<float>(g.norm_scale.multiplier * std::pow(2.0, static_cast<double>(g.norm_scale.shift - 31)));
  const float bias_scale = static_cast<float>(std::pow(2.0, -10) * norm_scale);
  for (int b = 0; b < batch; ++b) {
    int16_t* row = v + static_cast<int64_t>(b) * n;
    float sum = 0.0f, sum_sq = 0.0f;
    for (int i = 0; i < n; ++i) {
      const float value = static_cast<float>(row[i]);
      sum += value;
      sum_sq += value * value;
    }
    const float mean = sum / static_cast<float>(n);
    const float variance = sum_sq / static_cast<float>(n) - mean * mean;
    // TFLite's unqualified sqrt of a float; the float and the double root give the same results on every
    // native case, and the double one is kept.
    const float stddev_inv = variance == 0 ? static_cast<float>(1.0f / std::sqrt(1e-8))
                                           : static_cast<float>(1.0f / std::sqrt(static_cast<double>(variance)));
    for (int i = 0; i < n; ++i) {
      const float normalized = (static_cast<float>(row[i]) - mean) * stddev_inv;
      const float weighted = normalized * static_cast<float>(g.norm[i]) * norm_scale +
                             static_cast<float>(g.bias[i]) * bias_scale;
      row[i] = clamp16(static_cast<int32_t>(std::round(weighted * std::pow(2, 12))));
    }
  }
}

void sigmoid_float(int16_t* v, int n) {
  for (int i = 0; i < n; ++i) {
    const float x = static_cast<float>(v[i] * std::pow(2, -12));
    const float y = 1.0f / (1.0f + std::exp(-x));
    v[i] = clamp16(static_cast<int32_t>(y * std::pow(2, 15)));
  }
}

void tanh_float(const int16_t* in, int n, int integer_bits, int16_t* out) {
  for (int i = 0; i < n; ++i) {
    const float x = static_cast<float>(in[i] * std::pow(2.0, static_cast<double>(integer_bits)));
    out[i] = clamp16(static_cast<int32_t>(std::tanh(x) * std::pow(2, 15)));
  }
}

// int16 a . b rounded >> shift (no saturation, as TFLite's CwiseMul).
int16_t mul_shift(int16_t a, int16_t b, int shift) {
  return static_cast<int16_t>(rounding_divide_by_pot(static_cast<int32_t>(a) * b, shift));
}

enum class GateActivation { sigmoid, tanh };

void gate(const Lstm8x8_8Params& p, const Lstm8x8_8Gate& g, const int8_t* input, const int8_t* output_state,
          GateActivation act, int16_t* out, int8_t* scratch0, int8_t* scratch1) {
  const int n = p.batch * p.cells;
  product_to_int8(input, p.input_zero_point, g.input_weights, g.input_scale, p.batch, p.inputs, p.cells,
                  g.input_zero_point, scratch0);
  product_to_int8(output_state, p.output_state_zero_point, g.recurrent_weights, g.recurrent_scale, p.batch, p.outputs,
                  p.cells, g.recurrent_zero_point, scratch1);
  for (int i = 0; i < n; ++i) {
    const int32_t x = multiply_by_quantized_multiplier(scratch0[i] - g.input_zero_point, g.input_to_sum);
    const int32_t h = multiply_by_quantized_multiplier(scratch1[i] - g.recurrent_zero_point, g.recurrent_to_sum);
    out[i] = clamp16(static_cast<int64_t>(x) + h);
  }
  layer_norm_float(out, g, p.batch, p.cells);
  if (act == GateActivation::sigmoid) sigmoid_float(out, n);
  else tanh_float(out, n, -12, out);
}

}  // namespace

void lstm_8x8_8_step(const Lstm8x8_8Params& p, const int8_t* input, int8_t* output_state, int16_t* cell_state,
                     int8_t* output, int16_t* scratch16, int8_t* scratch8) {
  const int n = p.batch * p.cells;
  int16_t* forget = scratch16;
  int16_t* cell = scratch16 + n;
  int16_t* out_gate = scratch16 + 2 * n;
  int16_t* hidden = scratch16 + 3 * n;
  int8_t* scratch0 = scratch8;
  int8_t* scratch1 = scratch8 + n;
  gate(p, p.forget, input, output_state, GateActivation::sigmoid, forget, scratch0, scratch1);
  gate(p, p.cell, input, output_state, GateActivation::tanh, cell, scratch0, scratch1);
  // c' = f . c >> 15 + (1 - f) . g >> 15, saturated, clipped (TFLite's UpdateLstmCellInteger with CIFG).
  for (int i = 0; i < n; ++i) {
    const int16_t kept = mul_shift(forget[i], cell_state[i], 15);
    const int16_t added = mul_shift(static_cast<int16_t>(32767 - forget[i]), cell[i], 15);
    int16_t c = clamp16(static_cast<int32_t>(kept) + added);
    if (p.cell_clip > 0) c = std::min<int16_t>(std::max<int16_t>(c, static_cast<int16_t>(-p.cell_clip)), p.cell_clip);
    cell_state[i] = c;
  }
  gate(p, p.output, input, output_state, GateActivation::sigmoid, out_gate, scratch0, scratch1);
  tanh_float(cell_state, n, -15, hidden);
  for (int i = 0; i < n; ++i) hidden[i] = mul_shift(out_gate[i], hidden[i], 15);
  // The projection: int64 sums from the bias, rescaled, plus the output state's zero point.
  for (int b = 0; b < p.batch; ++b) {
    const int16_t* h = hidden + static_cast<int64_t>(b) * p.cells;
    for (int r = 0; r < p.outputs; ++r) {
      const int8_t* row = p.projection + static_cast<int64_t>(r) * p.cells;
      int64_t acc = p.projection_bias[r];
      for (int c = 0; c < p.cells; ++c) acc += static_cast<int32_t>(h[c]) * row[c];
      int32_t v = multiply_by_quantized_multiplier_64(acc, p.projection_scale) + p.output_state_zero_point;
      v = std::min(std::max(v, -128), 127);
      if (p.proj_clip > 0) v = std::min<int32_t>(std::max<int32_t>(v, -p.proj_clip), p.proj_clip);
      output_state[static_cast<int64_t>(b) * p.outputs + r] = static_cast<int8_t>(v);
    }
  }
  std::memcpy(output, output_state, static_cast<size_t>(p.batch) * p.outputs);
}

}  // namespace baton::builtin
