// Spatial rearrangements of NHWC (and N-D) tensors, moving elements without arithmetic: SPACE_TO_BATCH_ND
// and BATCH_TO_SPACE_ND (8-bit padding is the zero point) and RESIZE_NEAREST_NEIGHBOR. A computed block
// shape, paddings, crops or size makes the output dynamic: prepared again at invoke with the values.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/broadcast_index.h"
#include "kernels/element_copy.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

constexpr int kMaxRank = kMaxIndexRank;

// ---- RESIZE_NEAREST_NEIGHBOR ----

struct ResizeNearestState : OpState {
  std::vector<int64_t> rows, cols;  // source row / column of each output row / column
  int64_t batches = 0, in_h = 0, in_w = 0, channels = 0;
  size_t element = 0;
};

// The source position TFLite's nearest-neighbour resize reads for output position `o`.
int64_t nearest_source(int64_t o, int64_t in, int64_t out, bool align_corners, bool half_pixel) {
  const float scale = align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                               : static_cast<float>(in) / static_cast<float>(out);
  const float offset = half_pixel ? 0.5f : 0.0f;
  const float pos = (static_cast<float>(o) + offset) * scale;
  int64_t v = align_corners ? static_cast<int64_t>(std::round(pos)) : static_cast<int64_t>(std::floor(pos));
  v = std::min(v, in - 1);
  if (half_pixel) v = std::max<int64_t>(v, 0);
  return v;
}

void resize_nearest_prepare(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16, BATON_TYPE_INT32});
  ctx.require_rank(in, "input", 4);
  require_like_input(ctx, in, ctx.output(0));
  const auto size_value = ctx.shape_ints(ctx.input(1), "size (input 1)");
  if (!size_value) return;
  const std::vector<int64_t>& size = *size_value;
  ctx.require(size.size() == 2 && size[0] > 0 && size[1] > 0 && size[0] <= INT32_MAX && size[1] <= INT32_MAX,
              "size must hold two positive int32 values");
  const auto s = ctx.shape(in);
  // The host checks the output against its limits before anything here is sized by `size`; an empty
  // output (no batches or channels) needs no tables, however large its rows and columns.
  ctx.set_output_shape(ctx.output(0), {s[0], static_cast<int32_t>(size[0]), static_cast<int32_t>(size[1]), s[3]});
  const auto& o = ctx.options().u.resize;
  auto& st = ctx.state<ResizeNearestState>();
  st.batches = s[0];
  st.in_h = s[1];
  st.in_w = s[2];
  st.channels = s[3];
  st.element = element_size(ctx.type(in));
  st.rows.clear();
  st.cols.clear();
  if (s[0] == 0 || s[3] == 0) return;
  st.rows.resize(size[0]);
  st.cols.resize(size[1]);
  for (int64_t y = 0; y < size[0]; ++y) st.rows[y] = nearest_source(y, s[1], size[0], o.align_corners, o.half_pixel_centers);
  for (int64_t x = 0; x < size[1]; ++x) st.cols[x] = nearest_source(x, s[2], size[1], o.align_corners, o.half_pixel_centers);
}

void resize_nearest_invoke(OpContext& ctx) {
  const auto& st = ctx.state<ResizeNearestState>();
  const auto* src = ctx.data<uint8_t>(ctx.input(0));
  auto* dst = ctx.mutable_data<uint8_t>(ctx.output(0));
  const size_t pixel = static_cast<size_t>(st.channels) * st.element;
  if (pixel == 0 || st.in_h == 0 || st.in_w == 0) return;
  for (int64_t b = 0; b < st.batches; ++b) {
    for (int64_t r : st.rows) {
      const uint8_t* row = src + static_cast<size_t>((b * st.in_h + r) * st.in_w) * pixel;
      for (int64_t c : st.cols) {
        copy_run(dst, row + static_cast<size_t>(c) * pixel, pixel);
        dst += pixel;
      }
    }
  }
}

// ---- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND ----

