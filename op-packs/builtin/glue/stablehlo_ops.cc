// The STABLEHLO_* ops with runtime kernels in current LiteRT that compute element by element or move data:
// STABLEHLO_ADD / MULTIPLY / MAXIMUM / MINIMUM / AND / SHIFT_LEFT, STABLEHLO_PAD, DILATE and
// STABLEHLO_RNG_BIT_GENERATOR. The window reductions are in window_ops.cc, gather and scatter in
// stablehlo_index_ops.cc. Their one-op cases (tools/op-models-stablehlo.mjs) are checked against LiteRT 2.5.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "glue/op_context.h"
#include "glue/stablehlo_util.h"
#include "kernels/random.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// ---- STABLEHLO_ADD / MULTIPLY / MAXIMUM / MINIMUM / AND / SHIFT_LEFT: two operands of one shape ----

void require_same_operands(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  ctx.require(ctx.type(b) == ctx.type(a), std::string(ctx.op_name()) + ": operand types differ (" +
                                              type_name(ctx.type(a)) + ", " + type_name(ctx.type(b)) + ")");
  const auto sa = ctx.shape(a), sb = ctx.shape(b);
  ctx.require(std::equal(sa.begin(), sa.end(), sb.begin(), sb.end()),
              std::string(ctx.op_name()) + ": operands " + shape_text(sa) + " and " + shape_text(sb) +
                  " must have one shape (StableHLO does not broadcast)");
  ctx.require(ctx.type(ctx.output(0)) == ctx.type(a), std::string(ctx.op_name()) + ": output type " +
                                                          type_name(ctx.type(ctx.output(0))) + " differs from the operands' " +
                                                          type_name(ctx.type(a)));
  ctx.set_output_shape(ctx.output(0), sa);
}

void arithmetic_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  ctx.require_type(a, "operand", {BATON_TYPE_FLOAT16, BATON_TYPE_FLOAT32, BATON_TYPE_FLOAT64, BATON_TYPE_INT8, BATON_TYPE_INT16,
                                  BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8, BATON_TYPE_UINT16,
                                  BATON_TYPE_UINT32, BATON_TYPE_UINT64});
  require_same_operands(ctx);
}

template <typename T, typename F>
void elementwise(OpContext& ctx, F f) {
  const int64_t n = ctx.element_count(ctx.input(0));
  const T* a = ctx.data<T>(ctx.input(0));
  const T* b = ctx.data<T>(ctx.input(1));
  T* out = ctx.mutable_data<T>(ctx.output(0));
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

void arithmetic_invoke(OpContext& ctx) {
  const int32_t code = ctx.op_code();
  auto compute = [&](auto zero) {
    using T = decltype(zero);
    switch (code) {
      case BATON_OP_STABLEHLO_ADD: return elementwise<T>(ctx, [](T x, T y) { return wrapping_add(x, y); });
      case BATON_OP_STABLEHLO_MULTIPLY: return elementwise<T>(ctx, [](T x, T y) { return wrapping_mul(x, y); });
      case BATON_OP_STABLEHLO_MAXIMUM: return elementwise<T>(ctx, [](T x, T y) { return x < y ? y : x; });  // std::max
      default: return elementwise<T>(ctx, [](T x, T y) { return y < x ? y : x; });                     // std::min
    }
  };
  if (ctx.type(ctx.input(0)) == BATON_TYPE_FLOAT16) return compute(Half{});
  with_stablehlo_type(ctx.type(ctx.input(0)), compute);
}

void and_prepare(OpContext& ctx) {
  ctx.require_type(ctx.input(0), "operand", {BATON_TYPE_BOOL, BATON_TYPE_INT8, BATON_TYPE_INT16, BATON_TYPE_INT32,
                                             BATON_TYPE_INT64, BATON_TYPE_UINT8, BATON_TYPE_UINT16, BATON_TYPE_UINT32,
                                             BATON_TYPE_UINT64});
  require_same_operands(ctx);
}

void and_invoke(OpContext& ctx) {
  if (ctx.type(ctx.input(0)) == BATON_TYPE_BOOL) {
    return elementwise<bool>(ctx, [](bool x, bool y) { return x && y; });
  }
  with_stablehlo_type(ctx.type(ctx.input(0)), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) elementwise<T>(ctx, [](T x, T y) { return static_cast<T>(x & y); });
  });
}

void shift_left_prepare(OpContext& ctx) {
  ctx.require_type(ctx.input(0), "operand", {BATON_TYPE_INT8, BATON_TYPE_INT16, BATON_TYPE_INT32});
  require_same_operands(ctx);
}

