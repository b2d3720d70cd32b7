#include "node_view.h"

#include <xnnpack.h>

namespace baton::xnnpack {

std::string dims_text(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

const baton_tensor* NodeView::optional_input(int32_t i) const {
  if (i >= input_count()) return nullptr;
  return api_->node_input(node_, i);
}

const baton_tensor* NodeView::input(int32_t i) const {
  const baton_tensor* t = optional_input(i);
  if (!t) refuse("input " + std::to_string(i) + " is missing");
  return t;
}

const baton_tensor* NodeView::output(int32_t i) const {
  if (i >= output_count()) refuse("output " + std::to_string(i) + " is missing");
  return api_->node_output(node_, i);
}

Dims NodeView::shape(const baton_tensor* t) const {
  const int32_t* dims = nullptr;
  const int32_t rank = api_->tensor_shape(t, &dims);
  Dims out;
  for (int32_t d = 0; d < rank; ++d) out.push_back(dims[d] < 0 ? 0 : static_cast<size_t>(dims[d]));
  return out;
}

void NodeView::require_float(const baton_tensor* t, const char* role, int32_t i) const {
  const baton_tensor_type type = api_->tensor_type(t);
  if (type != BATON_TYPE_FLOAT32) {
    std::string why = std::string(baton_tensor_type_name(type)) + " " + role;
    if (i >= 0) why += " " + std::to_string(i);
    refuse(why + " (float32 only)");
  }
  const Dims dims = shape(t);
  if (dims.size() > XNN_MAX_TENSOR_DIMS) {
    refuse(std::string(role) + " of rank " + std::to_string(dims.size()) + " (XNNPACK holds at most " +
           std::to_string(XNN_MAX_TENSOR_DIMS) + ")");
  }
  for (size_t d : dims) {
    if (d == 0) refuse(std::string(role) + " with an empty dimension " + dims_text(dims));
  }
}

const baton_tensor* NodeView::float_input(int32_t i) const {
  const baton_tensor* t = input(i);
  require_float(t, "input", i);
  return t;
}

const baton_tensor* NodeView::constant_float_input(int32_t i, const char* what) const {
  const baton_tensor* t = float_input(i);
  if (!api_->tensor_is_constant(t)) refuse(std::string("non-constant ") + what);
  if (!api_->tensor_data(t)) refuse(std::string(what) + " has no data");
  return t;
}

std::vector<int64_t> NodeView::constant_ints(int32_t i, const char* what) const {
  const baton_tensor* t = input(i);
  if (!api_->tensor_is_constant(t)) refuse(std::string("non-constant ") + what);
  const baton_tensor_type type = api_->tensor_type(t);
  const void* data = api_->tensor_data(t);
  if (!data) refuse(std::string(what) + " has no data");
  size_t count = 1;
  for (size_t d : shape(t)) count *= d;
  std::vector<int64_t> out(count);
  if (type == BATON_TYPE_INT32) {
    for (size_t k = 0; k < count; ++k) out[k] = static_cast<const int32_t*>(data)[k];
  } else if (type == BATON_TYPE_INT64) {
    for (size_t k = 0; k < count; ++k) out[k] = static_cast<const int64_t*>(data)[k];
  } else {
    refuse(std::string(what) + " of type " + baton_tensor_type_name(type) + " (INT32 or INT64 only)");
  }
  return out;
}

const baton_tensor* NodeView::float_output() const {
  if (output_count() != 1) refuse(std::to_string(output_count()) + " outputs (one only)");
  const baton_tensor* t = output(0);
  require_float(t, "output", -1);
  if (api_->tensor_is_constant(t)) refuse("constant output");
  return t;
}

}  // namespace baton::xnnpack
