#include "kernels/recurrent.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/hybrid.h"

namespace baton::builtin {
namespace {

float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Each row of `rows` x `memory` moves left by one; the last column becomes zero.
template <typename T>
void shift_rows_left(T* state, int rows, int memory) {
  for (int r = 0; r < rows; ++r) {
    T* row = state + static_cast<int64_t>(r) * memory;
    std::memmove(row, row + 1, sizeof(T) * static_cast<size_t>(memory - 1));
    row[memory - 1] = T{0};
  }
}

}  // namespace

void apply_cell_activation(float* v, int n, CellActivation a) {
  switch (a) {
    case CellActivation::none: return;
    case CellActivation::relu:
      for (int i = 0; i < n; ++i) v[i] = std::max(0.0f, v[i]);
      return;
    case CellActivation::relu_n1_to_1:
      for (int i = 0; i < n; ++i) v[i] = std::min(1.0f, std::max(-1.0f, v[i]));
      return;
    case CellActivation::relu6:
      for (int i = 0; i < n; ++i) v[i] = std::min(6.0f, std::max(0.0f, v[i]));
      return;
    case CellActivation::tanh:
      for (int i = 0; i < n; ++i) v[i] = std::tanh(v[i]);
      return;
  }
}

void rnn_step(const RnnStepParams& p, const float* input, const float* weights, const float* recurrent,
              const float* bias, float* hidden, float* output, int output_stride, const RnnAuxInput& aux) {
  for (int b = 0; b < p.batch; ++b) {
    const float* x = input + static_cast<int64_t>(b) * p.input_size;
    const float* a = aux.input ? aux.input + static_cast<int64_t>(b) * aux.size : nullptr;
    const float* h = hidden + static_cast<int64_t>(b) * p.units;
    float* out = output + static_cast<int64_t>(b) * output_stride;
    for (int u = 0; u < p.units; ++u) {
      float acc = bias[u];
      acc += dot(weights + static_cast<int64_t>(u) * p.input_size, x, p.input_size);
      if (a) acc += dot(aux.weights + static_cast<int64_t>(u) * aux.size, a, aux.size);
      acc += dot(recurrent + static_cast<int64_t>(u) * p.units, h, p.units);
      out[u] = acc;
    }
  }
  // Every row is computed from the old state before any of the state changes.
  for (int b = 0; b < p.batch; ++b) {
    float* out = output + static_cast<int64_t>(b) * output_stride;
    apply_cell_activation(out, p.units, p.activation);
    std::memcpy(hidden + static_cast<int64_t>(b) * p.units, out, sizeof(float) * static_cast<size_t>(p.units));
  }
}

void rnn_step_hybrid(const RnnStepParams& p, const float* input, const RnnHybridWeights& w, const float* bias,
                     float* hidden, float* output, int output_stride, int8_t* quantized, const RnnAuxInput& aux) {
  for (int b = 0; b < p.batch; ++b) {
    std::memcpy(output + static_cast<int64_t>(b) * output_stride, bias, sizeof(float) * static_cast<size_t>(p.units));
  }
  // output += (W q(x)) * scale(x) * scale(W), then the same for the hidden state and R.
  auto accumulate = [&](const float* rows, int depth, const int8_t* weights, float weights_scale) {
    for (int b = 0; b < p.batch; ++b) {
      float scale = 1.0f;
      int32_t zero_point = 0;
      int8_t* q = quantized;
      quantize_row(rows + static_cast<int64_t>(b) * depth, depth, q, &scale, &zero_point, w.asymmetric);
      const float factor = scale * weights_scale;
      float* out = output + static_cast<int64_t>(b) * output_stride;
      constexpr int kChunk = 64;
      int32_t dots[kChunk];
      for (int u0 = 0; u0 < p.units; u0 += kChunk) {
        const int n = std::min(kChunk, p.units - u0);
        hybrid_row_dots(weights + static_cast<int64_t>(u0) * depth, n, depth, q, zero_point, dots);
        for (int u = 0; u < n; ++u) out[u0 + u] += static_cast<float>(dots[u]) * factor;
      }
    }
  };
  accumulate(input, p.input_size, w.weights, w.weights_scale);
  if (aux.input) accumulate(aux.input, aux.size, aux.int8_weights, aux.weights_scale);
  accumulate(hidden, p.units, w.recurrent, w.recurrent_scale);
  for (int b = 0; b < p.batch; ++b) {
    float* out = output + static_cast<int64_t>(b) * output_stride;
    apply_cell_activation(out, p.units, p.activation);
    std::memcpy(hidden + static_cast<int64_t>(b) * p.units, out, sizeof(float) * static_cast<size_t>(p.units));
  }
}

namespace {

// SVDF after the newest column of the state is written: time weights, the rank sums, bias, activation,
// then the shift that makes room for the next step.
void svdf_time_stage(const SvdfParams& p, const float* weights_time, const float* bias, float* state, float* scratch,
                     float* output) {
  const int units = p.units();
  for (int b = 0; b < p.batch; ++b) {
    const float* rows = state + static_cast<int64_t>(b) * p.filters * p.memory;
    float* s = scratch + static_cast<int64_t>(b) * p.filters;
    for (int f = 0; f < p.filters; ++f) {
      s[f] = dot(weights_time + static_cast<int64_t>(f) * p.memory, rows + static_cast<int64_t>(f) * p.memory, p.memory);
    }
    float* out = output + static_cast<int64_t>(b) * units;
    for (int u = 0; u < units; ++u) {
      float acc = bias ? bias[u] : 0.0f;
      for (int r = 0; r < p.rank; ++r) acc += s[u * p.rank + r];
      out[u] = acc;
    }
  }
  apply_cell_activation(output, p.batch * units, p.activation);
  shift_rows_left(state, p.batch * p.filters, p.memory);
}

}  // namespace

void svdf_float(const SvdfParams& p, const float* input, const float* weights_feature, const float* weights_time,
                const float* bias, float* state, float* scratch, float* output) {
  for (int b = 0; b < p.batch; ++b) {
    const float* x = input + static_cast<int64_t>(b) * p.input_size;
    float* rows = state + static_cast<int64_t>(b) * p.filters * p.memory;
    for (int f = 0; f < p.filters; ++f) {
      rows[static_cast<int64_t>(f) * p.memory + p.memory - 1] =
          dot(weights_feature + static_cast<int64_t>(f) * p.input_size, x, p.input_size);
    }
  }
  svdf_time_stage(p, weights_time, bias, state, scratch, output);
}

void svdf_hybrid(const SvdfParams& p, const float* input, const int8_t* weights_feature, float feature_scale,
                 const float* weights_time, const float* bias, float* state, float* scratch, float* output,
                 int8_t* quantized, bool asymmetric) {
  for (int b = 0; b < p.batch; ++b) {
    float scale = 1.0f;
    int32_t zero_point = 0;
    quantize_row(input + static_cast<int64_t>(b) * p.input_size, p.input_size, quantized, &scale, &zero_point,
                 asymmetric);
    const float factor = scale * feature_scale;
    float* rows = state + static_cast<int64_t>(b) * p.filters * p.memory;
    constexpr int kChunk = 64;
    int32_t dots[kChunk];
    for (int f = 0; f < p.filters; ++f) {
      if (f % kChunk == 0) {
        hybrid_row_dots(weights_feature + static_cast<int64_t>(f) * p.input_size, std::min(kChunk, p.filters - f),
                        p.input_size, quantized, zero_point, dots);
      }
      const int32_t acc = dots[f % kChunk];
      rows[static_cast<int64_t>(f) * p.memory + p.memory - 1] = 0.0f + static_cast<float>(acc) * factor;
    }
  }
  svdf_time_stage(p, weights_time, bias, state, scratch, output);
}

void svdf_int8(const SvdfInt8Params& q, const int8_t* input, const int8_t* weights_feature,
               const int16_t* weights_time, const int32_t* bias, int16_t* state, int32_t* scratch, int8_t* output) {
  const SvdfParams& p = q.shape;
  const int units = p.units();
  int32_t* sums = scratch + static_cast<int64_t>(p.batch) * p.filters;
  for (int b = 0; b < p.batch; ++b) {
    const int8_t* x = input + static_cast<int64_t>(b) * p.input_size;
    int16_t* rows = state + static_cast<int64_t>(b) * p.filters * p.memory;
    // The newest activation of each filter, rescaled to the state's int16 scale and saturated.
    for (int f = 0; f < p.filters; ++f) {
      const int8_t* w = weights_feature + static_cast<int64_t>(f) * p.input_size;
      int32_t acc = 0;
      for (int i = 0; i < p.input_size; ++i) acc += static_cast<int32_t>(w[i]) * (static_cast<int32_t>(x[i]) - q.input_zero);
      acc = multiply_by_quantized_multiplier(acc, q.feature_scale);
      rows[static_cast<int64_t>(f) * p.memory + p.memory - 1] = static_cast<int16_t>(std::clamp(acc, -32768, 32767));
    }
    // Time weights: int16 x int16 products summed in int32, wrapping as TFLite's int32 sum does.
    int32_t* s = scratch + static_cast<int64_t>(b) * p.filters;
    for (int f = 0; f < p.filters; ++f) {
      const int16_t* w = weights_time + static_cast<int64_t>(f) * p.memory;
      const int16_t* row = rows + static_cast<int64_t>(f) * p.memory;
      uint32_t acc = 0;
      for (int m = 0; m < p.memory; ++m) acc += static_cast<uint32_t>(static_cast<int32_t>(w[m]) * row[m]);
      s[f] = static_cast<int32_t>(acc);
    }
    int32_t* out = sums + static_cast<int64_t>(b) * units;
    for (int u = 0; u < units; ++u) {
      uint32_t acc = bias ? static_cast<uint32_t>(bias[u]) : 0u;
      for (int r = 0; r < p.rank; ++r) acc += static_cast<uint32_t>(s[u * p.rank + r]);
      out[u] = static_cast<int32_t>(acc);
    }
  }
  // TFLite takes only RELU here and clamps to the int8 range, nothing tighter.
  for (int i = 0; i < p.batch * units; ++i) {
    const int32_t v = multiply_by_quantized_multiplier(sums[i], q.time_scale) + q.output_zero;
    output[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
  }
  shift_rows_left(state, p.batch * p.filters, p.memory);
}

}  // namespace baton::builtin
