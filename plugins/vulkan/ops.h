// The ops the Vulkan delegate declares, each with the TFLite versions it takes and its planner: the
// function that checks one node (throwing Refusal with the reason) and appends its dispatches to a
// GraphBuilder. One function does both, so check_node refuses exactly what the partition build would
// fail on. The planners live by family in ops_*.cc.
#ifndef BATON_VULKAN_OPS_H
#define BATON_VULKAN_OPS_H

#include <array>
#include <cstdint>
#include <vector>

#include "gpu_graph.h"
#include "node_view.h"

namespace baton::vulkan {

using PlanFn = void (*)(GraphBuilder& graph, const NodeView& node);

struct OpDef {
  int32_t code;  // TFLite BuiltinOperator (BATON_OP_CUSTOM for a custom op, which `name` names)
  const char* name;
  int32_t min_version, max_version;
  PlanFn plan;
};

const std::vector<OpDef>& op_defs();
// The op a node is (its builtin code, or a custom op's name); null for any other.
const OpDef* find_op(const baton_host_api* api, const baton_node* node);

// ops_conv.cc
void plan_conv2d(GraphBuilder& g, const NodeView& node);
void plan_depthwise_conv2d(GraphBuilder& g, const NodeView& node);
void plan_fully_connected(GraphBuilder& g, const NodeView& node);
void plan_batch_matmul(GraphBuilder& g, const NodeView& node);
void plan_transpose_conv(GraphBuilder& g, const NodeView& node);  // TRANSPOSE_CONV, MediaPipe's Convolution2DTransposeBias
// ops_elementwise.cc
void plan_binary(GraphBuilder& g, const NodeView& node);  // ADD, SUB, MUL, PRELU, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, POW, FLOOR_DIV, FLOOR_MOD
void plan_unary(GraphBuilder& g, const NodeView& node);   // RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH, HARD_SWISH, EXP, RSQRT, ...
// ops_pool.cc
void plan_pool(GraphBuilder& g, const NodeView& node);  // AVERAGE_POOL_2D, MAX_POOL_2D
void plan_mean(GraphBuilder& g, const NodeView& node);  // the fast cases; the others go to plan_reduce
void plan_softmax(GraphBuilder& g, const NodeView& node);
// ops_movement.cc
void plan_pad(GraphBuilder& g, const NodeView& node);  // PAD, PADV2
void plan_reshape(GraphBuilder& g, const NodeView& node);
void plan_concatenation(GraphBuilder& g, const NodeView& node);
void plan_depth_to_space(GraphBuilder& g, const NodeView& node);
void plan_resize_bilinear(GraphBuilder& g, const NodeView& node);
void plan_transpose(GraphBuilder& g, const NodeView& node);  // the outer axes only
void plan_resize_nearest(GraphBuilder& g, const NodeView& node);
void plan_strided_slice(GraphBuilder& g, const NodeView& node);
// A STRIDED_SLICE as TFLite resolves it, in the [N, H, W, C] view of an input of dims `d`: per input axis its
// first position and step (0 for a shrunk axis) and the output axis it runs along (-1: shrunk).
struct SliceView {
  int32_t start[4] = {0, 0, 0, 0}, step[4] = {1, 1, 1, 1}, from[4] = {-1, -1, -1, -1};
  Dims out_dims;
};
SliceView resolve_strided_slice(const NodeView& node, const Dims& d);
// PAD's and PADV2's paddings (input 1) for an input of dims `d`: the output's dims and, in the [N, H, W, C]
// view, the padding before each axis.
struct PadView {
  Dims out_dims;
  int32_t before[4] = {0, 0, 0, 0};
};
PadView resolve_pad(const NodeView& node, const Dims& d);

// TRANSPOSE's perm (input 1), checked, in the [N, H, W, C] view: output axis k comes from input axis
// perm4[k]. Sets the output's dims.
std::array<int32_t, 4> transpose_perm4(const NodeView& node, const Dims& d, Dims& out_dims);
// ops_reduce.cc
void plan_reduce(GraphBuilder& g, const NodeView& node);  // SUM, MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD over any axes
void plan_arg_extreme(GraphBuilder& g, const NodeView& node);  // ARG_MAX, ARG_MIN to int32
// ops_int.cc: int32 tensors (dense ints)
void plan_int_binary(GraphBuilder& g, const NodeView& node);  // ADD, SUB, MUL, MINIMUM, MAXIMUM, DIV, FLOOR_DIV, FLOOR_MOD
void plan_int_concatenation(GraphBuilder& g, const NodeView& node);
void plan_int_strided_slice(GraphBuilder& g, const NodeView& node);
void plan_int_transpose(GraphBuilder& g, const NodeView& node);
void plan_int_pad(GraphBuilder& g, const NodeView& node);
// ops_index.cc
void plan_gather(GraphBuilder& g, const NodeView& node);  // along an axis before the last, int32 indices
void plan_gather_nd(GraphBuilder& g, const NodeView& node);
void plan_scatter_nd(GraphBuilder& g, const NodeView& node);  // float updates, a constant shape
void plan_cast(GraphBuilder& g, const NodeView& node);  // int32 <-> float32
// A reshape of `src` into a new device tensor of `dims` (same element count): one copy when the last
// dimension is unchanged (the device layouts agree), else a gather. Returns the new tensor.
int reshaped(GraphBuilder& g, int src, const Dims& dims);
void plan_reshape_into(GraphBuilder& g, int dst, int src);

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_OPS_H
