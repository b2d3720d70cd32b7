#include "partition.h"

#include <array>
#include <optional>
#include <unordered_map>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"

namespace baton::cpu {
namespace {

using kit::refuse;

constexpr int32_t kAdd = 0, kConv2d = 3, kDepthwiseConv2d = 4, kMaxPool2d = 17, kPad = 34;

int32_t index_of(const baton_host_api* api, const baton_tensor* t) { return t ? api->tensor_index(t) : -1; }

bool is_transpose_conv_bias(const baton_host_api* api, const baton_node* node) {
  const char* name = api->node_builtin_code(node) == BATON_OP_CUSTOM ? api->node_custom_name(node) : nullptr;
  return name && std::string(name) == "Convolution2DTransposeBias" && api->node_version(node) == 1;
}

// The convolution's spec when it is one NarrowConv runs, else nothing.
std::optional<NarrowConvSpec> narrow_spec(const baton_host_api* api, const baton_node* conv) {
  try {
    return NarrowConvSpec::read(api, conv);
  } catch (const kit::Refusal&) {
    return std::nullopt;
  }
}

// The ADD that reads tensor `t` and another of the same shape (no broadcasting), float32: the index of
// its other input, or -1 when `add` is not such a node.
int32_t residual_of(const baton_host_api* api, const baton_node* add, int32_t t) {
  if (!add || api->node_builtin_code(add) != kAdd || api->node_input_count(add) != 2 ||
      api->node_output_count(add) != 1) {
    return -1;
  }
  const baton_tensor* a = api->node_input(add, 0);
  const baton_tensor* b = api->node_input(add, 1);
  const baton_tensor* out = api->node_output(add, 0);
  if (!a || !b || !out || index_of(api, a) == index_of(api, b)) return -1;
  const baton_tensor* other = index_of(api, a) == t ? b : index_of(api, b) == t ? a : nullptr;
  if (!other) return -1;
  for (const baton_tensor* x : {a, b, out}) {
    if (api->tensor_type(x) != BATON_TYPE_FLOAT32 || shape_of(api, x) != shape_of(api, out)) return -1;
  }
  return index_of(api, other);
}

// Adds `node` to the shortcut `s` (see Shortcut) when it is a part of one: a MAX_POOL_2D (2x2, stride 2, no
// activation) or a PAD with constant paddings that appends channels only, float32 NHWC, one of each at
// most (in either order: the pool of zero channels is zero).
bool read_shortcut(const baton_host_api* api, const baton_node* node, Shortcut& s) {
  if (!node || api->node_output_count(node) != 1 || api->node_input_count(node) < 1) return false;
  const baton_tensor* in = api->node_input(node, 0);
  const baton_tensor* out = api->node_output(node, 0);
  if (!in || !out || api->tensor_type(in) != BATON_TYPE_FLOAT32 || api->tensor_type(out) != BATON_TYPE_FLOAT32 ||
      shape_of(api, in).size() != 4 || shape_of(api, out).size() != 4) {
    return false;
  }
  const int32_t code = api->node_builtin_code(node);
  if (code == kMaxPool2d && !s.pool) {
    const baton_pool_options& o = api->node_builtin_options(node)->u.pool;
    if (o.filter_w != 2 || o.filter_h != 2 || o.stride_w != 2 || o.stride_h != 2 || o.activation != BATON_ACT_NONE) {
      return false;
    }
    s.pool = true;
    s.pool_same = o.padding == BATON_PADDING_SAME;
    return true;
  }
  if (code != kPad || api->node_input_count(node) != 2 || s.pad_channels > 0) return false;
  const baton_tensor* paddings = api->node_input(node, 1);
  if (!paddings || !api->tensor_is_constant(paddings) || !api->tensor_data(paddings) ||
      shape_of(api, paddings) != std::vector<int32_t>{4, 2}) {
    return false;
  }
  int64_t p[8];
  const void* data = api->tensor_data(paddings);
  if (api->tensor_type(paddings) == BATON_TYPE_INT32) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<const int32_t*>(data)[i];
  } else if (api->tensor_type(paddings) == BATON_TYPE_INT64) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<const int64_t*>(data)[i];
  } else {
    return false;
  }
  for (int i = 0; i < 7; ++i) {
    if (p[i] != 0) return false;
  }
  if (p[7] <= 0 || p[7] > 1 << 20) return false;
  s.pad_channels = static_cast<int>(p[7]);
  return true;
}

