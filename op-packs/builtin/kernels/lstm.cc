#include "kernels/lstm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/hybrid.h"

namespace baton::builtin {
namespace {

// rows [batch, n] += m [rows_of_m, depth] . v [batch, depth] (each dot formed on its own, then added).
void add_matrix_times(const float* m, int rows, int depth, const float* v, int batch, float* out) {
  for (int b = 0; b < batch; ++b) {
    const float* x = v + static_cast<int64_t>(b) * depth;
    float* o = out + static_cast<int64_t>(b) * rows;
    for (int r = 0; r < rows; ++r) {
      const float* row = m + static_cast<int64_t>(r) * depth;
      float dot = 0.0f;
      for (int d = 0; d < depth; ++d) dot += row[d] * x[d];
      o[r] += dot;
    }
  }
}

void fill_rows(float* out, const float* row, int n, int batch) {
  for (int b = 0; b < batch; ++b) {
    float* o = out + static_cast<int64_t>(b) * n;
    if (row) std::memcpy(o, row, sizeof(float) * static_cast<size_t>(n));
    else std::fill_n(o, n, 0.0f);
  }
}

void normalize_rows(float* v, int n, int batch) {
  for (int b = 0; b < batch; ++b) {
    float* row = v + static_cast<int64_t>(b) * n;
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += row[i];
    const float mean = sum / static_cast<float>(n);
    float sum_sq = 0.0f;
    for (int i = 0; i < n; ++i) sum_sq += (row[i] - mean) * (row[i] - mean);
    const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + 1e-8f);
    for (int i = 0; i < n; ++i) row[i] = (row[i] - mean) * inv;
  }
}

void sigmoid(float* v, int n) {
  for (int i = 0; i < n; ++i) v[i] = 1.0f / (1.0f + std::exp(-v[i]));
}

// rows [batch, n] += (m [rows_of_m, depth] . q [batch, depth]) * row_scales[b] * m_scale: the hybrid
// product of int8 weights and int8 rows, each int32 dot scaled and added to the float sum.
void add_quantized_matrix_times(const int8_t* m, float m_scale, int rows, int depth, const int8_t* q,
                                const float* row_scales, const int32_t* row_zero_points, int batch, float* out) {
  for (int b = 0; b < batch; ++b) {
    const int8_t* x = q + static_cast<int64_t>(b) * depth;
    const float factor = row_scales[b] * m_scale;
    float* o = out + static_cast<int64_t>(b) * rows;
    constexpr int kChunk = 64;
    int32_t dots[kChunk];
    for (int r0 = 0; r0 < rows; r0 += kChunk) {
      const int n = std::min(kChunk, rows - r0);
      hybrid_row_dots(m + static_cast<int64_t>(r0) * depth, n, depth, x, row_zero_points[b], dots);
      for (int r = 0; r < n; ++r) o[r0 + r] += static_cast<float>(dots[r]) * factor;
    }
  }
}

void quantize_rows(const float* v, int n, int batch, int8_t* q, float* row_scales, int32_t* row_zero_points,
                   bool asymmetric) {
  for (int b = 0; b < batch; ++b) {
    quantize_row(v + static_cast<int64_t>(b) * n, n, q + static_cast<int64_t>(b) * n, &row_scales[b],
                 &row_zero_points[b], asymmetric);
  }
}

// A hybrid step's quantized input and output-state rows (made once per step), and room for a
// dequantized peephole.
struct HybridRows {
  const int8_t* input = nullptr;
  const float* input_scales = nullptr;
  const int32_t* input_zero_points = nullptr;
  const int8_t* state = nullptr;
  const float* state_scales = nullptr;
  const int32_t* state_zero_points = nullptr;
  float* peephole = nullptr;
  const int8_t* aux = nullptr;  // null: no auxiliary input
  const float* aux_scales = nullptr;
  const int32_t* aux_zero_points = nullptr;
};

// The gate's pre-activation: bias (or 0 under layer norm) + W x + R h (+ peephole . c), then layer norm
// and the bias.
void gate_sum(const LstmParams& p, const LstmGate& g, const float* input, const float* aux, const float* h,
              const float* c, float* out, const HybridRows& hy) {
  const int n = p.cells;
  fill_rows(out, p.layer_norm ? nullptr : g.bias, n, p.batch);
  const float* peephole = g.peephole;
  if (p.hybrid) {
    add_quantized_matrix_times(g.input_weights_q, g.input_scale, n, p.inputs, hy.input, hy.input_scales,
                               hy.input_zero_points, p.batch, out);
    if (hy.aux && g.aux_weights_q) {
      add_quantized_matrix_times(g.aux_weights_q, g.aux_scale, n, p.aux_inputs, hy.aux, hy.aux_scales,
                                 hy.aux_zero_points, p.batch, out);
    }
    add_quantized_matrix_times(g.recurrent_weights_q, g.recurrent_scale, n, p.outputs, hy.state, hy.state_scales,
                               hy.state_zero_points, p.batch, out);
    if (g.peephole_q) {
      for (int i = 0; i < n; ++i) hy.peephole[i] = static_cast<float>(g.peephole_q[i]) * g.peephole_scale;
      peephole = hy.peephole;
    }
  } else {
    add_matrix_times(g.input_weights, n, p.inputs, input, p.batch, out);
    if (aux && g.aux_weights) add_matrix_times(g.aux_weights, n, p.aux_inputs, aux, p.batch, out);
    add_matrix_times(g.recurrent_weights, n, p.outputs, h, p.batch, out);
  }
  if (peephole && c) {
    for (int b = 0; b < p.batch; ++b) {
      for (int i = 0; i < n; ++i) out[b * n + i] += peephole[i] * c[b * n + i];
    }
  }
  if (p.layer_norm) {
    normalize_rows(out, n, p.batch);
    for (int b = 0; b < p.batch; ++b) {
      for (int i = 0; i < n; ++i) out[b * n + i] = out[b * n + i] * g.norm[i] + g.bias[i];
    }
  }
}

void clip(float* v, int n, float limit) {
  if (limit <= 0.0f) return;
  for (int i = 0; i < n; ++i) v[i] = std::clamp(v[i], -limit, limit);
}

}  // namespace

