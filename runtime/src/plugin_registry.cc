// The plugin registry's reading of descriptors: each plugin's declarations checked and kept (adopt), the
// plugins' lifecycle and lookups. Which files are plugins, and where they are opened, is
// plugin_discovery.cc.
#include "plugin_registry.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

#include "graph.h"
#include "plugin_call.h"

namespace baton {


namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::string str_or_empty(const char* s) { return s ? std::string(s) : std::string(); }

}  // namespace

bool OpDecl::matches(int32_t op_code, const std::string& custom, int32_t version) const {
  if (code != op_code) return false;
  if ((op_code == BATON_OP_CUSTOM || op_code == BATON_OP_STABLEHLO_COMPOSITE) && custom != custom_name) return false;
  return version >= min_version && version <= max_version;
}

std::string OpDecl::describe() const {
  std::string name = code == BATON_OP_CUSTOM ? custom_name
                     : code == BATON_OP_STABLEHLO_COMPOSITE ? "STABLEHLO_COMPOSITE '" + custom_name + "'"
                                                            : op_name(code);
  if (min_version == max_version) return name + " v" + std::to_string(min_version);
  return name + " v" + std::to_string(min_version) + "-" + std::to_string(max_version);
}

const char* option_type_name(baton_option_type type) {
  switch (type) {
    case BATON_OPTION_BOOL: return "bool";
    case BATON_OPTION_INT: return "int";
    case BATON_OPTION_FLOAT: return "float";
    case BATON_OPTION_STRING: return "string";
  }
  return "unknown";
}

Status check_option_value(baton_option_type type, const std::string& value) {
  switch (type) {
    case BATON_OPTION_BOOL: {
      static const std::set<std::string> ok = {"true", "false", "yes", "no", "on", "off", "1", "0"};
      if (!ok.count(value)) return Status::error("expected a bool (true/false, yes/no, on/off, 1/0)");
      return Status::ok();
    }
    case BATON_OPTION_INT: {
      char* end = nullptr;
      errno = 0;
      (void)std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || errno != 0 || *end != '\0') return Status::error("expected a whole number");
      return Status::ok();
    }
    case BATON_OPTION_FLOAT: {
      char* end = nullptr;
      errno = 0;
      (void)std::strtod(value.c_str(), &end);
      if (value.empty() || errno != 0 || *end != '\0') return Status::error("expected a number");
      return Status::ok();
    }
    case BATON_OPTION_STRING: return Status::ok();
  }
  return Status::error("unknown option type");
}

const char* device_kind_name(baton_device_kind kind) {
  switch (kind) {
    case BATON_DEVICE_NPU: return "npu";
    case BATON_DEVICE_GPU: return "gpu";
    case BATON_DEVICE_CPU: return "cpu";
    case BATON_DEVICE_EMULATED: return "emulated";
  }
  return "unknown";
}

bool is_disabled(const Config* config, const std::string& name) {
  if (!config) return false;
  std::string n = name;
  std::replace(n.begin(), n.end(), '_', '-');
  for (std::string d : config->disabled) {
    std::replace(d.begin(), d.end(), '_', '-');
    if (d == n) return true;
  }
  return false;
}


void LoadedPlugin::unload() {
  std::lock_guard<std::mutex> guard(lifecycle_);
  if (unloaded_ || isolated || !library.is_loaded() || kind == BATON_PLUGIN_OP_PACK) return;
  // A created loader (they are created at load) that made no shared object is destroyed first; a created
  // delegate is in use.
  if (created && (kind != BATON_PLUGIN_LOADER || asked_shared)) return;
  if (kind == BATON_PLUGIN_DELEGATE && !probed_) return;  // the reports would ask it for its devices
  release();
  state = nullptr;
  forget_functions();
  create_tried_ = true;
  create_error_ = "unloaded: this environment does not use it";
  library.unload();
  unloaded_ = true;
  if (log) log(BATON_LOG_DEBUG, "plugin " + name + " unloaded: this environment does not use it");
}

