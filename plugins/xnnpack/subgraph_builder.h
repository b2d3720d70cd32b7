// Turns baton tensors into XNNPACK values while one subgraph is defined: partition inputs and outputs
// become external values (ids 0..n-1, bound to host memory at invoke), constants become static values
// pointing at the model's data (it lives as long as the interpreter). A tensor that passes between two
// nodes of the partition is an external value too when the builder is given ids for them
// (place_tensors_in_scratch): the partition binds it into its scratch block, which the host places in its
// arena, instead of XNNPACK's own memory, which would add to the host's. Values that are no baton tensor
// stay internal values XNNPACK allocates. Shapes of values produced inside are the ones the ops compute, so a partition
// can be rebuilt for new input shapes; when `model_shapes_must_match` is set, a computed shape that
// differs from the model's refuses the node.
#ifndef BATON_XNNPACK_SUBGRAPH_BUILDER_H
#define BATON_XNNPACK_SUBGRAPH_BUILDER_H

#include <xnnpack.h>

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "node_view.h"

namespace baton::xnnpack {

class SubgraphBuilder {
 public:
  // `checking_one_node`: the subgraph is a scratch one for check_node; inputs that are neither constant
  // nor known become internal values with the model's shapes.
  SubgraphBuilder(const baton_host_api* api, xnn_subgraph_t subgraph, bool checking_one_node,
                  bool model_shapes_must_match);
  // The subgraph comes from `open`, called the first time a value or a node is defined (never when the
  // op's own checks refuse the node first).
  SubgraphBuilder(const baton_host_api* api, std::function<xnn_subgraph_t()> open, bool checking_one_node,
                  bool model_shapes_must_match);

  // A tensor written and read inside the partition (not a partition output), placed by the partition.
  struct ScratchTensor {
    int32_t tensor;
    uint32_t external_id;
    size_t bytes;
    int written, last_read;  // positions of the nodes in the partition
  };
  // Before any node: tensors between nodes get external ids from `first_id` on (at most `count`), except
  // those in `keep` (tensors XNNPACK can fuse away), which stay XNNPACK's.
  void place_tensors_in_scratch(uint32_t first_id, uint32_t count, std::unordered_set<int32_t> keep);
  // The position of the node being defined.
  void begin_node(int position) { position_ = written_at_ = position; }
  const std::vector<ScratchTensor>& scratch_tensors() const { return scratch_; }

  // Partition boundary, declared before any node: the ids are the order of declaration.
  void add_external_input(const baton_tensor* t, const Dims& dims, uint32_t external_id);
  void add_external_output(const baton_tensor* t, uint32_t external_id);

  // The value of a node's input tensor (defining static and, when checking, internal values on first use).
  uint32_t input(const NodeView& node, const baton_tensor* t);
  const Dims& dims(const NodeView& node, const baton_tensor* t);
  // Defines the value a node produces, with the shape the op computes.
  uint32_t output(const NodeView& node, const baton_tensor* t, const Dims& dims);

  // Values that belong to no baton tensor: a constant viewed with other dims, data the delegate made
  // (kept alive by this builder, then by the partition), an intermediate between two XNNPACK nodes.
  // Float32 unless a type is given.
  uint32_t static_value(const void* data, const Dims& dims, const ValueType& type = {});
  uint32_t owned_static(std::vector<float> data, const Dims& dims, const ValueType& type = {});
  uint32_t internal(const Dims& dims, const ValueType& type = {});
  // Per-channel scales the delegate computed (kept alive like owned data).
  const float* owned_scales(std::vector<float> scales);

  // Turns an XNNPACK failure while defining `what` into a Refusal.
  void check(xnn_status status, const char* what) const;

  std::vector<std::vector<float>> take_owned_data() { return std::move(owned_); }
  xnn_subgraph_t subgraph();

 private:
  struct Value {
    uint32_t id;
    Dims dims;
  };
  uint32_t define(const ValueType& type, const Dims& dims, const void* data, uint32_t external_id, uint32_t flags,
                  const char* what);
  uint32_t define_tensor(const baton_tensor* t, const Dims& dims, const void* data, uint32_t external_id,
                         uint32_t flags, const char* what);

  const baton_host_api* api_;
  xnn_subgraph_t subgraph_;
  std::function<xnn_subgraph_t()> open_;  // makes subgraph_ when it is null
  bool checking_one_node_;
  bool model_shapes_must_match_;
  std::unordered_map<int32_t, Value> values_;            // by tensor index
  std::unordered_map<int32_t, uint32_t> output_ids_;     // partition outputs: their external ids
  std::vector<std::vector<float>> owned_;
  bool in_scratch_ = false;
  uint32_t next_scratch_id_ = 0, scratch_id_end_ = 0;
  int position_ = 0;
  std::vector<ScratchTensor> scratch_;
  std::unordered_map<int32_t, size_t> scratch_of_;  // by tensor index: position in scratch_
  std::unordered_set<int32_t> keep_;
  std::unordered_map<int32_t, int> kept_written_;  // kept tensors: the position of the node that writes them
  // Where the current node's outputs are written: XNNPACK moves a clamp into the node that writes its
  // kept input, which then writes the clamp's output, earlier than the clamp's own position.
  int written_at_ = 0;
};

}  // namespace baton::xnnpack

#endif  // BATON_XNNPACK_SUBGRAPH_BUILDER_H
