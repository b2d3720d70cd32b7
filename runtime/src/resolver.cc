// Resolve: each node that is still to run (not dropped, not densified, not the runtime's own) gets a
// kernel from the first op pack, in configured order, that declares its op and version; a node none
// declares keeps the reason, for check_runnable() to report if no delegate takes it either. Also here:
// a kernel's init and prepare, its release, and the op pack after a node's current one.
#include <algorithm>

#include "plugin_call.h"
#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

}  // namespace

Status Subgraph::resolve() {
  const std::vector<LoadedPlugin*> packs = state_.env->registry().op_packs();
  for (Node& node : nodes_) {
    const NodeInfo& info = *node.info;
    if (node.dropped || node.folded) continue;
    // A composite an op pack claims by name runs on its kernel; the others run their decomposition.
    if (node.runtime == RuntimeOp::composite) {
      for (LoadedPlugin* pack : packs) {
        if (!state_.quarantined.count(pack->name) && pack->find_op(info.op_code, claim_name(info), info.version)) {
          node.runtime = RuntimeOp::none;
          break;
        }
      }
    }
    if (node.runtime != RuntimeOp::none) continue;  // runtime_nodes.cc runs it
    for (LoadedPlugin* pack : packs) {
      if (state_.quarantined.count(pack->name)) continue;
      if (const OpDecl* op = pack->find_op(info.op_code, claim_name(info), info.version)) {
        node.plugin = pack;
        node.kernel = &op->kernel;
        break;
      }
    }
    if (node.kernel) continue;
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

}  // namespace baton
