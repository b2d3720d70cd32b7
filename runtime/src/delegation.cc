// Partition (delegation.h): the delegate chain takes connected groups of the nodes left on the host, first
// come first served (partitioner.h groups them so that no partition both feeds and waits on another);
// every node a delegate does not take keeps the delegate's reason.
#include "delegation.h"

#include <algorithm>
#include <unordered_map>

#include "node_selection.h"
#include "partitioner.h"
#include "plugin_call.h"
#include "plugin_registry.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

// Why a delegate's declarations do not cover a node, or "" when they do.
std::string declaration_refusal(const LoadedPlugin& d, const NodeInfo& info) {
  if (d.find_op(info.op_code, claim_name(info), info.version)) return "";
  std::string ranges;
  for (const OpDecl& op : d.ops) {
    if (op.code == info.op_code && op.custom_name == claim_name(info)) {
      ranges += (ranges.empty() ? "" : ", ") + op.describe();
    }
  }
  if (ranges.empty()) return "op not declared";
  return "version " + std::to_string(info.version) + " out of range (declares " + ranges + ")";
}

}  // namespace

// Offers the running nodes to each delegate of the chain in turn (see partitioner.h for the grouping).
Expected<PartitionPlan> partition_graph(const PartitionInputs& in) {
  std::vector<Node>& nodes = in.nodes;
  std::vector<Tensor>& tensors = in.tensors;
  PartitionPlan plan;
  plan.owner.assign(nodes.size(), -1);
  plan.refusals.assign(nodes.size(), {});
  // Each distinct refusal text once.
  std::unordered_map<std::string, std::shared_ptr<const std::string>> texts;
  auto refuse = [&](int index, const LoadedPlugin& d, std::string why) {
    auto [it, added] = texts.try_emplace(why);
    if (added) it->second = std::make_shared<const std::string>(std::move(why));
    plan.refusals[index].emplace_back(d.name, it->second);
  };
  // Producers by tensor; folded nodes produce constants and, like dropped ones, leave the graph.
  std::vector<int> producer(tensors.size(), -1);
  for (const Node& n : nodes) {
    if (!n.runs()) continue;
    for (const Tensor* t : n.outputs) producer[t->index] = n.info->index;
  }
  std::vector<int> active;  // node indices that run
  for (const Node& n : nodes) {
    if (!n.runs()) continue;
    active.push_back(n.info->index);
  }
  // The partitioner works on the running nodes only; map to dense indices.
  std::vector<int> dense(nodes.size(), -1);
  for (size_t i = 0; i < active.size(); ++i) dense[active[i]] = static_cast<int>(i);
  PartitionGraph g;
  g.producers.resize(active.size());
  g.owner.assign(active.size(), -1);
  for (size_t i = 0; i < active.size(); ++i) {
    for (const Tensor* t : nodes[active[i]].inputs) {
      if (t && !t->is_constant && producer[t->index] >= 0) g.producers[i].push_back(dense[producer[t->index]]);
    }
  }
  // The running nodes that read each tensor, for the partitions' boundaries.
  std::vector<std::vector<int>> readers(tensors.size());
  for (const Node& n : nodes) {
    if (!n.runs()) continue;
    for (const Tensor* t : n.inputs) {
      if (t) readers[t->index].push_back(n.info->index);
    }
  }
  // Marks of the partition being made (its number), so that no boundary walks the whole graph.
  std::vector<int> inside(nodes.size(), -1), seen(tensors.size(), -1);
  int made = 0;
  // Nodes the runtime runs may act on variables, which no tensor edge shows (an ASSIGN_VARIABLE and a later
  // READ_VARIABLE share only the handle): they keep their model order among themselves.
  int previous_runtime = -1;
  for (size_t i = 0; i < active.size(); ++i) {
    if (nodes[active[i]].runtime == RuntimeOp::none) continue;
    if (previous_runtime >= 0) g.producers[i].push_back(previous_runtime);
    previous_runtime = static_cast<int>(i);
  }
  for (LoadedPlugin* d : in.chain) {
    if (in.quarantined.count(d->name)) {
      for (int index : active) refuse(index, *d, "quarantined for this model by the crash journal");
      continue;
    }
    std::vector<bool> accepted(active.size(), false);
    std::vector<int32_t> free_nodes;  // for a delegate with select_nodes: the node indices it may take
    std::vector<size_t> free_dense;   // and their places in `active`
    for (size_t i = 0; i < active.size(); ++i) {
      if (g.owner[i] >= 0) continue;
      Node& node = nodes[active[i]];
      const int index = node.info->index;
      // A composite no op pack claimed runs its decomposition unless a delegate that declares it by
      // name takes it (ABI 1.11): then the delegate runs the whole operation, fused.
      const bool composite = node.runtime == RuntimeOp::composite;
      if (node.runtime != RuntimeOp::none && !composite) {
        refuse(index, *d, "control flow, resource variables and hash tables run in the runtime");
        continue;
      }
      if (std::find(in.excluded[index].begin(), in.excluded[index].end(), d) != in.excluded[index].end()) {
        refuse(index, *d, "lost this node's partition earlier (see fallbacks)");
        continue;
      }
      if (composite && !d->find_op(node.info->op_code, claim_name(*node.info), node.info->version)) {
        refuse(index, *d, "composite '" + node.info->composite_name + "' not declared: its decomposition runs instead");
        continue;
      }
      if (d->delegate.select_nodes) {
        free_nodes.push_back(index);
        free_dense.push_back(i);
        continue;
      }
      std::string why = declaration_refusal(*d, *node.info);
      if (why.empty()) {
        baton_error reason;
        int32_t yes = 0;
        guarded_call(*d, reason, [&] {
          yes = d->delegate.check_node(d->state, handle(node), &reason);
          return BATON_OK;
        });
        if (yes) {
          accepted[i] = true;
          continue;
        }
        why = reason.message.empty() ? "refused (no reason given)" : reason.message;
      }
      refuse(index, *d, std::move(why));
    }
    void* selection = nullptr;
    if (d->delegate.select_nodes) {
      in.journal.enter(d->name, "node selection");
      NodeSelection chosen = select_nodes(*d, in.view, free_nodes);
      selection = chosen.state;
      plan.selections.emplace_back(d, selection);
      if (chosen.failed) in.log(BATON_LOG_WARNING, in.source + ": delegate " + d->name + ": " + chosen.refusal);
      for (size_t k = 0; k < free_nodes.size(); ++k) {
        accepted[free_dense[k]] = chosen.selected[k];
        if (chosen.selected[k]) continue;
        const bool own = k < chosen.reasons.size() && !chosen.reasons[k].empty();
        refuse(free_nodes[k], *d, own ? std::move(chosen.reasons[k]) : chosen.refusal);
      }
    }
    GroupingResult grouped = group_partitions(g, accepted, {d->min_nodes_per_partition, d->max_partitions});
    for (const auto& [i, why] : grouped.dropped) refuse(active[i], *d, why);
    for (const std::vector<int>& members : grouped.partitions) {
      auto p = std::make_unique<Partition>();
      p->id = static_cast<int32_t>(plan.partitions.size());
      p->plugin = d;
      p->selection = selection;
      for (int i : members) p->nodes.push_back(&nodes[active[i]]);
      // Boundary: what the partition reads from outside, and what it writes that is read outside.
      const int mark = made++;
      for (const Node* n : p->nodes) inside[n->info->index] = mark;
      auto read_outside = [&](const Tensor* t) {
        return std::any_of(readers[t->index].begin(), readers[t->index].end(), [&](int r) { return inside[r] != mark; });
      };
      for (const Node* n : p->nodes) {
        for (Tensor* t : n->inputs) {
          if (!t || t->is_constant || seen[t->index] == mark) continue;
          if (producer[t->index] >= 0 && inside[producer[t->index]] == mark) continue;
          seen[t->index] = mark;
          p->inputs.push_back(t);
        }
      }
      for (const Node* n : p->nodes) {
        for (Tensor* t : n->outputs) {
          if (t->is_model_output || read_outside(t)) p->outputs.push_back(t);
        }
      }
      for (const Tensor* t : p->inputs) p->inputs_read_inside_only.push_back(!read_outside(t));
      baton_error error;
      in.journal.enter(d->name, "partition init");
      const baton_status st = guarded_call(*d, error, [&] {
        return d->delegate.partition_init(d->state, reinterpret_cast<const baton_partition*>(p.get()), &p->state,
                                          &error);
      });
      if (st != BATON_OK) {
        const std::string why = error.message.empty() ? "no reason given" : error.message;
        plan.lost.push_back({d, p->id, p->nodes, why});
        for (Node* n : p->nodes) refuse(n->info->index, *d, "partition init failed: " + why);
        if (d->delegate.partition_free) {
          guarded_release(*d, [&] { d->delegate.partition_free(d->state, p->state); });
        }
        continue;
      }
      for (int i : members) g.owner[i] = p->id;
      for (Node* n : p->nodes) plan.owner[n->info->index] = p->id;
      plan.partitions.push_back(std::move(p));
    }
    // A delegate left without a partition keeps no selection: nothing of the plan calls it again.
    if (selection && (plan.partitions.empty() || plan.partitions.back()->plugin != d)) {
      free_selection(*d, selection);
      plan.selections.pop_back();
    }
  }
  for (const baton::Step& unit : execution_order(g)) {
    if (unit.partition >= 0) {
      plan.steps.push_back({nullptr, plan.partitions[unit.partition].get()});
    } else {
      plan.steps.push_back({&nodes[active[unit.node]], nullptr});
    }
  }
  if (plan.steps.size() == 0 && !active.empty()) {
    release_plan(plan);
    return Status::error(in.source + ": partitioning produced a cycle");
  }
  return plan;
}

void release_plan(PartitionPlan& plan) {
  for (auto& p : plan.partitions) {
    if (p->plugin->delegate.partition_free) {
      guarded_release(*p->plugin, [&] { p->plugin->delegate.partition_free(p->plugin->state, p->state); });
    }
  }
  plan.partitions.clear();
  for (auto& [delegate, state] : plan.selections) free_selection(*delegate, state);
  plan.selections.clear();
  plan.steps.clear();
  std::fill(plan.owner.begin(), plan.owner.end(), -1);
  for (auto& r : plan.refusals) r.clear();
  plan.lost.clear();
}

}  // namespace baton
