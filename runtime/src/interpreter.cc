#include "interpreter.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstring>

#include "arena_planner.h"
#include "node_selection.h"
#include "partitioner.h"
#include "plugin_call.h"
#include "plugin_registry.h"
#include "sparse.h"

namespace baton {

namespace {

const baton_node* handle(const Node& n) { return reinterpret_cast<const baton_node*>(&n); }

std::string shape_text(const std::vector<int32_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

Expected<std::unique_ptr<Interpreter>> Interpreter::create(std::shared_ptr<Environment> env,
                                                           std::shared_ptr<const Model> model,
                                                           const InterpreterOptions& options) {
  if (!env || !model) return Status::error("interpreter: no environment or model");
  if (options.subgraph != 0) return Status::error("interpreter: only subgraph 0 can run");
  std::unique_ptr<Interpreter> interp(new Interpreter());
  interp->env_ = std::move(env);
  interp->model_ = std::move(model);
  interp->options_ = options;
  interp->graph_ = &interp->model_->main();
  if (Status s = interp->build(); !s) return s;
  interp->journal_ = std::make_unique<CrashJournal>(interp->env_->journal_dir(), interp->model_->fingerprint,
                                                    interp->model_->source());
  interp->quarantined_ = interp->journal_->quarantined();
  for (const auto& [plugin, why] : interp->quarantined_) interp->env_->log()(BATON_LOG_WARNING, why);
  Status s = interp->resolve();
  if (s) s = interp->partition();
  if (s) s = interp->check_runnable();
  if (s) s = interp->prepare_with_fallback();
  interp->journal_->leave();  // load is over, failed or not: nothing died
  if (!s) return s;
  return interp;
}

Interpreter::~Interpreter() {
#if defined(__SANITIZE_ADDRESS__)
  if (arena_ && arena_bytes_ > 0) ASAN_UNPOISON_MEMORY_REGION(arena_.get(), arena_bytes_);
#endif
  free_partitions();
  for (Node& node : nodes_) {
    if (node.initialised && node.kernel && node.kernel->free) {
      guarded_release(*node.plugin, [&] { node.kernel->free(node.plugin->state, node.state); });
    }
  }
}

std::string Interpreter::node_label(const Node& node) const {
  return "node " + std::to_string(node.info->index) + " (" + node_op_name(*node.info) + " v" +
         std::to_string(node.info->version) + ")";
}

Status Interpreter::build() {
  const SubgraphInfo& g = *graph_;
  tensors_.resize(g.tensors.size());
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const TensorInfo& info = g.tensors[i];
    Tensor& t = tensors_[i];
    t.info = &info;
    t.index = static_cast<int32_t>(i);
    t.type = info.type;
    t.shape = info.shape;
    checked_byte_size(t.shape, t.type, &t.bytes);
    t.is_constant = info.is_constant;
    t.constant = info.is_constant ? info.data.data() : nullptr;
  }
  for (int32_t i : g.inputs) {
    tensors_[i].is_model_input = true;
    inputs_.push_back(&tensors_[i]);
  }
  for (int32_t i : g.outputs) {
    tensors_[i].is_model_output = true;
    outputs_.push_back(&tensors_[i]);
  }
  nodes_.resize(g.nodes.size());
  unresolved_.assign(g.nodes.size(), "");
  refusals_.assign(g.nodes.size(), {});
  partition_of_.assign(g.nodes.size(), -1);
  excluded_.assign(g.nodes.size(), {});
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = nodes_[n];
    node.info = &g.nodes[n];
    for (int32_t t : node.info->inputs) node.inputs.push_back(t < 0 ? nullptr : &tensors_[t]);
    for (int32_t t : node.info->outputs) node.outputs.push_back(&tensors_[t]);
  }
  return Status::ok();
}

uint8_t* Interpreter::own_constant(size_t bytes) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64));
  if (!p) return nullptr;
  owned_constants_.emplace_back(p, &std::free);
  return p;
}

namespace {
constexpr int32_t kDensify = 124;  // TFLite's BuiltinOperator DENSIFY
}  // namespace

