// A node as the Vulkan delegate reads it: its tensors, shapes and options through the host table, with
// the checks every op shares (float32, rank at most 4, constant weights). A failed check throws Refusal
// with the reason `baton plan` shows; check_node and the partition build both plan through here, so a
// node is refused for the same reasons its partition would fail to build.
#ifndef BATON_VULKAN_NODE_VIEW_H
#define BATON_VULKAN_NODE_VIEW_H

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"
#include "vk_error.h"

namespace baton::vulkan {

using Dims = std::vector<int32_t>;
using kit::dims_text;

int64_t element_count(const Dims& dims);

// Whether the op takes float tensors of rank 5 whose first dimension is 1 (a detector head's [1, anchors,
// H, W, outputs], which the device stores as its last four): elementwise ops, RESHAPE, TRANSPOSE,
// STRIDED_SLICE, CONCATENATION, SOFTMAX and the reductions.
bool takes_rank5(int32_t code);

class NodeView : public kit::DelegateNode {
 public:
  NodeView(const baton_host_api* api, const baton_node* node) : kit::DelegateNode(api, node) {}

  // A float32 tensor of rank at most 4 (or 5 with a first dimension of 1, for takes_rank5's ops) with no
  // empty dimension.
  const baton_tensor* float_input(int32_t i) const;
  // As float_input, and constant with data: weights are packed into the device's layout once.
  const baton_tensor* constant_float_input(int32_t i, const char* what) const;
  // The single output: float32, rank at most 4, not constant.
  const baton_tensor* float_output() const;
  // Whether input i is int32 (kept as dense ints on the device, gpu_graph.h).
  bool int32_input(int32_t i) const { return api_->tensor_type(input(i)) == BATON_TYPE_INT32; }
  // The single output: int32, rank at most 4, not constant.
  const baton_tensor* int32_output() const;

  Dims shape(const baton_tensor* t) const { return dims(t); }
  const float* floats(const baton_tensor* t) const { return static_cast<const float*>(api_->tensor_data(t)); }

 private:
  void require_float(const baton_tensor* t, const char* role, int32_t i) const;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_NODE_VIEW_H