// The clamp of the ADD's fused activation, or nothing for one the cpu delegate does not take.
std::optional<Clamp> add_clamp_of(const baton_host_api* api, const baton_node* add) {
  try {
    return activation_clamp(api->node_builtin_options(add)->u.elementwise.activation, "ADD");
  } catch (const kit::Refusal&) {
    return std::nullopt;
  }
}

}  // namespace

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
    if ((code != kConv2d && code != kDepthwiseConv2d) || api->node_output_count(conv) != 1 || readers[out] != 1 ||
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
  int pairs = 0;
  std::string last_reason;
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* dw = api->graph_node(graph, free_nodes[i]);
    if (!dw || api->node_builtin_code(dw) != kDepthwiseConv2d || api->node_output_count(dw) != 1) continue;
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
    if (api->node_builtin_code(conv) != kConv2d) continue;
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
  // activation node that alone reads them).
  std::string last_conv_reason;
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* conv = api->graph_node(graph, free_nodes[i]);
    if (selected[i] || !conv) continue;
    const bool transposed = is_transpose_conv_bias(api, conv);
    if (!transposed && api->node_builtin_code(conv) != kConv2d) continue;
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
    if (hard_swish && (selected[hard_swish_at->second] || api->node_builtin_code(hard_swish) != kHardSwish)) {
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
    if (selected[i] || !dw || api->node_builtin_code(dw) != kDepthwiseConv2d || api->node_output_count(dw) != 1) continue;
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
        api->node_builtin_code(api->graph_node(graph, reader_node[out])) == kAdd) {
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
                    " multiply-adds) with the HARD_SWISH that alone reads it; a RELU, RELU6 or RELU_N1_TO_1 that "
                    "alone reads such a convolution (without a fused activation); an ADD of such a 1x1 "
                    "convolution and a tensor of its shape, or of a shortcut that makes one (a 2x2 MAX_POOL_2D of "
                    "stride 2 and a PAD that appends channels, of an earlier tensor), and a RELU after it, with "
                    "the convolution";
  if (!last_reason.empty()) why += " (last pair refused: " + last_reason + ")";
  if (!last_conv_reason.empty()) why += " (last convolution refused: " + last_conv_reason + ")";
  api->error_set(error, why.c_str());
  return BATON_OK;
}

void Partition::build(const baton_partition* partition) {
  const baton_host_api* api = plugin_.api;
  std::unordered_map<int32_t, baton_tensor*> outputs;  // partition outputs by tensor index
  for (int32_t i = 0; i < api->partition_output_count(partition); ++i) {
    baton_tensor* t = api->partition_output(partition, i);
    outputs[api->tensor_index(t)] = t;
  }
  std::unordered_map<int32_t, baton_tensor*> inputs;
  for (int32_t i = 0; i < api->partition_input_count(partition); ++i) {
    baton_tensor* t = api->partition_input(partition, i);
    inputs[api->tensor_index(t)] = t;
  }
  const int32_t count = api->partition_node_count(partition);
  std::vector<bool> used(static_cast<size_t>(count), false);
  std::unordered_map<int32_t, Place> produced;  // outputs of earlier steps, by tensor index
  // Where tensor `t` is, if it exists before the current step runs: an earlier step's output, or a
  // partition input.
  auto existing = [&](int32_t t, Place& where, const baton_tensor*& host) {
    if (auto p = produced.find(t); p != produced.end()) {
      where = p->second;
      return true;
    }
    if (auto h = inputs.find(t); h != inputs.end()) {
      where.host = h->second;
      host = h->second;
      return true;
    }
    return false;
  };
  // Where a step reads tensor `in` and writes `out` (a partition output, or a buffer of the partition);
  // then the step joins the list.
  auto place = [&](Step& step, int32_t in, int32_t out) {
    if (!existing(in, step.in, step.in_tensor)) {
      refuse("tensor " + std::to_string(in) + " is read before the partition produces it");
    }
    if (auto h = outputs.find(out); h != outputs.end()) {
      step.out.host = h->second;
    } else {
      step.out.buffer = buffers_++;
    }
    produced[out] = step.out;
    steps_.push_back(std::move(step));
  };
  // The residual ADD select took after a step that writes `out` (and the activation node after it): the
  // step takes it, and `out` becomes what the last of them writes.
  std::unordered_map<int32_t, int> reads;  // how often the partition's nodes read each tensor
  std::unordered_map<int32_t, int32_t> made_by;  // tensor -> the partition node that writes it
  for (int32_t n = 0; n < count; ++n) {
    const baton_node* node = api->partition_node(partition, n);
    for (int32_t i = 0; i < api->node_input_count(node); ++i) ++reads[index_of(api, api->node_input(node, i))];
    for (int32_t i = 0; i < api->node_output_count(node); ++i) made_by[index_of(api, api->node_output(node, i))] = n;
  }
  // The shortcut (see Shortcut) that makes a residual ADD's other input `t` here, as select took it: its
  // nodes are marked used, and `t` becomes its source.
  auto take_shortcut = [&](int32_t& t) {
    Shortcut shortcut;
    for (auto m = made_by.find(t); m != made_by.end() && !used[m->second] && !outputs.count(t) && reads[t] == 1;
         m = made_by.find(t)) {
      const baton_node* node = api->partition_node(partition, m->second);
      if (!read_shortcut(api, node, shortcut)) break;
      used[m->second] = true;
      t = index_of(api, api->node_input(node, 0));
    }
    return shortcut;
  };
  auto join_residual = [&](Step& step, int32_t& out, int32_t after) {
    // As select: only an ADD that alone reads the output (which no node outside the partition reads).
    if (!step.op->takes_residual() || outputs.count(out) || reads[out] != 1) return;
    for (int32_t k = after + 1; k < count; ++k) {
      const baton_node* add = api->partition_node(partition, k);
      int32_t other = used[k] ? -1 : residual_of(api, add, out);
      if (other < 0) continue;
      const Shortcut shortcut = take_shortcut(other);
      if (!existing(other, step.residual, step.residual_tensor)) {
        refuse("node " + std::to_string(api->node_index(add)) + ": the residual is made after the convolution");
      }
      const std::optional<Clamp> add_clamp = add_clamp_of(api, add);
      if (!add_clamp) refuse("node " + std::to_string(api->node_index(add)) + ": ADD with an activation other than the RELUs");
      used[k] = true;
      Clamp clamp = *add_clamp;
      out = index_of(api, api->node_output(add, 0));
      for (int32_t j = k + 1; j < count && !outputs.count(out); ++j) {
        const baton_node* act = api->partition_node(partition, j);
        const std::optional<Clamp> c = activation_node_clamp(api->node_builtin_code(act));
        if (!used[j] && c && index_of(api, api->node_input(act, 0)) == out) {
          used[j] = true;
          clamp = *c;
          out = index_of(api, api->node_output(act, 0));
          break;
        }
      }
      step.op->add_residual(clamp, shortcut);
      return;
    }
  };
  // The activation node select took after a convolution without a fused activation that writes `out`
  // (which only that node reads): its clamp becomes the convolution's, and `out` the node's output.
  auto join_activation = [&](Clamp& clamp, int32_t& out, int32_t after) {
    if (clamp.min != -kInf || clamp.max != kInf || outputs.count(out) || reads[out] != 1) return;
    for (int32_t k = after + 1; k < count; ++k) {
      const baton_node* act = api->partition_node(partition, k);
      const std::optional<Clamp> c = activation_node_clamp(api->node_builtin_code(act));
      if (!used[k] && c && api->node_output_count(act) == 1 && index_of(api, api->node_input(act, 0)) == out) {
        used[k] = true;
        clamp = *c;
        out = index_of(api, api->node_output(act, 0));
        return;
      }
    }
  };
  // 1x1 convolutions whose output only a later depthwise of the partition reads: they become that pair's
  // expansion (by output tensor: the spec and the convolution's input).
  std::unordered_map<int32_t, std::pair<PointwiseSpec, int32_t>> expansions;
  auto read_by_depthwise = [&](int32_t t, int32_t after) {
    if (outputs.count(t) || reads[t] != 1) return false;
    for (int32_t k = after + 1; k < count; ++k) {
      const baton_node* node = api->partition_node(partition, k);
      if (!used[k] && api->node_builtin_code(node) == kDepthwiseConv2d && index_of(api, api->node_input(node, 0)) == t) {
        return true;
      }
    }
    return false;
  };
  for (int32_t n = 0; n < count; ++n) {
    const baton_node* dw = api->partition_node(partition, n);
    if (used[n]) continue;
    const bool transposed = is_transpose_conv_bias(api, dw);
    if (transposed || api->node_builtin_code(dw) == kConv2d) {  // a convolution alone
      used[n] = true;
      Step step;
      int32_t out = index_of(api, api->node_output(dw, 0));
      if (transposed) {
        step.op = std::make_unique<NarrowConv>(NarrowConvSpec::read_transpose_bias(api, dw), *plugin_.kernels,
                                               plugin_.pool.get());
      } else if (auto narrow = narrow_spec(api, dw)) {
        join_activation(narrow->clamp, out, n);
        step.op = std::make_unique<NarrowConv>(*narrow, *plugin_.kernels, plugin_.pool.get());
      } else if (read_by_depthwise(out, n)) {  // the expansion of the pair that reads it
        expansions.emplace(out, std::make_pair(PointwiseSpec::read(api, dw), index_of(api, api->node_input(dw, 0))));
        continue;
      } else {  // a 1x1 convolution, with the HARD_SWISH or activation node that reads it when select took it
        const baton_node* hard_swish = nullptr;
        for (int32_t k = n + 1; k < count && !outputs.count(out); ++k) {
          const baton_node* node = api->partition_node(partition, k);
          if (!used[k] && api->node_builtin_code(node) == kHardSwish && index_of(api, api->node_input(node, 0)) == out) {
            hard_swish = node;
            used[k] = true;
            break;
          }
        }
        PointwiseSpec spec = PointwiseSpec::read(api, dw, hard_swish);
        if (hard_swish) {
          out = index_of(api, api->node_output(hard_swish, 0));
        } else {
          join_activation(spec.clamp, out, n);
        }
        step.op = std::make_unique<Pointwise>(spec, *plugin_.kernels, plugin_.pool.get());
        join_residual(step, out, n);
      }
      place(step, index_of(api, api->node_input(dw, 0)), out);
      continue;
    }
    // A node select took with a 1x1 convolution that cannot be one step with it here (its convolution's
    // output is read outside this partition): a step of its own.
    const int32_t code = api->node_builtin_code(dw);
    if (code == kHardSwish || code == kAdd || activation_node_clamp(code)) {
      used[n] = true;
      Step step;
      if (code == kHardSwish) {
        step.op = std::make_unique<Elementwise>(Elementwise::Kind::kHardSwish, Clamp{-kInf, kInf}, *plugin_.kernels);
      } else if (code == kAdd) {
        // in + residual, the residual the input a shortcut makes when there is one.
        int32_t a = index_of(api, api->node_input(dw, 0));
        int32_t b = residual_of(api, dw, a);
        Shortcut shortcut = take_shortcut(b);
        if (int32_t t = a; !shortcut.any() && (shortcut = take_shortcut(t)).any()) {  // the shortcut's is input 0
          a = b;
          b = t;
        }
        const std::optional<Clamp> clamp = add_clamp_of(api, dw);
        if (a < 0 || b < 0 || !clamp || !existing(b, step.residual, step.residual_tensor)) {
          refuse("node " + std::to_string(api->node_index(dw)) + ": an ADD the cpu delegate cannot run on its own");
        }
        step.op = std::make_unique<Elementwise>(Elementwise::Kind::kAdd, *clamp, *plugin_.kernels);
        step.op->add_residual(*clamp, shortcut);
        place(step, a, index_of(api, api->node_output(dw, 0)));
        continue;
      } else {
        step.op = std::make_unique<Elementwise>(Elementwise::Kind::kClamp, *activation_node_clamp(code), *plugin_.kernels);
      }
      place(step, index_of(api, api->node_input(dw, 0)), index_of(api, api->node_output(dw, 0)));
      continue;
    }
    if (code == kMaxPool2d || code == kPad) {
      // A shortcut: the residual ADD after it takes it when the ADD is in this partition (through the
      // shortcut's other nodes, each read only by the next); else a step of its own.
      int32_t t = index_of(api, api->node_output(dw, 0));
      bool taken = false;
      for (int32_t k = n + 1; k < count && !taken && !outputs.count(t) && reads[t] == 1; ++k) {
        const baton_node* node = api->partition_node(partition, k);
        const int32_t c = api->node_builtin_code(node);
        if (used[k]) continue;
        if (c == kAdd) {
          taken = residual_of(api, node, t) >= 0;
        } else if ((c == kMaxPool2d || c == kPad) && index_of(api, api->node_input(node, 0)) == t) {
          t = index_of(api, api->node_output(node, 0));
        }
      }
      if (taken) continue;
      Shortcut shortcut;
      if (!read_shortcut(api, dw, shortcut)) refuse("node " + std::to_string(api->node_index(dw)) + ": not a shortcut");
      used[n] = true;
      Step step;
      step.op = std::make_unique<ShortcutStep>(shortcut, *plugin_.kernels);
      place(step, index_of(api, api->node_input(dw, 0)), index_of(api, api->node_output(dw, 0)));
      continue;
    }
    if (code != kDepthwiseConv2d) {
      refuse("node " + std::to_string(api->node_index(dw)) + " is neither a depthwise half of a pair nor a convolution");
    }
    int32_t mid = index_of(api, api->node_output(dw, 0));
    // The node that reads it: the 1x1 convolution, or an activation node the convolution reads.
    auto reader = [&](int32_t tensor, auto&& is_wanted) {
      for (int32_t k = n + 1; k < count; ++k) {
        const baton_node* node = api->partition_node(partition, k);
        if (!used[k] && is_wanted(node) && index_of(api, api->node_input(node, 0)) == tensor) return k;
      }
      return -1;
    };
    const auto is_activation = [&](const baton_node* node) {
      return activation_node_clamp(api->node_builtin_code(node)).has_value();
    };
    const auto is_conv = [&](const baton_node* node) { return api->node_builtin_code(node) == kConv2d; };
    const int32_t a0 = outputs.count(mid) ? -1 : reader(mid, is_activation);
    const int32_t after = a0 >= 0 ? index_of(api, api->node_output(api->partition_node(partition, a0), 0)) : mid;
    if (outputs.count(mid) || outputs.count(after) || reader(after, is_conv) < 0) {
      // A depthwise no 1x1 convolution reads: a step of its own, with the activation node and the
      // residual ADD select took after it.
      used[n] = true;
      const int32_t in = index_of(api, api->node_input(dw, 0));
      if (const auto e = expansions.find(in); e != expansions.end()) {  // the 1x1 convolution before it: a step
        Step expand;
        expand.op = std::make_unique<Pointwise>(e->second.first, *plugin_.kernels, plugin_.pool.get());
        place(expand, e->second.second, in);
        expansions.erase(e);
      }
      PairSpec spec = PairSpec::read(api, dw, nullptr);
      int32_t out = mid;
      join_activation(spec.depthwise_clamp, out, n);
      Step step;
      step.op = std::make_unique<Depthwise>(spec, *plugin_.kernels, plugin_.pool.get());
      join_residual(step, out, n);
      place(step, in, out);
      continue;
    }
    const baton_node* activation = nullptr;
    const int32_t a = reader(mid, is_activation);
    if (a >= 0) {
      activation = api->partition_node(partition, a);
      mid = index_of(api, api->node_output(activation, 0));
      if (outputs.count(mid)) refuse("the activation's output is read outside the pair");
      used[a] = true;
    }
    const int32_t c = reader(mid, is_conv);
    if (c < 0) refuse("node " + std::to_string(api->node_index(dw)) + ": no 1x1 convolution reads its output");
    const baton_node* conv = api->partition_node(partition, c);
    used[n] = used[c] = true;

    Step step;
    PairSpec spec = PairSpec::read(api, dw, conv, activation);
    int32_t in = index_of(api, api->node_input(dw, 0));
    if (const auto e = expansions.find(in); e != expansions.end()) {
      spec.add_expansion(e->second.first);
      in = e->second.second;
      expansions.erase(e);
    }
    int32_t out = index_of(api, api->node_output(conv, 0));
    join_activation(spec.conv_clamp, out, c);
    step.op = std::make_unique<FusedPair>(spec, *plugin_.kernels, plugin_.pool.get());
    join_residual(step, out, c);
    place(step, in, out);
  }
  if (!expansions.empty()) refuse("a 1x1 convolution's output is read by no pair's depthwise");
  for (int32_t n = 0; n < count; ++n) {
    if (!used[n]) refuse("node " + std::to_string(api->node_index(api->partition_node(partition, n))) + ": a shortcut no residual ADD of the partition takes");
  }
}

baton_status Partition::prepare(const baton_partition* partition, baton_error* error) {
  const baton_host_api* api = plugin_.api;
  const size_t buffers = static_cast<size_t>(buffers_);
  std::vector<std::vector<int32_t>> buffer_dims(buffers);
  std::vector<size_t> sizes(buffers, 0);
  std::vector<int> written(buffers, -1), last_read(buffers, -1);
  int step_index = 0;
  for (Step& s : steps_) {
    std::vector<int32_t> in_dims;
    if (s.in.host) {
      const int32_t* dims = nullptr;
      const int32_t rank = api->tensor_shape(s.in.host, &dims);
      in_dims.assign(dims, dims + rank);
    } else if (s.in.buffer >= 0) {
      in_dims = buffer_dims[static_cast<size_t>(s.in.buffer)];
    }
    s.out_dims = s.op->prepare(in_dims.data(), static_cast<int32_t>(in_dims.size()));
    if (s.op->has_residual()) {
      std::vector<int32_t> r_dims;
      if (s.residual.host) {
        const int32_t* dims = nullptr;
        const int32_t rank = api->tensor_shape(s.residual.host, &dims);
        r_dims.assign(dims, dims + rank);
      } else {
        r_dims = buffer_dims[static_cast<size_t>(s.residual.buffer)];
      }
      if (!s.op->prepare_residual(r_dims, s.out_dims)) {
        api->error_set(error, "the residual ADD's other input (through its shortcut) no longer has the output's shape");
        return BATON_ERROR;
      }
    }
    if (s.out.host) {
      const baton_status st = api->tensor_set_shape(s.out.host, static_cast<int32_t>(s.out_dims.size()), s.out_dims.data(), error);
      if (st != BATON_OK) return st;
    } else {
      size_t n = 1;
      for (int32_t d : s.out_dims) n *= static_cast<size_t>(d);
      sizes[static_cast<size_t>(s.out.buffer)] = n;
      written[static_cast<size_t>(s.out.buffer)] = step_index;
      buffer_dims[static_cast<size_t>(s.out.buffer)] = s.out_dims;
    }
    for (const Place* p : {&s.in, &s.residual}) {
      if (p->buffer >= 0) last_read[static_cast<size_t>(p->buffer)] = step_index;
    }
    ++step_index;
  }
  std::vector<kit::Lifetime> lives;
  for (size_t b = 0; b < buffers; ++b) lives.push_back({sizes[b] * sizeof(float), written[b], std::max(written[b], last_read[b])});
  for (size_t i = 0; i < steps_.size(); ++i) {
    lives.push_back({steps_[i].op->work_bytes(), static_cast<int>(i), static_cast<int>(i)});
  }
  // Host tensors to compute in while they are idle: outputs before the step that writes them, reusable
  // inputs after the last step that reads them.
  std::vector<kit::Region> regions;
  region_tensor_.clear();
  const bool asks_inputs = api->struct_size >= offsetof(baton_host_api, partition_input_reusable) +
                                                   sizeof(api->partition_input_reusable) &&
                           api->partition_input_reusable;
  const int last_step = static_cast<int>(steps_.size()) - 1;
  for (int i = 0; i <= last_step; ++i) {
    baton_tensor* out = steps_[static_cast<size_t>(i)].out.host;
    if (out && i > 0) {
      regions.push_back({api->tensor_byte_size(out), 0, i - 1});
      region_tensor_.push_back(out);
    }
  }
  for (int32_t k = 0; asks_inputs && k < api->partition_input_count(partition); ++k) {
    baton_tensor* in = api->partition_input(partition, k);
    if (!api->partition_input_reusable(partition, k)) continue;
    int last_read = -1;
    for (int i = 0; i <= last_step; ++i) {
      const Step& s = steps_[static_cast<size_t>(i)];
      if (s.in.host == in || (s.op->has_residual() && s.residual.host == in)) last_read = i;
    }
    if (last_read >= 0 && last_read < last_step) {
      regions.push_back({api->tensor_byte_size(in), last_read + 1, last_step});
      region_tensor_.push_back(in);
    }
  }
  size_t total = 0;
  buffer_place_ = kit::plan_with_regions(lives, regions, 64, &total);
  for (size_t i = 0; i < steps_.size(); ++i) steps_[i].work = buffer_place_[buffers + i];
  buffer_place_.resize(buffers);
  region_base_.assign(region_tensor_.size(), nullptr);
  partition_ = partition;
  scratch_.request(api, partition, total);
  scratch_bytes_ = total;
  return BATON_OK;
}

baton_status Partition::invoke(baton_error* error) {
  const baton_host_api* api = plugin_.api;
  scratch_base_ = scratch_.data(api, partition_);
  for (size_t r = 0; r < region_tensor_.size(); ++r) {
    region_base_[r] = static_cast<uint8_t*>(api->tensor_mutable_data(region_tensor_[r]));
    if (!region_base_[r]) {
      api->error_set(error, "a boundary tensor of the partition has no memory");
      return BATON_ERROR;
    }
  }
  if (scratch_bytes_ > 0 && !scratch_base_) {
    api->error_set(error, "the partition's scratch has no memory");
    return BATON_ERROR;
  }
  for (Step& s : steps_) {
    const float* in = s.in.host ? static_cast<const float*>(api->tensor_data(s.in.host))
                                : buffer(s.in.buffer);
    float* out = s.out.host ? static_cast<float*>(api->tensor_mutable_data(s.out.host))
                            : buffer(s.out.buffer);
    if (!in || !out) {
      api->error_set(error, "a boundary tensor of the partition has no memory");
      return BATON_ERROR;
    }
    const float* residual = nullptr;
    if (s.op->has_residual()) {
      residual = s.residual.host ? static_cast<const float*>(api->tensor_data(s.residual.host))
                                 : buffer(s.residual.buffer);
      if (!residual) {
        api->error_set(error, "the residual ADD's other input has no memory");
        return BATON_ERROR;
      }
    }
    s.op->run(in, residual, out,
              s.op->work_bytes() > 0 ? reinterpret_cast<float*>(at(s.work)) : nullptr);
  }
  return BATON_OK;
}

}  // namespace baton::cpu
