#include "interpreter.h"

#include <algorithm>

namespace baton {

Expected<std::unique_ptr<Interpreter>> Interpreter::create(std::shared_ptr<Environment> env,
                                                           std::shared_ptr<const Model> model,
                                                           const InterpreterOptions& options) {
  if (!env || !model) return Status::error("interpreter: no environment or model");
  std::unique_ptr<Interpreter> interp(new Interpreter());
  RunState& st = interp->state_;
  int entry = options.subgraph;
  if (!options.signature.empty()) {
    std::string keys;
    for (const SignatureInfo& sig : model->signatures) {
      keys += (keys.empty() ? "" : ", ") + sig.key;
      if (sig.key == options.signature) interp->signature_ = &sig;
    }
    if (!interp->signature_) {
      return Status::error(model->source() + ": no signature \"" + options.signature + "\" (" +
                           (keys.empty() ? "the model has none" : "the model has: " + keys) + ")");
    }
    entry = interp->signature_->subgraph;
  }
  if (entry < 0 || static_cast<size_t>(entry) >= model->subgraphs.size()) {
    return Status::error(model->source() + ": subgraph " + std::to_string(entry) + " does not exist (the model has " +
                         std::to_string(model->subgraphs.size()) + ")");
  }
  st.env = std::move(env);
  st.model = std::move(model);
  st.options = options;
  st.env->share_model(*st.model);
  st.journal = std::make_unique<CrashJournal>(st.env->journal_dir(), st.model->fingerprint, st.model->source());
  st.quarantined = st.journal->quarantined();
  for (const auto& [plugin, why] : st.quarantined) st.env->log()(BATON_LOG_WARNING, why);
  st.subgraphs.resize(st.model->subgraphs.size());
  st.entry = entry;
  std::vector<int> path;
  Status s = interp->build(entry, path);
  if (s) {
    interp->entry_ = st.subgraphs[entry].get();
    s = interp->entry_->prepare_with_fallback();
  }
  st.journal->leave();  // load is over, failed or not: nothing died
  interp->record_child_deaths();
  if (!s) return s;
  st.env->park_unused_plugins();
  return interp;
}

Interpreter::~Interpreter() = default;

Status Interpreter::build(int index, std::vector<int>& path) {
  RunState& st = state_;
  if (std::find(path.begin(), path.end(), index) != path.end()) {
    std::string chain;
    for (int i : path) chain += std::to_string(i) + " -> ";
    return Status::error(st.model->source() + ": subgraph " + std::to_string(index) + " runs itself (" + chain +
                         std::to_string(index) + "); recursive subgraphs are not supported");
  }
  if (st.subgraphs[index]) return Status::ok();
  auto owned = std::make_unique<Subgraph>(st, index);
  Subgraph& g = *owned;
  st.subgraphs[index] = std::move(owned);
  g.drop_dead_nodes();
  if (Status s = g.densify_sparse_constants(); !s) return s;
  if (Status s = g.resolve(); !s) return s;
  if (Status s = g.fold_constants(); !s) return s;
  for (const Node& n : g.nodes()) {
    st.stateful = st.stateful || n.runtime == RuntimeOp::assign_variable || is_random_op(n.info->op_code);
  }
  for (const Tensor& t : g.tensors()) st.stateful = st.stateful || t.info->is_variable;
  path.push_back(index);
  for (int callee : g.callees()) {
    if (Status s = build(callee, path); !s) return s;
  }
  path.pop_back();
  if (Status s = g.partition(); !s) return s;
  return g.check_runnable();
}

Status Interpreter::invoke() {
  state_.cancel_requested.store(false, std::memory_order_relaxed);  // a cancel stops the invoke it finds running
  Status s = entry_->invoke();
  record_child_deaths();
  return s;
}

// An isolated plugin's process that died during this interpreter's calls did not take this process with
// it, but it counts in the crash journal: repeated deaths on one model quarantine the plugin for it.
void Interpreter::record_child_deaths() { state_.env->record_plugin_deaths(*state_.journal); }

void Interpreter::reset_variables() {
  for (auto& g : state_.subgraphs) {
    if (g) g->reset_state();
  }
  for (ResourceVariable& v : state_.variables) {
    v.assigned = false;
    v.value.clear();
    v.shape.clear();
  }
}

std::vector<Fallback> Interpreter::fallbacks() const {
  std::vector<Fallback> all;
  for (const auto& g : state_.subgraphs) {
    if (g) all.insert(all.end(), g->fallbacks().begin(), g->fallbacks().end());
  }
  return all;
}

size_t Interpreter::arena_bytes() const { return sum([](const Subgraph& g) { return g.arena_bytes(); }); }
size_t Interpreter::naive_bytes() const { return sum([](const Subgraph& g) { return g.naive_bytes(); }); }
size_t Interpreter::folded_nodes() const { return sum([](const Subgraph& g) { return g.folded_nodes(); }); }
size_t Interpreter::folded_bytes() const { return sum([](const Subgraph& g) { return g.folded_bytes(); }); }
size_t Interpreter::dropped_nodes() const { return sum([](const Subgraph& g) { return g.dropped_nodes(); }); }

namespace {

// Position in `list` of the tensor named `name`, by tensor name or by a signature's names.
int find_io(const Subgraph& g, bool inputs, const std::string& name, const Model& model, const SignatureInfo* only) {
  const size_t count = inputs ? g.input_count() : g.output_count();
  auto tensor = [&](size_t i) -> const Tensor& { return inputs ? g.input(i) : g.output(i); };
  for (size_t i = 0; i < count; ++i) {
    if (tensor(i).info->name == name) return static_cast<int>(i);
  }
  for (const SignatureInfo& sig : model.signatures) {
    if (only ? &sig != only : sig.subgraph != g.index()) continue;
    for (const auto& [n, t] : inputs ? sig.inputs : sig.outputs) {
      if (n != name) continue;
      for (size_t i = 0; i < count; ++i) {
        if (tensor(i).index == t) return static_cast<int>(i);
      }
    }
  }
  return -1;
}

}  // namespace

int Interpreter::input_index(const std::string& name) const {
  return find_io(*entry_, true, name, *state_.model, signature_);
}
int Interpreter::output_index(const std::string& name) const {
  return find_io(*entry_, false, name, *state_.model, signature_);
}

}  // namespace baton