// StableHLO's shift_left: an amount outside [0, bits) gives 0.
template <typename T>
T shift_left(T x, T amount) {
  using U = std::make_unsigned_t<T>;
  if (amount < 0 || amount >= static_cast<T>(sizeof(T) * 8)) return 0;
  return static_cast<T>(static_cast<U>(static_cast<U>(x) << amount));
}

void shift_left_invoke(OpContext& ctx) {
  switch (ctx.type(ctx.input(0))) {
    case BATON_TYPE_INT8: return elementwise<int8_t>(ctx, shift_left<int8_t>);
    case BATON_TYPE_INT16: return elementwise<int16_t>(ctx, shift_left<int16_t>);
    default: return elementwise<int32_t>(ctx, shift_left<int32_t>);
  }
}

// ---- STABLEHLO_PAD and DILATE: the operand spread out with interior and edge padding ----

// Output element o along each dimension reads input (o - low) / (interior + 1) when that divides and
// lies inside the input, else the padding value.
struct SpreadState : OpState {
  int rank = 0;
  std::vector<int64_t> in_dims, out_dims, low, step;  // step = interior + 1
  size_t element = 0;
};

void spread_shape(OpContext& ctx, SpreadState& s) {
  std::vector<int32_t> out;
  for (int d = 0; d < s.rank; ++d) {
    const int64_t n = s.in_dims[d];
    const int64_t spread = n == 0 ? 0 : (n - 1) * s.step[d] + 1;
    const int64_t size = spread + s.low[d] + s.out_dims[d];  // out_dims holds the high padding until here
    ctx.require(size >= 0 && size <= INT32_MAX,
                std::string(ctx.op_name()) + ": dimension " + std::to_string(d) + " would have size " +
                    std::to_string(size) + " (padding removes more than the operand has)");
    out.push_back(static_cast<int32_t>(size));
  }
  s.out_dims.assign(out.begin(), out.end());
  ctx.set_output_shape(ctx.output(0), out);
}

void spread_invoke(OpContext& ctx) {
  const auto& s = ctx.state<SpreadState>();
  const auto* in = ctx.data<unsigned char>(ctx.input(0));
  const auto* pad = ctx.data<unsigned char>(ctx.input(ctx.op_code() == BATON_OP_DILATE ? 2 : 1));
  auto* out = ctx.mutable_data<unsigned char>(ctx.output(0));
  int64_t in_strides[kMaxSpreadRank];
  row_major_strides(s.in_dims, in_strides);
  for_each_position(s.out_dims, [&](const int64_t* pos, int64_t o) {
    int64_t src = 0;
    for (int d = 0; d < s.rank; ++d) {
      const int64_t p = pos[d] - s.low[d];
      if (p < 0 || p % s.step[d] != 0 || p / s.step[d] >= s.in_dims[d]) {
        std::memcpy(out + o * s.element, pad, s.element);
        return;
      }
      src += p / s.step[d] * in_strides[d];
    }
    std::memcpy(out + o * s.element, in + src * s.element, s.element);
  });
}

void require_padding_value(OpContext& ctx, const baton_tensor* value, const char* what) {
  ctx.require(ctx.type(value) == ctx.type(ctx.input(0)), std::string(ctx.op_name()) + ": " + what + " type " +
                                                              type_name(ctx.type(value)) + " differs from the operand's " +
                                                              type_name(ctx.type(ctx.input(0))));
  ctx.require(ctx.element_count(value) == 1, std::string(ctx.op_name()) + ": " + what + " must be one value, its shape is " +
                                                 shape_text(ctx.shape(value)));
}

void require_movable(OpContext& ctx, SpreadState& s) {
  baton_tensor* in = ctx.input(0);
  s.element = element_size(ctx.type(in));
  ctx.require(s.element > 0 && ctx.type(in) != BATON_TYPE_STRING,
              std::string(ctx.op_name()) + ": operand type " + type_name(ctx.type(in)) + " not supported");
  require_like_input(ctx, in, ctx.output(0));
  s.rank = ctx.rank(in);
  ctx.require(s.rank <= kMaxSpreadRank, std::string(ctx.op_name()) + ": rank " + std::to_string(s.rank) + " above " +
                                            std::to_string(kMaxSpreadRank) + " not supported");
  const auto shape = ctx.shape(in);
  s.in_dims.assign(shape.begin(), shape.end());
}

