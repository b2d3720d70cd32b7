// The interpreter runs a model from one subgraph (subgraph 0, or a signature's): it builds that subgraph
// and every subgraph its control flow runs, takes each through the stages of the data path (subgraph.h
// lists them and their files), and invokes the first. Resizing an input re-runs prepare and planning only.
// Everything a report needs of the other subgraphs is reachable through subgraph(i).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "subgraph.h"

namespace baton {

class Interpreter {
 public:
  static Expected<std::unique_ptr<Interpreter>> create(std::shared_ptr<Environment> env,
                                                       std::shared_ptr<const Model> model,
                                                       const InterpreterOptions& options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  size_t input_count() const { return entry_->input_count(); }
  size_t output_count() const { return entry_->output_count(); }
  Tensor& input(size_t i) { return entry_->input(i); }
  Tensor& output(size_t i) { return entry_->output(i); }
  const Tensor& input(size_t i) const { return entry_->input(i); }
  const Tensor& output(size_t i) const { return entry_->output(i); }
  // -1 when no input or output has that name (tensor name, or a name of the signature that runs: the one
  // given in the options, else those of the entry subgraph's signatures).
  int input_index(const std::string& name) const;
  int output_index(const std::string& name) const;

  // Gives input `i` a new shape; prepare and memory planning run again before the next invoke.
  Status resize_input(size_t i, const std::vector<int32_t>& shape) { return entry_->resize_input(i, shape); }
  // A string input's value: TFLite's packed buffer of as many strings as its shape has elements.
  Status set_string_input(size_t i, const void* data, size_t size) { return entry_->set_string_input(i, data, size); }
  // Runs prepare and planning if a resize asked for it, so input memory can be written.
  Status ensure_prepared() { return entry_->ensure_prepared(); }
  // A resize asked for prepare, which has not run since (tensor memory is still the old shapes').
  bool needs_prepare() const { return entry_->needs_prepare(); }
  Status invoke();
  // Asks a running invoke (in another thread, or a signal handler: it is one atomic store) to stop at the
  // next step boundary or loop iteration; that invoke then fails with "invoke cancelled" and the outputs
  // are incomplete. A later invoke runs normally. Calling it when nothing runs cancels nothing.
  void cancel() { state_.cancel_requested.store(true, std::memory_order_relaxed); }
  // Returns every variable to its initial value: variable tensors to zero, resource variables unassigned
  // (the CALL_ONCE nodes that initialise them run again on the next invoke).
  void reset_variables();

  const Model& model() const { return *state_.model; }
  const Environment& environment() const { return *state_.env; }
  // The subgraph invoke starts from, and any subgraph of the model (null where nothing runs it).
  int entry_subgraph() const { return entry_->index(); }
  size_t subgraph_count() const { return state_.subgraphs.size(); }
  const Subgraph* subgraph(size_t i) const { return state_.subgraphs.at(i).get(); }
  // The entry subgraph's graph and plan.
  const std::vector<Node>& nodes() const { return entry_->nodes(); }
  const std::vector<Tensor>& tensors() const { return entry_->tensors(); }
  Placement placement(size_t node) const { return entry_->placement(node); }
  const std::vector<Refusal>& refusals(size_t node) const { return entry_->refusals(node); }
  const std::vector<std::unique_ptr<Partition>>& partitions() const { return entry_->partitions(); }
  // Fallbacks of every subgraph.
  std::vector<Fallback> fallbacks() const;
  // Plugins the crash journal keeps away from this model, with the reason.
  const std::map<std::string, std::string>& quarantined() const { return state_.quarantined; }
  // Sums over every subgraph that runs.
  size_t arena_bytes() const;
  size_t naive_bytes() const;
  size_t folded_nodes() const;
  size_t folded_bytes() const;
  // Nodes dropped at load because nothing reads their outputs (see dead_nodes in folder.h).
  size_t dropped_nodes() const;
  // Profiling of the entry subgraph: with it on, invoke adds each step's wall time (a control-flow node's
  // step includes the subgraphs it runs).
  void set_profiling(bool on) { entry_->set_profiling(on); }
  size_t step_count() const { return entry_->step_count(); }
  // For a host node: its op and op pack; for a partition: "partition N" and its delegate.
  std::string step_op(size_t i) const { return entry_->step_op(i); }
  std::string step_plugin(size_t i) const { return entry_->step_plugin(i); }
  int step_node(size_t i) const { return entry_->step_node(i); }
  const std::vector<double>& step_seconds() const { return entry_->step_seconds(); }
  void reset_profile() { entry_->reset_profile(); }

 private:
  void record_child_deaths();
  Interpreter() = default;
  // Builds subgraph `index` and those it runs, each resolved and partitioned; `path` finds recursion.
  Status build(int index, std::vector<int>& path);
  template <typename F>
  size_t sum(F f) const {
    size_t total = 0;
    for (const auto& g : state_.subgraphs) total += g ? f(*g) : 0;
    return total;
  }

  RunState state_;
  Subgraph* entry_ = nullptr;
  const SignatureInfo* signature_ = nullptr;
};

}  // namespace baton
