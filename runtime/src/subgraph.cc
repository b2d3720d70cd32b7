// Build: the runtime's tensors and nodes over one subgraph of the loaded model.
#include "subgraph.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <cstring>

#include "baton/tflite_ops.h"
#include "plugin_call.h"
#include "plugin_registry.h"

namespace baton {

RuntimeOp runtime_op(int32_t op_code) {
  switch (op_code) {
    case BATON_OP_WHILE: return RuntimeOp::while_loop;
    case BATON_OP_IF: return RuntimeOp::if_else;
    case BATON_OP_STABLEHLO_CASE: return RuntimeOp::case_of;
    case BATON_OP_CALL_ONCE: return RuntimeOp::call_once;
    case BATON_OP_STABLEHLO_COMPOSITE: return RuntimeOp::composite;
    case BATON_OP_VAR_HANDLE: return RuntimeOp::var_handle;
    case BATON_OP_READ_VARIABLE: return RuntimeOp::read_variable;
    case BATON_OP_ASSIGN_VARIABLE: return RuntimeOp::assign_variable;
    case BATON_OP_HASHTABLE: return RuntimeOp::hashtable;
    case BATON_OP_HASHTABLE_FIND: return RuntimeOp::hashtable_find;
    case BATON_OP_HASHTABLE_IMPORT: return RuntimeOp::hashtable_import;
    case BATON_OP_HASHTABLE_SIZE: return RuntimeOp::hashtable_size;
    default: return RuntimeOp::none;
  }
}

int32_t RunState::variable_id(const std::string& container, const std::string& shared_name) {
  for (size_t i = 0; i < variables.size(); ++i) {
    if (variables[i].container == container && variables[i].shared_name == shared_name) return static_cast<int32_t>(i);
  }
  variables.push_back({container, shared_name, false, BATON_TYPE_FLOAT32, {}, {}});
  return static_cast<int32_t>(variables.size() - 1);
}

namespace {

// A resource tensor holds the int32 id of its variable.
size_t tensor_bytes(const std::vector<int32_t>& shape, baton_tensor_type type) {
  size_t bytes = 0;
  if (type == BATON_TYPE_RESOURCE) {
    checked_byte_size(shape, BATON_TYPE_INT32, &bytes);
  } else {
    checked_byte_size(shape, type, &bytes);
  }
  return bytes;
}

}  // namespace

Subgraph::Subgraph(RunState& state, int index)
    : state_(state), index_(index), graph_(&state.model->subgraphs.at(index)) {
  const SubgraphInfo& g = *graph_;
  tensors_.resize(g.tensors.size());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const TensorInfo& info = g.tensors[i];
    Tensor& t = tensors_[i];
    t.info = &info;
    t.index = static_cast<int32_t>(i);
    t.type = info.type;
    t.shape = info.shape;
    // A constant string tensor's size is its buffer's; another string tensor has none until it is set.
    t.bytes = t.type != BATON_TYPE_STRING ? tensor_bytes(t.shape, t.type) : info.is_constant ? info.data.size() : 0;
    t.is_constant = info.is_constant;
    t.constant = info.is_constant ? info.data.data() : nullptr;
    t.max_bytes = state.env ? state.env->limits().max_tensor_bytes : SIZE_MAX;
  }
  for (int32_t i : g.inputs) {
    tensors_[i].is_model_input = true;
    inputs_.push_back(&tensors_[i]);
    if (tensors_[i].type == BATON_TYPE_STRING && !tensors_[i].is_constant) string_inputs_.push_back(&tensors_[i]);
  }
  for (int32_t i : g.outputs) {
    tensors_[i].is_model_output = true;
    outputs_.push_back(&tensors_[i]);
  }
  nodes_.resize(g.nodes.size());
  unresolved_.assign(g.nodes.size(), "");
  plan_.refusals.assign(g.nodes.size(), {});
  plan_.owner.assign(g.nodes.size(), -1);
  excluded_.assign(g.nodes.size(), {});
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = nodes_[n];
    node.info = &g.nodes[n];
    node.runtime = runtime_op(node.info->op_code);
    for (int32_t t : node.info->inputs) node.inputs.push_back(t < 0 ? nullptr : &tensors_[t]);
    for (int32_t t : node.info->outputs) node.outputs.push_back(&tensors_[t]);
    for (int32_t t : node.info->intermediates) node.intermediates.push_back(&tensors_[t]);
    for (const Tensor* t : node.inputs) node.reads_strings = node.reads_strings || (t && t->type == BATON_TYPE_STRING);
    for (const Tensor* t : node.outputs) node.writes_strings = node.writes_strings || t->type == BATON_TYPE_STRING;
  }
}

