// The cpu delegate's choice of nodes from the whole graph (select_nodes): the patterns partition.h lists,
// each whole or not at all, and a reason for the rest.
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"
#include "partition.h"
#include "patterns.h"

namespace baton::cpu {

baton_status PluginState::select(const baton_graph* graph, const int32_t* free_nodes, int32_t count,
                                 uint8_t* selected, baton_error* error) const {
  // Who reads each tensor: a depthwise output qualifies only when one node reads it, once.
  std::unordered_map<int32_t, int> readers;
  std::unordered_map<int32_t, int32_t> reader_node;
  for (int32_t n = 0; n < api->graph_node_count(graph); ++n) {
    const baton_node* node = api->graph_node(graph, n);
    if (!node) continue;
    for (int32_t i = 0; i < api->node_input_count(node); ++i) {
      const int32_t t = index_of(api, api->node_input(node, i));
      if (t < 0) continue;
      ++readers[t];
      reader_node[t] = n;
    }
  }
  std::unordered_map<int32_t, int32_t> position;  // free node index -> position in free_nodes
  for (int32_t i = 0; i < count; ++i) position[free_nodes[i]] = i;
  std::unordered_map<int32_t, int32_t> producer;  // tensor -> the node that writes it
  for (int32_t n = 0; n < api->graph_node_count(graph); ++n) {
    const baton_node* node = api->graph_node(graph, n);
    for (int32_t i = 0; node && i < api->node_output_count(node); ++i) producer[index_of(api, api->node_output(node, i))] = n;
  }
  // Whether node `n` (not selected) reads, through any chain of nodes, an output of a selected one: an
  // ADD of its output and a selected pattern's would put another delegate's nodes between two of this
  // delegate's, which the host then cannot keep in one partition.
  auto depends_on_selected = [&](int32_t n) {
    std::vector<int32_t> todo = {n};
    std::unordered_map<int32_t, bool> seen;
    while (!todo.empty()) {
      const baton_node* node = api->graph_node(graph, todo.back());
      todo.pop_back();
      for (int32_t i = 0; node && i < api->node_input_count(node); ++i) {
        const auto p = producer.find(index_of(api, api->node_input(node, i)));
        if (p == producer.end() || seen[p->second]) continue;
        seen[p->second] = true;
        const auto at = position.find(p->second);
        if (at != position.end() && selected[at->second]) return true;
        todo.push_back(p->second);
      }
    }
    return false;
  };
  // Patterns that end in a 1x1 convolution's output, which a residual ADD may join: (first node, output).
  std::vector<std::pair<int32_t, int32_t>> ends;

  // An activation node (a RELU) that alone reads a CONV_2D (or DEPTHWISE_CONV_2D) without a fused
  // activation of its own joins it:
  // its clamp is applied while the output is in cache. Returns the tensor the convolution's step ends in.
  auto take_activation = [&](const baton_node* conv) {
    const int32_t out = index_of(api, api->node_output(conv, 0));
    const int32_t code = api->node_builtin_code(conv);
    if ((code != BATON_OP_CONV_2D && code != BATON_OP_DEPTHWISE_CONV_2D) || api->node_output_count(conv) != 1 || readers[out] != 1 ||
        api->node_builtin_options(conv)->u.conv.activation != BATON_ACT_NONE) {
      return out;
    }
    const auto act_at = position.find(reader_node[out]);
    if (act_at == position.end() || selected[act_at->second]) return out;
    const baton_node* act = api->graph_node(graph, reader_node[out]);
    if (!activation_node_clamp(api->node_builtin_code(act)) || api->node_output_count(act) != 1) return out;
    selected[act_at->second] = 1;
    return index_of(api, api->node_output(act, 0));
  };
  // Every pattern computes in float32: an 8-bit node is passed over here, without a Refusal thrown for it
  // (a quantized model's every convolution would throw one, and a throw costs the unwinder's pages).
  auto not_float = [&](const baton_node* node, const char* what, std::string& reason) {
    const baton_tensor* in = api->node_input_count(node) > 0 ? api->node_input(node, 0) : nullptr;
    if (!in || api->tensor_type(in) == BATON_TYPE_FLOAT32) return false;
    reason = std::string(what) + " input of type " + baton_tensor_type_name(api->tensor_type(in)) + " (FLOAT32 only)";
    return true;
  };
  int pairs = 0;
  std::string last_reason;
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* dw = api->graph_node(graph, free_nodes[i]);
    if (!dw || api->node_builtin_code(dw) != BATON_OP_DEPTHWISE_CONV_2D || api->node_output_count(dw) != 1) continue;
    int32_t mid = index_of(api, api->node_output(dw, 0));
    if (readers[mid] != 1) continue;
    // An activation node the converter left between the two (read only by the convolution) joins them.
    const baton_node* activation = api->graph_node(graph, reader_node[mid]);
    const auto activation_at = position.find(reader_node[mid]);
    if (activation && activation_at != position.end() && activation_node_clamp(api->node_builtin_code(activation)) &&
        api->node_output_count(activation) == 1) {
      mid = index_of(api, api->node_output(activation, 0));
      if (readers[mid] != 1) continue;
    } else {
      activation = nullptr;
    }
    const auto conv_at = position.find(reader_node[mid]);
    if (conv_at == position.end()) continue;
    const baton_node* conv = api->graph_node(graph, reader_node[mid]);
    if (api->node_builtin_code(conv) != BATON_OP_CONV_2D || not_float(dw, "depthwise", last_reason)) continue;
    try {
      (void)PairSpec::read(api, dw, conv, activation);
    } catch (const kit::Refusal& r) {
      last_reason = r.what();
      continue;
    }
    if (activation) selected[activation_at->second] = 1;
    selected[i] = 1;
    selected[conv_at->second] = 1;
    ends.emplace_back(free_nodes[i], take_activation(conv));
    ++pairs;
  }
  // Convolutions no pair took: those with few output channels, then 1x1 ones (with a HARD_SWISH or an
  // activation node that alone reads them); and FULLY_CONNECTED, the same product over rows.
  std::string last_conv_reason, last_fc_reason;
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* conv = api->graph_node(graph, free_nodes[i]);
    if (selected[i] || !conv) continue;
    if (api->node_builtin_code(conv) == BATON_OP_FULLY_CONNECTED) {
      if (not_float(conv, "FULLY_CONNECTED", last_fc_reason)) continue;
      try {
        (void)PointwiseSpec::read_fully_connected(api, conv);
      } catch (const kit::Refusal& r) {
        last_fc_reason = r.what();
        continue;
      }
      selected[i] = 1;
      ends.emplace_back(free_nodes[i], index_of(api, api->node_output(conv, 0)));
      continue;
    }
    const bool transposed = is_transpose_conv_bias(api, conv);
    if ((!transposed && api->node_builtin_code(conv) != BATON_OP_CONV_2D) || not_float(conv, "convolution", last_conv_reason)) {
      continue;
    }
    try {
      (void)(transposed ? NarrowConvSpec::read_transpose_bias(api, conv) : NarrowConvSpec::read(api, conv));
      selected[i] = 1;
      if (!transposed) (void)take_activation(conv);
      continue;
    } catch (const kit::Refusal& r) {
      last_conv_reason = r.what();
    }
    if (transposed || api->node_output_count(conv) != 1) continue;
    const int32_t out = index_of(api, api->node_output(conv, 0));
    const auto hard_swish_at = readers[out] == 1 ? position.find(reader_node[out]) : position.end();
    const baton_node* hard_swish =
        hard_swish_at != position.end() ? api->graph_node(graph, reader_node[out]) : nullptr;
    if (hard_swish && (selected[hard_swish_at->second] || api->node_builtin_code(hard_swish) != BATON_OP_HARD_SWISH)) {
      hard_swish = nullptr;
    }
    try {
      (void)PointwiseSpec::read(api, conv, hard_swish);
    } catch (const kit::Refusal&) {
      hard_swish = nullptr;
      try {
        (void)PointwiseSpec::read(api, conv);
      } catch (const kit::Refusal& r) {
        last_conv_reason += std::string("; as a 1x1 convolution: ") + r.what();
        continue;
      }
    }
    selected[i] = 1;
    if (hard_swish) {
      selected[hard_swish_at->second] = 1;
    } else {
      ends.emplace_back(free_nodes[i], take_activation(conv));
    }
  }
  // A depthwise convolution no pair took (with the activation node after it), when a residual ADD joins
  // it below: (its position, the activation's or -1, the tensor the ADD must read). Those the ADD does
  // not join are let go again after.
  std::vector<std::array<int32_t, 3>> lone;
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* dw = api->graph_node(graph, free_nodes[i]);
    std::string unused;
    if (selected[i] || !dw || api->node_builtin_code(dw) != BATON_OP_DEPTHWISE_CONV_2D || api->node_output_count(dw) != 1 ||
        not_float(dw, "depthwise", unused)) {
      continue;
    }
    try {
      (void)PairSpec::read(api, dw, nullptr);
    } catch (const kit::Refusal&) {
      continue;
    }
    selected[i] = 1;
    const int32_t mid = index_of(api, api->node_output(dw, 0));
    const int32_t out = take_activation(dw);
    const int32_t act = out != mid ? position.at(reader_node[mid]) : -1;
    lone.push_back({i, act, out});
    ends.emplace_back(free_nodes[i], out);
  }
  // A residual ADD that alone reads a pattern's output (and an activation node that alone reads the ADD,
  // when the ADD has none of its own) joins the pattern. Its other input must exist before the pattern
  // runs: made by a node of another delegate, or by one of these that comes first.
  for (const auto& [first, t] : ends) {
    if (readers[t] != 1) continue;
    const auto add_at = position.find(reader_node[t]);
    if (add_at == position.end() || selected[add_at->second]) continue;
    const baton_node* add = api->graph_node(graph, reader_node[t]);
    int32_t other = residual_of(api, add, t);
    if (other < 0 || !add_clamp_of(api, add)) continue;
    // A shortcut that makes the other input (free nodes, each read only by the next): the step computes
    // it from its source, which must exist before the pattern runs instead.
    std::vector<int32_t> shortcut_nodes;
    Shortcut shortcut;
    for (;;) {
      const auto p = producer.find(other);
      const auto at = p != producer.end() ? position.find(p->second) : position.end();
      if (at == position.end() || selected[at->second] || readers[other] != 1 ||
          !read_shortcut(api, api->graph_node(graph, p->second), shortcut)) {
        break;
      }
      shortcut_nodes.push_back(at->second);
      other = index_of(api, api->node_input(api->graph_node(graph, p->second), 0));
    }
    if (const auto p = producer.find(other); p != producer.end()) {
      const auto at = position.find(p->second);
      const bool ours = at != position.end() && selected[at->second];
      if (ours ? p->second > first : depends_on_selected(p->second)) continue;
    }
    for (int32_t at : shortcut_nodes) selected[at] = 1;
    selected[add_at->second] = 1;
    const int32_t sum = index_of(api, api->node_output(add, 0));
    if (api->node_builtin_options(add)->u.elementwise.activation != BATON_ACT_NONE || readers[sum] != 1) continue;
    const auto act_at = position.find(reader_node[sum]);
    if (act_at == position.end() || selected[act_at->second]) continue;
    const baton_node* act = api->graph_node(graph, reader_node[sum]);
    if (activation_node_clamp(api->node_builtin_code(act)) && api->node_output_count(act) == 1) {
      selected[act_at->second] = 1;
    }
  }
  for (const auto& [i, act, out] : lone) {
    const auto add_at = readers[out] == 1 ? position.find(reader_node[out]) : position.end();
    if (add_at != position.end() && selected[add_at->second] &&
        api->node_builtin_code(api->graph_node(graph, reader_node[out])) == BATON_OP_ADD) {
      continue;
    }
    selected[i] = 0;
    if (act >= 0) selected[act] = 0;
  }
  std::string why = "takes only a DEPTHWISE_CONV_2D (float32, 3x3 or 5x5, stride 1 or 2) together with the 1x1 "
                    "CONV_2D that alone reads it (directly or through a RELU, RELU6 or RELU_N1_TO_1), or with the "
                    "residual ADD that alone reads it (or its RELU), CONV_2D or "
                    "Convolution2DTransposeBias with at most " +
                    std::to_string(NarrowConvSpec::kMaxOutChannels) + " output channels over at least " +
                    std::to_string(NarrowConvSpec::kMinOutputPixels) +
                    " output pixels, and 1x1 CONV_2D (stride 1, at least " +
                    std::to_string(PointwiseSpec::kMinOutputPixels) + " output pixels and " +
                    std::to_string(PointwiseSpec::kMinMultiplyAdds) +
                    " multiply-adds) with the HARD_SWISH that alone reads it; FULLY_CONNECTED (float32, constant "
                    "weights, at least " + std::to_string(PointwiseSpec::kMinOutputPixels) + " rows and " +
                    std::to_string(PointwiseSpec::kMinMultiplyAdds) + " multiply-adds); a RELU, RELU6 or "
                    "RELU_N1_TO_1 that alone reads such a convolution (without a fused activation); an ADD of such "
                    "a 1x1 convolution or FULLY_CONNECTED and a tensor of its shape, or of a shortcut that makes one (a 2x2 MAX_POOL_2D of "
                    "stride 2 and a PAD that appends channels, of an earlier tensor), and a RELU after it, with "
                    "the convolution";
  if (!last_reason.empty()) why += " (last pair refused: " + last_reason + ")";
  if (!last_conv_reason.empty()) why += " (last convolution refused: " + last_conv_reason + ")";
  if (!last_fc_reason.empty()) why += " (last FULLY_CONNECTED refused: " + last_fc_reason + ")";
  api->error_set(error, why.c_str());
  return BATON_OK;
}

}  // namespace baton::cpu
