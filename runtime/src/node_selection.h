// Graph-level node selection (ABI 1.2): a delegate with `select_nodes` sees the whole graph and says
// which of the free nodes it takes, instead of answering check_node node by node. TFLite's delegates
// choose this way; plugins/tflite-delegates wraps them through it. The host still groups the selected
// nodes into partitions (partitioner.h), so the chain's invariants hold for these delegates too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph.h"

namespace baton {

class LoadedPlugin;

struct NodeSelection {
  std::vector<bool> selected;  // per entry of free_nodes
  void* state = nullptr;       // the delegate's, until free_selection
  std::string refusal;         // the reason for free nodes it did not take (and all of them on failure)
  std::vector<std::string> reasons;  // per entry of free_nodes when the delegate gave its own (else empty)
  bool failed = false;
};

// Asks `delegate` (which has select_nodes) which of `free_nodes` (node indices, execution order) it
// takes. A failure or an exception leaves every node free, with the reason.
NodeSelection select_nodes(LoadedPlugin& delegate, const GraphView& graph, const std::vector<int32_t>& free_nodes);

// Releases a selection state once the partitions made from it are freed.
void free_selection(LoadedPlugin& delegate, void* state);

}  // namespace baton
