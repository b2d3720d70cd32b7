// DEQUANTIZE to float32: from float16, or from int4 (packed two a byte) / int8 / uint8 / int16 with per-tensor or per-channel
// scale and zero point.
#include "glue/op_context.h"
#include "kernels/dequantize.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct DequantizeState : OpState {
  AffineDequantParams params;
};

void dequantize_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  ctx.require_type(input, "input",
                   {BATON_TYPE_FLOAT16, BATON_TYPE_INT4, BATON_TYPE_INT8, BATON_TYPE_UINT8, BATON_TYPE_INT16});
  ctx.require_type(output, "output", {BATON_TYPE_FLOAT32});
  const auto in = ctx.shape(input);
  AffineDequantParams& p = ctx.state<DequantizeState>().params;  // created here, so invoke never allocates
  p = AffineDequantParams{};
  if (ctx.type(input) != BATON_TYPE_FLOAT16) {
    baton_quantization q{};
    q.struct_size = sizeof(q);
    ctx.api().tensor_quantization(input, &q);
    ctx.require(q.block_size == 0, "the input has blockwise quantization (blocks of " + std::to_string(q.block_size) +
                                       "), which only FULLY_CONNECTED and EMBEDDING_LOOKUP take (as in LiteRT)");
    ctx.require(q.scale_count > 0 && q.scales, "the input has no quantization parameters");
    p.scales = q.scales;
    p.zero_points = q.zero_points;
    if (q.scale_count > 1) {
      const int dim = q.quantized_dimension;
      ctx.require(dim >= 0 && dim < static_cast<int>(in.size()) && in[dim] == q.scale_count,
                  "per-channel quantization with " + std::to_string(q.scale_count) +
                      " scales does not match dimension " + std::to_string(dim));
      for (int d = 0; d < dim; ++d) p.outer *= in[d];
      p.channels = in[dim];
      for (size_t d = dim + 1; d < in.size(); ++d) p.inner *= in[d];
    } else {
      p.inner = ctx.element_count(input);
    }
  }
  ctx.set_output_shape(output, in);
}

void dequantize_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  float* out = ctx.mutable_data<float>(ctx.output(0));
  const auto& p = ctx.state<DequantizeState>().params;
  switch (ctx.type(input)) {
    case BATON_TYPE_FLOAT16: dequantize_f16(ctx.data<uint16_t>(input), out, ctx.element_count(input)); break;
    case BATON_TYPE_INT4: dequantize_int4(p, ctx.data<uint8_t>(input), out); break;
    case BATON_TYPE_INT8: dequantize_affine(p, ctx.data<int8_t>(input), out); break;
    case BATON_TYPE_UINT8: dequantize_affine(p, ctx.data<uint8_t>(input), out); break;
    case BATON_TYPE_INT16: dequantize_affine(p, ctx.data<int16_t>(input), out); break;
    default: break;
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_DEQUANTIZE, "DEQUANTIZE", 1, 8, dequantize_prepare, dequantize_invoke},
};

}  // namespace

std::span<const OpDef> dequantize_ops() { return kOps; }

}  // namespace baton::builtin
