// FULLY_CONNECTED and BATCH_MATMUL. A fully connected layer with a batch large enough for the GEMM gets
// its weights packed once in prepare when they are constant. 8-bit and int8-weight layers go to
// glue/quantized_conv_ops.cc once the shapes are known. INT4 weights with blockwise scales (what weight-only
// quantizers write; LiteRT runs them through XNNPACK) are turned into float32 weights once, in prepare,
// and run as a float layer: code * its block's scale, exact in float32.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "glue/scratch_buffer.h"
#include "kernels/batch_matmul.h"
#include "kernels/dequantize.h"
#include "kernels/fully_connected.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct FullyConnectedState : OpState {
  FullyConnectedParams params;
  std::vector<float> packed_weights;  // constant weights, packed once
  const void* packed_from = nullptr;
  // The GEMM's blocks, after the weights packed at each invoke when they are not constant (their floats
  // then, rounded up to 16: the blocks stay 64-byte aligned).
  NodeScratch scratch;
  size_t invoke_packed_floats = 0;
  std::vector<float> blockwise_weights;  // float32 weights made from blockwise INT4 ones; empty otherwise
  const void* blockwise_from = nullptr;
};

// Blockwise INT4 weights [units, depth] as float32: each code times the FLOAT16 scale of its block
// (block_size codes of a row share one), widened first.
void dequantize_blockwise(const TensorQuant& q, const uint8_t* codes, int units, int depth, float* out) {
  const int blocks = depth / q.block_size;
  for (int u = 0; u < units; ++u) {
    for (int b = 0; b < blocks; ++b) {
      const int64_t at = static_cast<int64_t>(u) * blocks + b;
      const float scale = half_to_float(static_cast<const uint16_t*>(q.block_scales)[at]);
      for (int k = b * q.block_size; k < (b + 1) * q.block_size; ++k) {
        const int64_t i = static_cast<int64_t>(u) * depth + k;
        out[i] = static_cast<float>(int4_code(codes, i)) * scale;
      }
    }
  }
}

// Checks blockwise weights against the layer (prepare) and makes their float32 form once per weights.
void prepare_blockwise_weights(OpContext& ctx, FullyConnectedState& s, const TensorQuant& q) {
  baton_tensor* weights = ctx.input(1);
  const FullyConnectedParams& p = s.params;
  ctx.require(ctx.is_constant(weights), "blockwise INT4 weights must be constant");
  require_float16_block_scales(ctx, q, "the weights' quantization");
  ctx.require(p.depth % q.block_size == 0 && q.block_count == static_cast<int64_t>(p.units) * (p.depth / q.block_size),
              "blockwise weights [" + std::to_string(p.units) + ", " + std::to_string(p.depth) + "] in blocks of " +
                  std::to_string(q.block_size) + " have " + std::to_string(q.block_count) + " scales");
  const void* data = ctx.data<uint8_t>(weights);
  if (s.blockwise_from == data) return;
  s.blockwise_weights.resize(static_cast<size_t>(p.units) * p.depth);
  dequantize_blockwise(q, ctx.data<uint8_t>(weights), p.units, p.depth, s.blockwise_weights.data());
  s.blockwise_from = data;
  s.packed_from = nullptr;  // the packed form follows the new float weights
}

