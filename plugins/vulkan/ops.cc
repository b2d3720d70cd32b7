#include "ops.h"

#include <cstring>

#include "op_common.h"

namespace baton::vulkan {

const std::vector<OpDef>& op_defs() {
  // Version ranges: the float32 (and int32) versions of each op (later versions add other types, which the
  // type checks refuse node by node).
  static const std::vector<OpDef> defs = {
      {BATON_OP_CONV_2D, "CONV_2D", 1, 8, plan_conv2d},
      {BATON_OP_DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", 1, 7, plan_depthwise_conv2d},
      {BATON_OP_FULLY_CONNECTED, "FULLY_CONNECTED", 1, 12, plan_fully_connected},
      {BATON_OP_BATCH_MATMUL, "BATCH_MATMUL", 1, 4, plan_batch_matmul},
      {BATON_OP_TRANSPOSE_CONV, "TRANSPOSE_CONV", 1, 5, plan_transpose_conv},
      {BATON_OP_CUSTOM, "Convolution2DTransposeBias", 1, 1, plan_transpose_conv},
      {BATON_OP_ADD, "ADD", 1, 5, plan_binary},
      {BATON_OP_SUB, "SUB", 1, 5, plan_binary},
      {BATON_OP_MUL, "MUL", 1, 7, plan_binary},
      {BATON_OP_PRELU, "PRELU", 1, 1, plan_binary},
      {BATON_OP_DIV, "DIV", 1, 2, plan_binary},
      {BATON_OP_SQUARED_DIFFERENCE, "SQUARED_DIFFERENCE", 1, 2, plan_binary},
      {BATON_OP_MAXIMUM, "MAXIMUM", 1, 4, plan_binary},
      {BATON_OP_MINIMUM, "MINIMUM", 1, 4, plan_binary},
      {BATON_OP_POW, "POW", 1, 1, plan_binary},
      {BATON_OP_FLOOR_MOD, "FLOOR_MOD", 1, 2, plan_binary},
      {BATON_OP_FLOOR_DIV, "FLOOR_DIV", 1, 3, plan_binary},
      {BATON_OP_RELU, "RELU", 1, 3, plan_unary},
      {BATON_OP_RELU6, "RELU6", 1, 3, plan_unary},
      {BATON_OP_RELU_N1_TO_1, "RELU_N1_TO_1", 1, 1, plan_unary},
      {BATON_OP_LOGISTIC, "LOGISTIC", 1, 3, plan_unary},
      {BATON_OP_TANH, "TANH", 1, 3, plan_unary},
      {BATON_OP_HARD_SWISH, "HARD_SWISH", 1, 1, plan_unary},
      {BATON_OP_EXP, "EXP", 1, 2, plan_unary},
      {BATON_OP_RSQRT, "RSQRT", 1, 2, plan_unary},
      {BATON_OP_SQRT, "SQRT", 1, 1, plan_unary},
      {BATON_OP_ABS, "ABS", 1, 5, plan_unary},
      {BATON_OP_NEG, "NEG", 1, 1, plan_unary},
      {BATON_OP_SQUARE, "SQUARE", 1, 1, plan_unary},
      {BATON_OP_GELU, "GELU", 1, 2, plan_unary},
      {BATON_OP_AVERAGE_POOL_2D, "AVERAGE_POOL_2D", 1, 3, plan_pool},
      {BATON_OP_MAX_POOL_2D, "MAX_POOL_2D", 1, 3, plan_pool},
      {BATON_OP_MEAN, "MEAN", 1, 3, plan_mean},
      {BATON_OP_SUM, "SUM", 1, 2, plan_reduce},
      {BATON_OP_REDUCE_MAX, "REDUCE_MAX", 1, 3, plan_reduce},
      {BATON_OP_REDUCE_MIN, "REDUCE_MIN", 1, 3, plan_reduce},
      {BATON_OP_REDUCE_PROD, "REDUCE_PROD", 1, 2, plan_reduce},
      {BATON_OP_ARG_MAX, "ARG_MAX", 1, 3, plan_arg_extreme},
      {BATON_OP_ARG_MIN, "ARG_MIN", 1, 3, plan_arg_extreme},
      {BATON_OP_SOFTMAX, "SOFTMAX", 1, 3, plan_softmax},
      {BATON_OP_PAD, "PAD", 1, 4, plan_pad},
      {BATON_OP_PADV2, "PADV2", 1, 4, plan_pad},
      {BATON_OP_RESHAPE, "RESHAPE", 1, 1, plan_reshape},
      {BATON_OP_CONCATENATION, "CONCATENATION", 1, 4, plan_concatenation},
      {BATON_OP_DEPTH_TO_SPACE, "DEPTH_TO_SPACE", 1, 2, plan_depth_to_space},
      {BATON_OP_RESIZE_BILINEAR, "RESIZE_BILINEAR", 1, 4, plan_resize_bilinear},
      {BATON_OP_TRANSPOSE, "TRANSPOSE", 1, 6, plan_transpose},
      {BATON_OP_RESIZE_NEAREST_NEIGHBOR, "RESIZE_NEAREST_NEIGHBOR", 1, 4, plan_resize_nearest},
      {BATON_OP_STRIDED_SLICE, "STRIDED_SLICE", 1, 8, plan_strided_slice},
      {BATON_OP_GATHER, "GATHER", 1, 7, plan_gather},
      {BATON_OP_GATHER_ND, "GATHER_ND", 1, 5, plan_gather_nd},
      {BATON_OP_SCATTER_ND, "SCATTER_ND", 1, 1, plan_scatter_nd},
      {BATON_OP_CAST, "CAST", 1, 8, plan_cast},
  };
  return defs;
}

const OpDef* find_op(const baton_host_api* api, const baton_node* node) {
  const int32_t code = api->node_builtin_code(node);
  const char* custom = code == BATON_OP_CUSTOM ? api->node_custom_name(node) : nullptr;
  for (const OpDef& def : op_defs()) {
    if (def.code == code && (code != BATON_OP_CUSTOM || (custom && std::strcmp(custom, def.name) == 0))) return &def;
  }
  return nullptr;
}

}  // namespace baton::vulkan
