// Finding plugins: which files in the plugin folders are plugins (read from their ELF symbol tables,
// without running them), whether each opens here or in a child of its own (isolation), which files go to
// loaders, and the config's sections checked against what was found. Descriptors are read by adopt
// (plugin_registry.cc).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "elf_symbols.h"
#include "graph.h"
#include "isolated_plugin.h"
#include "plugin_call.h"
#include "plugin_registry.h"
#include "posix_files.h"

namespace baton {

std::string plugin_name_from_file(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);  // npos + 1: the whole path
  if (const size_t so = name.find(".so"); so != std::string::npos) name.resize(so);
  if (name.rfind("lib", 0) == 0) name.erase(0, 3);
  if (name.rfind("baton_", 0) == 0 || name.rfind("baton-", 0) == 0) name.erase(0, 6);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

namespace {

bool is_elf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

// Names guessed from a file (plugin_name_from_file) read '_' as '-': so are they compared with names.
bool same_name(std::string a, std::string b) {
  std::replace(a.begin(), a.end(), '_', '-');
  std::replace(b.begin(), b.end(), '_', '-');
  return a == b;
}

// The section of plugin `name`: an exact match, else one whose name differs only in '_' and '-'.
const PluginSection* section_of(const Config* config, const std::string& name) {
  if (!config) return nullptr;
  if (auto it = config->plugins.find(name); it != config->plugins.end()) return &it->second;
  for (const auto& [section, body] : config->plugins) {
    if (same_name(section, name)) return &body;
  }
  return nullptr;
}

// Whether the plugin `name` runs in a child process: its config section decides, then the API's list,
// then isolation for all.
bool isolated(const RegistryOptions& options, const std::string& name) {
  if (const PluginSection* section = section_of(options.config, name); section && section->isolate) {
    return *section->isolate;
  }
  for (const std::string& n : options.isolate) {
    if (same_name(n, name)) return true;
  }
  return options.isolate_all;
}

isolation::IsolationSettings isolation_settings(const RegistryOptions& options, const std::string& name) {
  isolation::IsolationSettings settings;
  if (const PluginSection* section = section_of(options.config, name)) {
    settings.invoke_timeout_ms = section->invoke_timeout_ms.value_or(settings.invoke_timeout_ms);
    settings.prepare_timeout_ms = section->prepare_timeout_ms.value_or(settings.prepare_timeout_ms);
  }
  return settings;
}

}  // namespace

std::string unsafe_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  if (st.st_mode & S_IWOTH) return path + " is writable by every user";
  if (st.st_mode & S_IWGRP) return path + " is writable by its group";
  if (st.st_uid != 0 && st.st_uid != ::getuid()) {
    return path + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  }
  return "";
}

void PluginRegistry::load_file(const std::string& path, const RegistryOptions& options) {
  auto skip = [&](const std::string& reason) {
    skipped_.push_back({path, reason});
    if (options.log) options.log(BATON_LOG_WARNING, "skipping plugin " + path + ": " + reason);
  };
  if (!options.allow_unsafe_dirs) {
    const size_t slash = path.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "" : slash == 0 ? "/" : path.substr(0, slash);
    for (const std::string& p : {folder, path}) {
      if (std::string why = unsafe_reason(p); !why.empty()) {
        return skip("unsafe: " + why + " (set allow-unsafe-plugin-dirs = true in the config to load it anyway)");
      }
    }
  }
  if (!is_elf(path)) return skip("not a shared object (no ELF header)");
  // A disabled plugin is not opened at all: none of its code runs, not even its library constructors.
  if (options.config && is_disabled(options.config, plugin_name_from_file(path))) {
    disabled_.push_back({path, plugin_name_from_file(path)});
    if (options.log) options.log(BATON_LOG_DEBUG, "not opening " + path + ": disabled in " + options.config->path);
    return;
  }

  // Decided from the file when possible, so a library that is not a plugin never runs its constructors here.
  // Loaders are asked about such files once every folder has been read (load()).
  if (elf_exports_symbol(path, BATON_PLUGIN_ENTRY_SYMBOL) == std::optional<bool>(false)) {
    unclaimed_.push_back({path, "no entry symbol '" BATON_PLUGIN_ENTRY_SYMBOL "' in its dynamic symbol table (not "
                                "a baton plugin; not opened)"});
    return;
  }
  if (const std::string name = plugin_name_from_file(path); isolated(options, name)) {
    return load_isolated(path, name, options);
  }

  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->path = path;
  plugin->log = options.log;
  if (std::string why; !plugin->library.load(path, &why)) return skip("cannot be loaded: " + why);
  if (!plugin->library.has(BATON_PLUGIN_ENTRY_SYMBOL)) {
    unclaimed_.push_back({path, "no entry symbol '" BATON_PLUGIN_ENTRY_SYMBOL "' (not a baton plugin)"});
    return;
  }
  std::string why;
  const baton_plugin_desc* desc = call_plugin_entry(plugin->library, &why);
  if (!desc) return skip(why);
  adopt(std::move(plugin), desc, options);
}