void LoadedPlugin::forget_functions() {
  probe_declared_ = probe_declared_ || probe_fn != nullptr;
  selects_nodes_ = selects_nodes_ || delegate.select_nodes != nullptr;
  delegate = baton_delegate_api{};
  for (OpDecl& op : ops) op.kernel = baton_kernel{};
  create_fn = nullptr;
  destroy_fn = nullptr;
  probe_fn = nullptr;
  wrap_file_fn = nullptr;
  wrap_object_fn = nullptr;
}

Status LoadedPlugin::ensure_created() {
  std::lock_guard<std::mutex> guard(lifecycle_);
  return create_locked();
}

Status LoadedPlugin::create_locked() {
  if (!create_tried_) {
    create_tried_ = true;
    if (create_fn) {
      baton_error error;
      baton_status st = BATON_ERROR;
      try {
        auto call = lock();
        st = create_fn(handle(), &state, &error);
      } catch (...) {
        error.message = "threw an exception across the C boundary";
      }
      // The plugin owns nothing the host must free after a failed create.
      if (st != BATON_OK) create_error_ = "init failed: " + (error.message.empty() ? "no reason given" : error.message);
    }
    created = create_error_.empty();
    if (log && created) log(BATON_LOG_DEBUG, "plugin " + name + " created");
  }
  return created ? Status::ok() : Status::error(create_error_);
}

Expected<std::vector<DeviceInfo>> LoadedPlugin::devices() {
  std::lock_guard<std::mutex> guard(lifecycle_);
  if (probed_) return devices_;
  probed_ = true;
  if (!probe_fn) {
    devices_ = std::vector<DeviceInfo>{{"CPU (the plugin declares no devices)", BATON_DEVICE_CPU, 0}};
    return devices_;
  }
  baton_error error;
  const baton_device* list = nullptr;
  size_t count = 0;
  baton_status st = BATON_ERROR;
  try {
    auto call = lock();
    st = probe_fn(handle(), &list, &count, &error);
  } catch (...) {
    error.message = "threw an exception across the C boundary";
  }
  if (st != BATON_OK) {
    devices_ = Status::error("device probe failed: " + (error.message.empty() ? "no reason given" : error.message));
    return devices_;
  }
  if (count > 0 && !list) {
    devices_ = Status::error("device probe gave " + std::to_string(count) + " devices but no array");
    return devices_;
  }
  if (count > 1000) {
    devices_ = Status::error("device probe gave an implausible number of devices (" + std::to_string(count) + ")");
    return devices_;
  }
  const size_t stride = count ? list[0].struct_size : 0;
  if (count && !BATON_STRUCT_HAS(&list[0], baton_device, preference)) {
    devices_ = Status::error("device entries are too small (" + std::to_string(stride) + " bytes)");
    return devices_;
  }
  std::vector<DeviceInfo> out;
  const auto* bytes = reinterpret_cast<const uint8_t*>(list);
  for (size_t i = 0; i < count; ++i) {
    const baton_device d = copy_sized<baton_device>(bytes + i * stride, stride);
    if (d.kind < BATON_DEVICE_NPU || d.kind > BATON_DEVICE_EMULATED) {
      devices_ = Status::error("device " + std::to_string(i) + " has unknown kind " + std::to_string(d.kind));
      return devices_;
    }
    out.push_back({d.name ? std::string(d.name) : std::string("(unnamed)"), static_cast<baton_device_kind>(d.kind),
                   std::clamp<int32_t>(d.preference, -1000, 1000)});
  }
  devices_ = std::move(out);
  return devices_;
}

LoadedPlugin::~LoadedPlugin() { release(); }

void LoadedPlugin::release() {
  if (!created || !destroy_fn) return;
  created = false;
  try {
    destroy_fn(state);
  } catch (...) {
    if (log) log(BATON_LOG_WARNING, "plugin " + name + ": destroy threw an exception across the C boundary");
  }
}

void* SharedObjects::get(const std::string& key, void* (*create)(void*), void (*destroy)(void*), void* context) {
  std::lock_guard<std::mutex> hold(mutex_);
  for (const Entry& e : entries_) {
    if (e.key == key) return e.object;
  }
  if (!create) return nullptr;
  void* object = create(context);
  if (object) entries_.push_back({key, object, destroy});
  return object;
}

void SharedObjects::clear() {
  std::lock_guard<std::mutex> hold(mutex_);
  while (!entries_.empty()) {
    Entry e = entries_.back();
    entries_.pop_back();
    if (e.destroy) e.destroy(e.object);
  }
}

