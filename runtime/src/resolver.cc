// Resolve (resolver.h), and Subgraph's use of its answer. Also here: a kernel's init and prepare, and its
// release.
#include "resolver.h"

#include <algorithm>

#include "plugin_call.h"
#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

}  // namespace

std::vector<NodeKernel> resolve_kernels(std::span<const Node> nodes, std::span<LoadedPlugin* const> packs,
                                        const std::map<std::string, std::string>& quarantined) {
  std::vector<NodeKernel> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const NodeInfo& info = *node.info;
    NodeKernel& k = out[i];
    if (node.dropped || node.folded) continue;
    // A composite an op pack claims by name runs on its kernel; the others run their decomposition.
    RuntimeOp runtime = node.runtime;
    if (runtime == RuntimeOp::composite) {
      for (LoadedPlugin* pack : packs) {
        if (!quarantined.count(pack->name) && pack->find_op(info.op_code, claim_name(info), info.version)) {
          k.claims_composite = true;
          runtime = RuntimeOp::none;
          break;
        }
      }
    }
    if (runtime != RuntimeOp::none) continue;  // runtime_nodes.cc runs it
    for (LoadedPlugin* pack : packs) {
      if (quarantined.count(pack->name)) continue;
      if (const OpDecl* op = pack->find_op(info.op_code, claim_name(info), info.version)) {
        k.plugin = pack;
        k.kernel = &op->kernel;
        break;
      }
    }
    if (k.kernel) continue;
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
    k.unresolved = "no op pack supports " + what + " version " + std::to_string(info.version) +
                   (loaded.empty() ? " (no loaded op pack declares this op; " + std::to_string(packs.size()) +
                                         " op packs loaded)"
                                   : " (loaded: " + loaded + ")");
    for (const auto& [plugin, why] : quarantined) k.unresolved += "; " + plugin + " is quarantined";
  }
  return out;
}

Status Subgraph::resolve() {
  const std::vector<LoadedPlugin*> packs = state_.env->registry().op_packs();
  const std::vector<NodeKernel> kernels = resolve_kernels(nodes_, packs, state_.quarantined);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeKernel& k = kernels[i];
    if (k.claims_composite) nodes_[i].runtime = RuntimeOp::none;
    if (k.kernel) {
      if (Status s = hold_plugin(*k.plugin); !s) {
        unresolved_[i] = s.message();
        continue;
      }
      nodes_[i].plugin = k.plugin;
      nodes_[i].kernel = k.kernel;
    }
    if (!k.unresolved.empty()) unresolved_[i] = k.unresolved;
  }
  return Status::ok();
}

Status Subgraph::hold_plugin(LoadedPlugin& plugin) {
  if (std::find(held_plugins_.begin(), held_plugins_.end(), &plugin) != held_plugins_.end()) return Status::ok();
  if (Status s = plugin.acquire(); !s) return s;
  held_plugins_.push_back(&plugin);
  return Status::ok();
}

void Subgraph::let_go(LoadedPlugin& plugin) {
  auto it = std::find(held_plugins_.begin(), held_plugins_.end(), &plugin);
  if (it == held_plugins_.end()) return;
  held_plugins_.erase(it);
  plugin.release_use();
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
