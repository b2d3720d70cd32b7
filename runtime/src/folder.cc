// Fold: what the model computes before any input arrives is done once, at load, so it costs nothing per
// run. Three passes over the subgraph, before and after resolve:
//   drop_dead_nodes  nodes whose outputs nothing reads (nor a subgraph output) go first: a delegate given
//                      such a node may have nowhere to put its output;
//   densify_sparse_constants  DENSIFY of a sparse constant is a change of storage format, done here, no kernel;
//   fold_constants     (after resolve) a builtin node whose inputs are all constant runs once on its op
//                      pack; its outputs become constants.
// Which nodes are dead and which foldable is decided from the model alone (folder.h), here too.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "baton/string_tensor.hpp"
#include "baton/tflite_ops.h"
#include "folder.h"
#include "plugin_call.h"
#include "sparse.h"
#include "subgraph.h"

namespace baton {

std::vector<bool> foldable_nodes(const SubgraphInfo& g) {
  std::vector<bool> constant(g.tensors.size(), false), output(g.tensors.size(), false);
  for (const TensorInfo& t : g.tensors) constant[t.index] = t.is_constant;
  for (int32_t t : g.outputs) output[t] = true;
  std::vector<bool> foldable(g.nodes.size(), false);
  for (const NodeInfo& n : g.nodes) {
    if (n.op_code == BATON_OP_CUSTOM || is_runtime_op(n.op_code) || is_random_op(n.op_code)) continue;
    bool any = false, all = true;
    for (int32_t t : n.inputs) {
      if (t < 0) continue;
      any = true;
      all = all && constant[t];
    }
    for (int32_t t : n.outputs) all = all && !output[t] && !g.tensors[t].is_variable;
    if (!any || !all) continue;
    foldable[n.index] = true;
    for (int32_t t : n.outputs) constant[t] = true;
  }
  return foldable;
}

std::vector<bool> dead_nodes(const SubgraphInfo& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<bool> keep(g.nodes.size(), false);
  for (const NodeInfo& n : g.nodes) {
    bool touches_variable = false;
    for (int32_t t : n.inputs) touches_variable = touches_variable || (t >= 0 && g.tensors[t].is_variable);
    for (int32_t t : n.outputs) touches_variable = touches_variable || g.tensors[t].is_variable;
    // A control-flow node's subgraphs may assign variables: kept like custom ops.
    keep[n.index] = n.op_code == BATON_OP_CUSTOM || is_runtime_op(n.op_code) || n.outputs.empty() || touches_variable;
  }
  // Readers per tensor among the live nodes; a node dies when all of its outputs have none, which can
  // take the last reader away from its producers, so repeat until nothing changes.
  std::vector<int> readers(g.tensors.size(), 0);
  for (const NodeInfo& n : g.nodes) {
    for (int32_t t : n.inputs) {
      if (t >= 0) ++readers[t];
    }
  }
  for (int32_t t : g.outputs) ++readers[t];
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
      const NodeInfo& n = *it;
      if (dead[n.index] || keep[n.index]) continue;
      bool read = false;
      for (int32_t t : n.outputs) read = read || readers[t] > 0;
      if (read) continue;
      dead[n.index] = true;
      changed = true;
      for (int32_t t : n.inputs) {
        if (t >= 0) --readers[t];
      }
    }
  }
  return dead;
}

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

}  // namespace

uint8_t* Subgraph::own_constant(size_t bytes) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64));
  if (!p) return nullptr;
  owned_constants_.emplace_back(p, &std::free);
  return p;
}

void Subgraph::drop_dead_nodes() {
  const std::vector<bool> dead = dead_nodes(*graph_);
  for (Node& node : nodes_) {
    if (!dead[node.info->index]) continue;
    node.dropped = true;
    ++dropped_nodes_;
  }
}

Status Subgraph::densify_sparse_constants() {
  for (Node& node : nodes_) {
    const NodeInfo& info = *node.info;
    if (node.dropped || info.op_code != BATON_OP_DENSIFY || node.inputs.size() != 1 || node.outputs.size() != 1 ||
        !node.inputs[0] || !node.inputs[0]->is_constant || !node.inputs[0]->info->sparsity) {
      continue;
    }
    std::vector<uint8_t> dense;
    if (Status s = densify(*node.inputs[0]->info, dense); !s) {
      return Status::error(source() + ": " + node_label(node) + ": " + s.message());
    }
    Tensor& out = *node.outputs[0];
    if (out.type != node.inputs[0]->type || out.bytes != dense.size()) {
      return Status::error(source() + ": " + node_label(node) + ": output tensor " + std::to_string(out.index) +
                           " does not match the densified input's type and shape");
    }
    uint8_t* buffer = own_constant(dense.size());
    if (!buffer) return Status::error(source() + ": out of memory densifying " + node_label(node));
    std::memcpy(buffer, dense.data(), dense.size());
    out.is_constant = true;
    out.constant = buffer;
    node.folded = true;
    ++folded_nodes_;
    folded_bytes_ += dense.size();
  }
  return Status::ok();
}

Status Subgraph::fold_constants() {
  foldable_ = foldable_nodes(*graph_);
  for (Node& node : nodes_) {
    if (node.kernel && !node.dropped && !node.folded) {
      if (Status s = fold(node); !s) return s;
    }
  }
  return Status::ok();
}

// A builtin node whose inputs are all constant runs once now; its outputs become constants. Custom ops
// are left alone: they may keep state or read something other than their inputs.
Status Subgraph::fold(Node& node) {
  if (!foldable_[node.info->index]) return Status::ok();
  // Inputs may still be non-constant where an earlier foldable node could not be folded.
  for (const Tensor* t : node.inputs) {
    if (t && !t->is_constant) return Status::ok();
  }
  baton_error error;
  baton_status st = BATON_OK;
  for (Tensor* out : node.outputs) out->shape_writable = true;
  state_.journal->enter(node.plugin->name, "constant folding");
  st = init_and_prepare(node, error);
  for (Tensor* out : node.outputs) out->shape_writable = false;
  if (st == BATON_OK) {
    for (Tensor* out : node.outputs) {
      if (out->type == BATON_TYPE_STRING && out->bytes < strings::packed_size_of_empty(element_count(*out))) {
        error.message = "no byte size set for string output tensor " + std::to_string(out->index);
        st = BATON_ERROR;
      }
    }
  }
  if (st == BATON_OK) {
    for (Tensor* out : node.outputs) {
      out->data = own_constant(out->bytes);
      if (!out->data) return Status::error(source() + ": out of memory folding " + node_label(node));
    }
    st = guarded_call(*node.plugin, error,
                      [&] { return node.kernel->invoke(node.plugin->state, node.state, handle(node), &error); });
    if (st == BATON_OK && node.writes_strings) {
      if (Status s = check_string_outputs(node); !s) {
        error.message = s.message();
        st = BATON_ERROR;
      }
    }
  }
  if (st != BATON_OK) {
    // Not folded: the node stays in the graph, where prepare (or a delegate) deals with it and reports
    // the same problem with its context.
    release_kernel(node);
    for (Tensor* out : node.outputs) {
      out->data = nullptr;
      out->shape = out->info->shape;
      reset_byte_size(*out);
    }
    state_.env->log()(BATON_LOG_DEBUG, node_label(node) + " not folded: " + error.message);
    return Status::ok();
  }
  for (Tensor* out : node.outputs) {
    out->is_constant = true;
    out->constant = out->data;
    out->data = nullptr;
    folded_bytes_ += out->bytes;
  }
  release_kernel(node);
  node.folded = true;
  ++folded_nodes_;
  return Status::ok();
}

}  // namespace baton
