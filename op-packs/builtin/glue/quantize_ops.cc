// QUANTIZE: float32 to uint8 / int8, or one 8-bit quantization to another (requantize), per tensor.
#include "glue/op_context.h"
#include "kernels/quantize.h"
#include "op_codes.h"

namespace baton::builtin {
namespace {

struct QuantizeState : OpState {
  ActQuant out;
  ActQuant in;  // 8-bit input only
  QuantizedMultiplier m;
};

void quantize_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  auto& s = ctx.state<QuantizeState>();
  s.out = ctx.act_quant(output, "output");
  if (ctx.type(input) != BATON_TYPE_FLOAT32) {
    s.in = ctx.act_quant(input, "input");
    // TFLite's requantize: the effective scale in double.
    const double real = static_cast<double>(s.in.scale) / static_cast<double>(s.out.scale);
    s.m = quantize_multiplier(real);
    ctx.require(s.m.shift <= 30, "the rescale factor " + std::to_string(real) + " is too large");
  }
  ctx.set_output_shape(output, ctx.shape(input));
}

void quantize_invoke(OpContext& ctx) {
  const auto& s = ctx.state<QuantizeState>();
  baton_tensor* input = ctx.input(0);
  uint8_t* out = ctx.mutable_data<uint8_t>(ctx.output(0));
  const int64_t n = ctx.element_count(input);
  if (ctx.type(input) == BATON_TYPE_FLOAT32) {
    quantize_floats(ctx.data<float>(input), n, s.out.scale, s.out.zero_point, s.out.is_signed, out);
  } else {
    requantize_codes(ctx.data<uint8_t>(input), n, s.in.is_signed, s.in.zero_point, s.m, s.out.zero_point,
                     s.out.is_signed, out);
  }
}

constexpr OpDef kOps[] = {
    {op::kQuantize, "QUANTIZE", 1, 2, quantize_prepare, quantize_invoke},
};

}  // namespace

std::span<const OpDef> quantize_ops() { return kOps; }

}  // namespace baton::builtin
