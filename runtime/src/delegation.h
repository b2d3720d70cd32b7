// Partition: the stage that offers a subgraph's running nodes to the delegate chain, first come first
// served, and returns what it decided as a value: the partitions the delegates took and initialised, the
// owner of every node, each refusal with its reason, the execution order, and the partitions whose init
// failed. partitioner.h groups accepted nodes so that no partition both feeds and waits on another;
// node_selection.h asks a delegate that chooses its own nodes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "crash_journal.h"
#include "graph.h"
#include "log.h"
#include "plugin_registry.h"
#include "status.h"

namespace baton {

// Why a plugin did not take a node. The text is shared: a delegate gives most nodes of a model the same
// reason, often a long one, and a plan keeps one per node and delegate.
struct Refusal {
  Refusal(std::string plugin_name, std::shared_ptr<const std::string> text)
      : plugin(std::move(plugin_name)), reason_(std::move(text)) {}
  const std::string& reason() const { return *reason_; }

  std::string plugin;

 private:
  std::shared_ptr<const std::string> reason_;
};

// One step of execution: a node the host runs, or a delegate's whole partition.
struct ExecutionStep {
  Node* node = nullptr;
  Partition* partition = nullptr;
};

// A partition whose init failed: its nodes go to the next delegate or the op packs.
struct LostPartition {
  LoadedPlugin* plugin = nullptr;
  int32_t id = 0;
  std::vector<Node*> nodes;
  std::string reason;
};

struct PartitionPlan {
  std::vector<std::unique_ptr<Partition>> partitions;  // initialised, by id
  std::vector<int> owner;                              // per node: its partition's id, or -1
  std::vector<std::vector<Refusal>> refusals;          // per node: every delegate that did not take it, and why
  std::vector<ExecutionStep> steps;                    // in execution order
  // The states of delegates with select_nodes for this plan (node_selection.h), freed with it.
  std::vector<std::pair<LoadedPlugin*, void*>> selections;
  std::vector<LostPartition> lost;
};

// What partitioning reads. The nodes and tensors are the subgraph's: partitions point into them, and the
// delegates see them through the host table while they choose.
struct PartitionInputs {
  std::vector<Node>& nodes;
  std::vector<Tensor>& tensors;
  const GraphView& view;  // what delegates with select_nodes see
  const std::vector<LoadedPlugin*>& chain;
  const std::map<std::string, std::string>& quarantined;  // delegates the crash journal keeps away
  // Per node: delegates that lost it earlier (see fallback.cc), which may not take it again.
  const std::vector<std::vector<const LoadedPlugin*>>& excluded;
  CrashJournal& journal;
  const LogSink& log;
  const std::string& source;  // the model, for messages
};

// An error only when the grouping gives no execution order (a cycle); the plan is then empty.
Expected<PartitionPlan> partition_graph(const PartitionInputs& in);
// Gives the delegates back what the plan holds (partition states, selection states); the plan is empty after.
void release_plan(PartitionPlan& plan);

}  // namespace baton
