// Plugin discovery and loading. Each candidate `.so` in the plugin directories is opened with dlopen (shared_library.h),
// its entry point is called with the host's ABI version and function table, and its descriptor is
// copied into host-owned values (so a plugin's struct layout never leaks past this file). A file that
// cannot be used is skipped with one reason; the others still load. Order is deterministic: directories
// in the order given, files sorted by name within each.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "config.h"
#include "log.h"
#include "shared_library.h"
#include "status.h"

namespace baton {
namespace isolation {
class IsolatedPlugin;
}

struct OpDecl {
  int32_t code = 0;
  std::string custom_name;
  int32_t min_version = 1;
  int32_t max_version = 1;
  baton_kernel kernel{};  // zero for delegates
  bool has_kernel = false;

  bool matches(int32_t op_code, const std::string& custom, int32_t version) const;
  std::string describe() const;  // "CONV_2D v1-6"
};

struct OptionDecl {
  std::string name;
  baton_option_type type = BATON_OPTION_STRING;
  std::optional<std::string> default_value;
  std::string help;
};

const char* option_type_name(baton_option_type type);
// Checks `value` against `type`; the error says what was expected.
Status check_option_value(baton_option_type type, const std::string& value);

// One device a delegate runs on, as its probe declared it (ABI 1.1).
struct DeviceInfo {
  std::string name;
  baton_device_kind kind = BATON_DEVICE_CPU;
  int32_t preference = 0;
};

// "npu", "gpu", "cpu", "emulated".
const char* device_kind_name(baton_device_kind kind);

// One loaded plugin. Its address is the plugin's `baton_plugin_host` handle.
// Objects the plugins of one registry share by key (the host table's shared_object, ABI 1.4): created
// by the first plugin that asks, destroyed by the registry after every plugin's destroy and before any
// plugin's library is unloaded, in the reverse order of creation.
class SharedObjects {
 public:
  // The object kept under `key`, created with create(context) on the first call (NULL is not kept).
  void* get(const std::string& key, void* (*create)(void*), void (*destroy)(void*), void* context);
  void clear();
  ~SharedObjects() { clear(); }

 private:
  struct Entry {
    std::string key;
    void* object;
    void (*destroy)(void*);
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

class LoadedPlugin {
 public:
  ~LoadedPlugin();
  // Calls the plugin's destroy when it was created (once; the library stays loaded).
  void release();
  // Unloads the library of a plugin its environment will never call (a delegate left out of the chain,
  // a loader that wrapped nothing), so that it costs no memory. What it declared stays for the reports
  // (name, ops, options, the devices its probe gave); its functions are gone, and ensure_created fails.
  // A loader is destroyed first. Does nothing to a created delegate, an isolated plugin, a delegate whose
  // devices were never asked, a loader that asked for a shared object, or an op pack (park() is theirs, and
  // a chain delegate's).
  void unload();
  bool unloaded() const { return unloaded_; }

  // Op packs and delegates: one that no subgraph holds is parked when a model is made without it
  // (Environment::park_unused_plugins), so that it costs no memory: destroyed and its library unloaded,
  // what it declared kept (resolution, the chain and the reports read only that). acquire() loads and
  // creates it again, its functions refreshed (a pack's kernels in `ops`, a delegate's table), before a
  // subgraph uses it. Never parked: an isolated plugin, one a loader wrapped, one that asked for a shared
  // object (the object's functions may be its code), a delegate whose devices were never asked.
  void park();
  bool parked() const { return parked_.load(std::memory_order_relaxed); }
  // One more subgraph runs this pack's kernels or this delegate's partitions (a parked plugin is loaded and
  // created again first; the error names the file and why that failed); release_use() is one fewer.
  // Thread-safe.
  Status acquire();
  void release_use();
  std::atomic<bool> asked_shared{false};  // the plugin called the host table's shared_object