void lstm_step(const LstmParams& p, const LstmWeights& w, const float* input, float* output_state, float* cell_state,
               float* output, int output_stride, float* scratch, int8_t* quantized, float* scales,
               int32_t* zero_points, const float* aux_input) {
  const int n = p.batch * p.cells;
  float* in_gate = scratch;
  float* forget = scratch + n;
  float* cell = scratch + 2 * n;
  float* out_gate = scratch + 3 * n;
  HybridRows hy;
  if (p.hybrid) {
    int8_t* q_input = quantized;
    int8_t* q_state = quantized + static_cast<int64_t>(p.batch) * p.inputs;
    quantize_rows(input, p.inputs, p.batch, q_input, scales, zero_points, p.asymmetric);
    quantize_rows(output_state, p.outputs, p.batch, q_state, scales + p.batch, zero_points + p.batch, p.asymmetric);
    hy = {q_input, scales, zero_points, q_state, scales + p.batch, zero_points + p.batch, scales + 2 * p.batch};
    if (aux_input) {
      // After the state rows (of the larger of outputs and cells: the projection's rows reuse the space).
      int8_t* q_aux = q_state + static_cast<int64_t>(p.batch) * std::max(p.outputs, p.cells);
      float* aux_scales = scales + 2 * p.batch + p.cells;
      quantize_rows(aux_input, p.aux_inputs, p.batch, q_aux, aux_scales, zero_points + 2 * p.batch, p.asymmetric);
      hy.aux = q_aux;
      hy.aux_scales = aux_scales;
      hy.aux_zero_points = zero_points + 2 * p.batch;
    }
  }
  // Every gate reads the previous h (output_state) and c; c is updated only after all three.
  if (!p.cifg) {
    gate_sum(p, w.input, input, aux_input, output_state, cell_state, in_gate, hy);
    sigmoid(in_gate, n);
  }
  gate_sum(p, w.forget, input, aux_input, output_state, cell_state, forget, hy);
  sigmoid(forget, n);
  gate_sum(p, w.cell, input, aux_input, output_state, nullptr, cell, hy);
  apply_cell_activation(cell, n, p.activation);
  // The output gate's sums without the peephole, which needs the new cell state.
  const bool norm_output = p.layer_norm;
  {
    LstmParams q = p;
    q.layer_norm = false;  // normalization waits for the peephole term
    LstmGate g = w.output;
    if (norm_output) g.bias = nullptr;
    gate_sum(q, g, input, aux_input, output_state, nullptr, out_gate, hy);
  }
  const float* output_peephole = w.output.peephole;
  if (p.hybrid && w.output.peephole_q) {
    for (int i = 0; i < p.cells; ++i) hy.peephole[i] = static_cast<float>(w.output.peephole_q[i]) * w.output.peephole_scale;
    output_peephole = hy.peephole;
  }
  for (int i = 0; i < n; ++i) {
    const float gate_in = p.cifg ? 1.0f - forget[i] : in_gate[i];
    cell_state[i] = forget[i] * cell_state[i] + cell[i] * gate_in;
  }
  clip(cell_state, n, p.cell_clip);
  if (output_peephole) {
    for (int b = 0; b < p.batch; ++b) {
      for (int i = 0; i < p.cells; ++i) out_gate[b * p.cells + i] += output_peephole[i] * cell_state[b * p.cells + i];
    }
  }
  if (norm_output) {
    normalize_rows(out_gate, p.cells, p.batch);
    for (int b = 0; b < p.batch; ++b) {
      for (int i = 0; i < p.cells; ++i) {
        out_gate[b * p.cells + i] = out_gate[b * p.cells + i] * w.output.norm[i] + w.output.bias[i];
      }
    }
  }
  sigmoid(out_gate, n);
  // h = o . act(c), into the cell gate's scratch.
  std::memcpy(cell, cell_state, sizeof(float) * static_cast<size_t>(n));
  apply_cell_activation(cell, n, p.activation);
  for (int i = 0; i < n; ++i) cell[i] *= out_gate[i];
  if (w.projection || w.projection_q) {
    fill_rows(output_state, w.projection_bias, p.outputs, p.batch);
    if (p.hybrid) {
      quantize_rows(cell, p.cells, p.batch, quantized, scales, zero_points, p.asymmetric);
      add_quantized_matrix_times(w.projection_q, w.projection_scale, p.outputs, p.cells, quantized, scales, zero_points,
                                 p.batch, output_state);
    } else {
      add_matrix_times(w.projection, p.outputs, p.cells, cell, p.batch, output_state);
    }
    clip(output_state, p.batch * p.outputs, p.proj_clip);
  } else {
    std::memcpy(output_state, cell, sizeof(float) * static_cast<size_t>(n));
  }
  for (int b = 0; b < p.batch; ++b) {
    std::memcpy(output + static_cast<int64_t>(b) * output_stride, output_state + static_cast<int64_t>(b) * p.outputs,
                sizeof(float) * static_cast<size_t>(p.outputs));
  }
}