void stablehlo_pad_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(9, "STABLEHLO_PAD's options");
  auto& s = ctx.state<SpreadState>();
  require_movable(ctx, s);
  require_padding_value(ctx, ctx.input(1), "padding value (input 1)");
  const auto& o = ctx.options();
  ctx.require(o.kind == BATON_OPTIONS_2_KIND + kStablehloPadOptionsType, "STABLEHLO_PAD has no StablehloPadOptions");
  const auto& p = o.u.stablehlo_pad;
  for (int32_t count : {p.edge_padding_low_count, p.edge_padding_high_count, p.interior_padding_count}) {
    ctx.require(count == s.rank, "STABLEHLO_PAD: the paddings have " + std::to_string(count) +
                                     " entries; the operand has rank " + std::to_string(s.rank));
  }
  s.low.assign(p.edge_padding_low, p.edge_padding_low + s.rank);
  s.out_dims.assign(p.edge_padding_high, p.edge_padding_high + s.rank);
  s.step.clear();
  for (int d = 0; d < s.rank; ++d) {
    ctx.require(p.interior_padding[d] >= 0 && p.interior_padding[d] < INT32_MAX,
                "STABLEHLO_PAD: interior padding " + std::to_string(p.interior_padding[d]) + " of dimension " +
                    std::to_string(d) + " must be 0 or more");
    ctx.require(s.low[d] > -INT32_MAX && s.low[d] < INT32_MAX && s.out_dims[d] > -INT32_MAX && s.out_dims[d] < INT32_MAX,
                "STABLEHLO_PAD: edge padding of dimension " + std::to_string(d) + " out of range");
    s.step.push_back(p.interior_padding[d] + 1);
  }
  spread_shape(ctx, s);
}

void dilate_prepare(OpContext& ctx) {
  auto& s = ctx.state<SpreadState>();
  require_movable(ctx, s);
  ctx.require(s.rank > 0, "DILATE: the operand must have rank 1 or more (LiteRT's kernel refuses a scalar)");
  require_padding_value(ctx, ctx.input(2), "padding value (input 2)");
  baton_tensor* dilations = ctx.input(1);
  ctx.require_type(dilations, "dilations (input 1)", {BATON_TYPE_INT32});
  ctx.require(ctx.element_count(dilations) == s.rank, "DILATE: " + std::to_string(ctx.element_count(dilations)) +
                                                          " dilations for an operand of rank " + std::to_string(s.rank));
  const auto values = ctx.shape_ints(dilations, "dilations (input 1)");
  if (!values) return;  // computed: prepared again at invoke
  s.low.assign(s.rank, 0);
  s.out_dims.assign(s.rank, 0);
  s.step.clear();
  for (int d = 0; d < s.rank; ++d) {
    ctx.require((*values)[d] >= 1 && (*values)[d] < INT32_MAX,
                "DILATE: dilation " + std::to_string((*values)[d]) + " of dimension " + std::to_string(d) + " must be 1 or more");
    // LiteRT sizes a dimension (n - 1) * d + 1, which for n = 0 is no size.
    ctx.require(s.in_dims[d] > 0, "DILATE: dimension " + std::to_string(d) + " of the operand is empty (LiteRT's size "
                                  "(n - 1) * dilation + 1 is negative for it)");
    s.step.push_back((*values)[d]);
  }
  spread_shape(ctx, s);
}

// ---- STABLEHLO_RNG_BIT_GENERATOR: random bits from a counter-based generator's state ----

