// The work budget of one fuzz iteration: the harness's limits bound memory, not time, so fuzz_interpreter
// skips a model whose estimated work would run past its watchdog's second even with the sanitizers off,
// and the regression test (which invokes every saved finding) skips the same ones. A valid model can take
// minutes: a few megabytes of weights times a few thousand time steps is not a finding.
#pragma once

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>

#include "model.h"

namespace baton::fuzz {

inline double elements(const SubgraphInfo& g, int32_t tensor) {
  if (tensor < 0 || tensor >= static_cast<int32_t>(g.tensors.size())) return 0;
  double n = 1;
  for (int32_t d : g.tensors[static_cast<size_t>(tensor)].shape) n *= d > 0 ? d : 0;
  return n;
}

// Multiplications a node's kernel does, estimated: a product (convolution, fully connected, recurrent
// step, matrix product) does one per weight for every row of its output; a pool one per window element
// for every output element. A few megabytes of weights times a few thousand time steps is a valid model
// that takes minutes, not a finding.
inline double node_multiplies(const SubgraphInfo& g, const NodeInfo& n) {
  static const std::set<std::string> products = {
      "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL", "CONV_3D",
      "CONV_3D_TRANSPOSE", "LSTM", "RNN", "SVDF", "UNIDIRECTIONAL_SEQUENCE_RNN", "UNIDIRECTIONAL_SEQUENCE_LSTM",
      "BIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_LSTM"};
  static const std::set<std::string> pools = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"};
  if (n.outputs.empty()) return 0;
  const std::string name = op_name(n.op_code);
  double rows = 0;
  for (int32_t out : n.outputs) {
    if (out < 0 || out >= static_cast<int32_t>(g.tensors.size())) continue;
    const auto& shape = g.tensors[static_cast<size_t>(out)].shape;
    const double last = shape.empty() || shape.back() <= 0 ? 1 : shape.back();
    rows += elements(g, out) / last;
  }
  if (products.count(name)) {
    double weights = 0;
    for (size_t i = 1; i < n.inputs.size(); ++i) weights += elements(g, n.inputs[i]);
    // TFLite 2.9's hybrid time-major BIDIRECTIONAL_SEQUENCE_RNN runs the whole sequence once per time
    // step (the builtin pack does the same, bit for bit): its work grows with the square of the time.
    if (name == "BIDIRECTIONAL_SEQUENCE_RNN" && n.options.u.recurrent.time_major && n.inputs.size() > 1 &&
        n.inputs[1] >= 0 && n.inputs[1] < static_cast<int32_t>(g.tensors.size()) &&
        g.tensors[static_cast<size_t>(n.inputs[1])].type == BATON_TYPE_INT8 && n.inputs[0] >= 0 &&
        n.inputs[0] < static_cast<int32_t>(g.tensors.size())) {
      const auto& input = g.tensors[static_cast<size_t>(n.inputs[0])].shape;
      if (!input.empty() && input[0] > 1) rows *= input[0];
    }
    return weights * rows;
  }
  if (pools.count(name)) {
    const baton_pool_options& p = n.options.u.pool;
    return elements(g, n.outputs[0]) * std::max(1.0, double(p.filter_w) * double(p.filter_h));
  }
  return 0;
}

// A model past this runs for more than the watchdog's second even with the sanitizers off.
constexpr double kMaxMultiplies = 2e9;

// True when the model's tensors, nodes and estimated multiplications fit one fuzz iteration.
inline bool within_budget(const Model& model) {
  size_t bytes_total = 0, nodes = 0;
  double multiplies = 0;
  for (const SubgraphInfo& g : model.subgraphs) {
    for (const TensorInfo& t : g.tensors) {
      size_t bytes = 0;
      if (checked_byte_size(t.shape, t.type, &bytes)) bytes_total += bytes;
    }
    for (const NodeInfo& n : g.nodes) multiplies += node_multiplies(g, n);
    nodes += g.nodes.size();
  }
  return bytes_total <= (size_t(64) << 20) && nodes <= 2000 && multiplies <= kMaxMultiplies;
}

}  // namespace baton::fuzz
