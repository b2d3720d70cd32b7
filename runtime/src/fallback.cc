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
// The drivers of prepare and invoke live here too, since they are this policy: the stages themselves
// (preparer.cc, executor.cc) make one pass over the steps and report what failed.
#include <algorithm>

#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

namespace {

// The crash journal's entry for a stage is closed when the stage returns, failed or not: nothing died.
struct LeaveJournal {
  CrashJournal& journal;
  ~LeaveJournal() { journal.leave(); }
};

}  // namespace

// Prepare (preparer.cc) until no partition fails, then plan memory (memory_plan.cc).
Status Subgraph::prepare_with_fallback() {
  LeaveJournal leave{*state_.journal};
  for (;;) {
    PassOutcome pass = prepare_steps();
    if (!pass.status) return pass.status;
    if (!pass.failure) break;
    if (Status r = give_up_partition(*pass.failure->partition, "prepare", pass.failure->reason); !r) return r;
  }
  if (Status s = place_tensors(); !s) return s;
  needs_prepare_ = false;
  return Status::ok();
}

// Run the steps (executor.cc). On the first run of a stateless model (or any run, for a plugin in a process
// of its own) a failing partition loses its nodes and a failing op pack hands its node on; the graph is
// prepared again and the run repeated from the same inputs (plan_memory keeps them intact). A model with
// state is not repeated: its state moved.
Status Subgraph::invoke() {
  if (needs_prepare_) {
    if (Status s = prepare_with_fallback(); !s) return s;
  }
  if (Status s = check_string_inputs(); !s) return s;
  const bool rerun_allowed = may_rerun_first_invoke();
  LeaveJournal leave{*state_.journal};
  for (;;) {
    PassOutcome run = run_steps();
    if (!run.status) return run.status;
    if (!run.failure) break;
    const StepFailure& f = *run.failure;
    if (f.partition) {
      Partition& p = *f.partition;
      if (!rerun_allowed && !may_rerun_after(*p.plugin)) {
        return Status::error(source() + ": " + p.plugin->name + " partition " + std::to_string(p.id) +
                             ": invoke failed: " + f.reason);
      }
      if (Status s = give_up_partition(p, "invoke", f.reason); !s) return s;
    } else {
      Node& node = *f.node;
      LoadedPlugin* next = rerun_allowed || may_rerun_after(*node.plugin) ? next_op_pack(node) : nullptr;
      if (!next) {
        return Status::error(source() + ": " + node_label(node) + " in " + node.plugin->name + ": invoke failed: " + f.reason);
      }
      hand_to_op_pack(node, *next, "invoke", f.reason);
    }
    if (Status s = prepare_with_fallback(); !s) return s;
    step_seconds_.assign(plan_.steps.size(), 0.0);
  }
  invoked_ = true;
  return Status::ok();
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

LoadedPlugin* Subgraph::next_op_pack(const Node& node) {
  const std::vector<LoadedPlugin*> packs = state_.env->registry().op_packs();
  auto it = std::find(packs.begin(), packs.end(), node.plugin);
  for (it = it == packs.end() ? it : it + 1; it != packs.end(); ++it) {
    if (state_.quarantined.count((*it)->name)) continue;
    if (!(*it)->find_op(node.info->op_code, claim_name(*node.info), node.info->version)) continue;
    if (Status s = hold_plugin(**it); !s) {
      state_.env->log()(BATON_LOG_WARNING, source() + ": " + node_label(node) + ": " + s.message());
      continue;
    }
    return *it;
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
