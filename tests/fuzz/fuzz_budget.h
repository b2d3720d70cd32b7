// The work budget of one fuzz iteration: the harness's limits bound memory, not time, so fuzz_interpreter
// skips a model whose estimated work would run past its watchdog's second even with the sanitizers off,
// and the regression test (which invokes every saved finding) skips the same ones. A valid model can take
// minutes: a few megabytes of weights times a few thousand time steps is not a finding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "model.h"

namespace baton::fuzz {

inline double elements(const SubgraphInfo& g, int32_t tensor) {
  if (tensor < 0 || tensor >= static_cast<int32_t>(g.tensors.size())) return 0;
  double n = 1;
  for (int32_t d : g.tensors[static_cast<size_t>(tensor)].shape) n *= d > 0 ? d : 0;
  return n;
}

// A tensor's positions with every empty dimension counted as one: what a loop over the others visits
// (a window over no channels still walks its positions, an input of no channels still has its pixels),
// from `first` to the dimension before `end` (the whole shape by default).
inline double positions(const SubgraphInfo& g, int32_t tensor, size_t first = 0, size_t end = SIZE_MAX) {
  if (tensor < 0 || tensor >= static_cast<int32_t>(g.tensors.size())) return 0;
  const auto& shape = g.tensors[static_cast<size_t>(tensor)].shape;
  double n = 1;
  for (size_t d = first; d < std::min(end, shape.size()); ++d) n *= std::max(shape[d], 1);
  return n;
}

// Multiplications a node's kernel does, estimated: a product (convolution, fully connected, recurrent
// step, matrix product) does one per weight for every row of its output; a pool one per window element
// for every output element. A few megabytes of weights times a few thousand time steps is a valid model
// that takes minutes, not a finding. The rows are counted from the input as well as from the declared
// output: prepare sets the output's shape, so a declared [1, 1, 1, C] says nothing of a mutated input
// of a million pixels.
inline double node_multiplies(const SubgraphInfo& g, const NodeInfo& n) {
  static const std::set<std::string> products = {
      "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL", "CONV_3D",
      "CONV_3D_TRANSPOSE", "LSTM", "RNN", "SVDF", "UNIDIRECTIONAL_SEQUENCE_RNN", "UNIDIRECTIONAL_SEQUENCE_LSTM",
      "BIDIRECTIONAL_SEQUENCE_RNN", "BIDIRECTIONAL_SEQUENCE_LSTM"};
  static const std::set<std::string> pools = {"AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"};
  if (n.outputs.empty()) return 0;
  const std::string name = op_name(n.op_code);
  auto input = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; };
  auto rank = [&](int32_t t) {
    return t < 0 || t >= static_cast<int32_t>(g.tensors.size()) ? size_t{0} : g.tensors[static_cast<size_t>(t)].shape.size();
  };
  double rows = 0;
  for (int32_t out : n.outputs) rows += positions(g, out, 0, rank(out) == 0 ? 0 : rank(out) - 1);
  if (products.count(name)) {
    // The data input: TRANSPOSE_CONV and CONV_3D_TRANSPOSE take the output's shape first.
    const bool transposed = name == "TRANSPOSE_CONV" || name == "CONV_3D_TRANSPOSE";
    const int32_t data = input(transposed ? 2 : 0);
    double input_rows = positions(g, data, 0, rank(data) == 0 ? 0 : rank(data) - 1);
    if (name == "FULLY_CONNECTED" && rank(input(1)) > 0) {
      input_rows = positions(g, data) / positions(g, input(1), rank(input(1)) - 1);  // flattened to the weights' depth
    } else if (name == "BATCH_MATMUL" && n.options.u.batch_matmul.adj_x && rank(data) >= 2) {
      input_rows = positions(g, data, 0, rank(data) - 2) * positions(g, data, rank(data) - 1);
    }
    rows = std::max(rows, input_rows);
    double weights = 0;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (!(transposed && i == 2)) weights += positions(g, n.inputs[i]);
    }
    // TFLite 2.9's hybrid time-major BIDIRECTIONAL_SEQUENCE_RNN runs the whole sequence once per time
    // step (the builtin pack does the same, bit for bit): its work grows with the square of the time.
    if (name == "BIDIRECTIONAL_SEQUENCE_RNN" && n.options.u.recurrent.time_major && n.inputs.size() > 1 &&
        n.inputs[1] >= 0 && n.inputs[1] < static_cast<int32_t>(g.tensors.size()) &&
        g.tensors[static_cast<size_t>(n.inputs[1])].type == BATON_TYPE_INT8 && n.inputs[0] >= 0 &&
        n.inputs[0] < static_cast<int32_t>(g.tensors.size())) {
      const auto& in = g.tensors[static_cast<size_t>(n.inputs[0])].shape;
      if (!in.empty() && in[0] > 1) rows *= in[0];
    }
    return weights * rows;
  }
  if (pools.count(name)) {
    // A pool's output has no more positions than its input (strides of at least one).
    const baton_pool_options& p = n.options.u.pool;
    return std::max(positions(g, n.outputs[0]), positions(g, input(0))) *
           std::max(1.0, double(p.filter_w) * double(p.filter_h));
  }
  return 0;
}