const OpDecl* LoadedPlugin::find_op(int32_t op_code, const std::string& custom, int32_t version) const {
  for (const OpDecl& op : ops) {
    if (op.matches(op_code, custom, version)) return &op;
  }
  return nullptr;
}

PluginRegistry::~PluginRegistry() {
  // Every plugin's state first (in reverse order of loading), then what they shared (its code lives in
  // their libraries or in libraries they loaded), then the libraries.
  for (auto it = plugins_.rbegin(); it != plugins_.rend(); ++it) (*it)->release();
  shared_.clear();
  while (!plugins_.empty()) plugins_.pop_back();
}

LoadedPlugin* PluginRegistry::find(const std::string& name) const {
  for (const auto& p : plugins_) {
    if (p->name == name) return p.get();
  }
  return nullptr;
}

std::vector<LoadedPlugin*> PluginRegistry::op_packs() const {
  std::vector<LoadedPlugin*> out;
  for (const std::string& name : precedence_) {
    LoadedPlugin* p = find(name);
    if (p && p->kind == BATON_PLUGIN_OP_PACK) out.push_back(p);
  }
  for (const auto& p : plugins_) {
    if (p->kind == BATON_PLUGIN_OP_PACK && std::find(out.begin(), out.end(), p.get()) == out.end()) {
      out.push_back(p.get());
    }
  }
  return out;
}

