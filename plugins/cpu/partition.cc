#include "partition.h"

#include <unordered_map>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"

namespace baton::cpu {
namespace {

using kit::refuse;

constexpr int32_t kConv2d = 3, kDepthwiseConv2d = 4;

int32_t index_of(const baton_host_api* api, const baton_tensor* t) { return t ? api->tensor_index(t) : -1; }

bool is_transpose_conv_bias(const baton_host_api* api, const baton_node* node) {
  const char* name = api->node_builtin_code(node) == BATON_OP_CUSTOM ? api->node_custom_name(node) : nullptr;
  return name && std::string(name) == "Convolution2DTransposeBias" && api->node_version(node) == 1;
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
    ++pairs;
  }
  // Convolutions with few output channels, among those no pair took.
  std::string last_conv_reason;
  for (int32_t i = 0; i < count; ++i) {
    const baton_node* conv = api->graph_node(graph, free_nodes[i]);
    if (selected[i] || !conv) continue;
    const bool transposed = is_transpose_conv_bias(api, conv);
    if (!transposed && api->node_builtin_code(conv) != kConv2d) continue;
    try {
      (void)(transposed ? NarrowConvSpec::read_transpose_bias(api, conv) : NarrowConvSpec::read(api, conv));
      selected[i] = 1;
    } catch (const kit::Refusal& r) {
      last_conv_reason = r.what();
    }
  }
  std::string why = "takes only a DEPTHWISE_CONV_2D (float32, 3x3 or 5x5, stride 1 or 2) together with the 1x1 "
                    "CONV_2D that alone reads it (directly or through a RELU, RELU6 or RELU_N1_TO_1), and CONV_2D or Convolution2DTransposeBias with at most " +
                    std::to_string(NarrowConvSpec::kMaxOutChannels) + " output channels over at least " +
                    std::to_string(NarrowConvSpec::kMinOutputPixels) + " output pixels";
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
  // Where a step reads tensor `in` (an earlier step's output, or a partition input) and writes `out` (a
  // partition output, or a buffer of the partition); then the step joins the list.
  auto place = [&](Step& step, int32_t in, int32_t out) {
    if (auto p = produced.find(in); p != produced.end()) {
      step.in = p->second;
    } else if (auto h = inputs.find(in); h != inputs.end()) {
      step.in.host = h->second;
      step.in_tensor = h->second;
    } else {
      refuse("tensor " + std::to_string(in) + " is read before the partition produces it");
    }
    if (auto h = outputs.find(out); h != outputs.end()) {
      step.out.host = h->second;
    } else {
      step.out.buffer = static_cast<int>(buffers_.size());
      buffers_.emplace_back();
    }
    produced[out] = step.out;
    steps_.push_back(std::move(step));
  };
  for (int32_t n = 0; n < count; ++n) {
    const baton_node* dw = api->partition_node(partition, n);
    if (used[n]) continue;
    const bool transposed = is_transpose_conv_bias(api, dw);
    if (transposed || api->node_builtin_code(dw) == kConv2d) {  // a convolution alone, with few output channels
      used[n] = true;
      Step step;
      step.op = std::make_unique<NarrowConv>(
          transposed ? NarrowConvSpec::read_transpose_bias(api, dw) : NarrowConvSpec::read(api, dw), *plugin_.kernels,
          plugin_.pool.get());
      place(step, index_of(api, api->node_input(dw, 0)), index_of(api, api->node_output(dw, 0)));
      continue;
    }
    if (api->node_builtin_code(dw) != kDepthwiseConv2d) {
      refuse("node " + std::to_string(api->node_index(dw)) + " is neither a depthwise half of a pair nor a convolution");
    }
    int32_t mid = index_of(api, api->node_output(dw, 0));
    if (outputs.count(mid)) refuse("the depthwise output is read outside the pair");
    // The node that reads it: the 1x1 convolution, or an activation node the convolution reads.
    auto reader = [&](int32_t tensor, auto&& is_wanted) {
      for (int32_t k = n + 1; k < count; ++k) {
        const baton_node* node = api->partition_node(partition, k);
        if (!used[k] && is_wanted(node) && index_of(api, api->node_input(node, 0)) == tensor) return k;
      }
      return -1;
    };
    const baton_node* activation = nullptr;
    const int32_t a = reader(mid, [&](const baton_node* node) {
      return activation_node_clamp(api->node_builtin_code(node)).has_value();
    });
    if (a >= 0) {
      activation = api->partition_node(partition, a);
      mid = index_of(api, api->node_output(activation, 0));
      if (outputs.count(mid)) refuse("the activation's output is read outside the pair");
      used[a] = true;
    }
    const int32_t c = reader(mid, [&](const baton_node* node) { return api->node_builtin_code(node) == kConv2d; });
    if (c < 0) refuse("node " + std::to_string(api->node_index(dw)) + ": no 1x1 convolution reads its output");
    const baton_node* conv = api->partition_node(partition, c);
    used[n] = used[c] = true;

    Step step;
    step.op = std::make_unique<FusedPair>(PairSpec::read(api, dw, conv, activation), *plugin_.kernels, plugin_.pool.get());
    place(step, index_of(api, api->node_input(dw, 0)), index_of(api, api->node_output(conv, 0)));
  }
}

baton_status Partition::prepare(const baton_partition*, baton_error* error) {
  const baton_host_api* api = plugin_.api;
  std::vector<std::vector<int32_t>> buffer_dims(buffers_.size());
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
    if (s.out.host) {
      const baton_status st = api->tensor_set_shape(s.out.host, 4, s.out_dims.data(), error);
      if (st != BATON_OK) return st;
    } else {
      size_t n = 1;
      for (int32_t d : s.out_dims) n *= static_cast<size_t>(d);
      buffers_[static_cast<size_t>(s.out.buffer)].assign(n, 0.0f);
      buffer_dims[static_cast<size_t>(s.out.buffer)] = s.out_dims;
    }
  }
  return BATON_OK;
}

baton_status Partition::invoke(baton_error* error) {
  const baton_host_api* api = plugin_.api;
  for (Step& s : steps_) {
    const float* in = s.in.host ? static_cast<const float*>(api->tensor_data(s.in.host))
                                : buffers_[static_cast<size_t>(s.in.buffer)].data();
    float* out = s.out.host ? static_cast<float*>(api->tensor_mutable_data(s.out.host))
                            : buffers_[static_cast<size_t>(s.out.buffer)].data();
    if (!in || !out) {
      api->error_set(error, "a boundary tensor of the partition has no memory");
      return BATON_ERROR;
    }
    s.op->run(in, out);
  }
  return BATON_OK;
}

}  // namespace baton::cpu