// Window folds of REDUCE_WINDOW and STABLEHLO_REDUCE_WINDOW: every output element folds every position of
// its window, padding and base-dilation holes included, so a window of 1e10 positions over a 5x6 operand
// is hours of work on a valid model. Each fold costs about 4 ns in a release build (8 multiplies here).
constexpr double kMultipliesPerFold = 8;
constexpr int32_t kStablehloReduceWindowOptionsKind = BATON_OPTIONS_2_KIND + 13;  // StablehloReduceWindowOptions

// The output length of one dimension from its length, window, stride, dilations and padding (low plus high),
// as the kernel computes it.
inline double window_outputs(double n, double window, double stride, double base_dilation, double window_dilation,
                             double pad) {
  const double extent = (n <= 0 ? 0 : (n - 1) * base_dilation + 1) + pad;
  const double span = (window - 1) * window_dilation + 1;
  return extent < span || stride < 1 ? 0 : std::floor((extent - span) / stride) + 1;
}

inline double window_folds(const SubgraphInfo& g, const NodeInfo& n) {
  const std::string name = op_name(n.op_code);
  if (name != "REDUCE_WINDOW" && name != "STABLEHLO_REDUCE_WINDOW") return 0;
  if (n.inputs.empty() || n.inputs[0] < 0 || n.inputs[0] >= static_cast<int32_t>(g.tensors.size())) return 0;
  const auto& in = g.tensors[static_cast<size_t>(n.inputs[0])].shape;
  const size_t rank = in.size();
  // The i-th entry of an int64 array, or `absent` where the array is shorter.
  auto at = [](const int64_t* v, int32_t count, size_t i, double absent) {
    return v && i < static_cast<size_t>(std::max(count, 0)) ? static_cast<double>(v[i]) : absent;
  };
  double folds = 1;
  if (name == "STABLEHLO_REDUCE_WINDOW") {
    if (n.options.kind != kStablehloReduceWindowOptionsKind) return 0;  // prepare refuses it
    const baton_stablehlo_reduce_window_options& o = n.options.u.stablehlo_reduce_window;
    for (size_t d = 0; d < rank; ++d) {
      const double window = at(o.window_dimensions, o.window_dimensions_count, d, 1);
      const double pad = at(o.padding, o.padding_count, 2 * d, 0) + at(o.padding, o.padding_count, 2 * d + 1, 0);
      folds *= std::max(0.0, window) * window_outputs(in[d], window, at(o.window_strides, o.window_strides_count, d, 1),
                                       at(o.base_dilations, o.base_dilations_count, d, 1),
                                       at(o.window_dilations, o.window_dilations_count, d, 1), pad);
    }
    return folds;
  }
  // REDUCE_WINDOW: the window is constant input 2 (strides 3, dilations 4); prepare keeps it within the operand.
  auto constant = [&](size_t input) {
    std::vector<int64_t> v;  // copied: the model's bytes need not be 8-aligned
    if (input >= n.inputs.size() || n.inputs[input] < 0 || n.inputs[input] >= static_cast<int32_t>(g.tensors.size())) {
      return v;
    }
    const TensorInfo& t = g.tensors[static_cast<size_t>(n.inputs[input])];
    if (t.type != BATON_TYPE_INT64) return v;
    v.resize(t.data.size() / sizeof(int64_t));
    if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * sizeof(int64_t));
    return v;
  };
  const std::vector<int64_t> window = constant(2), stride = constant(3), dilation = constant(4);
  auto entry = [&](const std::vector<int64_t>& v, size_t d, double absent) {
    return at(v.data(), static_cast<int32_t>(v.size()), d, absent);
  };
  for (size_t d = 0; d < rank; ++d) {
    const double w = entry(window, d, in[d]);
    folds *= std::max(0.0, w) * window_outputs(in[d], w, entry(stride, d, 1), 1, entry(dilation, d, 1), 0);
  }
  return folds;
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
    for (const NodeInfo& n : g.nodes) multiplies += node_multiplies(g, n) + kMultipliesPerFold * window_folds(g, n);
    nodes += g.nodes.size();
  }
  return bytes_total <= (size_t(64) << 20) && nodes <= 2000 && multiplies <= kMaxMultiplies;
}

}  // namespace baton::fuzz