void fully_connected_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* weights = ctx.input(1);
  // The types pick the kernel: float, 8-bit (uint8/int8 input) or int8 weights with float input (also
  // written as UINT8 by older converters; INT4 packed two a byte).
  const baton_tensor_type input_type = ctx.type(input);
  const baton_tensor_type weights_type = ctx.type(weights);
  const TensorQuant weights_quant = ctx.quant(weights);
  const bool blockwise = weights_quant.block_size > 0;
  if (blockwise) {
    ctx.require(weights_type == BATON_TYPE_INT4 && input_type == BATON_TYPE_FLOAT32,
                "blockwise weights are taken as INT4 codes under a FLOAT32 input (as LiteRT), not " +
                    std::string(type_name(weights_type)) + " under " + type_name(input_type));
  }
  const bool quantized = input_type == BATON_TYPE_UINT8 || input_type == BATON_TYPE_INT8;
  const bool hybrid = !blockwise && input_type == BATON_TYPE_FLOAT32 &&
                      (weights_type == BATON_TYPE_INT8 || weights_type == BATON_TYPE_UINT8 || weights_type == BATON_TYPE_INT4);
  const bool int16 = input_type == BATON_TYPE_INT16;
  if (!quantized && !hybrid && !int16 && !blockwise) {
    ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
    ctx.require_type(weights, "weights", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8, BATON_TYPE_UINT8});
  }
  ctx.require_rank(weights, "weights", 2);
  const auto& o = ctx.options().u.fully_connected;
  if (o.weights_format != 0) ctx.fail(BATON_UNSUPPORTED, "shuffled weights format not supported");
  auto& s = ctx.state<FullyConnectedState>();
  FullyConnectedParams& p = s.params;
  const auto w = ctx.shape(weights);
  p.units = w[0];
  p.depth = w[1];
  p.range = ctx.activation(o.activation);
  const auto in = ctx.shape(input);
  const int64_t count = ctx.element_count(input);
  ctx.require(p.depth > 0 && count % p.depth == 0, "input has " + std::to_string(count) +
                                                       " elements, not a multiple of the weights' depth " +
                                                       std::to_string(p.depth));
  p.batch = static_cast<int>(count / p.depth);
  baton_tensor* bias = ctx.optional_input(2);
  if (bias && !quantized && !int16) {
    ctx.require_float(bias, "bias");
    ctx.require(ctx.element_count(bias) == p.units, "bias has " + std::to_string(ctx.element_count(bias)) +
                                                        " elements, the layer has " + std::to_string(p.units) +
                                                        " units");
  }
  if (o.keep_num_dims) {
    ctx.require(!in.empty() && in.back() == p.depth, "keep_num_dims needs the input's last dimension (" +
                                                         std::to_string(in.empty() ? 0 : in.back()) +
                                                         ") to equal the weights' depth");
    std::vector<int32_t> out(in.begin(), in.end());
    out.back() = p.units;
    ctx.set_output_shape(ctx.output(0), out);
  } else {
    ctx.set_output_shape(ctx.output(0), {p.batch, p.units});
  }
  if (quantized) return quantized_fully_connected_prepare(ctx, p.units, p.depth, p.batch);
  if (int16) return fully_connected_16x8_prepare(ctx, p.units, p.depth, p.batch);
  if (hybrid) return hybrid_fully_connected_prepare(ctx, p.units, p.depth, p.batch);
  if (blockwise) {
    prepare_blockwise_weights(ctx, s, weights_quant);
  } else {
    s.blockwise_weights.clear();
    s.blockwise_from = nullptr;
  }
  s.invoke_packed_floats = 0;
  if (fully_connected_uses_gemm(p) && (ctx.is_constant(weights) || blockwise)) {
    s.packed_weights.resize(fully_connected_packed_weights_size(p));
    const void* data = blockwise ? static_cast<const void*>(s.blockwise_weights.data()) : ctx.data<float>(weights);
    if (s.packed_from != data) {
      fully_connected_pack_weights(p, static_cast<const float*>(data), s.packed_weights.data());
      s.packed_from = data;
    }
  } else {
    s.packed_weights.clear();
    s.packed_from = nullptr;
    if (fully_connected_uses_gemm(p)) s.invoke_packed_floats = (fully_connected_packed_weights_size(p) + 15) / 16 * 16;
  }
  s.scratch.prepare(ctx, sizeof(float) * (s.invoke_packed_floats + fully_connected_scratch_size(p, ctx.workers())));
}

