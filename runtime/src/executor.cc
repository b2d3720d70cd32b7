// Invoke: the steps in order, each a node an op pack or the runtime runs or a delegate's partition. A step
// that fails is reported, not recovered here: the fallback policy (fallback.cc) decides whether the run is
// repeated without the plugin.
#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "baton/string_tensor.hpp"
#include "plugin_call.h"
#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

}  // namespace

// Memory of `bytes` for a tensor outside the arena (a dynamic tensor, a string input): kept from the last
// time unless it needs more.
Status Subgraph::grow_heap(Tensor& t, size_t bytes) {
  if (bytes > state_.env->limits().max_tensor_bytes) {
    return Status::error("tensor " + std::to_string(t.index) + " needs " + std::to_string(bytes) +
                         " bytes, over the tensor limit of " + std::to_string(state_.env->limits().max_tensor_bytes));
  }
  if (bytes > t.capacity || !t.heap) {
    t.heap.reset();
    t.capacity = 0;
    t.heap = state_.env->allocate(bytes);  // shared with a plugin's child process, as the arena is
    if (!t.heap) return Status::error("tensor " + std::to_string(t.index) + ": out of memory for " + std::to_string(bytes) + " bytes");
    t.capacity = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  }
  t.bytes = bytes;
  t.data = t.heap.get();
  return Status::ok();
}

// Memory for a dynamic tensor of `node`'s at its current shape (or, for a string, the byte size its
// kernel set), outside the arena.
Status Subgraph::give_dynamic_memory(const Node& node, Tensor& tensor) {
  if (tensor.type == BATON_TYPE_STRING && tensor.bytes < strings::packed_size_of_empty(element_count(tensor))) {
    return Status::error(source() + ": " + node_label(node) + " in " + (node.plugin ? node.plugin->name : "runtime") +
                         ": its prepare set no byte size (or one too small for " + std::to_string(element_count(tensor)) +
                         " strings) for its string output tensor " + std::to_string(tensor.index) +
                         "; a kernel sets it with tensor_set_byte_size (ABI 1.7)");
  }
  if (Status s = grow_heap(tensor, tensor.bytes); !s) {
    return Status::error(source() + ": " + node_label(node) + ": output " + s.message() + " at invoke");
  }
  return Status::ok();
}

// The string outputs `node` wrote are well formed: the next kernel reads their offsets as they are.
Status Subgraph::check_string_outputs(const Node& node) const {
  for (const Tensor* out : node.outputs) {
    if (out->type != BATON_TYPE_STRING) continue;
    const std::string why = strings::check_packed(out->is_constant ? out->constant : out->data, out->bytes,
                                                  element_count(*out));
    if (!why.empty()) {
      return Status::error(source() + ": " + node_label(node) + " in " + node.plugin->name +
                           " wrote a malformed string tensor " + std::to_string(out->index) + ": " + why);
    }
  }
  return Status::ok();
}

// A node whose output shapes depend on data is prepared here, with its inputs computed; its outputs get
// memory of their own, grown only when a larger shape needs it.
Status Subgraph::prepare_at_invoke(Node& node) {
  baton_error error;
  for (Tensor* out : node.outputs) {
    out->shape_writable = true;
    if (out->type == BATON_TYPE_STRING) out->bytes = 0;  // this prepare sets it from the values
  }
  const baton_status st = init_and_prepare(node, error);
  for (Tensor* out : node.outputs) out->shape_writable = false;
  if (st != BATON_OK) {
    return Status::error(source() + ": " + node_label(node) + " in " + node.plugin->name +
                         ": prepare at invoke failed: " + (error.message.empty() ? "no reason given" : error.message));
  }
  for (Tensor* out : node.outputs) {
    if (Status s = give_dynamic_memory(node, *out); !s) return s;
  }
  node.outputs_empty = computes_nothing(node);
  return Status::ok();
}

Status Subgraph::check_string_inputs() const {
  for (const Tensor* t : string_inputs_) {
    if (!t->data) {
      return Status::error(source() + ": input tensor " + std::to_string(t->index) + " \"" + t->info->name +
                           "\" is a string tensor without a value: set it (TFLite's packed string buffer) before invoke");
    }
  }
  return Status::ok();
}

PassOutcome Subgraph::run_steps() {
  if (step_seconds_.size() != plan_.steps.size()) step_seconds_.assign(plan_.steps.size(), 0.0);
  for (size_t k = 0; k < plan_.steps.size(); ++k) {
    if (state_.cancel_requested.load(std::memory_order_relaxed)) return PassOutcome::error(Status::error("invoke cancelled"));
    const ExecutionStep& step = plan_.steps[k];
    const auto started = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    if (!step.partition && step.node->runtime != RuntimeOp::none) {
      if (Status s = invoke_runtime_node(*step.node); !s) return PassOutcome::error(std::move(s));
      if (profiling_) {
        step_seconds_[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      }
      continue;
    }
    baton_error error;
    baton_status st;
    if (!invoked_) state_.journal->enter(step_plugin(k), "first invoke");
    if (!step.partition && step.node->deferred) {
      if (Status s = prepare_at_invoke(*step.node); !s) return PassOutcome::error(std::move(s));
    }
    if (!step.partition && step.node->outputs_empty) continue;  // nothing to compute
    if (step.partition) {
      Partition& p = *step.partition;
      st = guarded_call(*p.plugin, error, [&] {
        return p.plugin->delegate.partition_invoke(p.plugin->state, p.state,
                                                   reinterpret_cast<const baton_partition*>(&p), &error);
      });
    } else {
      Node& n = *step.node;
      st = guarded_call(*n.plugin, error,
                        [&] { return n.kernel->invoke(n.plugin->state, n.state, handle(n), &error); });
    }
    if (profiling_) {
      step_seconds_[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
    if (st == BATON_OK) {
      if (!step.partition && step.node->writes_strings) {
        if (Status s = check_string_outputs(*step.node); !s) return PassOutcome::error(std::move(s));
      }
      continue;
    }
    return PassOutcome::failed(step.partition, step.partition ? nullptr : step.node,
                               error.message.empty() ? "no reason given" : error.message);
  }
  return PassOutcome::done();
}

}  // namespace baton
