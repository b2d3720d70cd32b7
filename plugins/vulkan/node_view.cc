#include "node_view.h"

#include "baton/tflite_ops.h"

namespace baton::vulkan {

bool takes_rank5(int32_t code) {
  switch (code) {
    case BATON_OP_ADD: case BATON_OP_SUB: case BATON_OP_MUL: case BATON_OP_DIV: case BATON_OP_PRELU:
    case BATON_OP_SQUARED_DIFFERENCE: case BATON_OP_MAXIMUM: case BATON_OP_MINIMUM: case BATON_OP_POW:
    case BATON_OP_FLOOR_DIV: case BATON_OP_FLOOR_MOD: case BATON_OP_RELU: case BATON_OP_RELU6:
    case BATON_OP_RELU_N1_TO_1: case BATON_OP_LOGISTIC: case BATON_OP_TANH: case BATON_OP_HARD_SWISH:
    case BATON_OP_EXP: case BATON_OP_RSQRT: case BATON_OP_SQRT: case BATON_OP_ABS: case BATON_OP_NEG:
    case BATON_OP_SQUARE: case BATON_OP_GELU: case BATON_OP_RESHAPE: case BATON_OP_TRANSPOSE:
    case BATON_OP_STRIDED_SLICE: case BATON_OP_CONCATENATION: case BATON_OP_SOFTMAX: case BATON_OP_MEAN:
    case BATON_OP_SUM: case BATON_OP_REDUCE_MAX: case BATON_OP_REDUCE_MIN: case BATON_OP_REDUCE_PROD:
      return true;
    default:
      return false;
  }
}

int64_t element_count(const Dims& dims) {
  int64_t n = 1;
  for (int32_t d : dims) n *= d;
  return n;
}

void NodeView::require_float(const baton_tensor* t, const char* role, int32_t i) const {
  const baton_tensor_type type = api_->tensor_type(t);
  std::string name = role;
  if (i >= 0) {
    name += ' ';
    name += std::to_string(i);
  }
  if (type != BATON_TYPE_FLOAT32) refuse(std::string(baton_tensor_type_name(type)) + " " + name + " (float32 only)");
  const Dims dims = shape(t);
  if (dims.size() == 5 && takes_rank5(code())) {
    if (dims[0] != 1) refuse(name + " of shape " + dims_text(dims) + " (rank 5 only with a first dimension of 1)");
  } else if (dims.size() > 4) {
    refuse(name + " of rank " + std::to_string(dims.size()) + " (at most 4)");
  }
  for (int32_t d : dims) {
    if (d <= 0) refuse(name + " with an empty or unknown dimension " + dims_text(dims));
  }
}

const baton_tensor* NodeView::float_input(int32_t i) const {
  const baton_tensor* t = input(i);
  require_float(t, "input", i);
  return t;
}

const baton_tensor* NodeView::constant_float_input(int32_t i, const char* what) const {
  const baton_tensor* t = float_input(i);
  require_constant(t, what);
  return t;
}

const baton_tensor* NodeView::float_output() const {
  if (output_count() != 1) refuse(std::to_string(output_count()) + " outputs (one only)");
  const baton_tensor* t = api_->node_output(node_, 0);
  require_float(t, "output", -1);
  if (api_->tensor_is_constant(t)) refuse("constant output");
  return t;
}

const baton_tensor* NodeView::int32_output() const {
  if (output_count() != 1) refuse(std::to_string(output_count()) + " outputs (one only)");
  const baton_tensor* t = api_->node_output(node_, 0);
  const baton_tensor_type type = api_->tensor_type(t);
  if (type != BATON_TYPE_INT32) refuse(std::string(baton_tensor_type_name(type)) + " output (int32 only)");
  if (dims(t).size() > 4) refuse("output of rank " + std::to_string(dims(t).size()) + " (at most 4)");
  if (api_->tensor_is_constant(t)) refuse("constant output");
  return t;
}

}  // namespace baton::vulkan
