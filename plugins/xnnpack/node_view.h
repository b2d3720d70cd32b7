// A node as the XNNPACK delegate reads it: its tensors, shapes and options through the host table, with
// the checks every op shares (float32, constant weights, rank XNNPACK can hold). A check that fails
// throws Refusal with the reason `baton plan` shows; check_node and the partition build both go
// through here, so a node is refused for the same reasons it would fail to build.
#ifndef BATON_XNNPACK_NODE_VIEW_H
#define BATON_XNNPACK_NODE_VIEW_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xnnpack.h>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"

namespace baton::xnnpack {

using Dims = std::vector<size_t>;

// Why the delegate does not take a node (or cannot build a partition): the kit's, its what() the reason.
using kit::Refusal;
using kit::refuse;

using kit::dims_text;

// How a tensor's elements are stored, as XNNPACK is told: float32, or 8-bit quantized with a scale and
// zero point (per channel for int8 weights and their int32 biases).
struct ValueType {
  xnn_datatype datatype = xnn_datatype_fp32;
  float scale = 0.0f;
  int32_t zero_point = 0;
  const float* channel_scales = nullptr;  // per-channel: borrowed from the model (lives as long as it)
  size_t channels = 0, channel_dim = 0;

  bool quantized() const { return datatype != xnn_datatype_fp32; }
  bool same_quantization(const ValueType& o) const {
    return datatype == o.datatype && scale == o.scale && zero_point == o.zero_point;
  }
};

// The ValueType of a tensor, or a Refusal naming what XNNPACK cannot hold (int16, per-channel
// activations, a zero point out of range).
ValueType value_type(const baton_host_api* api, const baton_tensor* t);

class NodeView : public kit::DelegateNode {
 public:
  // `quantized`: the delegate takes uint8/int8 quantized activations (its `quantized` option).
  NodeView(const baton_host_api* api, const baton_node* node, bool quantized = false)
      : kit::DelegateNode(api, node), quantized_(quantized) {}

  // A float32 activation or constant with a shape XNNPACK can hold (rank <= 6, no zero dimension).
  const baton_tensor* float_input(int32_t i) const;
  // As float_input, and constant: weights, biases and slopes are packed when the runtime is created.
  const baton_tensor* constant_float_input(int32_t i, const char* what) const;
  // The single output, float32 and not constant.
  const baton_tensor* float_output() const;

  // For ops XNNPACK also runs quantized: float32, or (with the `quantized` option) uint8/int8 with one
  // scale and zero point. The output must be of the same kind as `like` (float, or the same 8-bit type).
  const baton_tensor* value_input(int32_t i) const;
  const baton_tensor* value_output(const baton_tensor* like) const;
  bool is_quantized(const baton_tensor* t) const { return api_->tensor_type(t) != BATON_TYPE_FLOAT32; }
  // The checks of value_input on any tensor of the node (`role` names it in the reason).
  void check_value(const baton_tensor* t, const char* role) const { require_value(t, role, -1); }

  Dims shape(const baton_tensor* t) const;

 private:
  void require_float(const baton_tensor* t, const char* role, int32_t i) const;
  void require_value(const baton_tensor* t, const char* role, int32_t i) const;
  void require_shape(const baton_tensor* t, const char* role) const;

  bool quantized_;
};

}  // namespace baton::xnnpack

#endif  // BATON_XNNPACK_NODE_VIEW_H
