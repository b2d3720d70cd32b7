#include "kernels/lstm_integer.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/ql2norm.h"

namespace baton::builtin {
namespace {

constexpr int32_t kInt16Min = std::numeric_limits<int16_t>::min();
constexpr int32_t kInt16Max = std::numeric_limits<int16_t>::max();

// ---- gemmlowp's fixed point on int16 raw values (the caller tracks the integer bits) ----
// Sums and differences wrap as C++'s int16 conversions do; products are the saturating rounding
// doubling high multiply; rescales round (right) or saturate (left).

int16_t wrap16(int32_t v) { return static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint32_t>(v))); }

int16_t mul16(int16_t a, int16_t b) {
  if (a == b && a == kInt16Min) return static_cast<int16_t>(kInt16Max);
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return wrap16((ab + nudge) / (1 << 15));
}

int16_t divide_by_pot16(int16_t x, int exponent) {
  const int32_t mask = (1 << exponent) - 1;
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return wrap16((x >> exponent) + (remainder > threshold ? 1 : 0));
}

// SaturatingRoundingMultiplyByPOT: x * 2^exponent.
int16_t multiply_by_pot16(int16_t x, int exponent) {
  if (exponent < 0) return divide_by_pot16(x, -exponent);
  if (exponent == 0) return x;
  const int32_t threshold = (1 << (15 - exponent)) - 1;
  if (x > threshold) return static_cast<int16_t>(kInt16Max);
  if (x < -threshold) return static_cast<int16_t>(kInt16Min);
  return wrap16(static_cast<int32_t>(static_cast<uint32_t>(x) << exponent));
}

int16_t rescale16(int16_t x, int from_bits, int to_bits) { return multiply_by_pot16(x, from_bits - to_bits); }

// A 32-bit fixed-point constant as gemmlowp narrows it to 16 bits.
int16_t constant16(int32_t raw32) { return wrap16(rounding_divide_by_pot(raw32, 16)); }

int16_t one16(int integer_bits) { return integer_bits == 0 ? static_cast<int16_t>(kInt16Max) : static_cast<int16_t>(1 << (15 - integer_bits)); }

int16_t saturating_add16(int16_t a, int16_t b) { return static_cast<int16_t>(std::clamp(a + b, kInt16Min, kInt16Max)); }

int16_t rounding_half_sum16(int16_t a, int16_t b) {
  const int32_t sum = static_cast<int32_t>(a) + b;
  const int32_t sign = sum >= 0 ? 1 : -1;
  return wrap16((sum + sign) / 2);
}

// exp(a) for a in [-1/4, 0), Q0.15.
int16_t exp_quarter16(int16_t a) {
  const int16_t constant_term = constant16(1895147668);
  const int16_t one_third = constant16(715827883);
  const int16_t x = wrap16(a + (1 << 12));  // a + 1/8
  const int16_t x2 = mul16(x, x);
  const int16_t x3 = mul16(x2, x);
  const int16_t x4 = mul16(x2, x2);
  const int16_t x4_over_4 = multiply_by_pot16(x4, -2);
  const int16_t poly = multiply_by_pot16(wrap16(mul16(wrap16(x4_over_4 + x3), one_third) + x2), -1);
  return saturating_add16(constant_term, mul16(constant_term, wrap16(x + poly)));
}

// exp(a) for a <= 0 with `integer_bits` integer bits, Q0.15.
int16_t exp_negative16(int16_t a, int integer_bits) {
  const int fractional_bits = 15 - integer_bits;
  const int16_t quarter = static_cast<int16_t>(1 << (fractional_bits - 2));
  const int16_t mask = static_cast<int16_t>(quarter - 1);
  const int16_t mod_minus_quarter = wrap16((a & mask) - quarter);
  int16_t result = exp_quarter16(rescale16(mod_minus_quarter, integer_bits, 0));
  const int16_t remainder = wrap16(mod_minus_quarter - a);
  static constexpr struct {
    int exponent;
    int32_t multiplier;  // exp(-2^exponent), Q0.31
  } kBarrel[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                 {2, 39332535},    {3, 720401},      {4, 242}};
  for (const auto& step : kBarrel) {
    if (integer_bits > step.exponent && (remainder & (1 << (fractional_bits + step.exponent))) != 0) {
      result = mul16(result, constant16(step.multiplier));
    }
  }
  if (integer_bits > 5) {
    const int16_t clamp = constant16(-(1 << (36 - integer_bits)));  // -32
    if (a < clamp) result = 0;
  }
  if (a == 0) result = static_cast<int16_t>(kInt16Max);
  return result;
}

