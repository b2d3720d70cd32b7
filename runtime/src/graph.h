// The runtime's graph as the interpreter and plugins see it: tensors with their current shape and
// memory, nodes bound to the kernel or delegate partition that runs them. Plugins hold these only as the
// opaque handles of plugin_api.h (baton_tensor, baton_node, baton_partition); host_api.cc converts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/tflite_ops.h"
#include "model.h"

namespace baton {

class LoadedPlugin;

struct Tensor {
  const TensorInfo* info = nullptr;
  int32_t index = 0;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  size_t bytes = 0;
  const uint8_t* constant = nullptr;  // constant data (in the model's mapping, or folded)
  uint8_t* data = nullptr;            // arena memory of a non-constant tensor, set after planning
  uint8_t* planned = nullptr;         // a model input's memory in the current arena, kept while `data` is
                                      // cleared for prepare, so a new plan can carry the input's values over
  bool is_constant = false;
  bool is_model_input = false;
  bool is_model_output = false;
  bool shape_writable = false;  // true only while the node producing it is being prepared
  // The host's tensor limit (LoadLimits::max_tensor_bytes): a prepare that sets a larger shape is refused
  // there, before the plugin sizes anything of its own by that shape.
  size_t max_bytes = SIZE_MAX;
  // Its shape is known only at invoke (see tensor_set_dynamic in plugin_api.h): never in the arena; its
  // memory is `heap`, grown at invoke when a larger shape needs it (in shared memory, like the arena, when
  // a plugin runs in a child process).
  bool dynamic = false;
  std::shared_ptr<uint8_t> heap;
  size_t capacity = 0;
};

// Writes the tensor's quantization as the ABI gives it (baton_quantization: at most out->struct_size bytes,
// 0 read as the host's size; arrays borrowed from the model), zeros when it has none (host_api.cc).
void quantization_of(const Tensor* t, baton_quantization* out);

inline int64_t element_count(const Tensor& t) {
  int64_t n = 1;
  for (int32_t d : t.shape) n *= d;
  return n;
}

// The byte size its shape gives a tensor; none for a string tensor, whose contents set it.
inline void reset_byte_size(Tensor& t) {
  if (t.type == BATON_TYPE_STRING) {
    t.bytes = 0;
  } else {
    checked_byte_size(t.shape, t.type, &t.bytes);
  }
}

// A variable tensor's value at load and after reset_variables(): zero, and for an int8 tensor its zero
// point (the real value 0), as TFLite resets variables (its integer LSTMs start from that state).
inline void reset_variable(Tensor& t) {
  if (!t.data) return;
  int value = 0;
  if (t.type == BATON_TYPE_INT8 && t.info && !t.info->quant.zero_points.empty()) {
    value = static_cast<int>(t.info->quant.zero_points[0]);
  }
  std::memset(t.data, value, t.bytes);
}

// Nodes the runtime runs itself rather than a plugin (runtime_nodes.cc); delegates never see them.
enum class RuntimeOp {
  none, while_loop, if_else, case_of, call_once, composite, var_handle, read_variable, assign_variable,
  hashtable, hashtable_find, hashtable_import, hashtable_size,  // hashtables.cc
};
inline bool is_hashtable_op(RuntimeOp op) { return op >= RuntimeOp::hashtable && op <= RuntimeOp::hashtable_size; }
RuntimeOp runtime_op(int32_t op_code);

struct Node {
  const NodeInfo* info = nullptr;
  RuntimeOp runtime = RuntimeOp::none;
  std::vector<Tensor*> inputs;  // null for an omitted optional input
  std::vector<Tensor*> outputs;
  std::vector<Tensor*> intermediates;  // quantization carriers (NodeInfo::intermediates)
  // Op-pack placement.
  LoadedPlugin* plugin = nullptr;
  const baton_kernel* kernel = nullptr;
  void* state = nullptr;
  bool initialised = false;
  bool folded = false;   // computed once at load; its outputs are constants now
  bool dropped = false;  // dead at load (nothing reads its outputs): never resolved, prepared or run
  bool called = false;   // CALL_ONCE: its subgraph has run
  bool reads_strings = false;   // an input is a string tensor
  bool writes_strings = false;  // an output is: the host checks what the kernel wrote (check_string_outputs)
  // Prepared again at every invoke: an input or output is dynamic. A control-flow or READ_VARIABLE node
  // that is deferred gives its (dynamic) outputs their shapes at invoke (runtime_nodes.cc).
  bool deferred = false;
  // Kernel scratch in the arena (ABI 1.14): asked for in a prepare of the memory plan (`planning`), placed
  // by place_tensors.
  bool planning = false;
  size_t kernel_scratch_bytes = 0;
  uint8_t* kernel_scratch = nullptr;
  int32_t variable = -1;  // VAR_HANDLE: the id of its resource variable
  // WHILE: where loop values wait between a body's outputs and its inputs when one of them is both
  std::vector<uint8_t> scratch;
  // A WHILE whose loop values change shape (it is `deferred`, its outputs dynamic): the values between
  // iterations, held here while the body and condition are prepared again for their shapes.
  struct HeldValue {
    std::vector<int32_t> shape;
    size_t bytes = 0;
    std::vector<uint8_t> data;  // grown only when a larger value needs it
  };
  std::vector<HeldValue> held;
  // Every output holds no elements after the last prepare: invoke would compute nothing (computes_nothing).
  bool outputs_empty = false;
  bool runs() const { return !folded && !dropped; }
};

// Whether the host skips an op-pack node's invoke after this prepare: a builtin op (a CUSTOM op may have
// effects of its own) with outputs, none of them a string (the kernel writes even an empty one's header),
// each with no elements. Some kernels' loops visit every position of an output that has no channels.
inline bool computes_nothing(const Node& n) {
  if (n.outputs.empty() || !n.info || n.info->op_code == BATON_OP_CUSTOM || n.writes_strings) return false;
  for (const Tensor* out : n.outputs) {
    if (!out || std::find(out->shape.begin(), out->shape.end(), 0) == out->shape.end()) return false;
  }
  return true;
}

struct Partition {
  int32_t id = 0;
  LoadedPlugin* plugin = nullptr;
  std::vector<Node*> nodes;
  std::vector<Tensor*> inputs;
  std::vector<Tensor*> outputs;
  void* state = nullptr;
  void* selection = nullptr;  // what the delegate's select_nodes returned for the round that made it
  // By position in `inputs`: no node outside the partition reads the tensor (ABI 1.8; see
  // partition_input_reusable, which also checks what can change after init).
  std::vector<bool> inputs_read_inside_only;
  // Scratch the delegate asked for in partition_prepare (ABI 1.6), placed in the arena for its step.
  bool preparing = false;
  size_t scratch_bytes = 0;
  uint8_t* scratch = nullptr;
};

// The graph a delegate with select_nodes sees (baton_graph): the interpreter's nodes and tensors.
struct GraphView {
  std::vector<Node>* nodes = nullptr;
  std::vector<Tensor>* tensors = nullptr;
  // While a delegate's select_nodes runs: the reasons it gives per node (graph_refuse_node), else null.
  std::unordered_map<int32_t, std::string>* refusals = nullptr;
};

}  // namespace baton

// The opaque handle types of the ABI are the runtime's own structs.
struct baton_error {
  std::string message;
};
