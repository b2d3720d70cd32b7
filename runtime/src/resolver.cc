// Resolve: each node gets a kernel from the first op pack (in configured order) that declares its op and
// version; a node whose inputs are all constant is folded: run once here, its outputs become constants.
#include <algorithm>
#include <cstring>

#include "baton/string_tensor.hpp"
#include "plugin_call.h"
#include "plugin_registry.h"
#include "sparse.h"
#include "subgraph.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

}  // namespace

uint8_t* Subgraph::own_constant(size_t bytes) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64));
  if (!p) return nullptr;
  owned_constants_.emplace_back(p, &std::free);
  return p;
}

namespace {
constexpr int32_t kDensify = 124;  // TFLite's BuiltinOperator DENSIFY
}  // namespace

Status Subgraph::resolve() {
  const std::vector<LoadedPlugin*> packs = state_.env->registry().op_packs();
  foldable_ = foldable_nodes(*graph_);
  // Dead nodes go first: a delegate given a node whose output nothing reads may have nowhere to put it.
  const std::vector<bool> dead = dead_nodes(*graph_);
  for (Node& node : nodes_) {
    const NodeInfo& info = *node.info;
    if (dead[info.index]) {
      node.dropped = true;
      ++dropped_nodes_;
      continue;
    }
    // A composite an op pack claims by name runs on its kernel; the others run their decomposition.
    if (node.runtime == RuntimeOp::composite) {
      for (LoadedPlugin* pack : packs) {
        if (!state_.quarantined.count(pack->name) && pack->find_op(info.op_code, claim_name(info), info.version)) {
          node.runtime = RuntimeOp::none;
          break;
        }
      }
    }
    if (node.runtime != RuntimeOp::none) continue;  // control_flow.cc runs it
    // DENSIFY of a sparse constant is a change of storage format, done here once.
    if (info.op_code == kDensify && node.inputs.size() == 1 && node.outputs.size() == 1 && node.inputs[0] &&
        node.inputs[0]->is_constant && node.inputs[0]->info->sparsity) {
      std::vector<uint8_t> dense;
      if (Status s = densify(*node.inputs[0]->info, dense); !s) {
        return Status::error(source() + ": " + node_label(node) + ": " + s.message());
      }
      Tensor& out = *node.outputs[0];
      if (out.type != node.inputs[0]->type || out.bytes != dense.size()) {
        return Status::error(source() + ": " + node_label(node) + ": output tensor " +
                             std::to_string(out.index) + " does not match the densified input's type and shape");
      }
      uint8_t* buffer = own_constant(dense.size());
      if (!buffer) return Status::error(source() + ": out of memory densifying " + node_label(node));
      std::memcpy(buffer, dense.data(), dense.size());
      out.is_constant = true;
      out.constant = buffer;
      node.folded = true;
      ++folded_nodes_;
      folded_bytes_ += dense.size();
      continue;
    }
    for (LoadedPlugin* pack : packs) {
      if (state_.quarantined.count(pack->name)) continue;
      if (const OpDecl* op = pack->find_op(info.op_code, claim_name(info), info.version)) {
        node.plugin = pack;
        node.kernel = &op->kernel;
        break;
      }
    }
    if (node.kernel) {
      if (Status s = fold(node); !s) return s;
      continue;
    }
    // Name the op, the version the model needs and every range that is loaded for it. A delegate may
    // still take the node; check_runnable() reports it if none does.
    std::string loaded;
    for (LoadedPlugin* pack : packs) {
      for (const OpDecl& op : pack->ops) {
        if (op.code == info.op_code && op.custom_name == claim_name(info)) {
          loaded += (loaded.empty() ? "" : ", ") + pack->name + " has " + op.describe();
        }
      }
    }
    const std::string what = info.op_code == BATON_OP_CUSTOM ? "custom op '" + info.custom_name + "'"
                                                            : "op " + op_name(info.op_code);
    unresolved_[info.index] = "no op pack supports " + what + " version " + std::to_string(info.version) +
                              (loaded.empty() ? " (no loaded op pack declares this op; " +
                                                    std::to_string(packs.size()) + " op packs loaded)"
                                              : " (loaded: " + loaded + ")");
    for (const auto& [plugin, why] : state_.quarantined) unresolved_[info.index] += "; " + plugin + " is quarantined";
  }
  return Status::ok();
}

// The op pack after the node's current one, in resolution order, that declares the node's op and version.
LoadedPlugin* Subgraph::next_op_pack(const Node& node) const {
  const std::vector<LoadedPlugin*> packs = state_.env->registry().op_packs();
  auto it = std::find(packs.begin(), packs.end(), node.plugin);
  for (it = it == packs.end() ? it : it + 1; it != packs.end(); ++it) {
    if (state_.quarantined.count((*it)->name)) continue;
    if ((*it)->find_op(node.info->op_code, claim_name(*node.info), node.info->version)) return *it;
  }
  return nullptr;
}

baton_status Subgraph::init_and_prepare(Node& node, baton_error& error) {
  return guarded_call(*node.plugin, error, [&] {
    baton_status st = BATON_OK;
    if (!node.initialised) {
      node.initialised = true;
      if (node.kernel->init) st = node.kernel->init(node.plugin->state, handle(node), &node.state, &error);
    }
    return st == BATON_OK ? node.kernel->prepare(node.plugin->state, node.state, handle(node), &error) : st;
  });
}

void Subgraph::release_kernel(Node& node) {
  if (node.initialised && node.kernel->free) {
    guarded_release(*node.plugin, [&] { node.kernel->free(node.plugin->state, node.state); });
  }
  node.initialised = false;
  node.state = nullptr;
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

void Subgraph::hand_to_op_pack(Node& node, LoadedPlugin& next, const std::string& stage, const std::string& why) {
  state_.env->log()(BATON_LOG_WARNING, source() + ": " + node_label(node) + ": op pack " + node.plugin->name +
                                           (stage == "invoke" ? " failed its first run (" : " failed to prepare it (") +
                                           why + "); " + next.name + " takes it");
  fallbacks_.push_back({node.plugin->name, -1, stage, why, {node.info->index}, index_});
  release_kernel(node);
  node.plugin = &next;
  node.kernel = &next.find_op(node.info->op_code, claim_name(*node.info), node.info->version)->kernel;
}

}  // namespace baton