// As LiteRT computes them: the uint64 state read as 32-bit words (little-endian) holds the key (words 0
// and 1) and the counter (Threefry: words 2, 3; Philox: words 2, 3 and then 4, 5 of a three-word state,
// else the key's words again). Blocks of the generator fill the output's 32-bit words in order, the
// counter's first word stepping (carrying into the second) after each; the new state is the key and those
// two counter words (a three-word Philox state keeps its third word).
void rng_bit_generator_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(12, "STABLEHLO_RNG_BIT_GENERATOR's algorithm");
  baton_tensor* state = ctx.input(0);
  baton_tensor* new_state = ctx.output(0);
  baton_tensor* bits = ctx.output(1);
  ctx.require_type(state, "initial state", {BATON_TYPE_UINT64});
  ctx.require_type(new_state, "output state (output 0)", {BATON_TYPE_UINT64});
  ctx.require_type(bits, "output (output 1)", {BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT32, BATON_TYPE_UINT64});
  const auto& o = ctx.options();
  ctx.require(o.kind == BATON_OPTIONS_2_KIND + kStablehloRngBitGeneratorOptionsType, "no StablehloRngBitGeneratorOptions");
  const int32_t algorithm = o.u.rng_bit_generator.algorithm;
  const auto shape = ctx.shape(state);
  const int64_t words = shape.size() == 1 ? shape[0] : -1;
  if (algorithm == BATON_RNG_THREEFRY) {
    ctx.require(words == 2, "THREEFRY takes a state of 2 uint64 values, not " + shape_text(shape));
  } else if (algorithm == BATON_RNG_PHILOX || algorithm == BATON_RNG_DEFAULT) {
    ctx.require(words == 2 || words == 3, "PHILOX takes a state of 2 or 3 uint64 values, not " + shape_text(shape));
  } else {
    ctx.fail(BATON_INVALID_ARGUMENT, "unknown algorithm " + std::to_string(algorithm) + " (DEFAULT, PHILOX or THREEFRY)");
  }
  ctx.set_output_shape(new_state, shape);
  const auto out_shape = ctx.shape(bits);
  ctx.require(std::none_of(out_shape.begin(), out_shape.end(), [](int32_t d) { return d < 0; }),
              "the output's shape " + shape_text(out_shape) + " must be known (it is the op's only size)");
  ctx.set_output_shape(bits, out_shape);
}

template <size_t N, typename F>
void fill_bits(F block, uint32_t key0, uint32_t key1, std::array<uint32_t, N> counter, uint32_t* out, int64_t words,
               uint32_t* state) {
  for (int64_t i = 0; i < words; i += static_cast<int64_t>(N)) {
    const std::array<uint32_t, N> value = block(key0, key1, counter);
    std::memcpy(out + i, value.data(), static_cast<size_t>(std::min<int64_t>(N, words - i)) * sizeof(uint32_t));
    if (++counter[0] == 0) ++counter[1];
  }
  state[0] = key0;
  state[1] = key1;
  state[2] = counter[0];
  state[3] = counter[1];
}

void rng_bit_generator_invoke(OpContext& ctx) {
  baton_tensor* state = ctx.input(0);
  baton_tensor* bits = ctx.output(1);
  const int64_t state_values = ctx.element_count(state);
  uint32_t s[6] = {};
  std::memcpy(s, ctx.data<unsigned char>(state), static_cast<size_t>(state_values) * sizeof(uint64_t));
  auto* new_state = ctx.mutable_data<uint32_t>(ctx.output(0));
  std::memcpy(new_state, s, static_cast<size_t>(state_values) * sizeof(uint64_t));
  const int64_t words = ctx.element_count(bits) * (element_size(ctx.type(bits)) / sizeof(uint32_t));
  auto* out = ctx.mutable_data<uint32_t>(bits);
  if (ctx.options().u.rng_bit_generator.algorithm == BATON_RNG_THREEFRY) {
    fill_bits<2>(threefry2x32_block, s[0], s[1], std::array<uint32_t, 2>{s[2], s[3]}, out, words, new_state);
  } else {
    const bool three = state_values == 3;
    fill_bits<4>(philox4x32_block, s[0], s[1], std::array<uint32_t, 4>{s[2], s[3], three ? s[4] : s[0], three ? s[5] : s[1]},
                 out, words, new_state);
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_STABLEHLO_ADD, "STABLEHLO_ADD", 1, 1, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_STABLEHLO_MULTIPLY, "STABLEHLO_MULTIPLY", 1, 1, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_STABLEHLO_MAXIMUM, "STABLEHLO_MAXIMUM", 1, 1, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_STABLEHLO_MINIMUM, "STABLEHLO_MINIMUM", 1, 1, arithmetic_prepare, arithmetic_invoke},
    {BATON_OP_STABLEHLO_AND, "STABLEHLO_AND", 1, 1, and_prepare, and_invoke},
    {BATON_OP_STABLEHLO_SHIFT_LEFT, "STABLEHLO_SHIFT_LEFT", 1, 1, shift_left_prepare, shift_left_invoke},
    {BATON_OP_STABLEHLO_PAD, "STABLEHLO_PAD", 1, 1, stablehlo_pad_prepare, spread_invoke},
    {BATON_OP_DILATE, "DILATE", 1, 1, dilate_prepare, spread_invoke},
    {BATON_OP_STABLEHLO_RNG_BIT_GENERATOR, "STABLEHLO_RNG_BIT_GENERATOR", 1, 1, rng_bit_generator_prepare,
     rng_bit_generator_invoke},
};

}  // namespace

std::span<const OpDef> stablehlo_ops() { return kOps; }

}  // namespace baton::builtin