// Newton-Raphson for 1 / (1 + a), a in (0, 1) Q0.15; the result in Q2.13.
int16_t reciprocal_one_plus16(int16_t a, int16_t* half_denominator) {
  const int16_t half = rounding_half_sum16(a, static_cast<int16_t>(kInt16Max));
  const int16_t c48_17 = constant16(1515870810);
  const int16_t cm32_17 = constant16(-1010580540);
  int16_t x = wrap16(c48_17 + mul16(half, cm32_17));
  for (int i = 0; i < 3; ++i) {
    const int16_t half_times_x = mul16(half, x);
    const int16_t one_minus = wrap16(one16(2) - half_times_x);
    x = wrap16(x + rescale16(mul16(x, one_minus), 4, 2));
  }
  *half_denominator = half;
  return x;
}

}  // namespace

int16_t fixed_logistic16(int16_t a) {
  constexpr int kBits = 3;
  const bool positive = a > 0;
  const int16_t abs_input = positive ? a : wrap16(-a);
  int16_t unused;
  // 1 / (1 + exp(-|a|)): the Q2.13 reciprocal of 1 + e is half of 1 / ((1 + e) / 2).
  const int16_t x = reciprocal_one_plus16(exp_negative16(wrap16(-abs_input), kBits), &unused);
  const int16_t if_positive = rescale16(x, 1, 0);
  const int16_t if_negative = wrap16(kInt16Max - if_positive);
  if (a == 0) return constant16(1 << 30);
  return positive ? if_positive : if_negative;
}

int16_t fixed_tanh16(int16_t a, int integer_bits) {
  const bool negative = a < 0;
  const int16_t n = negative ? a : wrap16(-a);
  int16_t unused;
  // (1 - e) / (1 + e) with e = exp(2n): the reciprocal minus one.
  const int16_t x = reciprocal_one_plus16(exp_negative16(n, integer_bits + 1), &unused);
  const int16_t t = rescale16(wrap16(x - one16(2)), 2, 0);
  if (a == 0) return 0;
  return negative ? wrap16(-t) : t;
}