Status Interpreter::resolve() {
  const std::vector<LoadedPlugin*> packs = env_->registry().op_packs();
  foldable_ = foldable_nodes(*graph_);
  // Dead nodes go first: a delegate given a node whose output nothing reads may have nowhere to put it.
  const std::vector<bool> dead = dead_nodes(*graph_);
  for (Node& node : nodes_) {
    const NodeInfo& info = *node.info;
    if (dead[info.index]) {
      node.dropped = true;
      ++dropped_nodes_;
      continue;
    }
    // DENSIFY of a sparse constant is a change of storage format, done here once.
    if (info.op_code == kDensify && node.inputs.size() == 1 && node.outputs.size() == 1 && node.inputs[0] &&
        node.inputs[0]->is_constant && node.inputs[0]->info->sparsity) {
      std::vector<uint8_t> dense;
      if (Status s = densify(*node.inputs[0]->info, dense); !s) {
        return Status::error(model_->source() + ": " + node_label(node) + ": " + s.message());
      }
      Tensor& out = *node.outputs[0];
      if (out.type != node.inputs[0]->type || out.bytes != dense.size()) {
        return Status::error(model_->source() + ": " + node_label(node) + ": output tensor " +
                             std::to_string(out.index) + " does not match the densified input's type and shape");
      }
      uint8_t* buffer = own_constant(dense.size());
      if (!buffer) return Status::error(model_->source() + ": out of memory densifying " + node_label(node));
      std::memcpy(buffer, dense.data(), dense.size());
      out.is_constant = true;
      out.constant = buffer;
      node.folded = true;
      ++folded_nodes_;
      folded_bytes_ += dense.size();
      continue;
    }
    for (LoadedPlugin* pack : packs) {
      if (quarantined_.count(pack->name)) continue;
      if (const OpDecl* op = pack->find_op(info.op_code, info.custom_name, info.version)) {
        node.plugin = pack;
        node.kernel = &op->kernel;
        break;
      }
    }
    if (node.kernel) {
      if (Status s = fold(node); !s) return s;
      continue;
    }
    // Name the op, the version the model needs and every range that is loaded for it. A delegate may
    // still take the node; check_runnable() reports it if none does.
    std::string loaded;
    for (LoadedPlugin* pack : packs) {
      for (const OpDecl& op : pack->ops) {
        if (op.code == info.op_code && (info.op_code != BATON_OP_CUSTOM || op.custom_name == info.custom_name)) {
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
    for (const auto& [plugin, why] : quarantined_) unresolved_[info.index] += "; " + plugin + " is quarantined";
  }
  return Status::ok();
}

// Why a node that has neither a kernel nor a partition cannot run: the resolver's reason and every
// delegate's refusal.
std::string Interpreter::unrunnable_reason(const Node& node) const {
  std::string why = unresolved_[node.info->index];
  for (const Refusal& r : refusals_[node.info->index]) why += "; " + r.plugin + " refused: " + r.reason;
  return why;
}

// Strict mode: every node must go to a delegate. Nodes nobody can run are reported by prepare(), together
// with the nodes that fail to prepare, so one error lists everything before anything runs.
Status Interpreter::check_runnable() const {
  if (!options_.strict) return Status::ok();
  std::string missing;
  size_t count = 0;
  for (const Node& node : nodes_) {
    if (!node.runs() || partition_of_[node.info->index] >= 0) continue;
    if (!node.kernel) return Status::ok();  // prepare() reports it with the others
    ++count;
    missing += "\n  " + node_label(node) + " would run on op pack " + node.plugin->name;
    for (const Refusal& r : refusals_[node.info->index]) missing += "; " + r.plugin + " refused: " + r.reason;
  }
  if (count == 0) return Status::ok();
  return Status::error(model_->source() + ": strict mode: " + std::to_string(count) +
                       " node(s) would fall back to op packs:" + missing);
}

// The op pack after the node's current one, in resolution order, that declares the node's op and version.
LoadedPlugin* Interpreter::next_op_pack(const Node& node) const {
  const std::vector<LoadedPlugin*> packs = env_->registry().op_packs();
  auto it = std::find(packs.begin(), packs.end(), node.plugin);
  for (it = it == packs.end() ? it : it + 1; it != packs.end(); ++it) {
    if (quarantined_.count((*it)->name)) continue;
    if ((*it)->find_op(node.info->op_code, node.info->custom_name, node.info->version)) return *it;
  }
  return nullptr;
}

baton_status Interpreter::init_and_prepare(Node& node, baton_error& error) {
  return guarded_call(*node.plugin, error, [&] {
    baton_status st = BATON_OK;
    if (!node.initialised) {
      node.initialised = true;
      if (node.kernel->init) st = node.kernel->init(node.plugin->state, handle(node), &node.state, &error);
    }
    return st == BATON_OK ? node.kernel->prepare(node.plugin->state, node.state, handle(node), &error) : st;
  });
}

void Interpreter::release_kernel(Node& node) {
  if (node.initialised && node.kernel->free) {
    guarded_release(*node.plugin, [&] { node.kernel->free(node.plugin->state, node.state); });
  }
  node.initialised = false;
  node.state = nullptr;
}

// A builtin node whose inputs are all constant runs once now; its outputs become constants. Custom ops
// are left alone: they may keep state or read something other than their inputs.
Status Interpreter::fold(Node& node) {
  if (!foldable_[node.info->index]) return Status::ok();
  // Inputs may still be non-constant where an earlier foldable node could not be folded.
  for (const Tensor* t : node.inputs) {
    if (t && !t->is_constant) return Status::ok();
  }
  baton_error error;
  baton_status st = BATON_OK;
  for (Tensor* out : node.outputs) out->shape_writable = true;
  journal_->enter(node.plugin->name, "constant folding");
  st = init_and_prepare(node, error);
  for (Tensor* out : node.outputs) out->shape_writable = false;
  if (st == BATON_OK) {
    for (Tensor* out : node.outputs) {
      out->data = own_constant(out->bytes);
      if (!out->data) return Status::error(model_->source() + ": out of memory folding " + node_label(node));
    }
    st = guarded_call(*node.plugin, error,
                      [&] { return node.kernel->invoke(node.plugin->state, node.state, handle(node), &error); });
  }
  if (st != BATON_OK) {
    // Not folded: the node stays in the graph, where prepare (or a delegate) deals with it and reports
    // the same problem with its context.
    release_kernel(node);
    for (Tensor* out : node.outputs) {
      out->data = nullptr;
      out->shape = out->info->shape;
      checked_byte_size(out->shape, out->type, &out->bytes);
    }
    env_->log()(BATON_LOG_DEBUG, node_label(node) + " not folded: " + error.message);
    return Status::ok();
  }
  for (Tensor* out : node.outputs) {
    out->is_constant = true;
    out->constant = out->data;
    out->data = nullptr;
    folded_bytes_ += out->bytes;
  }
  release_kernel(node);
  node.folded = true;
  ++folded_nodes_;
  return Status::ok();
}

namespace {

// Why a delegate's declarations do not cover a node, or "" when they do.
std::string declaration_refusal(const LoadedPlugin& d, const NodeInfo& info) {
  if (d.find_op(info.op_code, info.custom_name, info.version)) return "";
  std::string ranges;
  for (const OpDecl& op : d.ops) {
    if (op.code == info.op_code && (info.op_code != BATON_OP_CUSTOM || op.custom_name == info.custom_name)) {
      ranges += (ranges.empty() ? "" : ", ") + op.describe();
    }
  }
  if (ranges.empty()) return "op not declared";
  return "version " + std::to_string(info.version) + " out of range (declares " + ranges + ")";
}

}  // namespace

void Interpreter::free_partitions() {
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

void Interpreter::lose_partition(Partition& p, const std::string& stage, const std::string& reason) {
  Fallback f{p.plugin->name, p.id, stage, reason, {}};
  for (Node* n : p.nodes) {
    f.nodes.push_back(n->info->index);
    excluded_[n->info->index].push_back(p.plugin);
  }
  env_->log()(BATON_LOG_WARNING, model_->source() + ": delegate " + p.plugin->name + " lost partition " +
                                     std::to_string(p.id) + " (" + std::to_string(p.nodes.size()) + " nodes) at " +
                                     stage + ": " + reason + "; its nodes go to the next delegate or op packs");
  fallbacks_.push_back(std::move(f));
}

// Offers the host's nodes to each delegate of the chain in turn (see partitioner.h for the grouping).
Status Interpreter::partition() {
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
  for (LoadedPlugin* d : env_->delegate_chain()) {
    if (quarantined_.count(d->name)) {
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
      if (std::find(excluded_[index].begin(), excluded_[index].end(), d) != excluded_[index].end()) {
        refusals_[index].push_back({d->name, "lost this node's partition earlier (see fallbacks)"});
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
      journal_->enter(d->name, "node selection");
      NodeSelection chosen = select_nodes(*d, graph_view_, free_nodes);
      selection = chosen.state;
      selections_.emplace_back(d, selection);
      if (chosen.failed) env_->log()(BATON_LOG_WARNING, model_->source() + ": delegate " + d->name + ": " + chosen.refusal);
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
      baton_error error;
      journal_->enter(d->name, "partition init");
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
  if (steps_.size() == 0 && !active.empty()) return Status::error(model_->source() + ": partitioning produced a cycle");
  return Status::ok();
}

Status Interpreter::prepare_with_fallback() {
  struct LeaveJournal {
    CrashJournal& journal;
    ~LeaveJournal() { journal.leave(); }  // prepare is over, failed or not: nothing died
  } leave{*journal_};
  for (;;) {
    Partition* failed = nullptr;
    std::string reason;
    Status s = prepare(&failed, &reason);
    if (s) return s;
    if (!failed) return s;
    lose_partition(*failed, "prepare", reason);
    if (Status p = partition(); !p) return p;
    if (Status c = check_runnable(); !c) return c;
  }
}

Status Interpreter::prepare(Partition** failed, std::string* reason) {
  for (Tensor& t : tensors_) {
    if (t.is_constant) continue;
    if (t.is_model_input && t.data) t.planned = t.data;
    t.data = nullptr;  // memory is planned after every step is prepared
  }
  std::vector<std::string> problems;  // nodes without a kernel, nodes no op pack could prepare
  for (const Step& step : steps_) {
    baton_error error;
    baton_status st = BATON_OK;
    if (step.partition || step.node->plugin) {
      journal_->enter(step.partition ? step.partition->plugin->name : step.node->plugin->name, "prepare");
    }
    if (step.partition) {
      Partition& p = *step.partition;
      for (Tensor* out : p.outputs) out->shape_writable = true;
      if (p.plugin->delegate.partition_prepare) {
        st = guarded_call(*p.plugin, error, [&] {
          return p.plugin->delegate.partition_prepare(p.plugin->state, p.state,
                                                      reinterpret_cast<const baton_partition*>(&p), &error);
        });
      }
      for (Tensor* out : p.outputs) out->shape_writable = false;
      if (st != BATON_OK) {
        *failed = &p;
        *reason = error.message.empty() ? "no reason given" : error.message;
        return Status::error(p.plugin->name + " partition " + std::to_string(p.id) + ": prepare failed: " + *reason);
      }
      continue;
    }
    Node& node = *step.node;
    if (!node.kernel) {
      problems.push_back(node_label(node) + ": " + unrunnable_reason(node));
      continue;
    }
    std::string failures;
    for (;;) {
      for (Tensor* out : node.outputs) out->shape_writable = true;
      st = init_and_prepare(node, error);
      for (Tensor* out : node.outputs) out->shape_writable = false;
      if (st == BATON_OK) break;
      // The next op pack that declares the op and version gets the node; the failure is recorded.
      const std::string why = error.message.empty() ? "no reason given" : error.message;
      failures += "; " + node.plugin->name + ": " + why;
      for (Tensor* out : node.outputs) {
        out->shape = out->info->shape;
        checked_byte_size(out->shape, out->type, &out->bytes);
      }
      LoadedPlugin* next = next_op_pack(node);
      if (!next) {
        // Noted, and prepare goes on (with the model's shapes for this node's outputs), so that the
        // error names every node that cannot run, not the first one.
        problems.push_back(node_label(node) + ": prepare failed" + failures);
        break;
      }
      env_->log()(BATON_LOG_WARNING, model_->source() + ": " + node_label(node) + ": op pack " + node.plugin->name +
                                         " failed to prepare it (" + why + "); " + next->name + " takes it");
      fallbacks_.push_back({node.plugin->name, -1, "prepare", why, {node.info->index}});
      release_kernel(node);
      node.plugin = next;
      node.kernel = &next->find_op(node.info->op_code, node.info->custom_name, node.info->version)->kernel;
      error.message.clear();
    }
  }
  if (!problems.empty()) {
    std::string list;
    for (const std::string& p : problems) list += "\n  " + p;
    return Status::error(model_->source() + ": " + std::to_string(problems.size()) + " node(s) cannot run:" + list);
  }
  if (Status s = plan_memory(); !s) return s;
  needs_prepare_ = false;
  return Status::ok();
}

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer every tensor gets its own place in the arena with a poisoned redzone after
// it, so a plugin that writes past its output is caught at the write instead of corrupting a neighbour.
constexpr bool kGuardTensors = true;
constexpr size_t kRedzone = 64;
#else
constexpr bool kGuardTensors = false;
constexpr size_t kRedzone = 0;
#endif

Status Interpreter::plan_memory() {
  // Lifetimes in steps; model inputs are alive for the whole run (no tensor is placed over them, so a
  // first run that fails in a delegate can be repeated from the same inputs without copying them), outputs
  // to the end.
  const int last_step = std::max<int>(0, static_cast<int>(steps_.size()) - 1);
  std::vector<int> first(tensors_.size(), -1), last(tensors_.size(), -1);
  auto touch = [&](const Tensor* t, int step) {
    if (!t || t->is_constant) return;
    int i = t->index;
    if (first[i] < 0 || step < first[i]) first[i] = step;
    last[i] = std::max(last[i], step);
  };
  for (const Tensor* t : inputs_) {
    touch(t, 0);
    touch(t, last_step);
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const int step = static_cast<int>(s);
    if (steps_[s].partition) {
      // Tensors inside a partition live in the delegate's memory; only the boundary is the host's.
      for (const Tensor* t : steps_[s].partition->inputs) touch(t, step);
      for (const Tensor* t : steps_[s].partition->outputs) touch(t, step);
      continue;
    }
    for (const Tensor* t : steps_[s].node->inputs) touch(t, step);
    for (const Tensor* t : steps_[s].node->outputs) touch(t, step);
  }
  for (const Tensor* t : outputs_) touch(t, last_step);
  for (const Tensor& t : tensors_) {
    if (t.info->is_variable && !t.is_constant) {
      first[t.index] = 0;
      last[t.index] = last_step;
    }
  }
  std::vector<ArenaRequest> requests;
  std::vector<Tensor*> owners;
  naive_bytes_ = 0;
  for (Tensor& t : tensors_) {
    if (first[t.index] < 0) continue;
    if (kGuardTensors) {
      requests.push_back({t.bytes + kRedzone, 0, last_step});
    } else {
      requests.push_back({t.bytes, first[t.index], last[t.index]});
    }
    owners.push_back(&t);
    naive_bytes_ += (t.bytes + 63) / 64 * 64;
  }
  ArenaPlan plan = plan_arena(requests, 64);
  if (plan.total > env_->limits().max_arena_bytes) {
    return Status::error(model_->source() + ": the arena needs " + std::to_string(plan.total) +
                         " bytes, over the limit of " + std::to_string(env_->limits().max_arena_bytes));
  }
  for (const Tensor* t : owners) {
    if (t->bytes > env_->limits().max_tensor_bytes) {
      return Status::error(model_->source() + ": tensor " + std::to_string(t->index) + " \"" + t->info->name +
                           "\" needs " + std::to_string(t->bytes) + " bytes, over the tensor limit of " +
                           std::to_string(env_->limits().max_tensor_bytes));
    }
  }
  decltype(arena_) arena{nullptr, &std::free};
  if (plan.total > 0) {
    arena.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (plan.total + 63) / 64 * 64)));
    if (!arena) {
      return Status::error(model_->source() + ": cannot allocate the " + std::to_string(plan.total) + "-byte arena");
    }
  }
#if defined(__SANITIZE_ADDRESS__)
  if (arena_ && arena_bytes_ > 0) ASAN_UNPOISON_MEMORY_REGION(arena_.get(), arena_bytes_);
#endif
  // The arena is not cleared (every tensor is written before it is read, and clearing would only move the
  // first touch of each page out of the first run into load), except variable tensors, which start at zero.
  // Inputs keep their values across a new plan (a fallback after a failed first run re-runs from them).
  for (size_t i = 0; i < owners.size(); ++i) {
    Tensor& t = *owners[i];
    const uint8_t* old = t.planned;
    t.data = arena.get() + plan.offsets[i];
    t.planned = nullptr;
    if (t.info->is_variable) {
      std::memset(t.data, 0, t.bytes);
    } else if (old && arena_ && old >= arena_.get() && old + t.bytes <= arena_.get() + arena_bytes_) {
      std::memcpy(t.data, old, t.bytes);
    }
  }
  arena_ = std::move(arena);
  arena_bytes_ = plan.total;
#if defined(__SANITIZE_ADDRESS__)
  if (plan.total > 0) {
    ASAN_POISON_MEMORY_REGION(arena_.get(), plan.total);
    for (const Tensor* t : owners) ASAN_UNPOISON_MEMORY_REGION(t->data, t->bytes);
  }
#endif
  return Status::ok();
}

Status Interpreter::resize_input(size_t i, const std::vector<int32_t>& shape) {
  if (i >= inputs_.size()) {
    return Status::error("input " + std::to_string(i) + " does not exist (the model has " +
                         std::to_string(inputs_.size()) + " inputs)");
  }
  Tensor& t = *inputs_[i];
  size_t bytes = 0;
  if (!checked_byte_size(shape, t.type, &bytes)) {
    return Status::error("input " + std::to_string(i) + " \"" + t.info->name + "\": shape " + shape_text(shape) +
                         " has a negative dimension or overflows");
  }
  if (shape == t.shape) return Status::ok();
  t.shape = shape;
  t.bytes = bytes;
  needs_prepare_ = true;
  return Status::ok();
}

Status Interpreter::invoke() {
  if (needs_prepare_) {
    if (Status s = prepare_with_fallback(); !s) return s;
  }
  // On the first invoke a failing partition loses its nodes and the run is repeated without it, from the
  // same inputs (plan_memory keeps them intact). A model with variables is not repeated: its state moved.
  bool stateless = true;
  if (!invoked_) {
    for (const Tensor& t : tensors_) stateless &= !t.info->is_variable;
  }
  if (step_seconds_.size() != steps_.size()) step_seconds_.assign(steps_.size(), 0.0);
  struct LeaveJournal {
    CrashJournal& journal;
    ~LeaveJournal() { journal.leave(); }  // the first run returned, failed or not: nothing died
  } leave{*journal_};
  cancel_requested_.store(false, std::memory_order_relaxed);  // a cancel stops the invoke it finds running
  for (;;) {
    Partition* failed = nullptr;
    bool needs_rerun = false;  // an op pack gave up a node
    std::string failure;
    for (size_t k = 0; k < steps_.size(); ++k) {
      if (cancel_requested_.load(std::memory_order_relaxed)) {
        cancel_requested_.store(false, std::memory_order_relaxed);
        return Status::error("invoke cancelled");
      }
      const Step& step = steps_[k];
      baton_error error;
      baton_status st;
      if (!invoked_) journal_->enter(step.partition ? step.partition->plugin->name : step.node->plugin->name, "first invoke");
      const auto started = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      if (step.partition) {
        Partition& p = *step.partition;
        st = guarded_call(*p.plugin, error, [&] {
          return p.plugin->delegate.partition_invoke(p.plugin->state, p.state,
                                                     reinterpret_cast<const baton_partition*>(&p), &error);
        });
      } else {
        Node& n = *step.node;
        st = guarded_call(*n.plugin, error,
                          [&] { return n.kernel->invoke(n.plugin->state, n.state, handle(n), &error); });
      }
      if (profiling_) {
        step_seconds_[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      }
      if (st == BATON_OK) continue;
      const std::string why = error.message.empty() ? "no reason given" : error.message;
      if (step.partition) {
        failed = step.partition;
        failure = why;
        break;
      }
      // An op pack failing the first run of a stateless model hands the node to the next pack that
      // declares the op, and the run is repeated.
      Node& node = *step.node;
      LoadedPlugin* next = invoked_ || !stateless ? nullptr : next_op_pack(node);
      if (!next) {
        return Status::error(model_->source() + ": " + node_label(node) + " in " + node.plugin->name +
                             ": invoke failed: " + why);
      }
      env_->log()(BATON_LOG_WARNING, model_->source() + ": " + node_label(node) + ": op pack " + node.plugin->name +
                                         " failed its first run (" + why + "); " + next->name + " takes it");
      fallbacks_.push_back({node.plugin->name, -1, "invoke", why, {node.info->index}});
      release_kernel(node);
      node.plugin = next;
      node.kernel = &next->find_op(node.info->op_code, node.info->custom_name, node.info->version)->kernel;
      needs_rerun = true;
      break;
    }
    if (!failed && !needs_rerun) break;
    if (failed) {
      if (invoked_ || !stateless) {
        return Status::error(model_->source() + ": " + failed->plugin->name + " partition " +
                             std::to_string(failed->id) + ": invoke failed: " + failure);
      }
      lose_partition(*failed, "invoke", failure);
      if (Status s = partition(); !s) return s;
      if (Status s = check_runnable(); !s) return s;
    }
    if (Status s = prepare_with_fallback(); !s) return s;
    step_seconds_.assign(steps_.size(), 0.0);
  }
  invoked_ = true;
  return Status::ok();
}

std::string Interpreter::step_op(size_t i) const {
  const Step& s = steps_.at(i);
  if (s.partition) return "partition " + std::to_string(s.partition->id);
  return node_op_name(*s.node->info);
}

std::string Interpreter::step_plugin(size_t i) const {
  const Step& s = steps_.at(i);
  return s.partition ? s.partition->plugin->name : s.node->plugin->name;
}

namespace {

// Position in `list` of the tensor named `name`, by tensor name or by subgraph 0's signature names.
int find_io(const std::vector<Tensor*>& list, const std::string& name, const Model& model, bool inputs) {
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i]->info->name == name) return static_cast<int>(i);
  }
  for (const SignatureInfo& sig : model.signatures) {
    if (sig.subgraph != 0) continue;
    for (const auto& [n, t] : inputs ? sig.inputs : sig.outputs) {
      if (n != name) continue;
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i]->index == t) return static_cast<int>(i);
      }
    }
  }
  return -1;
}

}  // namespace

int Interpreter::input_index(const std::string& name) const { return find_io(inputs_, name, *model_, true); }
int Interpreter::output_index(const std::string& name) const { return find_io(outputs_, name, *model_, false); }

Placement Interpreter::placement(size_t node) const {
  const Node& n = nodes_.at(node);
  if (n.folded) return {"folded", n.plugin ? n.plugin->name : "runtime", -1};
  if (n.dropped) return {"dropped", "runtime", -1};
  if (partition_of_[node] >= 0) {
    const Partition& p = *partitions_[partition_of_[node]];
    return {"delegate", p.plugin->name, p.id};
  }
  return {"op-pack", n.plugin ? n.plugin->name : "", -1};
}

}  // namespace baton
