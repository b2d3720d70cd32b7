// QUANTIZE: float32 to uint8 / int8 / int16, or one quantization of uint8, int8 or int16 codes to
// another (requantize), per tensor. int16 codes are symmetric (zero point 0), as TFLite requires.
#include <algorithm>
#include <cmath>
#include <string>

#include "glue/op_context.h"
#include "kernels/parallel.h"
#include "kernels/quantize.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct QuantizeState : OpState {
  ActQuant out;
  ActQuant in;  // quantized input only
  QuantizedMultiplier m;
  bool int16 = false;  // either side int16
  CodeType in_type = CodeType::kUint8, out_type = CodeType::kUint8;
};

CodeType code_type(baton_tensor_type t) {
  return t == BATON_TYPE_INT16 ? CodeType::kInt16 : t == BATON_TYPE_INT8 ? CodeType::kInt8 : CodeType::kUint8;
}

// act_quant's checks, and for int16 a scale with zero point 0.
ActQuant code_quant(const OpContext& ctx, const baton_tensor* t, const char* role) {
  if (ctx.type(t) != BATON_TYPE_INT16) return ctx.act_quant(t, role);
  const TensorQuant q = ctx.quant(t);
  const std::string who = std::string(role) + " (" + ctx.tensor_label(t) + ")";
  ctx.require(q.count == 1, who + " needs one scale, has " + std::to_string(q.count));
  ctx.require(q.scale() > 0.0f && std::isfinite(q.scale()), who + " has scale " + std::to_string(q.scale()));
  ctx.require(q.zero_point() == 0, who + " has zero point " + std::to_string(q.zero_point()) + " (int16 is symmetric)");
  ActQuant a;
  a.scale = q.scale();
  a.is_signed = true;
  return a;
}

void quantize_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16});
  ctx.require_type(output, "output", {BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16});
  auto& s = ctx.state<QuantizeState>();
  s.out = code_quant(ctx, output, "output");
  s.int16 = ctx.type(input) == BATON_TYPE_INT16 || ctx.type(output) == BATON_TYPE_INT16;
  // TFLite 2.9 requantizes int16 to int8 or int16, and 8-bit codes to 8-bit codes only.
  if (ctx.type(input) == BATON_TYPE_INT16) ctx.require_type(output, "output of an int16 input", {BATON_TYPE_INT8, BATON_TYPE_INT16});
  if (ctx.type(input) == BATON_TYPE_UINT8 || ctx.type(input) == BATON_TYPE_INT8) {
    ctx.require_type(output, "output of an 8-bit input", {BATON_TYPE_UINT8, BATON_TYPE_INT8});
  }
  s.in_type = code_type(ctx.type(input));
  s.out_type = code_type(ctx.type(output));
  if (ctx.type(input) != BATON_TYPE_FLOAT32) {
    s.in = code_quant(ctx, input, "input");
    // TFLite's requantize: the effective scale in double.
    const double real = static_cast<double>(s.in.scale) / static_cast<double>(s.out.scale);
    s.m = quantize_multiplier(real);
    ctx.require(s.m.shift <= 30, "the rescale factor " + std::to_string(real) + " is too large");
  }
  ctx.set_output_shape(output, ctx.shape(input));
}

// Elements [begin, end) of the op.
void quantize_range(const OpContext& ctx, const QuantizeState& s, int64_t begin, int64_t end) {
  const baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  const int64_t n = end - begin;
  if (s.int16 && ctx.type(input) == BATON_TYPE_FLOAT32) {
    quantize_floats_int16(ctx.data<float>(input) + begin, n, s.out.scale, s.out.zero_point,
                          ctx.mutable_data<int16_t>(output) + begin);
  } else if (s.int16) {
    const size_t in_size = s.in_type == CodeType::kInt16 ? 2 : 1, out_size = s.out_type == CodeType::kInt16 ? 2 : 1;
    requantize_any(ctx.data<uint8_t>(input) + begin * in_size, s.in_type, n, s.in.zero_point, s.m, s.out.zero_point,
                   ctx.mutable_data<uint8_t>(output) + begin * out_size, s.out_type);
  } else if (ctx.type(input) == BATON_TYPE_FLOAT32) {
    quantize_floats(ctx.data<float>(input) + begin, n, s.out.scale, s.out.zero_point, s.out.is_signed,
                    ctx.mutable_data<uint8_t>(output) + begin);
  } else {
    requantize_codes(ctx.data<uint8_t>(input) + begin, n, s.in.is_signed, s.in.zero_point, s.m, s.out.zero_point,
                     s.out.is_signed, ctx.mutable_data<uint8_t>(output) + begin);
  }
}

// Elementwise, so split across the workers when each gets enough elements (the split changes no code).
void quantize_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QuantizeState>();
  parallel_ranges(ctx.parallel(), ctx.workers(), ctx.element_count(ctx.input(0)), 1, 1 << 14,
                  [&](int64_t begin, int64_t end) { quantize_range(ctx, s, begin, end); });
}

constexpr OpDef kOps[] = {
    {BATON_OP_QUANTIZE, "QUANTIZE", 1, 6, quantize_prepare, quantize_invoke},
};

}  // namespace

std::span<const OpDef> quantize_ops() { return kOps; }

}  // namespace baton::builtin
