// The fallback policy, in one place. A plugin that fails is never the end of a model while another can
// run its nodes:
//  - a delegate that fails to initialise or prepare a partition, or fails its first run, loses it: its
//    nodes are excluded from it and the graph is partitioned again (the next delegate, else op packs);
//  - an op pack that fails to prepare a node, or fails its first run, hands the node to the next op pack
//    that declares the op and version;
//  - a failed first run is repeated from the same inputs, once the plan changed, unless the model has
//    state (variables, random ops): its state moved, so the failure is the run's;
//  - a plugin isolated in a process of its own that fails a later run (its process died or hung, or was
//    lost with an earlier death) is given up like a first run's: isolation is there so that a crash costs
//    a fallback, never the request. An isolated delegate that fails a run loses all its partitions at once.
// Every fallback is logged as a warning and recorded (fallbacks()), for `baton plan` and the tests.
#include <algorithm>

#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

Status Subgraph::prepare_with_fallback() {
  struct LeaveJournal {
    CrashJournal& journal;
    ~LeaveJournal() { journal.leave(); }  // prepare is over, failed or not: nothing died
  } leave{*state_.journal};
  for (;;) {
    Partition* failed = nullptr;
    std::string reason;
    Status s = prepare(&failed, &reason);
    if (s) return s;
    if (!failed) return s;
    if (Status r = give_up_partition(*failed, "prepare", reason); !r) return r;
  }
}

bool Subgraph::may_rerun_first_invoke() const { return !invoked_ && !state_.stateful; }

bool Subgraph::may_rerun_after(const LoadedPlugin& plugin) const {
  return may_rerun_first_invoke() || (!state_.stateful && plugin.isolated);
}

Status Subgraph::give_up_partition(Partition& p, const std::string& stage, const std::string& reason) {
  if (p.plugin->isolated && stage == "invoke") {
    const LoadedPlugin* plugin = p.plugin;
    for (const auto& other : plan_.partitions) {
      if (other->plugin != plugin) continue;
      lose_partition(*other->plugin, other->id, other->nodes, stage,
                     other.get() == &p ? reason : "its process failed in partition " + std::to_string(p.id));
    }
  } else {
    lose_partition(*p.plugin, p.id, p.nodes, stage, reason);
  }
  if (Status s = partition(); !s) return s;
  return check_runnable();
}

void Subgraph::lose_partition(LoadedPlugin& plugin, int32_t id, const std::vector<Node*>& nodes, const std::string& stage,
                              const std::string& reason) {
  Fallback f{plugin.name, id, stage, reason, {}, index_};
  for (Node* n : nodes) {
    f.nodes.push_back(n->info->index);
    excluded_[n->info->index].push_back(&plugin);
  }
  state_.env->log()(BATON_LOG_WARNING, source() + ": delegate " + plugin.name + " lost partition " +
                                     std::to_string(id) + " (" + std::to_string(nodes.size()) + " nodes) at " +
                                     stage + ": " + reason + "; its nodes go to the next delegate or op packs");
  fallbacks_.push_back(std::move(f));
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
