// The interpreter runs subgraph 0 of a model: it resolves every node to an op-pack kernel, folds nodes
// whose inputs are all constant into constants (once, at load: float16 weights behind DEQUANTIZE and
// sparse weights behind DENSIFY cost nothing per invoke), prepares the remaining nodes in execution order
// (kernels set their outputs' shapes), plans one arena for all non-constant tensors and invokes the
// nodes in order. Resizing an input re-runs prepare and planning only.
#pragma once

#include <atomic>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "crash_journal.h"
#include "environment.h"
#include "graph.h"
#include "model.h"
#include "status.h"

namespace baton {

struct InterpreterOptions {
  int subgraph = 0;     // only subgraph 0 runs today
  bool strict = false;  // fail when any node would run on an op pack instead of a delegate
};

// Where a node runs, for reports.
struct Placement {
  std::string kind;  // "delegate", "op-pack", "folded" or "dropped" (dead: nothing reads its outputs)
  std::string plugin;
  int partition = -1;
};

struct Refusal {
  std::string plugin;
  std::string reason;
};

// One time a plugin lost nodes it had taken: a delegate's partition, or an op pack's node.
struct Fallback {
  std::string plugin;
  int partition = -1;  // -1 for an op pack
  std::string stage;  // "init", "prepare" or "invoke"
  std::string reason;
  std::vector<int> nodes;
};

class Interpreter {
 public:
  static Expected<std::unique_ptr<Interpreter>> create(std::shared_ptr<Environment> env,
                                                       std::shared_ptr<const Model> model,
                                                       const InterpreterOptions& options = {});
  ~Interpreter();  // also returns the arena unpoisoned under AddressSanitizer
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }
  Tensor& input(size_t i) { return *inputs_[i]; }
  Tensor& output(size_t i) { return *outputs_[i]; }
  const Tensor& input(size_t i) const { return *inputs_[i]; }
  const Tensor& output(size_t i) const { return *outputs_[i]; }
  // -1 when no input or output has that name (tensor name, or signature name of subgraph 0).
  int input_index(const std::string& name) const;
  int output_index(const std::string& name) const;

  // Gives input `i` a new shape; prepare and memory planning run again before the next invoke.
  Status resize_input(size_t i, const std::vector<int32_t>& shape);
  // Runs prepare and planning if a resize asked for it, so input memory can be written.
  Status ensure_prepared() { return needs_prepare_ ? prepare_with_fallback() : Status::ok(); }
  Status invoke();
  // Asks a running invoke (in another thread, or a signal handler: it is one atomic store) to stop at the
  // next step boundary; that invoke then fails with "invoke cancelled" and the outputs are incomplete.
  // A later invoke runs normally. Calling it when nothing runs cancels nothing.
  void cancel() { cancel_requested_.store(true, std::memory_order_relaxed); }

  const Model& model() const { return *model_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  Placement placement(size_t node) const;
  const std::vector<Refusal>& refusals(size_t node) const { return refusals_.at(node); }
  const std::vector<std::unique_ptr<Partition>>& partitions() const { return partitions_; }
  const std::vector<Fallback>& fallbacks() const { return fallbacks_; }
  // Plugins the crash journal keeps away from this model, with the reason.
  const std::map<std::string, std::string>& quarantined() const { return quarantined_; }
  size_t arena_bytes() const { return arena_bytes_; }
  size_t naive_bytes() const { return naive_bytes_; }
  size_t folded_nodes() const { return folded_nodes_; }
  // Nodes dropped at load because nothing reads their outputs (see dead_nodes in model.h).
  size_t dropped_nodes() const { return dropped_nodes_; }
  // Profiling: with it on, invoke adds each step's wall time; steps are host nodes and partitions.
  void set_profiling(bool on) { profiling_ = on; }
  size_t step_count() const { return steps_.size(); }
  // For a host node: its op and op pack; for a partition: "partition N" and its delegate.
  std::string step_op(size_t i) const;
  std::string step_plugin(size_t i) const;
  int step_node(size_t i) const { return steps_[i].node ? steps_[i].node->info->index : -1; }
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  void reset_profile() { step_seconds_.assign(steps_.size(), 0.0); }
  size_t folded_bytes() const { return folded_bytes_; }

 private:
  // One step of execution: a host node or a partition.
  struct Step {
    Node* node = nullptr;
    Partition* partition = nullptr;
  };

  Interpreter() = default;
  Status build();
  Status resolve();
  Status fold(Node& node);
  baton_status init_and_prepare(Node& node, baton_error& error);  // init once, then prepare
  void release_kernel(Node& node);
  LoadedPlugin* next_op_pack(const Node& node) const;
  uint8_t* own_constant(size_t bytes);
  Status partition();
  void free_partitions();
  Status check_runnable() const;
  std::string unrunnable_reason(const Node& node) const;
  // Prepares every step; a partition that fails goes back and the graph is partitioned again.
  Status prepare_with_fallback();
  Status prepare(Partition** failed, std::string* reason);
  Status plan_memory();
  void lose_partition(Partition& p, const std::string& stage, const std::string& reason);
  std::string node_label(const Node& node) const;

  std::shared_ptr<Environment> env_;
  std::shared_ptr<const Model> model_;
  InterpreterOptions options_;
  const SubgraphInfo* graph_ = nullptr;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::vector<Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  std::vector<bool> foldable_;           // by foldable_nodes(); folding may still fail and leave one
  std::vector<std::string> unresolved_;  // why no op pack runs a node ("" when one does)
  std::vector<std::vector<Refusal>> refusals_;
  std::vector<int> partition_of_;  // per node, index into partitions_ or -1
  std::vector<std::unique_ptr<Partition>> partitions_;
  // What delegates with select_nodes see, and their selection states of this round (node_selection.h).
  GraphView graph_view_{&nodes_, &tensors_};
  std::vector<std::pair<LoadedPlugin*, void*>> selections_;
  // Delegates a node may no longer go to, after one of them lost it.
  std::vector<std::vector<const LoadedPlugin*>> excluded_;
  std::vector<Fallback> fallbacks_;
  std::vector<Step> steps_;
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_{nullptr, &std::free};
  size_t arena_bytes_ = 0;
  size_t naive_bytes_ = 0;
  // Constants made at load (folded nodes, densified tensors); the tensors point into these.
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> owned_constants_;
  size_t folded_nodes_ = 0;
  size_t dropped_nodes_ = 0;
  size_t folded_bytes_ = 0;
  bool needs_prepare_ = true;
  bool invoked_ = false;
  std::atomic<bool> cancel_requested_{false};
  bool profiling_ = false;
  std::unique_ptr<CrashJournal> journal_;
  std::map<std::string, std::string> quarantined_;
  std::vector<double> step_seconds_;
};

}  // namespace baton
