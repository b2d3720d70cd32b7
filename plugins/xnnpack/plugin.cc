// The XNNPACK delegate's entry point and C boundary: the descriptor (ops with their version ranges, the
// options), plugin create/destroy (XNNPACK initialised once, one pthreadpool for every partition, shared
// through the host with other plugins of the same thread count), and
// the delegate calls (the plugin kit's, over PluginState::check and Partition, and select_nodes over
// PluginState::select). Every call catches
// everything and turns it into a status and a message.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"
#include "ops.h"
#include "partition.h"
#include "subgraph_builder.h"

namespace baton::xnnpack {
namespace {

const baton_host_api* g_api = nullptr;

using Calls = kit::DelegateCalls<PluginState, Partition>;

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "threads", BATON_OPTION_INT, "0",
     "threads of the pthreadpool all partitions run on (the host's, shared with other plugins asking for as many); 0 = the host's thread count"},
    {sizeof(baton_option_decl), "sparse-inference", BATON_OPTION_BOOL, "false",
     "let XNNPACK run sparse weights in its NCHW sparse kernels (XNN_FLAG_HINT_SPARSE_INFERENCE)"},
    {sizeof(baton_option_decl), "min-elementwise-group", BATON_OPTION_INT, "3",
     "a connected group of nodes with only elementwise ops (and reshapes) smaller than this, between nodes "
     "that run elsewhere, is left to the rest of the chain, which runs it as fast without starting XNNPACK "
     "and without two host round trips; 1 takes every such node"},
    {sizeof(baton_option_decl), "quantized", BATON_OPTION_BOOL, "false",
     "take uint8/int8 quantized nodes too; XNNPACK requantizes in float, so results may differ from "
     "TFLite's integer kernels by one quantization step"},
};

baton_status plugin_create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
  return kit::guarded(g_api, error, "create", [&] {
    auto state = std::make_unique<PluginState>();
    state->api = g_api;
    state->host = host;
    // XNNPACK itself and the pool start with the first node that needs them (PluginState::start).
    int64_t threads = g_api->option_int(host, "threads", 0);
    if (threads <= 0) threads = g_api->thread_count(host);
    if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
    state->threads = static_cast<int>(std::min<int64_t>(threads, 256));
    if (g_api->option_bool(host, "sparse-inference", 0)) state->runtime_flags |= XNN_FLAG_HINT_SPARSE_INFERENCE;
    state->quantized = g_api->option_bool(host, "quantized", 0) != 0;
    const int64_t group = g_api->option_int(host, "min-elementwise-group", 3);
    if (group < 1) kit::refuse("option min-elementwise-group: " + std::to_string(group) + " is below 1");
    state->min_elementwise_group = static_cast<int>(std::min<int64_t>(group, 1 << 20));
    *plugin_state = state.release();
    return BATON_OK;
  });
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

// Nodes are chosen from the whole graph (selection.cc), each refused node with its own reason.
baton_status select_nodes(void* plugin_state, const baton_graph* graph, const int32_t* free_nodes, int32_t count,
                          uint8_t* selected, void** selection_state, baton_error* error) {
  return kit::guarded(g_api, error, "select_nodes", [&] {
    *selection_state = nullptr;
    static_cast<PluginState*>(plugin_state)->select(graph, free_nodes, count, selected);
    g_api->error_set(error, "not taken");  // shown only by a host older than graph_refuse_node (ABI 1.16)
    return BATON_OK;
  });
}

void selection_free(void*, void*) {}

constexpr baton_delegate_api kDelegate = {
    sizeof(baton_delegate_api), Calls::check_node,     Calls::partition_init, Calls::partition_prepare,
    Calls::partition_invoke,    Calls::partition_free, select_nodes,          selection_free};

// One device: this machine's CPU, by the name the kernel gives it.
baton_status probe_devices(const baton_plugin_host* host, const baton_device** devices, size_t* count,
                           baton_error* error) {
  (void)host;
  return kit::guarded(g_api, error, "probe", [&] {
    static const std::string name = kit::cpu_model_name();
    static const baton_device cpu = {sizeof(baton_device), name.c_str(), BATON_DEVICE_CPU,
                                     BATON_DEVICE_PREFERENCE_DEFAULT};
    *devices = &cpu;
    *count = 1;
    return BATON_OK;
  });
}

const baton_plugin_desc* describe() {
  static const std::vector<baton_op_decl> decls = [] {
    std::vector<baton_op_decl> out;
    for (const OpDef& def : op_defs()) {
      out.push_back({sizeof(baton_op_decl), def.code, def.custom() ? def.name : nullptr, def.min_version,
                     def.max_version, nullptr});
    }
    return out;
  }();
  static const baton_plugin_desc desc = {
      sizeof(baton_plugin_desc),
      BATON_ABI_VERSION_MAJOR,
      BATON_ABI_VERSION_MINOR,
      "xnnpack",
      "0.1.0 (XNNPACK 0.0~git20220216)",
      BATON_PLUGIN_DELEGATE,
      "float32 subgraphs on the CPU through XNNPACK",
      decls.data(),
      decls.size(),
      kOptions,
      sizeof(kOptions) / sizeof(kOptions[0]),
      0,  // not reentrant: every partition shares the one thread pool
      plugin_create,
      plugin_destroy,
      &kDelegate,
      probe_devices,
      nullptr,  // loader functions: loaders only
  };
  return &desc;
}

}  // namespace
}  // namespace baton::xnnpack

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  (void)host_abi_minor;
  if (!baton::kit::host_is_usable(host_abi_major, api, error, "xnnpack", true)) return nullptr;
  try {
    baton::xnnpack::g_api = api;
    return baton::xnnpack::describe();
  } catch (...) {
    api->error_set(error, "xnnpack: out of memory while describing the ops");
    return nullptr;
  }
}
