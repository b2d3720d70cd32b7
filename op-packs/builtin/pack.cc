// The builtin op pack's entry point: the descriptor (every op with the version range TFLite's builtin
// resolver registers for it, and the `threads` option), and the four kernel calls the host makes for
// each node. One kernel serves every op: init looks the op up by the node's code. This file is the C
// boundary: every call catches everything and turns it into a status and a message naming the node
// and op.
#include <algorithm>
#include <cstddef>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "baton/plugin_api.h"
#include "glue/op_context.h"

namespace baton::builtin {
namespace {

const baton_host_api* g_api = nullptr;
uint32_t g_host_abi_minor = 0;  // what the entry point was told; kernels check it for newer options

const std::vector<OpDef>& op_defs() {
  static const std::vector<OpDef> defs = [] {
    std::vector<OpDef> all;
    for (auto family : {conv_ops(), fully_connected_ops(), binary_ops(), unary_ops(), pool_ops(), reshape_ops(),
                        slice_ops(), resize_ops(), dequantize_ops(), quantize_ops(), logic_ops(), shape_ops(),
                        reduce_ops(), mirror_pad_ops(), scan_ops(), index_ops(), data_shape_ops(), spatial_ops(), fill_ops(),
                        movement_ops(), shape_value_ops(), discretize_ops(), conv3d_ops(),
                        recurrent_ops(), lstm_ops(), complex_ops(), random_ops(), lookup_table_ops(),
                        string_ops(), litert_ops(), stablehlo_ops(), window_ops()}) {
      all.insert(all.end(), family.begin(), family.end());
    }
    return all;
  }();
  return defs;
}

const OpDef* find_op(int32_t code) {
  for (const OpDef& def : op_defs()) {
    if (def.code == code) return &def;
  }
  return nullptr;
}

std::string node_prefix(const baton_node* node, const OpDef* def) {
  return "node " + std::to_string(g_api->node_index(node)) + " " + (def ? def->name : "?") + ": ";
}

// Runs `body`, turning any exception into a status and a message on `error`.
template <typename F>
baton_status guarded(const baton_node* node, const OpDef* def, baton_error* error, F&& body) {
  try {
    body();
    return BATON_OK;
  } catch (const OpError& e) {
    if (!e.host_message()) g_api->error_set(error, (node_prefix(node, def) + e.message()).c_str());
    return e.status();
  } catch (const std::bad_alloc&) {
    g_api->error_set(error, (node_prefix(node, def) + "out of memory").c_str());
    return BATON_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    g_api->error_set(error, (node_prefix(node, def) + e.what()).c_str());
    return BATON_ERROR;
  } catch (...) {
    g_api->error_set(error, (node_prefix(node, def) + "unknown error").c_str());
    return BATON_ERROR;
  }
}

baton_status kernel_init(void* plugin_state, const baton_node* node, void** node_state, baton_error* error) {
  (void)plugin_state;
  const int32_t code = g_api->node_builtin_code(node);
  const OpDef* def = find_op(code);
  if (!def) {
    g_api->error_set(error, ("node " + std::to_string(g_api->node_index(node)) + ": op code " +
                             std::to_string(code) + " is not in the builtin pack")
                                .c_str());
    return BATON_UNSUPPORTED;
  }
  return guarded(node, def, error, [&] {
    auto state = std::make_unique<NodeState>();
    state->def = def;
    *node_state = state.release();
  });
}

void kernel_free(void* plugin_state, void* node_state) {
  (void)plugin_state;
  delete static_cast<NodeState*>(node_state);
}

baton_status kernel_prepare(void* plugin_state, void* node_state, const baton_node* node, baton_error* error) {
  auto* state = static_cast<NodeState*>(node_state);
  return guarded(node, state->def, error, [&] {
    OpContext ctx(*static_cast<PluginState*>(plugin_state), *state, node, error);
    state->invoke = nullptr;
    state->def->prepare(ctx);
  });
}

baton_status kernel_invoke(void* plugin_state, void* node_state, const baton_node* node, baton_error* error) {
  auto* state = static_cast<NodeState*>(node_state);
  return guarded(node, state->def, error, [&] {
    OpContext ctx(*static_cast<PluginState*>(plugin_state), *state, node, error);
    (state->invoke ? state->invoke : state->def->invoke)(ctx);
  });
}

const baton_kernel kKernel = {sizeof(baton_kernel), kernel_init, kernel_free, kernel_prepare, kernel_invoke};

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "threads", BATON_OPTION_INT, "0",
     "worker threads for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED; 0 = the host's thread count"},
};

baton_status plugin_create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
  try {
    auto state = std::make_unique<PluginState>();
    state->api = g_api;
    state->host = host;
    state->host_abi_minor = g_host_abi_minor;
    int64_t threads = g_api->option_int(host, "threads", 0);
    if (threads <= 0) threads = g_api->thread_count(host);
    if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
    state->threads = static_cast<int>(std::min<int64_t>(threads, 256));
    if (state->threads > 1) state->pool = std::make_unique<ThreadPool>(state->threads);
    *plugin_state = state.release();
    return BATON_OK;
  } catch (const std::exception& e) {
    g_api->error_set(error, (std::string("builtin: cannot start: ") + e.what()).c_str());
    return BATON_ERROR;
  }
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

const baton_plugin_desc* describe() {
  static const std::vector<baton_op_decl> decls = [] {
    std::vector<baton_op_decl> out;
    for (const OpDef& def : op_defs()) {
      out.push_back({sizeof(baton_op_decl), def.code, nullptr, def.min_version, def.max_version, &kKernel});
    }
    return out;
  }();
  static const baton_plugin_desc desc = {
      sizeof(baton_plugin_desc),
      BATON_ABI_VERSION_MAJOR,
      BATON_ABI_VERSION_MINOR,
      "builtin",
      "0.1.0",
      BATON_PLUGIN_OP_PACK,
      "float32, 8-bit and int8-weight CPU kernels for TFLite's builtin ops",
      decls.data(),
      decls.size(),
      kOptions,
      sizeof(kOptions) / sizeof(kOptions[0]),
      0,  // not reentrant: the thread pool is shared by all nodes
      plugin_create,
      plugin_destroy,
      nullptr,  // delegate calls: an op pack has none
      nullptr,  // device probe: delegates only
      nullptr,  // loader functions: loaders only
  };
  return &desc;
}

}  // namespace
}  // namespace baton::builtin

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  if (!api) return nullptr;
  if (host_abi_major != BATON_ABI_VERSION_MAJOR) {
    api->error_set(error, ("builtin: built for ABI major " + std::to_string(BATON_ABI_VERSION_MAJOR) +
                           ", the host has " + std::to_string(host_abi_major))
                              .c_str());
    return nullptr;
  }
  // Every host function this pack calls lies before the partition functions.
  if (api->struct_size < offsetof(baton_host_api, partition_id)) {
    api->error_set(error, "builtin: the host's function table is too small");
    return nullptr;
  }
  try {
    baton::builtin::g_api = api;
    baton::builtin::g_host_abi_minor = host_abi_minor;
    return baton::builtin::describe();
  } catch (...) {
    api->error_set(error, "builtin: out of memory while describing the ops");
    return nullptr;
  }
}
