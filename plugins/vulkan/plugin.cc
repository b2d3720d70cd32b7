// The Vulkan delegate's entry point and C boundary: the descriptor (ops with their version ranges, the
// options), the device probe (device_probe.h: never loads a driver into the host), plugin
// create/destroy (the device, glslang, the pipeline set) and the delegate calls (the plugin kit's, over
// PluginState::check and Partition). Nothing here opens a Vulkan driver until the delegate is created
// with a device to run on. Every call catches everything and turns it into a
// status and a message: a Refusal, a VkResult by name, a shader by name with glslang's log.
#include <dlfcn.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"
#include "device_probe.h"
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
     "discrete GPU, else integrated GPU, else another GPU, never a CPU implementation (lavapipe) unless named"},
    {sizeof(baton_option_decl), "validation", BATON_OPTION_BOOL, "false",
     "enable the Khronos validation layer (vulkan-validationlayers) and log its warnings and errors"},
    {sizeof(baton_option_decl), "shader-cache", BATON_OPTION_BOOL, "true",
     "keep compiled SPIR-V and the device list on disk so that later starts neither compile nor probe again"},
    {sizeof(baton_option_decl), "cache-dir", BATON_OPTION_STRING, nullptr,
     "the cache's folder; unset = $XDG_CACHE_HOME/baton/vulkan (~/.cache/baton/vulkan)"},
    {sizeof(baton_option_decl), "shader-dir", BATON_OPTION_STRING, nullptr,
     "read NAME.comp from this folder instead of the shaders built into the plugin (for shader work)"},
    {sizeof(baton_option_decl), "fp16", BATON_OPTION_BOOL, nullptr,
     "store activations and weights as float16 where the device has 16-bit storage buffers (half the memory "
     "traffic), and compute the convolutions and FULLY_CONNECTED in float16 where it also has float16 "
     "arithmetic (shaderFloat16; see fp16-arithmetic); false = float32 throughout (TFLite's GPU delegate: "
     "precision loss allowed, or not); unset = true on a GPU, false on a CPU implementation (lavapipe), where "
     "the conversions cost more than the bytes they save"},
    {sizeof(baton_option_decl), "tune", BATON_OPTION_BOOL, nullptr,
     "time a few workgroup shapes of each convolution, matmul and data-movement dispatch on the device when a "
     "partition is built and keep the fastest, remembered per device and driver in the cache folder (so a "
     "model's second start times nothing); false = the built-in rule, and what the cache already holds; "
     "unset = true on a GPU, false on a CPU implementation (lavapipe)"},
    {sizeof(baton_option_decl), "fp16-arithmetic", BATON_OPTION_BOOL, "true",
     "with fp16: compute the convolutions and FULLY_CONNECTED in float16 where the device can (real models' "
     "outputs within 6e-2 of the largest float32 output; float16 storage alone keeps them within 2e-2); "
     "false = float16 storage, float32 arithmetic"},
};

// The Vulkan loader keeps state in memory it never frees and re-reads every driver manifest when it is
// loaded again; keep it loaded for the life of the process once a plugin used it.
void pin_loader() { (void)dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); }

std::string cache_dir_option(const baton_plugin_host* host) {
  if (!g_api->option_bool(host, "shader-cache", 1)) return "";
  const std::string dir = g_api->option_string(host, "cache-dir", "");
  return dir.empty() ? ShaderCache::default_dir() : dir;
}

// The devices, found once per process: from the cache or the helper process, else (no helper beside
// the plugin, or it failed) by a Vulkan instance in this process, which is said at info level.
const DeviceListing& device_listing(const baton_plugin_host* host) {
  static std::mutex mutex;
  static std::unique_ptr<DeviceListing> listing;
  std::lock_guard<std::mutex> guard(mutex);
  if (!listing) {
    ProbeResult r = probe_devices_out_of_process(cache_dir_option(host));
    if (!r.ok) {
      g_api->log(host, BATON_LOG_INFO, ("listing Vulkan devices in this process (" + r.source + ")").c_str());
      r.listing = list_devices();
    } else {
      g_api->log(host, BATON_LOG_DEBUG, ("Vulkan devices from " + r.source).c_str());
    }
    listing = std::make_unique<DeviceListing>(std::move(r.listing));
  }
  return *listing;
}

// ABI 1.1 device probe: the usable devices (a CPU implementation as `emulated`), or with the device
// option the one device it names; an error with the reason when there is none.
baton_status probe_devices(const baton_plugin_host* host, const baton_device** devices, size_t* count,
                           baton_error* error) {
  return kit::guarded(g_api, error, "probe", [&] {
    static std::mutex mutex;
    static std::vector<DeviceSummary> kept;
    static std::vector<baton_device> out;
    std::lock_guard<std::mutex> guard(mutex);
    const DeviceListing& listing = device_listing(host);
    if (!listing.error.empty()) refuse(listing.error);
    std::vector<DeviceSummary> usable;
    const std::string option = g_api->option_string(host, "device", "");
    if (!option.empty()) {
      std::string why;
      // A named CPU implementation is chosen like any device: choose_device accepts it by name.
      const int chosen = choose_device(listing.devices, option, &why);
      if (chosen < 0) refuse(why);
      usable.push_back(listing.devices[static_cast<size_t>(chosen)]);
    } else {
      for (const DeviceSummary& d : listing.devices) {
        if (d.unusable.empty()) usable.push_back(d);
      }
      if (usable.empty()) {
        std::string why;
        (void)choose_device(listing.devices, "", &why);
        refuse(why);
      }
    }
    kept = std::move(usable);
    out.clear();
    for (const DeviceSummary& d : kept) {
      const int32_t kind = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? BATON_DEVICE_EMULATED : BATON_DEVICE_GPU;
      out.push_back({sizeof(baton_device), d.name.c_str(), kind, BATON_DEVICE_PREFERENCE_DEFAULT});
    }
    *devices = out.data();
    *count = out.size();
    return BATON_OK;
  });
}

