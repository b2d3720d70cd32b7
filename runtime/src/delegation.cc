// Partition: the delegate chain takes connected groups of the nodes left on the host, first come first
// served (partitioner.h groups them so that no partition both feeds and waits on another); every node a
// delegate does not take keeps the delegate's reason.
#include <algorithm>

#include "node_selection.h"
#include "partitioner.h"
#include "plugin_call.h"
#include "plugin_registry.h"
#include "subgraph.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

}  // namespace

// Why a node that has neither a kernel nor a partition cannot run: the resolver's reason and every
// delegate's refusal.
std::string Subgraph::unrunnable_reason(const Node& node) const {
  std::string why = unresolved_[node.info->index];
  for (const Refusal& r : refusals_[node.info->index]) why += "; " + r.plugin + " refused: " + r.reason;
  return why;
}

// Strict mode: every node must go to a delegate. Nodes nobody can run are reported by prepare(), together
// with the nodes that fail to prepare, so one error lists everything before anything runs.
Status Subgraph::check_runnable() const {
  if (!state_.options.strict) return Status::ok();
  std::string missing;
  size_t count = 0;
  for (const Node& node : nodes_) {
    if (!node.runs() || node.runtime != RuntimeOp::none || partition_of_[node.info->index] >= 0) continue;
    if (!node.kernel) return Status::ok();  // prepare() reports it with the others
    ++count;
    missing += "\n  " + node_label(node) + " would run on op pack " + node.plugin->name;
    for (const Refusal& r : refusals_[node.info->index]) missing += "; " + r.plugin + " refused: " + r.reason;
  }
  if (count == 0) return Status::ok();
  return Status::error(source() + ": strict mode: " + std::to_string(count) +
                       " node(s) would fall back to op packs:" + missing);
}