// Rank 4 [b, h, w, c] with a block of two dimensions, or rank 3 [b, h, c] with one (w = 1 then).
struct BatchSpaceState : OpState {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;  // of the batch-side tensor's batches: see below
  int64_t block_h = 1, block_w = 1;
  int64_t before_h = 0, before_w = 0;  // padding (SPACE_TO_BATCH_ND) or crop (BATCH_TO_SPACE_ND) in front
  int64_t out_h = 0, out_w = 0, out_batch = 0;
  size_t element = 0;
  int64_t pad_code = 0;  // the value padding writes: 0, or an 8-bit output's zero point
};

void batch_space_prepare(OpContext& ctx) {
  const bool to_batch = ctx.op_code() == BATON_OP_SPACE_TO_BATCH_ND;
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT32, BATON_TYPE_INT64});
  require_like_input(ctx, in, ctx.output(0));
  const auto s = ctx.shape(in);
  ctx.require(s.size() == 3 || s.size() == 4, "input must have rank 3 or 4");
  const int spatial = static_cast<int>(s.size()) - 2;
  // Computed block shape, paddings or crops: the output is dynamic, prepared again at invoke with them.
  const auto block_value = ctx.shape_ints(ctx.input(1), "block_shape (input 1)");
  const auto pads_value = block_value ? ctx.shape_ints(ctx.input(2), to_batch ? "paddings (input 2)" : "crops (input 2)")
                                      : std::nullopt;
  if (!pads_value) return;
  const std::vector<int64_t>& block = *block_value;
  const std::vector<int64_t>& pads = *pads_value;
  ctx.require(static_cast<int>(block.size()) == spatial && static_cast<int>(pads.size()) == 2 * spatial,
              "block_shape needs " + std::to_string(spatial) + " values and the " + (to_batch ? "paddings " : "crops ") +
                  std::to_string(2 * spatial));
  for (int64_t b : block) {
    ctx.require(b >= 1 && b <= INT32_MAX, "block size " + std::to_string(b) + " must be positive and fit int32");
  }
  for (int64_t p : pads) {
    ctx.require(p >= 0 && p <= INT32_MAX, "padding or crop " + std::to_string(p) + " must be non-negative and fit int32");
  }
  auto& st = ctx.state<BatchSpaceState>();
  const int64_t h = s[1], w = spatial == 2 ? s[2] : 1;
  st.block_h = block[0];
  st.block_w = spatial == 2 ? block[1] : 1;
  st.before_h = pads[0];
  st.before_w = spatial == 2 ? pads[2] : 0;
  const int64_t after_h = pads[1], after_w = spatial == 2 ? pads[3] : 0;
  st.channels = s.back();
  st.element = element_size(ctx.type(in));
  st.pad_code = 0;
  if (ctx.type(in) == BATON_TYPE_UINT8 || ctx.type(in) == BATON_TYPE_INT8) {
    st.pad_code = ctx.act_quant(ctx.output(0), "output").zero_point;
  }
  std::vector<int32_t> out(s.begin(), s.end());
  const int64_t blocks = st.block_h * st.block_w;
  if (to_batch) {
    const int64_t ph = h + st.before_h + after_h, pw = w + st.before_w + after_w;
    ctx.require(ph % st.block_h == 0 && pw % st.block_w == 0, "the padded spatial size is not a multiple of the block");
    ctx.require(s[0] == 0 || blocks <= INT32_MAX / s[0], "batch " + std::to_string(s[0]) + " times the block's " +
                                                             std::to_string(blocks) + " does not fit int32");
    st.batch = s[0];
    st.in_h = h;
    st.in_w = w;
    st.out_h = ph / st.block_h;
    st.out_w = pw / st.block_w;
    st.out_batch = s[0] * blocks;
  } else {
    ctx.require(s[0] % blocks == 0, "batch " + std::to_string(s[0]) + " is not a multiple of the block's " + std::to_string(blocks));
    st.batch = s[0] / blocks;  // the output's batch
    st.in_h = h;
    st.in_w = w;
    st.out_h = h * st.block_h - st.before_h - after_h;
    st.out_w = w * st.block_w - st.before_w - after_w;
    ctx.require(st.out_h >= 0 && st.out_w >= 0, "the crops are larger than the output");
    st.out_batch = st.batch;
  }
  ctx.require(st.out_batch <= INT32_MAX && st.out_h <= INT32_MAX && st.out_w <= INT32_MAX,
              "output shape [" + std::to_string(st.out_batch) + ", " + std::to_string(st.out_h) + ", " +
                  std::to_string(st.out_w) + ", ...] does not fit int32");
  out[0] = static_cast<int32_t>(st.out_batch);
  out[1] = static_cast<int32_t>(st.out_h);
  if (spatial == 2) out[2] = static_cast<int32_t>(st.out_w);
  ctx.set_output_shape(ctx.output(0), out);
  // No channels (or no pixels): nothing to move, however many positions the loops would visit.
  ctx.skip_invoke_if_empty();
}

