// The Vulkan delegate's entry point and C boundary: the descriptor (ops with their version ranges, the
// options, and in the description the Vulkan devices found, which is how `baton plugins` shows them),
// plugin create/destroy (the device, glslang, the pipeline set) and the delegate calls (the plugin
// kit's, over PluginState::check and Partition). Every call catches everything and turns it into a
// status and a message: a Refusal, a VkResult by name, a shader by name with glslang's log.
#include <dlfcn.h>

#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"
#include "ops.h"
#include "partition.h"
#include "vk_error.h"

namespace baton::vulkan {
namespace {

const baton_host_api* g_api = nullptr;

using Calls = kit::DelegateCalls<PluginState, Partition>;

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "device", BATON_OPTION_STRING, nullptr,
     "the device to run on: its number in this plugin's device list, or part of its name; unset = the first "
     "discrete GPU, else integrated GPU, else any"},
    {sizeof(baton_option_decl), "validation", BATON_OPTION_BOOL, "false",
     "enable the Khronos validation layer (vulkan-validationlayers) and log its warnings and errors"},
    {sizeof(baton_option_decl), "shader-cache", BATON_OPTION_BOOL, "true",
     "keep compiled SPIR-V on disk so that later starts do not compile again"},
    {sizeof(baton_option_decl), "cache-dir", BATON_OPTION_STRING, nullptr,
     "the shader cache's folder; unset = $XDG_CACHE_HOME/baton/vulkan (~/.cache/baton/vulkan)"},
    {sizeof(baton_option_decl), "shader-dir", BATON_OPTION_STRING, nullptr,
     "read NAME.comp from this folder instead of the shaders built into the plugin (for shader work)"},
};

// The Vulkan loader keeps state in memory it never frees and re-reads every driver manifest when it is
// loaded again; keep it loaded for the life of the process once a plugin used it.
void pin_loader() { (void)dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); }

baton_status plugin_create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
  return kit::guarded(g_api, error, "create", [&] {
    pin_loader();
    auto state = std::make_unique<PluginState>();
    state->api = g_api;
    state->host = host;
    const LogFn log = [api = g_api, host](int level, const std::string& m) {
      api->log(host, static_cast<baton_log_level>(level), m.c_str());
    };
    GpuOptions options;
    options.device = g_api->option_string(host, "device", "");
    options.validation = g_api->option_bool(host, "validation", 0) != 0;
    try {
      state->gpu = std::make_unique<Gpu>(options, log);
    } catch (const std::exception& e) {
      // The plugin still loads; check_node refuses every node with this, so `baton plan` says why and the
      // model runs on the next delegate. A device the user asked for and did not get is a warning; a machine
      // without a (GPU) device is normal, said at info level (-v) rather than at every start.
      state->unavailable = e.what();
      state->log(options.device.empty() ? BATON_LOG_INFO : BATON_LOG_WARNING, state->unavailable);
      *plugin_state = state.release();
      return BATON_OK;
    }
    const VkPhysicalDeviceLimits& l = state->gpu->limits();
    state->limits.max_storage_range = l.maxStorageBufferRange;
    for (int d = 0; d < 3; ++d) {
      state->limits.max_groups[d] = l.maxComputeWorkGroupCount[d];
      state->limits.max_local[d] = l.maxComputeWorkGroupSize[d];
    }
    state->limits.max_invocations = l.maxComputeWorkGroupInvocations;
    std::string cache_dir;
    if (g_api->option_bool(host, "shader-cache", 1)) {
      cache_dir = g_api->option_string(host, "cache-dir", "");
      if (cache_dir.empty()) cache_dir = ShaderCache::default_dir();
    }
    state->glslang = std::make_unique<GlslangProcess>();
    state->pipelines = std::make_unique<PipelineSet>(*state->gpu, ShaderSources(g_api->option_string(host, "shader-dir", "")),
                                                     ShaderCache(cache_dir), log);
    state->log(BATON_LOG_INFO, "running on device " + describe_device(state->gpu->index(), state->gpu->summary()) +
                                   (options.validation ? " with validation" : "") +
                                   (cache_dir.empty() ? "; shader cache off" : "; shader cache in " + cache_dir));
    if (state->gpu->summary().type == VK_PHYSICAL_DEVICE_TYPE_CPU) {
      // Chosen because there is no GPU: say what a user of such a machine most likely wants instead.
      state->log(BATON_LOG_INFO, "the device is a CPU implementation: on a machine without a GPU the xnnpack "
                                 "delegate is several times faster; put it first in `delegates`");
    }
    *plugin_state = state.release();
    return BATON_OK;
  });
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

// The one-line description, with the devices a fresh instance sees.
std::string description() {
  std::string s = "float32 subgraphs on a Vulkan 1.1+ device, GLSL compute shaders compiled by glslang; ";
  const DeviceListing listing = list_devices();
  if (listing.devices.empty()) return s + "no device: " + (listing.error.empty() ? "none found" : listing.error);
  s += "devices: ";
  for (size_t i = 0; i < listing.devices.size(); ++i) s += (i ? "; " : "") + describe_device(i, listing.devices[i]);
  return s;
}

const baton_plugin_desc* describe() {
  static const std::vector<baton_op_decl> decls = [] {
    std::vector<baton_op_decl> out;
    for (const OpDef& def : op_defs()) {
      out.push_back({sizeof(baton_op_decl), def.code, nullptr, def.min_version, def.max_version, nullptr});
    }
    return out;
  }();
  static const std::string text = description();
  static const baton_plugin_desc desc = {
      sizeof(baton_plugin_desc),
      BATON_ABI_VERSION_MAJOR,
      BATON_ABI_VERSION_MINOR,
      "vulkan",
      "0.1.0",
      BATON_PLUGIN_DELEGATE,
      text.c_str(),
      decls.data(),
      decls.size(),
      kOptions,
      sizeof(kOptions) / sizeof(kOptions[0]),
      0,  // not reentrant: every partition shares the one queue
      plugin_create,
      plugin_destroy,
      &Calls::table,
  };
  return &desc;
}

}  // namespace
}  // namespace baton::vulkan

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  (void)host_abi_minor;
  if (!baton::kit::host_is_usable(host_abi_major, api, error, "vulkan", true)) return nullptr;
  try {
    baton::vulkan::g_api = api;
    return baton::vulkan::describe();
  } catch (...) {
    api->error_set(error, "vulkan: out of memory while describing the plugin");
    return nullptr;
  }
}