  SharedLibrary library;  // first member: unloaded after everything below is released
  std::string path;
  std::string name;
  std::string version;
  std::string description;
  baton_plugin_kind kind = BATON_PLUGIN_OP_PACK;
  uint32_t abi_major = 0, abi_minor = 0;
  uint32_t flags = 0;
  std::vector<OpDecl> ops;
  std::vector<OptionDecl> options;
  std::map<std::string, std::string> option_values;  // effective values, text
  baton_delegate_api delegate{};
  bool has_delegate = false;
  void* state = nullptr;
  bool created = false;
  int threads = 1;  // what thread_count() answers
  SharedObjects* shared = nullptr;  // the registry's, for shared_object()
  // Delegates only, from the config's [plugin.NAME] section (host-level keys, the same for every
  // delegate): partitions with fewer nodes are given back; at most this many partitions (0: no limit).
  size_t min_nodes_per_partition = 1;
  size_t max_partitions = 0;
  LogSink log;

  void (*destroy_fn)(void*) = nullptr;
  baton_status (*create_fn)(const baton_plugin_host*, void**, baton_error*) = nullptr;
  baton_probe_devices_fn probe_fn = nullptr;

  const char* kind_name() const {
    return kind == BATON_PLUGIN_DELEGATE ? "delegate" : kind == BATON_PLUGIN_LOADER ? "loader" : "op-pack";
  }
  // Loaders only (ABI 1.2).
  const baton_plugin_desc* (*wrap_file_fn)(void*, const char*, baton_error*) = nullptr;
  const baton_plugin_desc* (*wrap_object_fn)(void*, const char*, void*, const char*, baton_error*) = nullptr;
  std::string loaded_by;  // the loader that wrapped this plugin's file, or "" for a baton plugin
  // Set when the plugin runs in a baton-plugin-host child (isolation = process): its descriptor's
  // functions forward to that process, and the library above stays unloaded in this one.
  std::shared_ptr<isolation::IsolatedPlugin> isolated;
  // Calls the plugin's `create` once, the first time it is needed (op packs: at load; delegates: when
  // they enter a delegate chain). Later calls return the first call's result. Thread-safe.
  Status ensure_created();
  // The devices a delegate declares, from its probe (called once, the first time this is asked, then
  // remembered). A plugin without a probe (ABI 1.0) has one CPU device of preference 0 and
  // `declares_devices()` false. Thread-safe.
  Expected<std::vector<DeviceInfo>> devices();
  bool declares_devices() const { return probe_fn != nullptr || probe_declared_; }
  bool selects_nodes() const { return delegate.select_nodes != nullptr || selects_nodes_; }
  const OpDecl* find_op(int32_t op_code, const std::string& custom, int32_t version) const;
  // Held around every call into the plugin; a no-op for reentrant plugins.
  std::unique_lock<std::mutex> lock() {
    return (flags & BATON_PLUGIN_FLAG_REENTRANT) ? std::unique_lock<std::mutex>(calls_, std::defer_lock)
                                                 : std::unique_lock<std::mutex>(calls_);
  }
  baton_plugin_host* handle() { return reinterpret_cast<baton_plugin_host*>(this); }
  static LoadedPlugin* from(const baton_plugin_host* h) {
    return reinterpret_cast<LoadedPlugin*>(const_cast<baton_plugin_host*>(h));
  }