// Output batch (sy * block_w + sx) * batch + b holds the block offset (sy, sx) of input batch b:
// output pixel (y, x) there is input pixel (y * block_h + sy - before_h, x * block_w + sx - before_w),
// or padding. BATCH_TO_SPACE_ND reads the same mapping the other way.
void batch_space_invoke(OpContext& ctx) {
  const auto& st = ctx.state<BatchSpaceState>();
  const bool to_batch = ctx.op_code() == BATON_OP_SPACE_TO_BATCH_ND;
  const auto* src = ctx.data<uint8_t>(ctx.input(0));
  auto* dst = ctx.mutable_data<uint8_t>(ctx.output(0));
  const size_t pixel = static_cast<size_t>(st.channels) * st.element;
  if (to_batch) {
    for (int64_t ob = 0; ob < st.out_batch; ++ob) {
      const int64_t b = ob % st.batch, shift = ob / st.batch;
      const int64_t sy = shift / st.block_w, sx = shift % st.block_w;
      for (int64_t y = 0; y < st.out_h; ++y) {
        const int64_t iy = y * st.block_h + sy - st.before_h;
        for (int64_t x = 0; x < st.out_w; ++x) {
          const int64_t ix = x * st.block_w + sx - st.before_w;
          uint8_t* o = dst + static_cast<size_t>((ob * st.out_h + y) * st.out_w + x) * pixel;
          if (iy < 0 || iy >= st.in_h || ix < 0 || ix >= st.in_w) {
            with_element_type(st.element, [&](auto zero) {
              using T = decltype(zero);
              T code;
              if constexpr (sizeof(T) == 1) code = static_cast<T>(st.pad_code);
              else code = T{0};  // 0 and 0.0f are both all-zero bits
              for (int64_t c = 0; c < st.channels; ++c) reinterpret_cast<T*>(o)[c] = code;
            });
            continue;
          }
          copy_block(o, src + static_cast<size_t>((b * st.in_h + iy) * st.in_w + ix) * pixel, pixel);
        }
      }
    }
    return;
  }
  for (int64_t b = 0; b < st.batch; ++b) {
    for (int64_t y = 0; y < st.out_h; ++y) {
      const int64_t py = y + st.before_h, sy = py % st.block_h, iy = py / st.block_h;
      // Along the row the block column steps through 0 .. block_w - 1, and the input column with it.
      int64_t sx = st.before_w % st.block_w, ix = st.before_w / st.block_w;
      uint8_t* o = dst + static_cast<size_t>((b * st.out_h + y) * st.out_w) * pixel;
      for (int64_t x = 0; x < st.out_w; ++x, o += pixel) {
        const int64_t ib = (sy * st.block_w + sx) * st.batch + b;
        copy_block(o, src + static_cast<size_t>((ib * st.in_h + iy) * st.in_w + ix) * pixel, pixel);
        if (++sx == st.block_w) {
          sx = 0;
          ++ix;
        }
      }
    }
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_SPACE_TO_BATCH_ND, "SPACE_TO_BATCH_ND", 1, 4, batch_space_prepare, batch_space_invoke},
    {BATON_OP_BATCH_TO_SPACE_ND, "BATCH_TO_SPACE_ND", 1, 4, batch_space_prepare, batch_space_invoke},
    {BATON_OP_RESIZE_NEAREST_NEIGHBOR, "RESIZE_NEAREST_NEIGHBOR", 1, 4, resize_nearest_prepare, resize_nearest_invoke},
};

}  // namespace

std::span<const OpDef> spatial_ops() { return kOps; }

}  // namespace baton::builtin