namespace {

// out[b, r] = sat16(out[b, r] + rescale(bias[r] + W[r] . x[b])) for int8 x and W.
void matmul_accumulate(const int8_t* x, const int32_t* bias, const int8_t* w, QuantizedMultiplier m, int batch,
                       int depth, int rows, int16_t* out) {
  for (int b = 0; b < batch; ++b) {
    const int8_t* xb = x + static_cast<int64_t>(b) * depth;
    for (int r = 0; r < rows; ++r) {
      const int8_t* wr = w + static_cast<int64_t>(r) * depth;
      int32_t acc = bias[r];
      for (int d = 0; d < depth; ++d) acc += static_cast<int32_t>(xb[d]) * wr[d];
      acc = multiply_by_quantized_multiplier(acc, m);
      int16_t& o = out[static_cast<int64_t>(b) * rows + r];
      o = static_cast<int16_t>(std::clamp(acc + o, kInt16Min, kInt16Max));
    }
  }
}

// The gate's sum before its activation: the two matmuls, the peephole and the layer norm.
void gate_sum(const LstmIntegerParams& p, const LstmIntegerGate& g, const int8_t* input, const int8_t* h,
              const int16_t* c, int16_t* out) {
  const int n = p.batch * p.cells;
  std::fill_n(out, n, int16_t{0});
  matmul_accumulate(input, g.input_bias.data(), g.input_weights, g.input_scale, p.batch, p.inputs, p.cells, out);
  matmul_accumulate(h, g.recurrent_bias.data(), g.recurrent_weights, g.recurrent_scale, p.batch, p.outputs, p.cells,
                    out);
  if (g.peephole) {
    const int width = p.peephole_width();
    int64_t k = 0;
    for (int b = 0; b < p.batch; ++b) {
      for (int v = 0; v < width; ++v, ++k) {
        const int32_t prod = multiply_by_quantized_multiplier(static_cast<int32_t>(g.peephole[v]) * c[k], g.peephole_scale);
        out[k] = static_cast<int16_t>(std::clamp(prod + out[k], kInt16Min, kInt16Max));
      }
    }
  }
  if (g.norm) {
    const int cells = p.cells;
    for (int b = 0; b < p.batch; ++b) {
      int16_t* row = out + static_cast<int64_t>(b) * cells;
      int64_t sum = 0, sum_sq = 0;
      for (int j = 0; j < cells; ++j) {
        sum += row[j];
        sum_sq += static_cast<int64_t>(row[j]) * row[j];
      }
      const int32_t mean = static_cast<int32_t>(sum * 1024 / cells);
      const int32_t temp = (1 << 20) / cells;
      const int64_t variance = sum_sq * temp - static_cast<int64_t>(mean) * mean;
      int32_t variance2 = static_cast<int32_t>(variance / (1 << 20));
      if (variance2 < 1) variance2 = g.variance_guard;
      int32_t inv_multiplier = 0;
      int inv_right_shift = 0;
      inv_sqrt_multiplier(variance2, &inv_multiplier, &inv_right_shift);
      const QuantizedMultiplier inv{inv_multiplier, -inv_right_shift};
      for (int j = 0; j < cells; ++j) {
        const int32_t shifted = 1024 * static_cast<int32_t>(row[j]) - mean;
        const int32_t rescaled = multiply_by_quantized_multiplier(shifted, inv);
        // int32 products and sums as TFLite forms them (wrapping), then widened.
        const int64_t v3 = static_cast<int32_t>(static_cast<uint32_t>(rescaled) * static_cast<uint32_t>(int32_t{g.norm[j]}) +
                                                static_cast<uint32_t>(g.norm_bias[j]));
        const int32_t v4 = static_cast<int32_t>((v3 > 0 ? v3 + 512 : v3 - 512) / 1024);
        const int32_t v5 = multiply_by_quantized_multiplier(v4, {g.norm_scale.multiplier, g.norm_scale.shift + 12});
        row[j] = static_cast<int16_t>(std::clamp(v5, kInt16Min, kInt16Max));
      }
    }
  }
}

void apply_logistic(int16_t* v, int n) {
  for (int i = 0; i < n; ++i) v[i] = fixed_logistic16(v[i]);
}

void apply_tanh(const int16_t* in, int16_t* out, int n, int integer_bits) {
  for (int i = 0; i < n; ++i) out[i] = fixed_tanh16(in[i], integer_bits);
}

}  // namespace

