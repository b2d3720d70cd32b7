// One subgraph of a model on its way through the stages of the data path, each in its own file:
//
//   subgraph.cc        build: the runtime's tensors and nodes over the model's (load is model.cc, which
//                      maps the file, and model_loader.cc, which checks it)
//   folder.cc          fold, before resolve: dead nodes dropped, sparse constants densified; after it:
//                      nodes whose inputs are all constant run once, their outputs become constants
//                      (which nodes: folder.h's dead_nodes and foldable_nodes, of the model alone)
//   resolver.cc        resolve: a kernel from the first op pack that declares each node's op and version;
//                      returns a NodeKernel per node
//   delegation.cc      partition: the delegate chain takes connected groups of nodes (partitioner.cc groups);
//                      returns a PartitionPlan (partitions, owners, refusals, execution order)
//   preparer.cc        prepare: shapes propagate in execution order; reports a failing partition
//   memory_plan.cc     plan memory: one arena for the non-constant tensors (arena_planner.cc places them);
//                      returns a MemoryPlan (each tensor's offset, the arena's size)
//   executor.cc        invoke: the steps in order; reports a failing step
//   fallback.cc        the fallback policy and the drivers of prepare (then plan memory) and invoke: who
//                      takes what a plugin gave up, whether a run is repeated
//   runtime_nodes.cc   the nodes the runtime runs itself: CALL_ONCE, resource variables, and
//   subgraph_calls.cc    WHILE, IF, STABLEHLO_CASE and STABLEHLO_COMPOSITE (dynamic outputs where shapes
//                        change at invoke)
//   hashtables.cc        the hash tables of TFLite's lookup ops
//
// Subgraph 0 (or a signature's subgraph) is where an Interpreter starts; WHILE, IF and CALL_ONCE run
// other subgraphs, each resolved, folded, partitioned, planned and prepared like the first, so their
// bodies run on the delegate chain too. interpreter.cc runs the stages up to partitioning in this order. What the subgraphs of one interpreter share (environment, model,
// crash journal, cancellation, resource variables) is its RunState.
#pragma once

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "crash_journal.h"
#include "delegation.h"
#include "environment.h"
#include "graph.h"
#include "model.h"
#include "status.h"

namespace baton {

struct InterpreterOptions {
  int subgraph = 0;       // where invoke starts (a signature, when given, decides instead)
  std::string signature;  // a signature key of the model: run its subgraph, name tensors by its names
  bool strict = false;    // fail when any node would run on an op pack instead of a delegate
};

// Where a node runs, for reports.
struct Placement {
  // "delegate", "op-pack", "runtime" (control flow, variables), "folded" or "dropped" (dead: nothing reads
  // its outputs)
  std::string kind;
  std::string plugin;
  int partition = -1;
};

// One time a plugin lost nodes it had taken: a delegate's partition, or an op pack's node.
struct Fallback {
  std::string plugin;
  int partition = -1;  // -1 for an op pack
  std::string stage;   // "init", "prepare" or "invoke"
  std::string reason;
  std::vector<int> nodes;
  int subgraph = 0;
};

class Subgraph;

// What one pass of prepare (preparer.cc) or invoke (executor.cc) over the steps came to. The stages report;
// the fallback policy (fallback.cc) decides what follows: partition again, hand a node on, repeat the run.
struct StepFailure {
  Partition* partition = nullptr;  // a delegate failed this partition ...
  Node* node = nullptr;            // ... or an op pack this node (invoke only: prepare hands a node on itself)
  std::string reason;              // the plugin's own words ("no reason given" when it gave none)
};
struct PassOutcome {
  Status status;                      // an error no fallback can help: returned as it is
  std::optional<StepFailure> failure;  // a plugin failed a step, for the fallback policy
  static PassOutcome done() { return {}; }
  static PassOutcome error(Status s) { return {std::move(s), std::nullopt}; }
  static PassOutcome failed(Partition* p, Node* n, std::string reason) {
    return {Status::ok(), StepFailure{p, n, std::move(reason)}};
  }
};

// A resource variable (VAR_HANDLE / ASSIGN_VARIABLE / READ_VARIABLE): its value lives here, outside any
// arena, from its first assignment until the interpreter goes or its variables are reset.
struct ResourceVariable {
  std::string container;
  std::string shared_name;
  bool assigned = false;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> value;
};

// A hash table of TFLite's lookup ops (hashtables.cc): int64 keys to string values, or string keys to
// int64 values, the two kinds TFLite 2.9 has. Filled by the first HASHTABLE_IMPORT, kept until the
// interpreter goes.
struct HashTable {
  struct TextHash {  // looks string_views up without making strings
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  baton_tensor_type key_type = BATON_TYPE_INT64;
  baton_tensor_type value_type = BATON_TYPE_STRING;
  bool imported = false;
  std::unordered_map<int64_t, std::string> text_of;    // int64 keys
  std::unordered_map<std::string, int64_t, TextHash, std::equal_to<>> number_of;  // string keys
};

// What the subgraphs of one interpreter share.
struct RunState {
  std::shared_ptr<Environment> env;
  std::shared_ptr<const Model> model;
  InterpreterOptions options;
  std::unique_ptr<CrashJournal> journal;
  std::map<std::string, std::string> quarantined;  // plugins the crash journal keeps away, with the reason
  std::atomic<bool> cancel_requested{false};
  // A model that keeps state (variable tensors, resource variables, random ops' generators) is never re-run
  // after a failing first run: its state has moved.
  bool stateful = false;
  std::vector<std::unique_ptr<Subgraph>> subgraphs;  // by model index; null where nothing runs it
  int entry = 0;                                     // the subgraph invoke starts from
  std::vector<ResourceVariable> variables;           // by resource id
  std::map<int32_t, HashTable> tables;               // by table id (HashtableOptions.table_id)
  // The id of the variable (container, shared_name), made on first use.
  int32_t variable_id(const std::string& container, const std::string& shared_name);
};

class Subgraph {
 public:
  // Builds the runtime graph of the model's subgraph `index`.
  Subgraph(RunState& state, int index);
  ~Subgraph();  // also returns the arena unpoisoned under AddressSanitizer
  Subgraph(const Subgraph&) = delete;
  Subgraph& operator=(const Subgraph&) = delete;

