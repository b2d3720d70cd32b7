// The XNNPACK delegate's entry point and C boundary: the descriptor (ops with their version ranges, the
// options), plugin create/destroy (XNNPACK initialised once, one pthreadpool for every partition, shared
// through the host with other plugins of the same thread count), and
// the delegate calls (the plugin kit's, over PluginState::check and Partition). Every call catches
// everything and turns it into a status and a message.
#include <dlfcn.h>

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
  return kit::guarded(g_api, error, "create", [&] {
    pin_xnnpack();
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
    *plugin_state = state.release();
    return BATON_OK;
  });
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

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
      &Calls::table,
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
