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

#include "baton/plugin_api.h"

namespace baton::xnnpack {

using Dims = std::vector<size_t>;

// Why the delegate does not take a node (or cannot build a partition). Carries the text for error_set.
class Refusal {
 public:
  explicit Refusal(std::string reason) : reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

[[noreturn]] inline void refuse(const std::string& reason) { throw Refusal(reason); }

std::string dims_text(const Dims& dims);

class NodeView {
 public:
  NodeView(const baton_host_api* api, const baton_node* node) : api_(api), node_(node) {}

  const baton_host_api* api() const { return api_; }
  const baton_node* node() const { return node_; }
  int32_t code() const { return api_->node_builtin_code(node_); }
  int32_t input_count() const { return api_->node_input_count(node_); }
  int32_t output_count() const { return api_->node_output_count(node_); }
  const baton_builtin_options& options() const { return *api_->node_builtin_options(node_); }

  // Input i, which must be present; NULL for an omitted optional input.
  const baton_tensor* input(int32_t i) const;
  const baton_tensor* optional_input(int32_t i) const;
  const baton_tensor* output(int32_t i) const;

  // A float32 activation or constant with a shape XNNPACK can hold (rank <= 6, no zero dimension).
  const baton_tensor* float_input(int32_t i) const;
  // As float_input, and constant: weights, biases and slopes are packed when the runtime is created.
  const baton_tensor* constant_float_input(int32_t i, const char* what) const;
  // The values of a constant INT32 or INT64 tensor (axes, paddings, sizes).
  std::vector<int64_t> constant_ints(int32_t i, const char* what) const;
  // The single output, float32 and not constant.
  const baton_tensor* float_output() const;

  Dims shape(const baton_tensor* t) const;

 private:
  void require_float(const baton_tensor* t, const char* role, int32_t i) const;

  const baton_host_api* api_;
  const baton_node* node_;
};

}  // namespace baton::xnnpack

#endif  // BATON_XNNPACK_NODE_VIEW_H