void fully_connected_invoke(OpContext& ctx) {
  auto& s = ctx.state<FullyConnectedState>();
  const float* weights = s.blockwise_weights.empty() ? ctx.data<float>(ctx.input(1)) : s.blockwise_weights.data();
  float* scratch = s.scratch.as<float>(ctx);
  const float* packed = s.packed_weights.data();
  if (s.invoke_packed_floats > 0) {
    fully_connected_pack_weights(s.params, weights, scratch);
    packed = scratch;
  }
  baton_tensor* bias = ctx.optional_input(2);
  fully_connected(s.params, ctx.data<float>(ctx.input(0)), weights, packed, bias ? ctx.data<float>(bias) : nullptr,
                  ctx.mutable_data<float>(ctx.output(0)), scratch + s.invoke_packed_floats, ctx.parallel());
}

struct BatchMatMulState : OpState {
  BatchMatMulParams params;
  QBatchMatMulParams q;  // int8 / int16
  QBatchMatMulColumns columns;  // int8: the product's output stage
  NodeScratch scratch;  // float and int8: the packed right operand and the GEMM's blocks
};

// int8 / int16 operands: zero points (0 for int16) and the multiplier lhs_scale * rhs_scale / out_scale,
// formed in float as TFLite's Prepare forms it.
std::pair<float, int32_t> operand_quant(const OpContext& ctx, const baton_tensor* t, const char* role) {
  const TensorQuant q = ctx.quant(t);
  const std::string who = std::string(role) + " (" + ctx.tensor_label(t) + ")";
  ctx.require(q.count == 1 && q.scale() > 0.0f && std::isfinite(q.scale()), who + " needs one positive scale");
  const bool int16 = ctx.type(t) == BATON_TYPE_INT16;
  const int64_t lo = int16 ? 0 : -128, hi = int16 ? 0 : 127;
  ctx.require(q.zero_point() >= lo && q.zero_point() <= hi,
              who + " has zero point " + std::to_string(q.zero_point()) + (int16 ? " (int16 is symmetric)" : ""));
  return {q.scale(), static_cast<int32_t>(q.zero_point())};
}

void batch_matmul_int16_invoke(OpContext& ctx) {
  const auto& s = ctx.state<BatchMatMulState>();
  batch_matmul_int16(s.params, s.q, ctx.data<int16_t>(ctx.input(0)), ctx.data<int16_t>(ctx.input(1)),
                     ctx.mutable_data<int16_t>(ctx.output(0)));
}

void batch_matmul_int8_invoke(OpContext& ctx) {
  auto& s = ctx.state<BatchMatMulState>();
  batch_matmul_int8(s.params, s.q, s.columns, ctx.data<int8_t>(ctx.input(0)), ctx.data<int8_t>(ctx.input(1)),
                    ctx.mutable_data<int8_t>(ctx.output(0)), s.scratch.data(ctx), ctx.parallel());
}