const baton_plugin_desc* call_plugin_entry(SharedLibrary& library, std::string* why) {
  const auto entry = reinterpret_cast<baton_plugin_entry_fn>(library.symbol(BATON_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    *why = "no entry symbol '" BATON_PLUGIN_ENTRY_SYMBOL "'";
    return nullptr;
  }
  baton_error error;
  const baton_plugin_desc* desc = nullptr;
  try {
    desc = entry(BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, host_api_table(), &error);
  } catch (...) {
    *why = "entry point threw an exception across the C boundary";
    return nullptr;
  }
  if (!desc) *why = "entry point returned no descriptor: " + (error.message.empty() ? "no reason given" : error.message);
  return desc;
}

// A plugin that runs in a child process: opened there only, never here (not even its constructors).
void PluginRegistry::load_isolated(const std::string& path, const std::string& name, const RegistryOptions& options) {
  auto started = isolation::IsolatedPlugin::start(path, isolation_settings(options, name));
  if (!started) {
    skipped_.push_back({path, "isolated: " + started.status().message()});
    if (options.log) options.log(BATON_LOG_WARNING, "skipping plugin " + path + ": " + skipped_.back().reason);
    return;
  }
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->path = path;
  plugin->log = options.log;
  plugin->isolated = *started;
  const baton_plugin_desc* desc = plugin->isolated->descriptor();
  adopt(std::move(plugin), desc, options);
}

// Files without a baton entry point go to the loaders, in load order; the first that wraps one wins.
// A file no loader takes is skipped with the reason it was not a baton plugin.
void PluginRegistry::offer_to_loaders(const RegistryOptions& options) {
  std::vector<LoadedPlugin*> loaders;
  for (const auto& p : plugins_) {
    if (p->kind == BATON_PLUGIN_LOADER) loaders.push_back(p.get());
  }
  for (const auto& file : std::exchange(unclaimed_, {})) {
    const std::string& path = file.first;  // not a structured binding: the lambda below captures it
    const std::string& not_baton = file.second;
    bool taken = false;
    for (LoadedPlugin* loader : loaders) {
      // The file is isolated when its loader is, or when the name its file says is (the name the loader
      // gives may differ: a stable delegate names itself; then only isolation of all or of the loader
      // decides before the file is opened).
      const std::string guessed = plugin_name_from_file(path);
      std::shared_ptr<isolation::IsolatedPlugin> child;
      const baton_plugin_desc* desc = nullptr;
      std::string why;
      if (loader->isolated || isolated(options, guessed)) {
        bool declined = false;
        auto started = isolation::IsolatedPlugin::start(
            loader->path, isolation_settings(options, section_of(options.config, guessed) ? guessed : loader->name),
            path, &declined);
        if (declined) continue;
        if (started) {
          child = *started;
          desc = child->descriptor();
        } else {
          why = " (isolated): " + started.status().message();
        }
      } else {
        baton_error error;
        guarded_call(*loader, error, [&] {
          desc = loader->wrap_file_fn(loader->state, path.c_str(), &error);
          return BATON_OK;
        });
        if (!desc && error.message.empty()) continue;
        why = ": " + error.message;
      }
      taken = true;
      if (!desc) {
        skipped_.push_back({path, loader->name + " cannot use it" + why});
        if (options.log) options.log(BATON_LOG_WARNING, "skipping plugin " + path + ": " + skipped_.back().reason);
        break;
      }
      auto plugin = std::make_unique<LoadedPlugin>();
      plugin->path = path;
      plugin->log = options.log;
      plugin->loaded_by = loader->name;
      plugin->isolated = std::move(child);
      adopt(std::move(plugin), desc, options);
      break;
    }
    if (!taken) {
      skipped_.push_back({path, not_baton});
      if (options.log) options.log(BATON_LOG_WARNING, "skipping plugin " + path + ": " + not_baton);
    }
  }
}

Expected<LoadedPlugin*> PluginRegistry::wrap_object(const std::string& format, void* object, const std::string& name) {
  char address[32];
  std::snprintf(address, sizeof address, "%p", object);
  const std::string path = format + "@" + address;
  for (const auto& loader : plugins_) {
    if (loader->kind != BATON_PLUGIN_LOADER) continue;
    if (loader->isolated) {
      return Status::error(path + ": " + loader->name + " runs in its own process, and an object of this process "
                                  "cannot be hosted there (set isolation = in-process for " + loader->name + ")");
    }
    if (!loader->wrap_object_fn) continue;
    baton_error error;
    const baton_plugin_desc* desc = nullptr;
    LoadedPlugin* l = loader.get();
    guarded_call(*l, error, [&] {
      desc = l->wrap_object_fn(l->state, format.c_str(), object, name.c_str(), &error);
      return BATON_OK;
    });
    if (!desc && error.message.empty()) continue;
    if (!desc) return Status::error(path + ": " + loader->name + " cannot use it: " + error.message);
    auto plugin = std::make_unique<LoadedPlugin>();
    plugin->path = path;
    plugin->log = options_.log;
    plugin->loaded_by = loader->name;
    const size_t before = plugins_.size();
    adopt(std::move(plugin), desc, options_);
    if (plugins_.size() == before) return Status::error(path + ": " + skipped_.back().reason);
    return plugins_.back().get();
  }
  return Status::error(path + ": no loaded plugin wraps a " + format + " (the loader that does is not installed)");
}

Expected<std::unique_ptr<PluginRegistry>> PluginRegistry::load(const RegistryOptions& options) {
  auto registry = std::make_unique<PluginRegistry>();
  registry->options_ = options;
  std::set<std::string> seen_dirs;
  for (const std::string& dir : options.dirs) {
    const std::string canonical = real_path(dir);
    const std::string key = canonical.empty() ? dir : canonical;
    if (!seen_dirs.insert(key).second) continue;
    registry->dirs_.push_back(dir);
    if (!is_directory(dir)) {
      if (options.log) options.log(BATON_LOG_DEBUG, "plugin directory " + dir + " does not exist");
      continue;
    }
    std::vector<std::string> files;
    const std::string folder = dir.ends_with('/') ? dir : dir + "/";
    for (const std::string& name : directory_names(dir)) {
      const bool so = name.size() > 3 && (name.ends_with(".so") || name.find(".so.") != std::string::npos);
      if (so && is_regular_file(folder + name)) files.push_back(folder + name);
    }
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) registry->load_file(f, options);
  }
  registry->offer_to_loaders(options);
  // A plugin named for isolation (the API's or the command line's list) must be one that was found: a
  // misspelt name would otherwise leave the plugin it meant in this process, silently.
  for (const std::string& name : options.isolate) {
    if (!registry->find(name) && !is_disabled(options.config, name)) {
      std::string loaded;
      for (const auto& p : registry->plugins_) loaded += (loaded.empty() ? "" : ", ") + p->name;
      return Status::error("isolate: no plugin named '" + name + "' is loaded" +
                           (loaded.empty() ? std::string(" (none is)") : " (loaded: " + loaded + ")"));
    }
  }
  if (options.config) {
    const Config& config = *options.config;
    registry->precedence_ = config.op_pack_precedence;
    for (const auto& [name, section] : config.plugins) {
      LoadedPlugin* plugin = registry->find(name);
      if (!plugin) {
        if (is_disabled(&config, name)) continue;
        return Status::error(config.where(section.line) + "section [plugin." + name + "]: no plugin named '" + name +
                             "' is loaded");
      }
      if (section.isolate.value_or(false) && !plugin->isolated) {
        // Isolation is decided from the file's name, before anything of the plugin runs.
        return Status::error(config.where(section.line) + "section [plugin." + name + "]: isolation = process, but " +
                             name + " was loaded in process from " + plugin->path + ", whose file name does not say '" +
                             name + "' (name the file lib" + name + ".so, or set isolation = process for all plugins)");
      }
      for (const auto& option : section.options) {
        const std::string& key = option.first;  // named, not bound: lambdas below capture it
        const ConfigValue& value = option.second;
        if (plugin->kind == BATON_PLUGIN_DELEGATE && (key == "min-nodes-per-partition" || key == "max-partitions")) {
          char* end = nullptr;
          errno = 0;
          const long long n = std::strtoll(value.value.c_str(), &end, 10);
          const long long lowest = key == "max-partitions" ? 0 : 1;
          if (value.value.empty() || errno != 0 || *end != '\0' || n < lowest || n > 1000000) {
            return Status::error(config.where(value.line) + "key '" + key + "' in [plugin." + name +
                                 "]: bad value '" + value.value + "': expected a whole number from " +
                                 std::to_string(lowest));
          }
          (key == "max-partitions" ? plugin->max_partitions : plugin->min_nodes_per_partition) = static_cast<size_t>(n);
          continue;
        }
        auto decl = std::find_if(plugin->options.begin(), plugin->options.end(),
                                 [&](const OptionDecl& o) { return o.name == key; });
        if (decl == plugin->options.end() && (plugin->flags & BATON_PLUGIN_FLAG_ANY_OPTIONS)) continue;
        if (decl == plugin->options.end()) {
          std::string known;
          for (const OptionDecl& o : plugin->options) known += (known.empty() ? "" : ", ") + o.name;
          if (plugin->kind == BATON_PLUGIN_DELEGATE) known += (known.empty() ? "" : ", ") + std::string("min-nodes-per-partition, max-partitions");
          return Status::error(config.where(value.line) + "key '" + key + "' in [plugin." + name + "]: " + name +
                               " has no option '" + key + "' (options: " + (known.empty() ? "none" : known) + ")");
        }
        if (Status s = check_option_value(decl->type, value.value); !s) {
          return Status::error(config.where(value.line) + "key '" + key + "' in [plugin." + name + "]: bad value '" +
                               value.value + "': " + s.message());
        }
      }
    }
    for (const std::string& name : config.op_pack_precedence) {
      if (!registry->find(name)) {
        const int line = config.lines.count("op-pack-precedence") ? config.lines.at("op-pack-precedence") : 0;
        if (options.log) {
          options.log(BATON_LOG_WARNING, config.where(line) + "op-pack-precedence names '" + name +
                                             "', which is not loaded");
        }
      }
    }
  }
  return registry;
}

}  // namespace baton
