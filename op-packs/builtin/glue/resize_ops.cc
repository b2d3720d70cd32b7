// RESIZE_BILINEAR (float32, uint8, int8): the size (input 1) must be constant. 8-bit codes are
// interpolated as they are: TFLite's kernel ignores the quantization parameters, and so does this one.
#include <cstdint>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/resize_bilinear.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct ResizeState : OpState {
  ResizeBilinearParams params;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  ResizeInt8Taps int8_taps;
};

void resize_bilinear_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  auto& state = ctx.state<ResizeState>();
  state.type = ctx.type(input);
  ctx.require(ctx.type(ctx.output(0)) == ctx.type(input), std::string("output type ") + type_name(ctx.type(ctx.output(0))) +
                                                             " differs from the input's " + type_name(ctx.type(input)));
  ctx.require_rank(input, "input", 4);
  const auto size_value = ctx.shape_ints(ctx.input(1), "size (input 1)");
  if (!size_value) return;
  const std::vector<int64_t>& size = *size_value;
  ctx.require(size.size() == 2 && size[0] > 0 && size[1] > 0 && size[0] <= INT32_MAX && size[1] <= INT32_MAX,
              "size must hold two positive int32 values");
  const auto& o = ctx.options().u.resize;
  ctx.require(!(o.align_corners && o.half_pixel_centers), "align_corners and half_pixel_centers are exclusive");
  const auto in = ctx.shape(input);
  ResizeBilinearParams& p = state.params;
  p.batch = in[0];
  p.in_h = in[1];
  p.in_w = in[2];
  p.channels = in[3];
  p.out_h = static_cast<int>(size[0]);
  p.out_w = static_cast<int>(size[1]);
  p.align_corners = o.align_corners != 0;
  p.half_pixel_centers = o.half_pixel_centers != 0;
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_h, p.out_w, p.channels});
  const bool empty = p.batch == 0 || p.channels == 0;
  ctx.require(empty || (p.in_h > 0 && p.in_w > 0), "the input has no rows or columns to sample from");
  // After the host checked the output's size: an empty output needs no taps, however wide it says it is.
  state.int8_taps = state.type == BATON_TYPE_INT8 && !empty ? resize_int8_taps(p) : ResizeInt8Taps{};
}

void resize_bilinear_invoke(OpContext& ctx) {
  const auto& s = ctx.state<ResizeState>();
  const ResizeBilinearParams& p = s.params;
  if (p.batch == 0 || p.channels == 0) return;
  switch (s.type) {
    case BATON_TYPE_INT8:
      return resize_bilinear_int8(p, s.int8_taps, ctx.data<int8_t>(ctx.input(0)), ctx.mutable_data<int8_t>(ctx.output(0)),
                                  ctx.parallel());
    case BATON_TYPE_UINT8:
      return resize_bilinear_uint8(p, ctx.data<uint8_t>(ctx.input(0)), ctx.mutable_data<uint8_t>(ctx.output(0)),
                                   ctx.parallel());
    default:
      return resize_bilinear(p, ctx.data<float>(ctx.input(0)), ctx.mutable_data<float>(ctx.output(0)), ctx.parallel());
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_RESIZE_BILINEAR, "RESIZE_BILINEAR", 1, 4, resize_bilinear_prepare, resize_bilinear_invoke},
};

}  // namespace

std::span<const OpDef> resize_ops() { return kOps; }

}  // namespace baton::builtin