void batch_matmul_prepare(OpContext& ctx) {
  baton_tensor* lhs = ctx.input(0);
  baton_tensor* rhs = ctx.input(1);
  ctx.require_type(lhs, "lhs", {BATON_TYPE_FLOAT32, BATON_TYPE_INT8, BATON_TYPE_INT16});
  ctx.require_type(rhs, "rhs", {ctx.type(lhs)});
  ctx.require_type(ctx.output(0), "output", {ctx.type(lhs)});
  const auto l = ctx.shape(lhs);
  const auto r = ctx.shape(rhs);
  const int lr = static_cast<int>(l.size()), rr = static_cast<int>(r.size());
  ctx.require(lr >= 2 && rr >= 2, "both operands need rank >= 2");
  const int batch_rank = std::max(lr, rr) - 2;
  ctx.require(batch_rank <= kMaxMatmulBatchRank, "too many batch dimensions (" + std::to_string(batch_rank) + ")");
  const auto& o = ctx.options().u.batch_matmul;
  BatchMatMulParams& p = ctx.state<BatchMatMulState>().params;
  p = BatchMatMulParams{};
  p.adj_x = o.adj_x != 0;
  p.adj_y = o.adj_y != 0;
  p.m = p.adj_x ? l[lr - 1] : l[lr - 2];
  p.k = p.adj_x ? l[lr - 2] : l[lr - 1];
  const int rk = p.adj_y ? r[rr - 1] : r[rr - 2];
  p.n = p.adj_y ? r[rr - 2] : r[rr - 1];
  ctx.require(rk == p.k, "inner dimensions differ: " + std::to_string(p.k) + " and " + std::to_string(rk));
  p.batch_rank = batch_rank;
  std::vector<int32_t> out(batch_rank + 2);
  int64_t ls = static_cast<int64_t>(l[lr - 1]) * l[lr - 2], rs = static_cast<int64_t>(r[rr - 1]) * r[rr - 2];
  for (int d = batch_rank - 1; d >= 0; --d) {
    const int li = d - (batch_rank - (lr - 2)), ri = d - (batch_rank - (rr - 2));
    const int ld = li >= 0 ? l[li] : 1, rd = ri >= 0 ? r[ri] : 1;
    ctx.require(ld == rd || ld == 1 || rd == 1, "batch dimensions " + std::to_string(ld) + " and " +
                                                    std::to_string(rd) + " do not broadcast");
    p.out_batch[d] = std::max(ld, rd);
    if (ld == 0 || rd == 0) p.out_batch[d] = 0;
    p.lhs_batch_stride[d] = ld == 1 ? 0 : ls;
    p.rhs_batch_stride[d] = rd == 1 ? 0 : rs;
    ls *= ld;
    rs *= rd;
    out[d] = p.out_batch[d];
  }
  out[batch_rank] = p.m;
  out[batch_rank + 1] = p.n;
  ctx.set_output_shape(ctx.output(0), out);
  if (ctx.type(lhs) == BATON_TYPE_FLOAT32) {
    ctx.state<BatchMatMulState>().scratch.prepare(ctx, sizeof(float) * batch_matmul_scratch_size(p, ctx.workers()));
    return;
  }
  auto& q = ctx.state<BatchMatMulState>().q;
  const auto [lhs_scale, lhs_zero] = operand_quant(ctx, lhs, "lhs");
  const auto [rhs_scale, rhs_zero] = operand_quant(ctx, rhs, "rhs");
  const auto [out_scale, out_zero] = operand_quant(ctx, ctx.output(0), "output");
  q.int16 = ctx.type(lhs) == BATON_TYPE_INT16;
  q.lhs_zero = lhs_zero;
  q.rhs_zero = rhs_zero;
  q.out_zero = out_zero;
  q.m = quantize_multiplier(static_cast<double>(lhs_scale * rhs_scale / out_scale));
  if (!q.int16) {
    auto& s = ctx.state<BatchMatMulState>();
    batch_matmul_int8_columns(p, q, s.columns);
    s.scratch.prepare(ctx, batch_matmul_int8_scratch(p, ctx.workers()));
    ctx.set_invoke(batch_matmul_int8_invoke);
    return;
  }
  ctx.set_invoke(batch_matmul_int16_invoke);
}

void batch_matmul_invoke(OpContext& ctx) {
  auto& s = ctx.state<BatchMatMulState>();
  batch_matmul(s.params, ctx.data<float>(ctx.input(0)), ctx.data<float>(ctx.input(1)),
               ctx.mutable_data<float>(ctx.output(0)), s.scratch.as<float>(ctx), ctx.parallel());
}

constexpr OpDef kOps[] = {
    {BATON_OP_FULLY_CONNECTED, "FULLY_CONNECTED", 1, 14, fully_connected_prepare, fully_connected_invoke},
    {BATON_OP_BATCH_MATMUL, "BATCH_MATMUL", 1, 4, batch_matmul_prepare, batch_matmul_invoke},
};

}  // namespace

std::span<const OpDef> fully_connected_ops() { return kOps; }

}  // namespace baton::builtin