void lstm_integer_step(const LstmIntegerParams& p, const int8_t* input, int8_t* output_state, int16_t* cell_state,
                       int8_t* output, int16_t* scratch16, int8_t* scratch8) {
  const int n = p.batch * p.cells;
  int16_t* in_gate = scratch16;
  int16_t* forget = scratch16 + n;
  int16_t* cell = scratch16 + 2 * n;
  int16_t* out_gate = scratch16 + 3 * n;
  // TFLite's order: forget, cell, input gates from the old cell state; then the cell; then the output gate.
  gate_sum(p, p.forget, input, output_state, cell_state, forget);
  apply_logistic(forget, n);
  gate_sum(p, p.cell, input, output_state, nullptr, cell);
  apply_tanh(cell, cell, n, 3);
  if (p.cifg) {
    for (int i = 0; i < n; ++i) in_gate[i] = wrap16(kInt16Max - forget[i]);
  } else {
    gate_sum(p, p.input, input, output_state, cell_state, in_gate);
    apply_logistic(in_gate, n);
  }
  const int cell_product_shift = 30 + p.cell_shift;
  for (int i = 0; i < n; ++i) {
    const int16_t kept = wrap16(rounding_divide_by_pot(static_cast<int32_t>(forget[i]) * cell_state[i], 15));
    const int16_t added = wrap16(rounding_divide_by_pot(static_cast<int32_t>(in_gate[i]) * cell[i], cell_product_shift));
    int16_t c = static_cast<int16_t>(std::clamp(static_cast<int32_t>(kept) + added, kInt16Min, kInt16Max));
    if (p.cell_clip > 0) c = std::clamp<int16_t>(c, static_cast<int16_t>(-p.cell_clip), p.cell_clip);
    cell_state[i] = c;
  }
  gate_sum(p, p.output, input, output_state, cell_state, out_gate);
  apply_logistic(out_gate, n);
  // Hidden: o . tanh(c), rescaled to the hidden intermediate's scale (its zero point subtracted, as TFLite 2.9 does).
  apply_tanh(cell_state, in_gate, n, 15 + p.cell_shift);
  for (int i = 0; i < n; ++i) {
    int32_t v = multiply_by_quantized_multiplier(static_cast<int32_t>(out_gate[i]) * in_gate[i], p.hidden_scale);
    v -= p.hidden_zero_point;
    scratch8[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
  }
  if (p.projection) {
    for (int b = 0; b < p.batch; ++b) {
      const int8_t* hb = scratch8 + static_cast<int64_t>(b) * p.cells;
      for (int r = 0; r < p.outputs; ++r) {
        const int8_t* wr = p.projection + static_cast<int64_t>(r) * p.cells;
        int32_t acc = p.projection_bias[r];
        for (int d = 0; d < p.cells; ++d) acc += static_cast<int32_t>(hb[d]) * wr[d];
        acc = multiply_by_quantized_multiplier(acc, p.projection_scale) + p.output_state_zero_point;
        int8_t v = static_cast<int8_t>(std::clamp(acc, -128, 127));
        if (p.proj_clip > 0) v = std::clamp<int8_t>(v, static_cast<int8_t>(-p.proj_clip), p.proj_clip);
        output[static_cast<int64_t>(b) * p.outputs + r] = v;
      }
    }
  } else {
    std::memcpy(output, scratch8, static_cast<size_t>(p.batch) * p.outputs);
  }
  std::memcpy(output_state, output, static_cast<size_t>(p.batch) * p.outputs);
}

void lstm_basic_uint8(const LstmBasicParams& p, const uint8_t* input, const uint8_t* prev_activation,
                      const uint8_t* weights, const int32_t* bias, const int16_t* prev_state, int16_t* state,
                      uint8_t* activation, uint8_t* concat, int16_t* activ_temp) {
  const int depth = p.inputs + p.cells, units = 4 * p.cells;
  constexpr int kStateBits = 4;  // the state's integer bits (scale 2^-11), checked in prepare
  for (int b = 0; b < p.batch; ++b) {
    uint8_t* row = concat + static_cast<int64_t>(b) * depth;
    std::memcpy(row, input + static_cast<int64_t>(b) * p.inputs, static_cast<size_t>(p.inputs));
    std::memcpy(row + p.inputs, prev_activation + static_cast<int64_t>(b) * p.cells, static_cast<size_t>(p.cells));
    int16_t* gates = activ_temp + static_cast<int64_t>(b) * units;
    for (int u = 0; u < units; ++u) {
      const uint8_t* w = weights + static_cast<int64_t>(u) * depth;
      int32_t acc = bias[u];
      for (int d = 0; d < depth; ++d) acc += (static_cast<int32_t>(row[d]) - 128) * (static_cast<int32_t>(w[d]) - p.weights_zero_point);
      // Rescaled with ties rounded upward: TFLite 2.9's x86 build runs this product in ruy, whose
      // fixed-point multiply rounds that way (its reference kernel's ties away from zero differ).
      gates[u] = static_cast<int16_t>(std::clamp(multiply_by_quantized_multiplier(acc, p.accum, true), kInt16Min, kInt16Max));
    }
    for (int c = 0; c < p.cells; ++c) {
      const int16_t i = fixed_logistic16(gates[c]);
      const int16_t g = fixed_tanh16(gates[p.cells + c], 3);
      const int16_t f = fixed_logistic16(gates[2 * p.cells + c]);
      const int16_t o = fixed_logistic16(gates[3 * p.cells + c]);
      const int64_t at = static_cast<int64_t>(b) * p.cells + c;
      const int16_t next = saturating_add16(rescale16(mul16(i, g), 0, kStateBits), mul16(f, prev_state[at]));
      const int16_t h = mul16(o, fixed_tanh16(rescale16(next, kStateBits, 3), 3));
      state[at] = next;
      activation[at] = static_cast<uint8_t>(128 + std::clamp<int32_t>(divide_by_pot16(h, 8), -128, 127));
    }
  }
}

}  // namespace baton::builtin
