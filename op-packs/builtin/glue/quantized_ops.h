// The 8-bit (uint8 / int8 activations) and int8-weight ("dynamic range": float activations, int8
// weights) variants of the builtin ops. An op's float prepare looks at the tensor types and hands the
// node to one of these; each checks types, shapes, scales and zero points, precomputes multipliers and
// packed weights, and sets the invoke that runs it (OpContext::set_invoke). Invoke only computes.
#ifndef BATON_BUILTIN_GLUE_QUANTIZED_OPS_H
#define BATON_BUILTIN_GLUE_QUANTIZED_OPS_H

#include <cstdint>
#include <span>
#include <vector>

#include "glue/op_context.h"
#include "kernels/conv.h"
#include "kernels/binary.h"
#include "kernels/depthwise_conv.h"
#include "kernels/pool.h"
#include "kernels/transpose_conv.h"

namespace baton::builtin {

// Geometry shared with the float kernels (glue/conv_ops.cc): shapes, strides, padding; fails on
// impossible ones. The activation range is left for the caller.
ConvParams conv_geometry(OpContext& ctx);
DepthwiseParams depthwise_geometry(OpContext& ctx);

// glue/quantized_conv_ops.cc
void quantized_conv_prepare(OpContext& ctx);
void hybrid_conv_prepare(OpContext& ctx);
void quantized_depthwise_prepare(OpContext& ctx);
void hybrid_depthwise_prepare(OpContext& ctx);
// `units`, `depth` and `batch` as the float prepare computed them (it has set the output shape).
void quantized_fully_connected_prepare(OpContext& ctx, int units, int depth, int batch);
void hybrid_fully_connected_prepare(OpContext& ctx, int units, int depth, int batch);

// glue/quantized_ops.cc
// ADD, SUB, MUL with the broadcast the float prepare planned (it has set the output shape).
void quantized_binary_prepare(OpContext& ctx, const BroadcastPlan& plan);
void quantized_pool_prepare(OpContext& ctx, const PoolParams& geometry);
void quantized_logistic_prepare(OpContext& ctx);
// An op TFLite computes through a 256-entry table of f over the input codes (ELU, GELU, ...); the output
// has the input's shape (already set) and type, any scale and zero point.
void quantized_table_prepare(OpContext& ctx, float (*f)(float));
void quantized_softmax_prepare(OpContext& ctx);
// glue/quantized_activation_ops.cc: HARD_SWISH and LOG_SOFTMAX (input shape checked by the caller);
// PRELU and SQUARED_DIFFERENCE with the broadcast output shape the float prepare computed (and set).
void quantized_hard_swish_prepare(OpContext& ctx);
void quantized_abs_prepare(OpContext& ctx);
void quantized_rsqrt_prepare(OpContext& ctx);
void quantized_log_softmax_prepare(OpContext& ctx);
void quantized_prelu_prepare(OpContext& ctx, std::span<const int32_t> out_shape);
void quantized_squared_difference_prepare(OpContext& ctx, std::span<const int32_t> out_shape);
void quantized_div_prepare(OpContext& ctx, std::span<const int32_t> out_shape);
// glue/q16x8_ops.cc: int16 activations with int8 weights (16x8); FULLY_CONNECTED once the float prepare
// has set the output shape, ADD / SUB / MUL with the broadcast output shape (set).
// The scale of an int16 activation tensor: per tensor, positive and finite, zero point 0.
float int16_scale(const OpContext& ctx, const baton_tensor* t, const char* role);
void conv_16x8_prepare(OpContext& ctx);
void depthwise_16x8_prepare(OpContext& ctx);
void fully_connected_16x8_prepare(OpContext& ctx, int units, int depth, int batch);
void binary_16_prepare(OpContext& ctx, const BroadcastPlan& plan);
// AVERAGE_POOL_2D and MAX_POOL_2D with the float prepare's geometry (it has set the output shape).
void pool_16_prepare(OpContext& ctx, const PoolParams& geometry);
// SOFTMAX, LOGISTIC (tanh = false) and TANH; the output shape is set here.
void softmax_16_prepare(OpContext& ctx);
void sigmoid_16_prepare(OpContext& ctx, bool tanh);
// glue/quantized_transpose_conv_ops.cc: uint8, int8 and 16x8 TRANSPOSE_CONV with the geometry the float
// prepare computed (it has set the output shape).
void quantized_transpose_conv_prepare(OpContext& ctx, const TransposeConvParams& geometry);
// glue/reduce_ops.cc: MEAN once the float prepare has read the axes (constant, or computed and read at
// invoke) and set the output shape.
void quantized_mean_prepare(OpContext& ctx, const std::vector<int64_t>& axes);
// CONCATENATION with the layout the float prepare computed: checks the parameters, sets the scaling.
void quantized_concat_prepare(OpContext& ctx, int64_t outer, std::vector<int64_t> chunks);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_QUANTIZED_OPS_H