 private:
  std::mutex calls_;
  std::mutex lifecycle_;  // create and probe
  bool create_tried_ = false;
  std::string create_error_;
  bool probed_ = false;
  Expected<std::vector<DeviceInfo>> devices_ = std::vector<DeviceInfo>{};
  bool unloaded_ = false;
  bool probe_declared_ = false, selects_nodes_ = false;  // what the cleared functions said, once unloaded
  int users_ = 0;  // subgraphs holding the plugin (acquire)
  std::atomic<bool> parked_{false};
  Status create_locked();  // ensure_created's work, lifecycle_ held
  Status reload_locked();  // a parked plugin loaded, checked against its declarations and created again
  // Before its library is unloaded (unload, park): every pointer into it cleared, what the reports need
  // of them (whether it probes, whether it selects nodes) kept.
  void forget_functions();
};

struct SkippedPlugin {
  std::string path;
  std::string reason;
};

// A plugin that the config's `disabled` list kept out.
struct DisabledPlugin {
  std::string path;
  std::string name;
};

struct RegistryOptions {
  std::vector<std::string> dirs;  // in search order
  const Config* config = nullptr;
  int threads = 0;  // 0: `cpus`
  int cpus = 0;     // the CPUs the process may run on (cpu_budget.h); 0: the machine's cores
  // Load from folders and files other users can write (group- or world-writable, or owned by another
  // user than root and this one). Off by default: such a plugin could be anyone's code.
  bool allow_unsafe_dirs = false;
  // Plugins (by name) to run in a baton-plugin-host child process, or every plugin; the config's
  // [plugin.NAME] `isolation` key decides for its plugin over `isolate_all`.
  std::vector<std::string> isolate;
  bool isolate_all = false;
  LogSink log;
};

// The plugin name a file's name stands for, so that a disabled plugin is never opened:
// "libbaton_vulkan.so" -> "vulkan", "libfoo.so.1" -> "foo", "deleg_a.so" -> "deleg-a" ('_' read as '-').
std::string plugin_name_from_file(const std::string& path);

// Why `path` (a plugin folder or file) is unsafe to load from, or "" when it is safe.
std::string unsafe_reason(const std::string& path);

// Whether the config disables plugin `name` ('_' read as '-', as plugin_name_from_file reads files).
bool is_disabled(const Config* config, const std::string& name);

class PluginRegistry {
 public:
  // Loads every usable plugin. Fails only on a config error (a plugin section or option that does not
  // match what the plugins declared); unusable files are recorded in skipped().
  static Expected<std::unique_ptr<PluginRegistry>> load(const RegistryOptions& options);

  const std::vector<std::unique_ptr<LoadedPlugin>>& plugins() const { return plugins_; }
  const std::vector<SkippedPlugin>& skipped() const { return skipped_; }
  // Files not loaded because `disabled` names them; never opened when the file name says the name.
  const std::vector<DisabledPlugin>& disabled() const { return disabled_; }
  const std::vector<std::string>& dirs() const { return dirs_; }
  LoadedPlugin* find(const std::string& name) const;
  // Wraps an in-process object of a foreign plugin format (e.g. "TfLiteDelegate") through the first
  // loader that takes it, as a plugin named `name`; the object is borrowed for the registry's life.
  Expected<LoadedPlugin*> wrap_object(const std::string& format, void* object, const std::string& name);
  // Op packs in resolution order: the config's op-pack-precedence first, then load order.
  std::vector<LoadedPlugin*> op_packs() const;
  ~PluginRegistry();

 private:
  void load_file(const std::string& path, const RegistryOptions& options);
  void load_isolated(const std::string& path, const std::string& name, const RegistryOptions& options);
  void adopt(std::unique_ptr<LoadedPlugin> plugin, const baton_plugin_desc* desc, const RegistryOptions& options);
  void offer_to_loaders(const RegistryOptions& options);
  std::vector<std::pair<std::string, std::string>> unclaimed_;  // files without a baton entry, and why
  RegistryOptions options_;  // what load() was given, for plugins wrapped later
  std::vector<std::unique_ptr<LoadedPlugin>> plugins_;
  std::vector<SkippedPlugin> skipped_;
  std::vector<DisabledPlugin> disabled_;
  std::vector<std::string> dirs_;
  std::vector<std::string> precedence_;
  SharedObjects shared_;  // outlives every plugin's state, not their libraries (see ~PluginRegistry)
};

// The host function table handed to every plugin.
const baton_host_api* host_api_table();

// Calls `library`'s baton_plugin_entry (which it must export) with this host's ABI version and function
// table: its descriptor, or null with *why set (an exception across the C boundary, no descriptor).
const baton_plugin_desc* call_plugin_entry(SharedLibrary& library, std::string* why);

// Copies a struct from a plugin: as many bytes as both sides know, the rest left zero.
template <typename T>
T copy_sized(const void* from, size_t their_size) {
  T out{};
  std::memcpy(&out, from, std::min(sizeof(T), their_size));
  return out;
}

}  // namespace baton