void lstm_basic_float(int batch, int inputs, int cells, const float* input, const float* prev_activation,
                      const float* weights, const float* bias, const float* prev_state, float* state,
                      float* activation, float* concat, float* activ_temp) {
  const int depth = inputs + cells, units = 4 * cells;
  for (int b = 0; b < batch; ++b) {
    float* row = concat + static_cast<int64_t>(b) * depth;
    std::copy(input + static_cast<int64_t>(b) * inputs, input + static_cast<int64_t>(b + 1) * inputs, row);
    std::copy(prev_activation + static_cast<int64_t>(b) * cells, prev_activation + static_cast<int64_t>(b + 1) * cells,
              row + inputs);
    float* gates = activ_temp + static_cast<int64_t>(b) * units;
    std::copy(bias, bias + units, gates);
  }
  add_matrix_times(weights, units, depth, concat, batch, activ_temp);
  for (int b = 0; b < batch; ++b) {
    const float* gates = activ_temp + static_cast<int64_t>(b) * units;
    for (int c = 0; c < cells; ++c) {
      const float i = 1.0f / (1.0f + std::exp(-gates[c]));
      const float g = std::tanh(gates[cells + c]);
      const float f = 1.0f / (1.0f + std::exp(-gates[2 * cells + c]));
      const float o = 1.0f / (1.0f + std::exp(-gates[3 * cells + c]));
      const int64_t at = static_cast<int64_t>(b) * cells + c;
      const float next = i * g + f * prev_state[at];
      state[at] = next;
      activation[at] = o * std::tanh(next);
    }
  }
}

}  // namespace baton::builtin
