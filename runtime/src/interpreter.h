// The interpreter runs subgraph 0 of a model: it resolves every node to an op-pack kernel, folds nodes
// whose inputs are all constant into constants (once, at load: float16 weights behind DEQUANTIZE and
// sparse weights behind DENSIFY cost nothing per invoke), prepares the remaining nodes in execution order
// (kernels set their outputs' shapes), plans one arena for all non-constant tensors and invokes the
// nodes in order. Resizing an input re-runs prepare and planning only.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "environment.h"
#include "graph.h"
#include "model.h"
#include "status.h"

namespace baton {

struct InterpreterOptions {
  int subgraph = 0;  // only subgraph 0 runs today
};

// Where a node runs, for reports.
struct Placement {
  std::string plugin;
  std::string kind;  // "op-pack" or "delegate"
  int partition = -1;
};

class Interpreter {
 public:
  static Expected<std::unique_ptr<Interpreter>> create(std::shared_ptr<Environment> env,
                                                       std::shared_ptr<const Model> model,
                                                       const InterpreterOptions& options = {});
  ~Interpreter();
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
  Status ensure_prepared() { return needs_prepare_ ? prepare() : Status::ok(); }
  Status invoke();

  const Model& model() const { return *model_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  Placement placement(size_t node) const;
  size_t arena_bytes() const { return arena_bytes_; }
  size_t folded_nodes() const { return folded_nodes_; }
  size_t folded_bytes() const { return folded_bytes_; }
  size_t naive_bytes() const { return naive_bytes_; }

 private:
  Interpreter() = default;
  Status build();
  Status resolve();
  Status fold(Node& node);
  uint8_t* own_constant(size_t bytes);
  Status prepare();
  Status plan_memory();
  std::string node_label(const Node& node) const;

  std::shared_ptr<Environment> env_;
  std::shared_ptr<const Model> model_;
  const SubgraphInfo* graph_ = nullptr;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::vector<Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_{nullptr, &std::free};
  size_t arena_bytes_ = 0;
  size_t naive_bytes_ = 0;
  // Constants made at load (folded nodes, densified tensors); the tensors point into these.
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> owned_constants_;
  size_t folded_nodes_ = 0;
  size_t folded_bytes_ = 0;
  bool needs_prepare_ = true;
};

}  // namespace baton