namespace {

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

void Subgraph::free_partitions() {
  for (auto& p : partitions_) {
    if (p->plugin->delegate.partition_free) {
      guarded_release(*p->plugin, [&] { p->plugin->delegate.partition_free(p->plugin->state, p->state); });
    }
  }
  partitions_.clear();
  for (auto& [delegate, state] : selections_) free_selection(*delegate, state);
  selections_.clear();
  std::fill(partition_of_.begin(), partition_of_.end(), -1);
}

// Offers the host's nodes to each delegate of the chain in turn (see partitioner.h for the grouping).
Status Subgraph::partition() {
  free_partitions();
  for (auto& r : refusals_) r.clear();
  steps_.clear();
  // Producers by tensor; folded nodes produce constants and, like dropped ones, leave the graph.
  std::vector<int> producer(tensors_.size(), -1);
  for (const Node& n : nodes_) {
    if (!n.runs()) continue;
    for (const Tensor* t : n.outputs) producer[t->index] = n.info->index;
  }
  std::vector<int> active;  // node indices that run
  for (const Node& n : nodes_) {
    if (!n.runs()) continue;
    active.push_back(n.info->index);
  }
  // The partitioner works on the running nodes only; map to dense indices.
  std::vector<int> dense(nodes_.size(), -1);
  for (size_t i = 0; i < active.size(); ++i) dense[active[i]] = static_cast<int>(i);
  PartitionGraph g;
  g.producers.resize(active.size());
  g.owner.assign(active.size(), -1);
  for (size_t i = 0; i < active.size(); ++i) {
    for (const Tensor* t : nodes_[active[i]].inputs) {
      if (t && !t->is_constant && producer[t->index] >= 0) g.producers[i].push_back(dense[producer[t->index]]);
    }
  }
  // Nodes the runtime runs may act on variables, which no tensor edge shows (an ASSIGN_VARIABLE and a later
  // READ_VARIABLE share only the handle): they keep their model order among themselves.
  int previous_runtime = -1;
  for (size_t i = 0; i < active.size(); ++i) {
    if (nodes_[active[i]].runtime == RuntimeOp::none) continue;
    if (previous_runtime >= 0) g.producers[i].push_back(previous_runtime);
    previous_runtime = static_cast<int>(i);
  }
  for (LoadedPlugin* d : state_.env->delegate_chain()) {
    if (state_.quarantined.count(d->name)) {
      for (int index : active) refusals_[index].push_back({d->name, "quarantined for this model by the crash journal"});
      continue;
    }
    std::vector<bool> accepted(active.size(), false);
    std::vector<int32_t> free_nodes;  // for a delegate with select_nodes: the node indices it may take
    std::vector<size_t> free_dense;   // and their places in `active`
    for (size_t i = 0; i < active.size(); ++i) {
      if (g.owner[i] >= 0) continue;
      Node& node = nodes_[active[i]];
      const int index = node.info->index;
      // A composite no op pack claimed runs its decomposition unless a delegate that declares it by
      // name takes it (ABI 1.11): then the delegate runs the whole operation, fused.
      const bool composite = node.runtime == RuntimeOp::composite;
      if (node.runtime != RuntimeOp::none && !composite) {
        refusals_[index].push_back({d->name, "control flow, resource variables and hash tables run in the runtime"});
        continue;
      }
      if (std::find(excluded_[index].begin(), excluded_[index].end(), d) != excluded_[index].end()) {
        refusals_[index].push_back({d->name, "lost this node's partition earlier (see fallbacks)"});
        continue;
      }
      if (composite && !d->find_op(node.info->op_code, claim_name(*node.info), node.info->version)) {
        refusals_[index].push_back({d->name, "composite '" + node.info->composite_name +
                                                 "' not declared: its decomposition runs instead"});
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
      refusals_[index].push_back({d->name, why});
    }
    void* selection = nullptr;
    if (d->delegate.select_nodes) {
      state_.journal->enter(d->name, "node selection");
      NodeSelection chosen = select_nodes(*d, graph_view_, free_nodes);
      selection = chosen.state;
      selections_.emplace_back(d, selection);
      if (chosen.failed) state_.env->log()(BATON_LOG_WARNING, source() + ": delegate " + d->name + ": " + chosen.refusal);
      for (size_t k = 0; k < free_nodes.size(); ++k) {
        accepted[free_dense[k]] = chosen.selected[k];
        if (!chosen.selected[k]) refusals_[free_nodes[k]].push_back({d->name, chosen.refusal});
      }
    }
    GroupingResult grouped = group_partitions(g, accepted, {d->min_nodes_per_partition, d->max_partitions});
    for (const auto& [i, why] : grouped.dropped) refusals_[active[i]].push_back({d->name, why});
    for (const std::vector<int>& members : grouped.partitions) {
      auto p = std::make_unique<Partition>();
      p->id = static_cast<int32_t>(partitions_.size());
      p->plugin = d;
      p->selection = selection;
      for (int i : members) p->nodes.push_back(&nodes_[active[i]]);
      // Boundary: what the partition reads from outside, and what it writes that is read outside.
      std::vector<bool> inside(nodes_.size(), false);
      for (const Node* n : p->nodes) inside[n->info->index] = true;
      std::vector<bool> seen(tensors_.size(), false);
      for (const Node* n : p->nodes) {
        for (Tensor* t : n->inputs) {
          if (!t || t->is_constant || seen[t->index]) continue;
          if (producer[t->index] >= 0 && inside[producer[t->index]]) continue;
          seen[t->index] = true;
          p->inputs.push_back(t);
        }
      }
      std::vector<bool> read_outside(tensors_.size(), false);
      for (const Node& n : nodes_) {
        if (!n.runs() || inside[n.info->index]) continue;
        for (const Tensor* t : n.inputs) {
          if (t) read_outside[t->index] = true;
        }
      }
      for (const Node* n : p->nodes) {
        for (Tensor* t : n->outputs) {
          if (t->is_model_output || read_outside[t->index]) p->outputs.push_back(t);
        }
      }
      for (const Tensor* t : p->inputs) p->inputs_read_inside_only.push_back(!read_outside[t->index]);
      baton_error error;
      state_.journal->enter(d->name, "partition init");
      const baton_status st = guarded_call(*d, error, [&] {
        return d->delegate.partition_init(d->state, reinterpret_cast<const baton_partition*>(p.get()), &p->state,
                                          &error);
      });
      if (st != BATON_OK) {
        const std::string why = error.message.empty() ? "no reason given" : error.message;
        lose_partition(*p, "init", why);
        for (Node* n : p->nodes) refusals_[n->info->index].push_back({d->name, "partition init failed: " + why});
        if (d->delegate.partition_free) {
          guarded_release(*d, [&] { d->delegate.partition_free(d->state, p->state); });
        }
        continue;
      }
      for (int i : members) g.owner[i] = p->id;
      for (Node* n : p->nodes) partition_of_[n->info->index] = p->id;
      partitions_.push_back(std::move(p));
    }
  }
  for (const baton::Step& unit : execution_order(g)) {
    if (unit.partition >= 0) {
      steps_.push_back({nullptr, partitions_[unit.partition].get()});
    } else {
      steps_.push_back({&nodes_[active[unit.node]], nullptr});
    }
  }
  if (steps_.size() == 0 && !active.empty()) return Status::error(source() + ": partitioning produced a cycle");
  return Status::ok();
}

}  // namespace baton
