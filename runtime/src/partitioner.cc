#include "partitioner.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

namespace baton {

namespace {

// Units: host nodes one each, earlier partitions one each. unit_of[n] maps a node to its unit.
struct Units {
  std::vector<int> unit_of;
  std::vector<std::vector<int>> nodes;  // per unit, in node order
  std::vector<std::vector<int>> deps;     // per unit, the units it reads from
  std::vector<std::vector<int>> readers;  // per unit, the units that read from it, in unit order
  std::vector<int> partition;             // per unit, the earlier partition id or -1
};

Units build_units(const PartitionGraph& g) {
  Units u;
  const int n = static_cast<int>(g.owner.size());
  u.unit_of.assign(n, -1);
  std::map<int, int> unit_of_partition;
  for (int i = 0; i < n; ++i) {
    if (g.owner[i] < 0) {
      u.unit_of[i] = static_cast<int>(u.nodes.size());
      u.nodes.push_back({i});
      u.partition.push_back(-1);
    } else {
      auto [it, inserted] = unit_of_partition.emplace(g.owner[i], static_cast<int>(u.nodes.size()));
      if (inserted) {
        u.nodes.emplace_back();
        u.partition.push_back(g.owner[i]);
      }
      u.unit_of[i] = it->second;
      u.nodes[it->second].push_back(i);
    }
  }
  u.deps.resize(u.nodes.size());
  for (size_t unit = 0; unit < u.nodes.size(); ++unit) {
    std::set<int> deps;
    for (int node : u.nodes[unit]) {
      for (int p : g.producers[node]) {
        const int d = u.unit_of[p];
        if (d != static_cast<int>(unit)) deps.insert(d);
      }
    }
    u.deps[unit].assign(deps.begin(), deps.end());
  }
  u.readers.resize(u.nodes.size());
  for (size_t unit = 0; unit < u.nodes.size(); ++unit) {
    for (int d : u.deps[unit]) u.readers[d].push_back(static_cast<int>(unit));
  }
  return u;
}

// Each unit's count of the units it reads from: a unit is ready when its count is 0.
std::vector<int> waiting_counts(const Units& u) {
  std::vector<int> waiting(u.deps.size());
  for (size_t unit = 0; unit < u.deps.size(); ++unit) waiting[unit] = static_cast<int>(u.deps[unit].size());
  return waiting;
}

}  // namespace

GroupingResult group_partitions(const PartitionGraph& graph, const std::vector<bool>& accepted,
                                const PartitionLimits& limits) {
  const Units u = build_units(graph);
  const size_t count = u.nodes.size();
  auto is_accepted = [&](size_t unit) { return u.partition[unit] < 0 && accepted[u.nodes[unit][0]]; };
  // Each unit's count of producers not yet done; the units ready to take, by kind. An epoch takes the
  // ready units of its kind and those they make ready, until none of its kind is left: the set does not
  // depend on the order, and each unit and edge is seen once.
  std::vector<int> waiting = waiting_counts(u);
  std::vector<int> ready[2];
  for (size_t unit = 0; unit < count; ++unit) {
    if (waiting[unit] == 0) ready[is_accepted(unit)].push_back(static_cast<int>(unit));
  }
  size_t remaining = count;
  std::vector<std::vector<int>> epochs_accepted;
  // Start with the kind of the first unit in node order that is ready.
  bool kind = count > 0 && u.deps[0].empty() ? is_accepted(0) : false;
  int idle_switches = 0;
  while (remaining > 0) {
    std::vector<int> subset;
    while (!ready[kind].empty()) {
      const int unit = ready[kind].back();
      ready[kind].pop_back();
      --remaining;
      for (int node : u.nodes[static_cast<size_t>(unit)]) subset.push_back(node);
      for (int r : u.readers[static_cast<size_t>(unit)]) {
        if (--waiting[static_cast<size_t>(r)] == 0) ready[is_accepted(static_cast<size_t>(r))].push_back(r);
      }
    }
    if (subset.empty()) {
      if (++idle_switches > 2) break;  // cannot happen on a DAG; guards against a malformed graph
    } else {
      idle_switches = 0;
      if (kind) {
        std::sort(subset.begin(), subset.end());
        epochs_accepted.push_back(std::move(subset));
      }
    }
    kind = !kind;
  }

  GroupingResult result;
  std::vector<bool> keep(epochs_accepted.size(), true);
  for (size_t i = 0; i < epochs_accepted.size(); ++i) {
    if (epochs_accepted[i].size() < limits.min_nodes) {
      keep[i] = false;
      for (int node : epochs_accepted[i]) {
        result.dropped.emplace_back(node, "partition of " + std::to_string(epochs_accepted[i].size()) +
                                              " node(s) is below min-nodes-per-partition " +
                                              std::to_string(limits.min_nodes));
      }
    }
  }
  if (limits.max_partitions > 0) {
    std::vector<size_t> order;
    for (size_t i = 0; i < epochs_accepted.size(); ++i) {
      if (keep[i]) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return epochs_accepted[a].size() > epochs_accepted[b].size(); });
    for (size_t k = limits.max_partitions; k < order.size(); ++k) {
      keep[order[k]] = false;
      for (int node : epochs_accepted[order[k]]) {
        result.dropped.emplace_back(node, "over max-partitions " + std::to_string(limits.max_partitions) +
                                              " (larger partitions kept)");
      }
    }
  }
  for (size_t i = 0; i < epochs_accepted.size(); ++i) {
    if (keep[i]) result.partitions.push_back(std::move(epochs_accepted[i]));
  }
  std::sort(result.dropped.begin(), result.dropped.end());
  return result;
}

std::vector<Step> execution_order(const PartitionGraph& graph) {
  const Units u = build_units(graph);
  const size_t count = u.nodes.size();
  std::vector<int> waiting = waiting_counts(u);
  using Item = std::pair<int, int>;  // first node, unit
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (size_t unit = 0; unit < count; ++unit) {
    if (waiting[unit] == 0) ready.push({u.nodes[unit][0], static_cast<int>(unit)});
  }
  std::vector<Step> order;
  while (!ready.empty()) {
    const int unit = ready.top().second;
    ready.pop();
    order.push_back(u.partition[unit] < 0 ? Step{u.nodes[unit][0], -1} : Step{-1, u.partition[unit]});
    for (int c : u.readers[unit]) {
      if (--waiting[c] == 0) ready.push({u.nodes[c][0], c});
    }
  }
  if (order.size() != count) return {};
  return order;
}

}  // namespace baton
