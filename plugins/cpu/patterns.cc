#include "patterns.h"

#include <string>

#include "baton/plugin_kit.hpp"
#include "node_reading.h"

namespace baton::cpu {

bool is_transpose_conv_bias(const baton_host_api* api, const baton_node* node) {
  const char* name = api->node_builtin_code(node) == BATON_OP_CUSTOM ? api->node_custom_name(node) : nullptr;
  return name && std::string(name) == "Convolution2DTransposeBias" && api->node_version(node) == 1;
}

std::optional<NarrowConvSpec> narrow_spec(const baton_host_api* api, const baton_node* conv) {
  try {
    return NarrowConvSpec::read(api, conv);
  } catch (const kit::Refusal&) {
    return std::nullopt;
  }
}

int32_t residual_of(const baton_host_api* api, const baton_node* add, int32_t t) {
  if (!add || api->node_builtin_code(add) != BATON_OP_ADD || api->node_input_count(add) != 2 ||
      api->node_output_count(add) != 1) {
    return -1;
  }
  const baton_tensor* a = api->node_input(add, 0);
  const baton_tensor* b = api->node_input(add, 1);
  const baton_tensor* out = api->node_output(add, 0);
  if (!a || !b || !out || index_of(api, a) == index_of(api, b)) return -1;
  const baton_tensor* other = index_of(api, a) == t ? b : index_of(api, b) == t ? a : nullptr;
  // A constant (a transformer's position embedding) is no residual: steps read tensors the host passes.
  if (!other || api->tensor_is_constant(other)) return -1;
  for (const baton_tensor* x : {a, b, out}) {
    if (api->tensor_type(x) != BATON_TYPE_FLOAT32 || shape_of(api, x) != shape_of(api, out)) return -1;
  }
  return index_of(api, other);
}

bool read_shortcut(const baton_host_api* api, const baton_node* node, Shortcut& s) {
  if (!node || api->node_output_count(node) != 1 || api->node_input_count(node) < 1) return false;
  const baton_tensor* in = api->node_input(node, 0);
  const baton_tensor* out = api->node_output(node, 0);
  if (!in || !out || api->tensor_type(in) != BATON_TYPE_FLOAT32 || api->tensor_type(out) != BATON_TYPE_FLOAT32 ||
      shape_of(api, in).size() != 4 || shape_of(api, out).size() != 4) {
    return false;
  }
  const int32_t code = api->node_builtin_code(node);
  if (code == BATON_OP_MAX_POOL_2D && !s.pool) {
    const baton_pool_options& o = api->node_builtin_options(node)->u.pool;
    if (o.filter_w != 2 || o.filter_h != 2 || o.stride_w != 2 || o.stride_h != 2 || o.activation != BATON_ACT_NONE) {
      return false;
    }
    s.pool = true;
    s.pool_same = o.padding == BATON_PADDING_SAME;
    return true;
  }
  if (code != BATON_OP_PAD || api->node_input_count(node) != 2 || s.pad_channels > 0) return false;
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

std::optional<Clamp> add_clamp_of(const baton_host_api* api, const baton_node* add) {
  try {
    return activation_clamp(api->node_builtin_options(add)->u.elementwise.activation, "ADD");
  } catch (const kit::Refusal&) {
    return std::nullopt;
  }
}

}  // namespace baton::cpu