baton_status plugin_create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
  return kit::guarded(g_api, error, "create", [&] {
    auto state = std::make_unique<PluginState>();
    state->api = g_api;
    state->host = host;
    const LogFn log = [api = g_api, host](int level, const std::string& m) {
      api->log(host, static_cast<baton_log_level>(level), m.c_str());
    };
    GpuOptions options;
    options.device = g_api->option_string(host, "device", "");
    options.validation = g_api->option_bool(host, "validation", 0) != 0;
    // Unset: decided by the device's kind once it is known (float16 on a GPU).
    const bool fp16_unset = std::string(g_api->option_string(host, "fp16", "")).empty();
    options.f16_storage = fp16_unset || g_api->option_bool(host, "fp16", 1) != 0;
    options.f16_math = options.f16_storage && g_api->option_bool(host, "fp16-arithmetic", 1) != 0;
    try {
      if (options.device.empty()) {
        // Without a device named, decide from the probe whether there is one to run on before any
        // driver is loaded: on a machine whose only device is a CPU implementation, none is.
        std::string why;
        const DeviceListing& listing = device_listing(host);
        if (!listing.error.empty()) refuse(listing.error);
        if (choose_device(listing.devices, "", &why) < 0) refuse(why);
      }
      pin_loader();
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
    state->limits = device_limits(state->gpu->limits());
    const bool cpu_device = state->gpu->summary().type == VK_PHYSICAL_DEVICE_TYPE_CPU;
    state->f16 = state->gpu->f16_storage() && !(fp16_unset && cpu_device);
    state->f16_math = state->f16 && state->gpu->f16_math();
    std::string cache_dir;
    if (g_api->option_bool(host, "shader-cache", 1)) {
      cache_dir = g_api->option_string(host, "cache-dir", "");
      if (cache_dir.empty()) cache_dir = ShaderCache::default_dir();
    }
    state->glslang = std::make_unique<GlslangProcess>();
    state->pipelines = std::make_unique<PipelineSet>(*state->gpu, ShaderSources(g_api->option_string(host, "shader-dir", "")),
                                                     ShaderCache(cache_dir), log);
    const bool tune_unset = std::string(g_api->option_string(host, "tune", "")).empty();
    const bool tune = tune_unset ? !cpu_device : g_api->option_bool(host, "tune", 0) != 0;
    state->tuning = std::make_unique<TuningTable>(state->pipelines->cache(), state->gpu->driver_key(),
                                                  tune && state->gpu->timestamps(), log);
    state->log(BATON_LOG_INFO, "running on device " + describe_device(state->gpu->index(), state->gpu->summary()) +
                                   (options.validation ? " with validation" : "") +
                                   (state->f16_math       ? "; float16 storage and arithmetic"
                                    : state->f16 && !options.f16_math
                                        ? "; float16 storage, float32 arithmetic (fp16-arithmetic = false)"
                                    : state->f16 ? "; float16 storage, float32 arithmetic (the device has no float16 arithmetic)"
                                    : !options.f16_storage ? "; float32 (fp16 = false)"
                                    : !state->gpu->f16_storage() ? "; float32 (the device has no 16-bit storage buffers)"
                                                                 : "; float32 (a CPU implementation; fp16 = true for float16)") +
                                   (cache_dir.empty() ? "; shader cache off"
                                                      : "; shader cache in " + cache_dir + ", pipeline cache " +
                                                            std::to_string(state->pipelines->stats().cache_bytes_loaded) +
                                                            " bytes read") +
                                   (!tune ? "" : state->gpu->timestamps() ? "; workgroups tuned (" + std::to_string(state->tuning->loaded()) + " in the table)"
                                                                         : "; no workgroup tuning (the device writes no timestamps)"));
    if (cpu_device) {
      // Named by the device option: say what a user of such a machine most likely wants instead.
      state->log(BATON_LOG_INFO, "the device is a CPU implementation: on a machine without a GPU the xnnpack "
                                 "delegate is several times faster");
    }
    *plugin_state = state.release();
    return BATON_OK;
  });
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

const baton_plugin_desc* describe() {
  static const std::vector<baton_op_decl> decls = [] {
    std::vector<baton_op_decl> out;
    for (const OpDef& def : op_defs()) {
      out.push_back({sizeof(baton_op_decl), def.code, def.code == BATON_OP_CUSTOM ? def.name : nullptr, def.min_version,
                     def.max_version, nullptr});
    }
    return out;
  }();
  static const baton_plugin_desc desc = {
      sizeof(baton_plugin_desc),
      BATON_ABI_VERSION_MAJOR,
      BATON_ABI_VERSION_MINOR,
      "vulkan",
      "0.1.0",
      BATON_PLUGIN_DELEGATE,
      "float32 subgraphs on a Vulkan 1.1+ GPU (stored as float16 where it can: the fp16 option), GLSL compute shaders compiled by glslang",
      decls.data(),
      decls.size(),
      kOptions,
      sizeof(kOptions) / sizeof(kOptions[0]),
      0,  // not reentrant: every partition shares the one queue
      plugin_create,
      plugin_destroy,
      &Calls::table,
      probe_devices,
      nullptr,  // loader functions: loaders only
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
