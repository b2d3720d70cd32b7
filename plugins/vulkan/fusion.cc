#include "fusion.h"

#include "op_common.h"

namespace baton::vulkan {
namespace {

// The producer's own fused activation, or -1 when its op has none the shaders apply.
int32_t fused_activation_of(const baton_host_api* api, const baton_node* node) {
  const baton_builtin_options& o = *api->node_builtin_options(node);
  switch (api->node_builtin_code(node)) {
    case BATON_OP_CONV_2D:
    case BATON_OP_DEPTHWISE_CONV_2D: return o.u.conv.activation;
    case BATON_OP_FULLY_CONNECTED: return o.u.fully_connected.activation;
    case BATON_OP_TRANSPOSE_CONV: return o.u.transpose_conv.activation;
    case BATON_OP_ADD:
    case BATON_OP_SUB:
    case BATON_OP_MUL: return o.u.elementwise.activation;
    case BATON_OP_AVERAGE_POOL_2D:
    case BATON_OP_MAX_POOL_2D: return o.u.pool.activation;
    case BATON_OP_CONCATENATION: return o.u.concat.activation;
    default: return -1;
  }
}

int act_of(int32_t code) {
  switch (code) {
    case BATON_OP_RELU: return 1;
    case BATON_OP_RELU_N1_TO_1: return 2;
    case BATON_OP_RELU6: return 3;
    default: return -1;
  }
}

}  // namespace

Fusions find_fusions(const baton_host_api* api, const baton_partition* partition) {
  Fusions f;
  std::map<const baton_tensor*, const baton_node*> producer;
  std::map<const baton_tensor*, int> readers;
  const int32_t nodes = api->partition_node_count(partition);
  for (int32_t n = 0; n < nodes; ++n) {
    const baton_node* node = api->partition_node(partition, n);
    for (int32_t i = 0; i < api->node_input_count(node); ++i) {
      if (const baton_tensor* t = api->node_input(node, i)) ++readers[t];
    }
    for (int32_t o = 0; o < api->node_output_count(node); ++o) producer[api->node_output(node, o)] = node;
  }
  for (int32_t o = 0; o < api->partition_output_count(partition); ++o) ++readers[api->partition_output(partition, o)];
  for (int32_t n = 0; n < nodes; ++n) {
    const baton_node* node = api->partition_node(partition, n);
    const int act = act_of(api->node_builtin_code(node));
    if (act < 0 || api->node_input_count(node) != 1) continue;
    const baton_tensor* in = api->node_input(node, 0);
    auto p = producer.find(in);
    if (p == producer.end() || readers[in] != 1 || f.folded.count(p->second) || f.activation_of.count(p->second)) continue;
    if (fused_activation_of(api, p->second) != BATON_ACT_NONE) continue;
    f.activation_of[p->second] = act;
    f.folded.insert(node);
  }
  return f;
}

}  // namespace baton::vulkan
