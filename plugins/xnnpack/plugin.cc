// The XNNPACK delegate's entry point and C boundary: the descriptor (ops with their version ranges, the
// options), plugin create/destroy (XNNPACK initialised once, one pthreadpool for every partition), and
// the delegate calls. Every call catches everything and turns it into a status and a message.
#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "baton/plugin_api.h"
#include "ops.h"
#include "partition.h"
#include "subgraph_builder.h"

namespace baton::xnnpack {
namespace {

const baton_host_api* g_api = nullptr;

template <typename F>
baton_status guarded(baton_error* error, const char* where, F&& body) {
  try {
    return body();
  } catch (const Refusal& r) {
    g_api->error_set(error, r.reason().c_str());
    return BATON_UNSUPPORTED;
  } catch (const std::bad_alloc&) {
    g_api->error_set(error, (std::string("xnnpack: out of memory in ") + where).c_str());
    return BATON_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    g_api->error_set(error, (std::string("xnnpack: ") + where + ": " + e.what()).c_str());
    return BATON_ERROR;
  } catch (...) {
    g_api->error_set(error, (std::string("xnnpack: unknown error in ") + where).c_str());
    return BATON_ERROR;
  }
}

struct SubgraphDeleter {
  void operator()(xnn_subgraph_t s) const { xnn_delete_subgraph(s); }
};

// Defines the node alone in a scratch subgraph: the same checks and XNNPACK validation the partition
// build will meet, without packing any weights.
int32_t check_node(void* plugin_state, const baton_node* node, baton_error* reason) {
  auto* state = static_cast<PluginState*>(plugin_state);
  int32_t yes = 0;
  guarded(reason, "check_node", [&] {
    if (!state->unavailable.empty()) refuse(state->unavailable);
    const OpDef* def = find_op(g_api, node);
    if (!def) refuse("not an op this delegate declares");
    xnn_subgraph_t raw = nullptr;
    if (xnn_create_subgraph(0, 0, &raw) != xnn_status_success) refuse("cannot create an XNNPACK subgraph");
    std::unique_ptr<xnn_subgraph, SubgraphDeleter> scratch(raw);
    SubgraphBuilder builder(g_api, raw, true, true);
    def->define(builder, NodeView(g_api, node, state->quantized));
    yes = 1;
    return BATON_OK;
  });
  return yes;
}

baton_status partition_init(void* plugin_state, const baton_partition* partition, void** partition_state,
                            baton_error* error) {
  auto* state = static_cast<PluginState*>(plugin_state);
  return guarded(error, "partition init", [&] {
    if (!state->unavailable.empty()) refuse(state->unavailable);
    auto p = std::make_unique<Partition>(*state);
    p->build(partition);
    *partition_state = p.release();
    return BATON_OK;
  });
}

baton_status partition_prepare(void* plugin_state, void* partition_state, const baton_partition* partition,
                               baton_error* error) {
  (void)plugin_state;
  return guarded(error, "partition prepare",
                 [&] { return static_cast<Partition*>(partition_state)->prepare(partition, error); });
}

baton_status partition_invoke(void* plugin_state, void* partition_state, const baton_partition* partition,
                              baton_error* error) {
  (void)plugin_state;
  (void)partition;
  return guarded(error, "partition invoke", [&] { return static_cast<Partition*>(partition_state)->invoke(error); });
}

void partition_free(void* plugin_state, void* partition_state) {
  (void)plugin_state;
  delete static_cast<Partition*>(partition_state);
}

const baton_delegate_api kDelegate = {sizeof(baton_delegate_api), check_node, partition_init, partition_prepare,
                                      partition_invoke, partition_free};

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "threads", BATON_OPTION_INT, "0",
     "threads of the plugin's pthreadpool, shared by all partitions; 0 = the host's thread count"},
    {sizeof(baton_option_decl), "sparse-inference", BATON_OPTION_BOOL, "false",
     "let XNNPACK run sparse weights in its NCHW sparse kernels (XNN_FLAG_HINT_SPARSE_INFERENCE)"},
    {sizeof(baton_option_decl), "quantized", BATON_OPTION_BOOL, "false",
     "take uint8/int8 quantized nodes too; XNNPACK requantizes in float, so results may differ from "
     "TFLite's integer kernels by one quantization step"},
};

// XNNPACK (through cpuinfo) keeps what it learnt about the CPU in memory it never frees, and initialises
// once per load. Unloading it with this plugin would leak that memory at every reload (and leave LSan
// complaining), so the two libraries stay loaded for the life of the process once a plugin used them.
void pin_xnnpack() {
  for (const char* lib : {"libXNNPACK.so.0", "libcpuinfo.so.0"}) {
    (void)dlopen(lib, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // already loaded: only marks it
  }
}

baton_status plugin_create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
  return guarded(error, "create", [&] {
    pin_xnnpack();
    auto state = std::make_unique<PluginState>();
    state->api = g_api;
    state->host = host;
    const xnn_status st = xnn_initialize(nullptr);
    if (st == xnn_status_success) {
      state->initialized = true;
    } else {
      // The plugin still loads; check_node refuses every node with this, so `baton plan` says why.
      state->unavailable = "XNNPACK did not initialise (status " + std::to_string(st) +
                           (st == xnn_status_unsupported_hardware ? ": unsupported hardware)" : ")");
      g_api->log(host, BATON_LOG_WARNING, ("xnnpack: " + state->unavailable).c_str());
    }
    int64_t threads = g_api->option_int(host, "threads", 0);
    if (threads <= 0) threads = g_api->thread_count(host);
    if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
    state->threads = static_cast<int>(std::min<int64_t>(threads, 256));
    if (state->initialized && state->threads > 1) {
      state->pool = pthreadpool_create(static_cast<size_t>(state->threads));
      if (!state->pool) refuse("xnnpack: cannot start a pool of " + std::to_string(state->threads) + " threads");
    }
    if (g_api->option_bool(host, "sparse-inference", 0)) state->runtime_flags |= XNN_FLAG_HINT_SPARSE_INFERENCE;
    state->quantized = g_api->option_bool(host, "quantized", 0) != 0;
    *plugin_state = state.release();
    return BATON_OK;
  });
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

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
  if (!api) return nullptr;
  if (host_abi_major != BATON_ABI_VERSION_MAJOR) {
    api->error_set(error, ("xnnpack: built for ABI major " + std::to_string(BATON_ABI_VERSION_MAJOR) +
                           ", the host has " + std::to_string(host_abi_major))
                              .c_str());
    return nullptr;
  }
  if (api->struct_size < offsetof(baton_host_api, partition_output) + sizeof(api->partition_output)) {
    api->error_set(error, "xnnpack: the host's function table has no partition functions");
    return nullptr;
  }
  try {
    baton::xnnpack::g_api = api;
    return baton::xnnpack::describe();
  } catch (...) {
    api->error_set(error, "xnnpack: out of memory while describing the ops");
    return nullptr;
  }
}