// Reads a descriptor, from an entry point or a loader, into `plugin` and keeps it, or skips it.
void PluginRegistry::adopt(std::unique_ptr<LoadedPlugin> plugin, const baton_plugin_desc* desc,
                           const RegistryOptions& options) {
  const std::string path = plugin->path;
  auto skip = [&](const std::string& reason) {
    skipped_.push_back({path, reason});
    if (options.log) options.log(BATON_LOG_WARNING, "skipping plugin " + path + ": " + reason);
  };
  // Fields through `destroy` exist since ABI 1.0; anything shorter cannot be a v1 descriptor.
  const size_t min_size = offsetof(baton_plugin_desc, destroy) + sizeof(desc->destroy);
  if (!BATON_STRUCT_HAS(desc, baton_plugin_desc, abi_minor)) {
    return skip("descriptor too small (" + std::to_string(desc->struct_size) + " bytes)");
  }
  if (desc->abi_major != BATON_ABI_VERSION_MAJOR) {
    return skip("ABI major mismatch: plugin built for ABI " + std::to_string(desc->abi_major) + "." +
                std::to_string(desc->abi_minor) + ", this host speaks " + std::to_string(BATON_ABI_VERSION_MAJOR) +
                "." + std::to_string(BATON_ABI_VERSION_MINOR));
  }
  if (!BATON_STRUCT_HAS(desc, baton_plugin_desc, destroy)) {
    return skip("descriptor too small for ABI 1 (" + std::to_string(desc->struct_size) + " bytes, need " +
                std::to_string(min_size) + ")");
  }
  const baton_plugin_desc d = copy_sized<baton_plugin_desc>(desc, desc->struct_size);
  plugin->abi_major = d.abi_major;
  plugin->abi_minor = d.abi_minor;
  plugin->name = str_or_empty(d.name);
  plugin->version = str_or_empty(d.version);
  plugin->description = str_or_empty(d.description);
  plugin->flags = d.flags;
  plugin->destroy_fn = d.destroy;
  if (!valid_name(plugin->name)) {
    return skip("invalid plugin name '" + plugin->name + "' (use a-z, 0-9, '_' and '-')");
  }
  if (d.kind != BATON_PLUGIN_OP_PACK && d.kind != BATON_PLUGIN_DELEGATE && d.kind != BATON_PLUGIN_LOADER) {
    return skip("unknown plugin kind " + std::to_string(d.kind));
  }
  plugin->kind = d.kind;
  if (const LoadedPlugin* other = find(plugin->name)) {
    return skip("duplicate name '" + plugin->name + "' (already loaded from " + other->path + ")");
  }
  if (is_disabled(options.config, plugin->name)) {
    // Its file name did not say its name, so it had to be opened to learn it.
    disabled_.push_back({path, plugin->name});
    return;
  }

  // Declarations: arrays are stepped by their elements' own struct_size, so a newer plugin's larger
  // structs read correctly.
  if (d.op_count > 0 && !d.ops) return skip("declares " + std::to_string(d.op_count) + " ops but gives no array");
  if (d.op_count > 100000) return skip("declares an implausible number of ops");
  const auto* op_bytes = reinterpret_cast<const uint8_t*>(d.ops);
  size_t op_stride = d.op_count ? d.ops[0].struct_size : 0;
  // Fields through max_version are needed; `kernel` may be absent (a delegate's declarations).
  if (d.op_count && !BATON_STRUCT_HAS(&d.ops[0], baton_op_decl, max_version)) {
    return skip("op declarations are too small (" + std::to_string(op_stride) + " bytes)");
  }
  for (size_t i = 0; i < d.op_count; ++i) {
    const baton_op_decl o = copy_sized<baton_op_decl>(op_bytes + i * op_stride, op_stride);
    OpDecl op;
    op.code = o.builtin_code;
    op.min_version = o.min_version;
    op.max_version = o.max_version;
    const std::string where = "op declaration " + std::to_string(i);
    if (o.builtin_code == BATON_OP_CUSTOM) {
      if (!o.custom_name || !*o.custom_name) return skip(where + " is CUSTOM without a name");
      op.custom_name = o.custom_name;
    } else if (o.builtin_code == BATON_OP_STABLEHLO_COMPOSITE) {
      if (!o.custom_name || !*o.custom_name) return skip(where + " is STABLEHLO_COMPOSITE without the composite's name");
      op.custom_name = o.custom_name;
    } else if (o.builtin_code < 0 || o.builtin_code > 255) {
      return skip(where + " has invalid builtin code " + std::to_string(o.builtin_code));
    }
    if (o.min_version < 1 || o.max_version < o.min_version) {
      return skip(where + " (" + op.describe() + ") has an invalid version range");
    }
    if (plugin->kind == BATON_PLUGIN_OP_PACK) {
      if (!o.kernel || !BATON_STRUCT_HAS(o.kernel, baton_kernel, invoke)) {
        return skip(where + " (" + op.describe() + ") has no kernel");
      }
      op.kernel = copy_sized<baton_kernel>(o.kernel, o.kernel->struct_size);
      if (!op.kernel.prepare || !op.kernel.invoke) return skip(where + " (" + op.describe() + ") lacks prepare or invoke");
      op.has_kernel = true;
    }
    for (const OpDecl& seen : plugin->ops) {
      if (seen.code == op.code && seen.custom_name == op.custom_name && seen.min_version <= op.max_version &&
          op.min_version <= seen.max_version) {
        return skip(where + " (" + op.describe() + ") overlaps an earlier declaration (" + seen.describe() + ")");
      }
    }
    plugin->ops.push_back(std::move(op));
  }
  if (d.option_count > 0 && !d.options) return skip("declares options but gives no array");
  if (d.option_count > 10000) return skip("declares an implausible number of options");
  const auto* opt_bytes = reinterpret_cast<const uint8_t*>(d.options);
  size_t opt_stride = d.option_count ? d.options[0].struct_size : 0;
  if (d.option_count && !BATON_STRUCT_HAS(&d.options[0], baton_option_decl, help)) {
    return skip("option declarations are too small");
  }
  for (size_t i = 0; i < d.option_count; ++i) {
    const baton_option_decl o = copy_sized<baton_option_decl>(opt_bytes + i * opt_stride, opt_stride);
    OptionDecl opt;
    opt.name = str_or_empty(o.name);
    opt.type = o.type;
    opt.help = str_or_empty(o.help);
    if (!valid_name(opt.name)) return skip("option declaration " + std::to_string(i) + " has an invalid name");
    if (o.type < BATON_OPTION_BOOL || o.type > BATON_OPTION_STRING) {
      return skip("option '" + opt.name + "' has an unknown type");
    }
    if (o.default_value) {
      opt.default_value = o.default_value;
      if (Status s = check_option_value(opt.type, *opt.default_value); !s) {
        return skip("option '" + opt.name + "' has a bad default '" + *opt.default_value + "': " + s.message());
      }
      plugin->option_values[opt.name] = *opt.default_value;
    }
    plugin->options.push_back(std::move(opt));
  }
  if (plugin->kind == BATON_PLUGIN_DELEGATE) {
    if (!BATON_STRUCT_HAS(&d, baton_plugin_desc, delegate) || !d.delegate) {
      return skip("delegate plugin gives no delegate functions");
    }
    plugin->delegate = copy_sized<baton_delegate_api>(d.delegate, d.delegate->struct_size);
    if ((!plugin->delegate.check_node && !plugin->delegate.select_nodes) || !plugin->delegate.partition_init ||
        !plugin->delegate.partition_invoke) {
      return skip("delegate plugin lacks check_node (or select_nodes), partition_init or partition_invoke");
    }
    plugin->has_delegate = true;
    if (BATON_STRUCT_HAS(&d, baton_plugin_desc, probe_devices)) plugin->probe_fn = d.probe_devices;
  }

  // An isolated loader has no functions here: it wraps each file in a child of that file's own.
  if (plugin->kind == BATON_PLUGIN_LOADER && !plugin->isolated) {
    if (!BATON_STRUCT_HAS(&d, baton_plugin_desc, loader) || !d.loader ||
        !BATON_STRUCT_HAS(d.loader, baton_loader_api, wrap_file) || !d.loader->wrap_file) {
      return skip("loader plugin gives no wrap_file function");
    }
    plugin->wrap_file_fn = d.loader->wrap_file;
    if (BATON_STRUCT_HAS(d.loader, baton_loader_api, wrap_object)) {
      plugin->wrap_object_fn = d.loader->wrap_object;
    }
  }

  // Configured options, checked against the declarations. A mismatch is the config's error: it is
  // reported by load(), not here, so the plugin is kept out rather than run with a wrong setting.
  if (options.config) {
    auto it = options.config->plugins.find(plugin->name);
    if (it != options.config->plugins.end()) {
      for (const auto& option : it->second.options) {
        const std::string& key = option.first;
        const ConfigValue& value = option.second;
        auto decl = std::find_if(plugin->options.begin(), plugin->options.end(),
                                 [&](const OptionDecl& o) { return o.name == key; });
        if (decl == plugin->options.end()) {
          // Host-level keys are the host's; any other goes to a plugin that takes any option as text.
          const bool host_key = key == "min-nodes-per-partition" || key == "max-partitions";
          if ((plugin->flags & BATON_PLUGIN_FLAG_ANY_OPTIONS) && !host_key) plugin->option_values[key] = value.value;
          continue;  // otherwise reported by load()
        }
        if (!check_option_value(decl->type, value.value)) continue;
        plugin->option_values[key] = value.value;
      }
    }
  }
  const int cpus = options.cpus > 0 ? options.cpus : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int threads = options.threads > 0 ? options.threads : cpus;
  if (auto it = plugin->option_values.find("threads"); it != plugin->option_values.end()) {
    const int configured = std::atoi(it->second.c_str());
    if (configured > cpus) {
      if (options.log) options.log(BATON_LOG_WARNING, "plugin '" + plugin->name + "': threads = " + std::to_string(configured) +
                                 " in the config, but this process may run on " + std::to_string(cpus) +
                                 " CPU(s); using " + std::to_string(cpus));
    }
    if (configured > 0) threads = std::min(configured, cpus);
  }
  plugin->threads = std::max(1, threads);
  plugin->shared = &shared_;

  plugin->create_fn = d.create;
  // Op packs and loaders are created now; a delegate only when it enters a delegate chain, so one that is not used
  // costs no memory and no start-up time (a GPU delegate would open its driver in create).
  if (plugin->kind == BATON_PLUGIN_OP_PACK || (plugin->kind == BATON_PLUGIN_LOADER && !plugin->isolated)) {
    if (Status s = plugin->ensure_created(); !s) return skip(s.message());
  }
  if (options.log) {
    options.log(BATON_LOG_DEBUG, "loaded plugin " + plugin->name + " " + plugin->version + " (" +
                                     plugin->kind_name() + ") from " + path);
  }
  plugins_.push_back(std::move(plugin));
}

}  // namespace baton
