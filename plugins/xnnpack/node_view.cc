#include "node_view.h"

#include <xnnpack.h>

#include <cmath>

namespace baton::xnnpack {

Dims NodeView::shape(const baton_tensor* t) const {
  const int32_t* dims = nullptr;
  const int32_t rank = api_->tensor_shape(t, &dims);
  Dims out;
  for (int32_t d = 0; d < rank; ++d) out.push_back(dims[d] < 0 ? 0 : static_cast<size_t>(dims[d]));
  return out;
}

ValueType value_type(const baton_host_api* api, const baton_tensor* t) {
  const baton_tensor_type type = api->tensor_type(t);
  ValueType v;
  if (type == BATON_TYPE_FLOAT32) return v;
  baton_quantization q{};
  q.struct_size = sizeof q;
  api->tensor_quantization(t, &q);
  const std::string name = baton_tensor_type_name(type);
  if (type != BATON_TYPE_UINT8 && type != BATON_TYPE_INT8 && type != BATON_TYPE_INT32) refuse(name + " tensor");
  if (q.scale_count < 1 || !q.scales) refuse(name + " tensor without quantization parameters");
  for (int32_t c = 0; c < q.scale_count; ++c) {
    if (!(q.scales[c] > 0.0f) || !std::isfinite(q.scales[c])) refuse(name + " tensor with a scale that is not positive");
    if (q.zero_points && q.zero_points[c] != q.zero_points[0]) refuse(name + " tensor with per-channel zero points");
  }
  const int64_t zero = q.zero_points ? q.zero_points[0] : 0;
  if (q.scale_count == 1) {
    v.datatype = type == BATON_TYPE_UINT8 ? xnn_datatype_quint8 : type == BATON_TYPE_INT8 ? xnn_datatype_qint8 : xnn_datatype_qint32;
    v.scale = q.scales[0];
    const int64_t lo = type == BATON_TYPE_UINT8 ? 0 : type == BATON_TYPE_INT8 ? -128 : 0;
    const int64_t hi = type == BATON_TYPE_UINT8 ? 255 : type == BATON_TYPE_INT8 ? 127 : 0;
    if (zero < lo || zero > hi) refuse(name + " tensor with zero point " + std::to_string(zero) + " out of range");
    v.zero_point = static_cast<int32_t>(zero);
    return v;
  }
  // Per channel: XNNPACK holds it for int8 weights and int32 biases, symmetric.
  if (type == BATON_TYPE_UINT8) refuse("UINT8 tensor quantized per channel");
  if (zero != 0) refuse(name + " tensor quantized per channel with a non-zero zero point");
  v.datatype = type == BATON_TYPE_INT8 ? xnn_datatype_qcint8 : xnn_datatype_qcint32;
  v.channel_scales = q.scales;
  v.channels = static_cast<size_t>(q.scale_count);
  v.channel_dim = static_cast<size_t>(q.quantized_dimension);
  return v;
}

void NodeView::require_shape(const baton_tensor* t, const char* role) const {
  const Dims dims = shape(t);
  if (dims.size() > XNN_MAX_TENSOR_DIMS) {
    refuse(std::string(role) + " of rank " + std::to_string(dims.size()) + " (XNNPACK holds at most " +
           std::to_string(XNN_MAX_TENSOR_DIMS) + ")");
  }
  for (size_t d : dims) {
    if (d == 0) refuse(std::string(role) + " with an empty dimension " + dims_text(dims));
  }
}

void NodeView::require_float(const baton_tensor* t, const char* role, int32_t i) const {
  const baton_tensor_type type = api_->tensor_type(t);
  if (type != BATON_TYPE_FLOAT32) {
    std::string why = std::string(baton_tensor_type_name(type)) + " " + role;
    if (i >= 0) why += " " + std::to_string(i);
    refuse(why + (type == BATON_TYPE_UINT8 || type == BATON_TYPE_INT8 ? " (float32 only for this op in this XNNPACK)"
                                                                       : " (float32 only)"));
  }
  require_shape(t, role);
}

void NodeView::require_value(const baton_tensor* t, const char* role, int32_t i) const {
  const baton_tensor_type type = api_->tensor_type(t);
  if (type == BATON_TYPE_FLOAT32) return require_shape(t, role);
  std::string what = std::string(baton_tensor_type_name(type)) + " " + role;
  if (i >= 0) what += " " + std::to_string(i);
  if (type != BATON_TYPE_UINT8 && type != BATON_TYPE_INT8) refuse(what + " (float32, uint8 or int8 only)");
  if (!quantized_) refuse(what + " (quantized nodes are taken only with the option quantized = true)");
  const ValueType v = value_type(api_, t);
  if (v.channel_scales) refuse(what + " quantized per channel");
  require_shape(t, role);
}

const baton_tensor* NodeView::value_input(int32_t i) const {
  const baton_tensor* t = input(i);
  require_value(t, "input", i);
  return t;
}

const baton_tensor* NodeView::value_output(const baton_tensor* like) const {
  if (output_count() != 1) refuse(std::to_string(output_count()) + " outputs (one only)");
  const baton_tensor* t = output(0);
  require_value(t, "output", -1);
  if (api_->tensor_is_constant(t)) refuse("constant output");
  if (api_->tensor_type(t) != api_->tensor_type(like)) {
    refuse(std::string(baton_tensor_type_name(api_->tensor_type(like))) + " input with a " +
           baton_tensor_type_name(api_->tensor_type(t)) + " output");
  }
  return t;
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
  const baton_tensor* t = output(0);
  require_float(t, "output", -1);
  if (api_->tensor_is_constant(t)) refuse("constant output");
  return t;
}

}  // namespace baton::xnnpack
