// Prepare: every step in execution order, so shapes propagate. A delegate that fails to prepare a
// partition is reported (the fallback policy partitions again, fallback.cc); an op pack that fails a node
// hands it to the next op pack that declares it (fallback.cc's next_op_pack). Every node that cannot run
// is named in one error. Memory is planned after it (memory_plan.cc), by the caller.
#include <cstring>

#include "baton/string_tensor.hpp"
#include "plugin_call.h"
#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

PassOutcome Subgraph::prepare_steps() {
  for (Tensor& t : tensors_) {
    if (t.is_constant) continue;
    if (t.type == BATON_TYPE_STRING) {
      // Its contents set its size: always dynamic, never in the arena. A model input keeps the value
      // set_string_input gave it.
      t.dynamic = true;
      t.data = t.is_model_input && t.bytes ? t.heap.get() : nullptr;
      continue;
    }
    if (t.is_model_input && t.data) t.planned = t.data;
    t.data = nullptr;  // memory is planned after every step is prepared
    t.dynamic = false;
  }
  auto dynamic_input = [](const std::vector<Tensor*>& inputs) -> const Tensor* {
    for (const Tensor* t : inputs) {
      if (t && t->dynamic) return t;
    }
    return nullptr;
  };
  std::vector<std::string> problems;  // nodes without a kernel, nodes no op pack could prepare
  // The crash journal records every prepare of the entry subgraph, and of a subgraph that control flow
  // runs until it has run once: a loop body prepared again for the shapes of each iteration would pay a
  // file written and removed per iteration (about 100 us, against 5 us for the rest of the iteration).
  const bool journaled = index_ == state_.entry || !invoked_;
  for (const ExecutionStep& step : plan_.steps) {
    baton_error error;
    baton_status st = BATON_OK;
    if (journaled && (step.partition || step.node->plugin)) {
      state_.journal->enter(step.partition ? step.partition->plugin->name : step.node->plugin->name, "prepare");
    }
    if (step.partition) {
      Partition& p = *step.partition;
      if (const Tensor* t = dynamic_input(p.inputs)) {
        // A delegate plans its memory and shapes once: data-dependent shapes stay on the host.
        return PassOutcome::failed(&p, nullptr, "input tensor " + std::to_string(t->index) +
                                                    " gets its shape only at invoke (it depends on data)");
      }
      for (Tensor* out : p.outputs) out->shape_writable = true;
      p.scratch_bytes = 0;
      p.scratch = nullptr;
      p.preparing = true;
      if (p.plugin->delegate.partition_prepare) {
        st = guarded_call(*p.plugin, error, [&] {
          return p.plugin->delegate.partition_prepare(p.plugin->state, p.state,
                                                      reinterpret_cast<const baton_partition*>(&p), &error);
        });
      }
      p.preparing = false;
      for (Tensor* out : p.outputs) out->shape_writable = false;
      if (st != BATON_OK) return PassOutcome::failed(&p, nullptr, error.message.empty() ? "no reason given" : error.message);
      continue;
    }
    Node& node = *step.node;
    node.deferred = false;
    if (node.runtime != RuntimeOp::none) {
      if ((node.reads_strings || node.writes_strings) && !is_hashtable_op(node.runtime)) {
        problems.push_back(node_label(node) + ": string tensors do not cross into subgraphs or variables yet");
        continue;
      }
      // Control flow over values whose shapes come at invoke is deferred there (runtime_nodes.cc).
      if (Status s = prepare_runtime_node(node); !s) problems.push_back(node_label(node) + ": " + s.message());
      continue;
    }
    if (!node.kernel) {
      problems.push_back(node_label(node) + ": " + unrunnable_reason(node));
      continue;
    }
    if (dynamic_input(node.inputs)) {
      // Prepared at every invoke, once its inputs have their shapes and values (executor.cc).
      node.deferred = true;
      for (Tensor* out : node.outputs) out->dynamic = true;
      continue;
    }
    std::string failures;
    for (;;) {
      for (Tensor* out : node.outputs) out->shape_writable = true;
      node.kernel_scratch_bytes = 0;
      node.kernel_scratch = nullptr;
      node.planning = true;
      st = init_and_prepare(node, error);
      node.planning = false;
      for (Tensor* out : node.outputs) out->shape_writable = false;
      if (st == BATON_OK) {
        // The kernel needs values to know an output's shape: it runs its prepare again at invoke.
        for (const Tensor* out : node.outputs) node.deferred = node.deferred || out->dynamic;
        for (Tensor* out : node.outputs) out->dynamic = out->dynamic || node.deferred;
        node.outputs_empty = !node.deferred && computes_nothing(node);
        break;
      }
      // The next op pack that declares the op and version gets the node; the failure is recorded.
      const std::string why = error.message.empty() ? "no reason given" : error.message;
      failures += "; " + node.plugin->name + ": " + why;
      for (Tensor* out : node.outputs) {
        out->shape = out->info->shape;
        reset_byte_size(*out);
      }
      LoadedPlugin* next = next_op_pack(node);
      if (!next) {
        // Noted, and prepare goes on (with the model's shapes for this node's outputs), so that the
        // error names every node that cannot run, not the first one.
        problems.push_back(node_label(node) + ": prepare failed" + failures);
        break;
      }
      hand_to_op_pack(node, *next, "prepare", why);
      error.message.clear();
    }
  }
  if (!problems.empty()) {
    std::string list;
    for (const std::string& p : problems) list += "\n  " + p;
    return PassOutcome::error(Status::error(source() + ": " + std::to_string(problems.size()) + " node(s) cannot run:" + list));
  }
  return PassOutcome::done();
}

Status Subgraph::resize_input(size_t i, const std::vector<int32_t>& shape) {
  if (i >= inputs_.size()) {
    return Status::error("input " + std::to_string(i) + " does not exist (the model has " +
                         std::to_string(inputs_.size()) + " inputs)");
  }
  Tensor& t = *inputs_[i];
  size_t bytes = 0;
  if (!checked_byte_size(shape, t.type, &bytes)) {
    return Status::error("input " + std::to_string(i) + " \"" + t.info->name + "\": shape " + shape_text(shape) +
                         " has a negative dimension or overflows");
  }
  if (shape == t.shape) return Status::ok();
  t.shape = shape;
  t.bytes = t.type == BATON_TYPE_STRING ? 0 : bytes;  // a string input's value goes with its old shape
  if (t.type == BATON_TYPE_STRING) t.data = nullptr;
  needs_prepare_ = true;
  return Status::ok();
}

Status Subgraph::set_string_input(size_t i, const void* data, size_t size) {
  Tensor& t = *inputs_.at(i);
  int64_t count = 1;
  for (int32_t d : t.shape) count *= d;
  const std::string why = strings::check_packed(data, size, count);
  if (!why.empty()) {
    return Status::error("input " + std::to_string(i) + " \"" + t.info->name + "\" of shape " + shape_text(t.shape) +
                         ": not a string buffer for it: " + why);
  }
  if (Status s = grow_heap(t, size); !s) return Status::error("input " + std::to_string(i) + ": " + s.message());
  std::memcpy(t.data, data, size);
  return Status::ok();
}

}  // namespace baton