  // The stages up to partitioning, in this order (prepare needs the shapes the caller gives the inputs).
  void drop_dead_nodes();
  Status densify_sparse_constants();
  Status resolve();
  Status fold_constants();
  Status partition();
  Status check_runnable() const;
  // Prepares every step, then plans memory; a partition that fails goes back and the graph is partitioned
  // again (fallback.cc).
  Status prepare_with_fallback();
  Status ensure_prepared() { return needs_prepare_ ? prepare_with_fallback() : Status::ok(); }
  // A resize asked for prepare and planning, which have not run since: tensor memory is the old shapes'.
  bool needs_prepare() const { return needs_prepare_; }
  Status resize_input(size_t i, const std::vector<int32_t>& shape);
  // The value of a string input: TFLite's packed buffer (baton/string_tensor.hpp) of as many strings as
  // the input's shape has elements, copied.
  Status set_string_input(size_t i, const void* data, size_t size);
  // Runs the steps; on a failure, the fallback policy's answer (fallback.cc).
  Status invoke();
  // Returns variable tensors to zero and lets CALL_ONCE nodes run again (resource variables are the
  // RunState's).
  void reset_state();

  int index() const { return index_; }
  const SubgraphInfo& info() const { return *graph_; }
  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }
  Tensor& input(size_t i) { return *inputs_[i]; }
  Tensor& output(size_t i) { return *outputs_[i]; }
  const Tensor& input(size_t i) const { return *inputs_[i]; }
  const Tensor& output(size_t i) const { return *outputs_[i]; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  Placement placement(size_t node) const;
  const std::vector<Refusal>& refusals(size_t node) const { return plan_.refusals.at(node); }
  const std::vector<std::unique_ptr<Partition>>& partitions() const { return plan_.partitions; }
  const std::vector<Fallback>& fallbacks() const { return fallbacks_; }
  size_t arena_bytes() const { return arena_bytes_; }
  size_t naive_bytes() const { return naive_bytes_; }
  size_t folded_nodes() const { return folded_nodes_; }
  size_t dropped_nodes() const { return dropped_nodes_; }
  size_t folded_bytes() const { return folded_bytes_; }
  // Steps are host nodes and partitions, in execution order.
  void set_profiling(bool on) { profiling_ = on; }
  size_t step_count() const { return plan_.steps.size(); }
  std::string step_op(size_t i) const;
  std::string step_plugin(size_t i) const;
  int step_node(size_t i) const { return plan_.steps[i].node ? plan_.steps[i].node->info->index : -1; }
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  void reset_profile() { step_seconds_.assign(plan_.steps.size(), 0.0); }
  // The subgraphs this one's control-flow nodes run.
  std::vector<int> callees() const;

 private:
  // folder.cc
  Status fold(Node& node);
  uint8_t* own_constant(size_t bytes);
  // resolver.cc
  baton_status init_and_prepare(Node& node, baton_error& error);  // init once, then prepare
  void release_kernel(Node& node);
  // fallback.cc
  bool may_rerun_first_invoke() const;
  // Whether a run that failed in `plugin` is repeated without it: on the first run of a stateless model,
  // and on any run of one when the plugin runs in a process of its own (its process died, or the work
  // it held went with an earlier death).
  bool may_rerun_after(const LoadedPlugin& plugin) const;
  // A delegate gave up partition `p` at `stage`: it loses its nodes and the graph is partitioned again.
  // An isolated delegate failing a run loses every partition it has here: what it prepared for them lived
  // in the same process.
  Status give_up_partition(Partition& p, const std::string& stage, const std::string& reason);
  void lose_partition(LoadedPlugin& plugin, int32_t id, const std::vector<Node*>& nodes, const std::string& stage,
                      const std::string& reason);
  // The op pack after the node's current one, in resolution order, that declares the node's op and
  // version and is held (hold_plugin), or null.
  LoadedPlugin* next_op_pack(const Node& node);
  // This subgraph uses `plugin` (an op pack's kernels, a delegate's partitions) until it is destroyed, or
  // until let_go(): acquired once (loaded again if it was parked) and released in the destructor.
  Status hold_plugin(LoadedPlugin& plugin);
  void let_go(LoadedPlugin& plugin);
  // An op pack gave up `node` at `stage` ("prepare" or "invoke"): logged, recorded, and `next` takes it.
  void hand_to_op_pack(Node& node, LoadedPlugin& next, const std::string& stage, const std::string& why);
  // subgraph.cc, around the partition stage (delegation.cc)
  void free_partitions();
  std::string unrunnable_reason(const Node& node) const;
  // preparer.cc: one pass of prepare over the steps, in execution order (shapes propagate)
  PassOutcome prepare_steps();
  // executor.cc: one run of the steps
  PassOutcome run_steps();
  Status check_string_inputs() const;
  Status prepare_at_invoke(Node& node);
  Status give_dynamic_memory(const Node& node, Tensor& tensor);
  Status grow_heap(Tensor& t, size_t bytes);
  Status check_string_outputs(const Node& node) const;
  // memory_plan.cc
  Status place_tensors();  // plan_memory (memory_plan.h), then the arena and the tensors pointed into it
  // runtime_nodes.cc
  Status prepare_runtime_node(Node& node);
  Status invoke_runtime_node(Node& node);
  Subgraph& callee(const Node& node, int which) const;
  bool read_may_change_shape(const Node& read) const;
  // hashtables.cc: HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND, HASHTABLE_SIZE
  Status prepare_hashtable_node(Node& node);
  Status invoke_hashtable_node(Node& node);
  // subgraph_calls.cc: WHILE, IF, STABLEHLO_CASE and STABLEHLO_COMPOSITE, whose outputs may change shape
  // at invoke
  Status prepare_while(Node& node);
  Status prepare_if(Node& node);
  Status prepare_case(Node& node);
  Status prepare_composite(Node& node);
  struct Branch {
    Subgraph* graph;
    const char* role;  // for messages: "then", "decomposition", ...
  };
  Status prepare_branches(Node& node, std::span<const Branch> branches, size_t first);
  Status run_branch(Node& node, Subgraph& branch, size_t first);
  Status invoke_composite(Node& node);
  Status invoke_while(Node& node);
  Status invoke_dynamic_while(Node& node);
  Status invoke_if(Node& node);
  Status invoke_case(Node& node);

  std::string node_label(const Node& node) const;
  const std::string& source() const { return state_.model->source(); }

  RunState& state_;
  int index_ = 0;
  const SubgraphInfo* graph_ = nullptr;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::vector<Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  std::vector<const Tensor*> string_inputs_;  // checked for a value before each invoke
  std::vector<bool> foldable_;           // by foldable_nodes(); folding may still fail and leave one
  std::vector<std::string> unresolved_;  // why no op pack runs a node ("" when one does)
  PartitionPlan plan_;  // the partition stage's latest answer
  // What delegates with select_nodes see (node_selection.h).
  GraphView graph_view_{&nodes_, &tensors_};
  // Delegates a node may no longer go to, after one of them lost it.
  std::vector<std::vector<const LoadedPlugin*>> excluded_;
  std::vector<Fallback> fallbacks_;
  std::vector<LoadedPlugin*> held_plugins_;  // acquired by hold_plugin(), released after the nodes' kernel states
                                            // and the partitions
  // Heap memory, or a shared block (isolation/shared_memory.h) when a plugin runs in another process.
  std::shared_ptr<uint8_t> arena_;
  size_t arena_bytes_ = 0;
  size_t naive_bytes_ = 0;
  // Constants made at load (folded nodes, densified tensors); the tensors point into these.
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> owned_constants_;
  size_t folded_nodes_ = 0;
  size_t dropped_nodes_ = 0;
  size_t folded_bytes_ = 0;
  bool needs_prepare_ = true;
  bool invoked_ = false;
  bool profiling_ = false;
  std::vector<double> step_seconds_;
};

}  // namespace baton
