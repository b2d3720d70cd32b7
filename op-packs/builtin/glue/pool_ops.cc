// AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D (float) and MEAN. 8-bit pooling is prepared by glue/quantized_ops.cc,
// int16 pooling by glue/q16x8_ops.cc, 8-bit
// MEAN by glue/reduce_ops.cc.
#include <vector>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "kernels/pool.h"
#include "kernels/reduce.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct PoolState : OpState {
  PoolParams params;
};

void pool_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const bool int16 = ctx.type(input) == BATON_TYPE_INT16;
  const bool quantized = ctx.type(input) == BATON_TYPE_UINT8 || ctx.type(input) == BATON_TYPE_INT8 || int16;
  if (ctx.op_code() == BATON_OP_L2_POOL_2D) ctx.require_float(input, "input");  // TFLite's L2 pool is float only
  if (!quantized) ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16});
  ctx.require_rank(input, "input", 4);
  const auto& o = ctx.options().u.pool;
  ctx.require(o.stride_h > 0 && o.stride_w > 0 && o.filter_h > 0 && o.filter_w > 0,
              "filter " + std::to_string(o.filter_h) + "x" + std::to_string(o.filter_w) + " and strides " +
                  std::to_string(o.stride_h) + "x" + std::to_string(o.stride_w) + " must be positive");
  const auto in = ctx.shape(input);
  PoolParams geometry;
  PoolParams& p = quantized ? geometry : ctx.state<PoolState>().params;
  p.batch = in[0];
  p.in_h = in[1];
  p.in_w = in[2];
  p.channels = in[3];
  p.filter_h = o.filter_h;
  p.filter_w = o.filter_w;
  p.stride_h = o.stride_h;
  p.stride_w = o.stride_w;
  p.range = ctx.activation(o.activation);
  pool_compute_geometry(ctx.padding(o.padding), p);
  // TFLite refuses only a negative output size; an empty one is an empty output.
  ctx.require(p.out_h >= 0 && p.out_w >= 0, "the window does not fit the input with VALID padding (output " +
                                                 std::to_string(p.out_h) + " x " + std::to_string(p.out_w) + ")");
  if (!quantized) ctx.require_float(ctx.output(0), "output");  // the kernel writes floats
  ctx.set_output_shape(ctx.output(0), {p.batch, p.out_h, p.out_w, p.channels});
  if (int16) pool_16_prepare(ctx, p);
  else if (quantized) quantized_pool_prepare(ctx, p);
  ctx.skip_invoke_if_empty();
}

void average_pool_invoke(OpContext& ctx) {
  average_pool(ctx.state<PoolState>().params, ctx.data<float>(ctx.input(0)), ctx.mutable_data<float>(ctx.output(0)));
}

void l2_pool_invoke(OpContext& ctx) {
  l2_pool(ctx.state<PoolState>().params, ctx.data<float>(ctx.input(0)), ctx.mutable_data<float>(ctx.output(0)));
}

void max_pool_invoke(OpContext& ctx) {
  max_pool(ctx.state<PoolState>().params, ctx.data<float>(ctx.input(0)), ctx.mutable_data<float>(ctx.output(0)));
}

struct ReduceState : OpState {
  ReducePlan plan;
};

void mean_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_INT16});
  const auto in = ctx.shape(input);
  const int rank = static_cast<int>(in.size());
  ctx.require(rank <= kMaxReduceRank, "rank above " + std::to_string(kMaxReduceRank) + " not supported");
  const auto axes = ctx.shape_ints(ctx.input(1), "axis (input 1)");
  if (!axes) return;  // computed: prepared again at invoke with the values
  uint32_t mask = 0;
  for (int64_t axis : *axes) {
    ctx.require(axis >= -rank && axis < rank, "axis " + std::to_string(axis) + " out of range for rank " +
                                                  std::to_string(rank));
    mask |= 1u << (axis < 0 ? axis + rank : axis);
  }
  std::vector<int32_t> out;
  for (int d = 0; d < rank; ++d) {
    if (!((mask >> d) & 1u)) out.push_back(in[d]);
    else if (ctx.options().u.reducer.keep_dims) out.push_back(1);
  }
  ctx.set_output_shape(ctx.output(0), out);
  if (ctx.type(input) != BATON_TYPE_FLOAT32) return quantized_mean_prepare(ctx, *axes);
  ctx.require_float(ctx.output(0), "output");  // the kernel writes floats
  ctx.state<ReduceState>().plan = plan_reduce(in.data(), rank, mask);
}

void mean_invoke(OpContext& ctx) {
  reduce_mean(ctx.state<ReduceState>().plan, ctx.data<float>(ctx.input(0)), ctx.mutable_data<float>(ctx.output(0)));
}

constexpr OpDef kOps[] = {
    {BATON_OP_AVERAGE_POOL_2D, "AVERAGE_POOL_2D", 1, 3, pool_prepare, average_pool_invoke},
    {BATON_OP_MAX_POOL_2D, "MAX_POOL_2D", 1, 3, pool_prepare, max_pool_invoke},
    {BATON_OP_L2_POOL_2D, "L2_POOL_2D", 1, 1, pool_prepare, l2_pool_invoke},
    {BATON_OP_MEAN, "MEAN", 1, 3, mean_prepare, mean_invoke},
};

}  // namespace

std::span<const OpDef> pool_ops() { return kOps; }

}  // namespace baton::builtin