Subgraph::~Subgraph() {
#if defined(__SANITIZE_ADDRESS__)
  if (arena_ && arena_bytes_ > 0) ASAN_UNPOISON_MEMORY_REGION(arena_.get(), arena_bytes_);
#endif
  free_partitions();
  for (Node& node : nodes_) {
    if (node.initialised && node.kernel && node.kernel->free) {
      guarded_release(*node.plugin, [&] { node.kernel->free(node.plugin->state, node.state); });
    }
  }
  for (LoadedPlugin* plugin : held_plugins_) plugin->release_use();
}

// The partition stage (delegation.h) over this subgraph's nodes; what it decided replaces the last plan,
// and the partitions whose init failed become fallbacks.
Status Subgraph::partition() {
  free_partitions();
  // The chain's delegates are held while they choose (a parked one is loaded again); those left without a
  // partition are let go, to be parked when the next model is made.
  std::vector<LoadedPlugin*> chain;
  for (LoadedPlugin* d : state_.env->delegate_chain()) {
    if (Status s = hold_plugin(*d); !s) {
      state_.env->log()(BATON_LOG_WARNING, source() + ": " + s.message() + "; the chain goes on without it");
      continue;
    }
    chain.push_back(d);
  }
  auto plan = partition_graph({nodes_, tensors_, graph_view_, chain, state_.quarantined, excluded_, *state_.journal,
                               state_.env->log(), source()});
  for (LoadedPlugin* d : chain) {
    bool used = false;
    if (plan) {
      for (const auto& p : plan.value().partitions) used = used || p->plugin == d;
    }
    if (!used) let_go(*d);
  }
  if (!plan) return plan.status();
  plan_ = std::move(plan.value());
  for (const LostPartition& lost : plan_.lost) lose_partition(*lost.plugin, lost.id, lost.nodes, "init", lost.reason);
  return Status::ok();
}

void Subgraph::free_partitions() { release_plan(plan_); }

// Why a node that has neither a kernel nor a partition cannot run: the resolver's reason and every
// delegate's refusal.
std::string Subgraph::unrunnable_reason(const Node& node) const {
  std::string why = unresolved_[node.info->index];
  for (const Refusal& r : plan_.refusals[node.info->index]) why += "; " + r.plugin + " refused: " + r.reason();
  return why;
}

// Strict mode: every node must go to a delegate. Nodes nobody can run are reported by prepare(), together
// with the nodes that fail to prepare, so one error lists everything before anything runs.
Status Subgraph::check_runnable() const {
  if (!state_.options.strict) return Status::ok();
  std::string missing;
  size_t count = 0;
  for (const Node& node : nodes_) {
    if (!node.runs() || node.runtime != RuntimeOp::none || plan_.owner[node.info->index] >= 0) continue;
    if (!node.kernel) return Status::ok();  // prepare() reports it with the others
    ++count;
    missing += "\n  " + node_label(node) + " would run on op pack " + node.plugin->name;
    for (const Refusal& r : plan_.refusals[node.info->index]) missing += "; " + r.plugin + " refused: " + r.reason();
  }
  if (count == 0) return Status::ok();
  return Status::error(source() + ": strict mode: " + std::to_string(count) +
                       " node(s) would fall back to op packs:" + missing);
}

std::string Subgraph::node_label(const Node& node) const {
  return (index_ == 0 ? "" : "subgraph " + std::to_string(index_) + " ") + "node " +
         std::to_string(node.info->index) + " (" + node_op_name(*node.info) + " v" +
         std::to_string(node.info->version) + ")";
}

std::vector<int> Subgraph::callees() const {
  std::vector<int> out;
  for (const Node& n : nodes_) {
    if (!n.runs()) continue;
    for (int32_t c : n.info->callees) {
      if (c >= 0 && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

void Subgraph::reset_state() {
  for (Tensor& t : tensors_) {
    if (t.info->is_variable && !t.is_constant) reset_variable(t);
  }
  for (Node& n : nodes_) n.called = false;
}

std::string Subgraph::step_op(size_t i) const {
  const ExecutionStep& s = plan_.steps.at(i);
  if (s.partition) return "partition " + std::to_string(s.partition->id);
  return node_op_name(*s.node->info);
}

std::string Subgraph::step_plugin(size_t i) const {
  const ExecutionStep& s = plan_.steps.at(i);
  if (s.partition) return s.partition->plugin->name;
  return s.node->plugin ? s.node->plugin->name : "runtime";
}

Placement Subgraph::placement(size_t node) const {
  const Node& n = nodes_.at(node);
  if (n.folded) return {"folded", n.plugin ? n.plugin->name : "runtime", -1};
  if (n.dropped) return {"dropped", "runtime", -1};
  if (plan_.owner[node] >= 0) {  // a composite a delegate took is the delegate's
    const Partition& p = *plan_.partitions[plan_.owner[node]];
    return {"delegate", p.plugin->name, p.id};
  }
  if (n.runtime != RuntimeOp::none) return {"runtime", "runtime", -1};
  return {"op-pack", n.plugin ? n.plugin->name : "", -1};
}

}  // namespace baton
