// Grouping a delegate's accepted nodes into partitions that cannot form a cycle.
//
// The graph is seen as units: each node still on the host is a unit, and each partition an earlier
// delegate took is one opaque unit. Units are visited in epochs, as TFLite does: an epoch takes every
// unit of one kind (accepted by this delegate, or not) whose producers are all done, repeatedly, until
// no more of that kind is ready; then the other kind gets an epoch. Each epoch of accepted units becomes
// one partition. A partition depends only on earlier epochs and feeds only later ones, so no partition
// both feeds and waits on another. Execution order is epoch order, then node order within an epoch.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace baton {

struct PartitionGraph {
  // producers[n]: the nodes whose outputs node n reads (each earlier in execution order).
  std::vector<std::vector<int>> producers;
  // owner[n]: -1 for a node still on the host, else the id of the earlier partition that holds it.
  std::vector<int> owner;
};

struct PartitionLimits {
  size_t min_nodes = 1;       // partitions with fewer nodes are given back
  size_t max_partitions = 0;  // 0: no limit; else the largest ones are kept (ties: earlier first)
};

struct GroupingResult {
  std::vector<std::vector<int>> partitions;  // node lists, in execution order
  // Nodes accepted but given back because of a limit, with the reason.
  std::vector<std::pair<int, std::string>> dropped;
};

// `accepted[n]` is true for host nodes the delegate said yes to.
GroupingResult group_partitions(const PartitionGraph& graph, const std::vector<bool>& accepted,
                                const PartitionLimits& limits);

// One step of execution: a host node, or a whole partition.
struct Step {
  int node = -1;       // host node, or -1
  int partition = -1;  // partition id, or -1
};

// A topological order of the units (host nodes and partitions), smallest first node first among the
// ready ones. Fails (returns empty) only if the units form a cycle, which grouping never produces.
std::vector<Step> execution_order(const PartitionGraph& graph);

}  // namespace baton
