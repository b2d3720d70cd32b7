#include "ops.h"

#include "op_common.h"

namespace baton::vulkan {

const std::vector<OpDef>& op_defs() {
  // Version ranges: the float32 versions of each op (later versions add integer types, which the type
  // checks refuse node by node).
  static const std::vector<OpDef> defs = {
      {code::kConv2d, "CONV_2D", 1, 8, plan_conv2d},
      {code::kDepthwiseConv2d, "DEPTHWISE_CONV_2D", 1, 7, plan_depthwise_conv2d},
      {code::kFullyConnected, "FULLY_CONNECTED", 1, 12, plan_fully_connected},
      {code::kAdd, "ADD", 1, 5, plan_binary},
      {code::kSub, "SUB", 1, 5, plan_binary},
      {code::kMul, "MUL", 1, 7, plan_binary},
      {code::kPrelu, "PRELU", 1, 1, plan_binary},
      {code::kRelu, "RELU", 1, 3, plan_unary},
      {code::kRelu6, "RELU6", 1, 3, plan_unary},
      {code::kReluN1To1, "RELU_N1_TO_1", 1, 1, plan_unary},
      {code::kLogistic, "LOGISTIC", 1, 3, plan_unary},
      {code::kTanh, "TANH", 1, 3, plan_unary},
      {code::kHardSwish, "HARD_SWISH", 1, 1, plan_unary},
      {code::kAveragePool2d, "AVERAGE_POOL_2D", 1, 3, plan_pool},
      {code::kMaxPool2d, "MAX_POOL_2D", 1, 3, plan_pool},
      {code::kMean, "MEAN", 1, 3, plan_mean},
      {code::kSoftmax, "SOFTMAX", 1, 3, plan_softmax},
      {code::kPad, "PAD", 1, 4, plan_pad},
      {code::kPadV2, "PADV2", 1, 4, plan_pad},
      {code::kReshape, "RESHAPE", 1, 1, plan_reshape},
      {code::kConcatenation, "CONCATENATION", 1, 4, plan_concatenation},
      {code::kDepthToSpace, "DEPTH_TO_SPACE", 1, 2, plan_depth_to_space},
      {code::kResizeBilinear, "RESIZE_BILINEAR", 1, 4, plan_resize_bilinear},
  };
  return defs;
}

const OpDef* find_op(int32_t op_code) {
  for (const OpDef& def : op_defs()) {
    if (def.code == op_code) return &def;
  }
  return nullptr;
}

}  // namespace baton::vulkan
