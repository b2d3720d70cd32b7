#include "environment.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "cpu_budget.h"
#include "isolated_plugin.h"
#include "posix_files.h"
#include "shared_memory.h"

namespace baton {

std::vector<std::string> default_plugin_dirs() {
  std::vector<std::string> dirs;
  // Beside the installed library (<libdir>/baton/plugins-N, N the ABI's major version), wherever the
  // prefix was moved to; then the folder of the prefix it was configured for.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&default_plugin_dirs), &info) != 0 && info.dli_fname) {
    const std::string lib = real_path(info.dli_fname);
    if (const size_t slash = lib.find_last_of('/'); slash != std::string::npos) {
      const std::string beside = lib.substr(0, slash) + "/baton/" + BATON_PLUGIN_DIR_NAME;
      if (beside != BATON_PLUGIN_INSTALL_DIR && is_directory(beside)) dirs.push_back(beside);
    }
  }
  dirs.push_back(BATON_PLUGIN_INSTALL_DIR);
  // A program built in the build tree finds the plugins built beside it.
  char exe[4096];
  const ssize_t length = ::readlink("/proc/self/exe", exe, sizeof exe);
  if (length > 0 && static_cast<size_t>(length) < sizeof exe &&
      std::string(exe, static_cast<size_t>(length)).rfind(std::string(BATON_BUILD_ROOT) + "/", 0) == 0) {
    for (const std::string& d : split_list(BATON_BUILD_PLUGIN_DIRS, ":")) dirs.push_back(d);
  }
  return dirs;
}

bool Environment::shares_memory() const {
  for (const auto& p : registry_->plugins()) {
    if (p->isolated) return true;
  }
  return false;
}

std::shared_ptr<uint8_t> Environment::allocate(size_t bytes) const {
  const size_t size = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  if (shares_memory()) {
    std::shared_ptr<isolation::SharedArena> shared = isolation::SharedArena::allocate(size);
    if (!shared) return nullptr;
    return std::shared_ptr<uint8_t>(shared->data(), [shared](uint8_t*) mutable { shared.reset(); });
  }
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(std::aligned_alloc(64, size)), &std::free);
}

const ChainPlacement* Environment::find_placement(const std::string& name) const {
  for (const ChainPlacement& p : placements_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Expected<std::shared_ptr<Environment>> Environment::create(const EnvironmentOptions& options) {
  auto env = std::make_shared<Environment>();
  env->log_ = options.log ? options.log : stderr_log_sink(options.verbose);

  if (options.read_config) {
    auto found = find_config_file(options.config_path, options.use_environment_variables);
    if (!found) return found.status();
    if (found.value()) {
      auto config = load_config(*found.value());
      if (!config) return config.status();
      env->config_ = std::move(config.value());
      env->log_(BATON_LOG_DEBUG, "config: " + env->config_.path);
    }
  }

  std::vector<std::string> dirs = options.plugin_dirs;
  if (options.use_environment_variables) {
    if (const char* path = std::getenv("BATON_PLUGIN_PATH"); path && *path) {
      for (const std::string& d : split_list(path, ":")) {
        if (d.empty() || d[0] != '/') {
          env->log_(BATON_LOG_WARNING, "BATON_PLUGIN_PATH: ignoring the relative folder '" + d +
                                           "': baton never loads plugins from the current directory implicitly");
          continue;
        }
        dirs.push_back(d);
      }
    }
  }
  for (const std::string& d : env->config_.plugin_dirs) dirs.push_back(d);
  if (options.use_default_dirs) {
    for (const std::string& d : default_plugin_dirs()) dirs.push_back(d);
  }

  if (env->config_.crash_journal) {
    std::string state = options.state_dir;
    if (state.empty()) {
      if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x) {
        state = std::string(x) + "/baton";
      } else if (const char* home = std::getenv("HOME"); home && *home) {
        state = std::string(home) + "/.local/state/baton";
      }
    }
    if (!state.empty()) env->journal_dir_ = state + "/journal";
  }
  env->limits_ = env->config_.limits;
  if (options.max_model_bytes) env->limits_.max_file_bytes = options.max_model_bytes;
  if (options.max_tensor_bytes) env->limits_.max_tensor_bytes = options.max_tensor_bytes;
  if (options.max_arena_bytes) env->limits_.max_arena_bytes = options.max_arena_bytes;
  // More threads than the CPUs this process may run on only make the workers wait for each other: the
  // count is capped there, and the log says so once.
  const int cpus = usable_cpus();
  const int asked = options.threads > 0 ? options.threads : env->config_.threads.value_or(0);
  if (asked > cpus) {
    env->log_(BATON_LOG_WARNING, "threads: " + std::to_string(asked) + " asked, but this process may run on " +
                                     std::to_string(cpus) + " CPU(s) (its affinity and cgroup quota); using " +
                                     std::to_string(cpus));
  }
  env->threads_ = asked > 0 ? std::min(asked, cpus) : cpus;
  env->park_plugins_ = options.park_plugins;

  RegistryOptions ro;
  ro.dirs = dirs;
  ro.config = &env->config_;
  ro.threads = asked > 0 ? std::min(asked, cpus) : 0;
  ro.cpus = cpus;
  ro.log = env->log_;
  ro.allow_unsafe_dirs = env->config_.allow_unsafe_plugin_dirs;
  ro.isolate = options.isolate;
  ro.isolate_all = options.isolate_all || env->config_.isolate_all;
  auto registry = PluginRegistry::load(ro);
  if (!registry) return registry.status();
  env->registry_ = std::move(registry.value());

  if (options.no_delegates) {
    env->chain_source_ = "--no-delegates";
  } else if (!options.delegates && !env->config_.delegates) {
    // The default chain: ordered by the devices the delegates declare (delegate_order.h). Only its
    // members are created; a delegate left out is unloaded below.
    env->chain_source_ = "default";
    std::vector<DelegateCandidate> candidates;
    for (const auto& p : env->registry_->plugins()) {
      if (p->kind != BATON_PLUGIN_DELEGATE) continue;
      candidates.push_back({p->name, p->devices(), p->declares_devices()});
    }
    for (ChainPlacement& place : default_delegate_order(candidates)) {
      if (place.position >= 0) {
        LoadedPlugin* p = env->registry_->find(place.name);
        if (Status s = p->ensure_created(); !s) {
          env->log_(BATON_LOG_WARNING, "delegate '" + p->name + "' left out of the default chain: " + s.message());
          place.position = -1;
          place.reason = "left out: " + s.message();
        } else {
          place.position = static_cast<int>(env->delegates_.size());
          env->delegates_.push_back(p);
        }
      }
      env->placements_.push_back(std::move(place));
    }
  } else {
    const bool from_cli = options.delegates.has_value();
    const std::vector<std::string>& names = from_cli ? *options.delegates : *env->config_.delegates;
    env->chain_source_ = from_cli ? "--delegate" : "the config's delegates key";
    for (const std::string& name : names) {
      LoadedPlugin* p = env->registry_->find(name);
      if (!p && from_cli) {
        return Status::error("--delegate " + name + ": no delegate plugin named '" + name + "' is loaded");
      } else if (!p) {
        env->log_(BATON_LOG_WARNING, "delegate '" + name + "' is not loaded; the chain goes on without it");
      } else if (p->kind != BATON_PLUGIN_DELEGATE) {
        if (from_cli) return Status::error("--delegate " + name + ": '" + name + "' is an op pack, not a delegate");
        env->log_(BATON_LOG_WARNING, "'" + name + "' is an op pack, not a delegate; left out of the chain");
      } else if (std::find(env->delegates_.begin(), env->delegates_.end(), p) == env->delegates_.end()) {
        if (Status s = p->ensure_created(); !s) {
          if (from_cli) return Status::error("--delegate " + name + ": " + s.message());
          env->log_(BATON_LOG_WARNING, "delegate '" + name + "' left out of the chain: " + s.message());
          env->placements_.push_back({name, -1, "left out: " + s.message()});
          continue;
        }
        env->placements_.push_back({name, static_cast<int>(env->delegates_.size()), "named by " + env->chain_source_});
        env->delegates_.push_back(p);
      }
    }
    for (const auto& p : env->registry_->plugins()) {
      if (p->kind != BATON_PLUGIN_DELEGATE || env->find_placement(p->name)) continue;
      env->placements_.push_back({p->name, -1, "not named by " + env->chain_source_});
    }
  }
  // Objects the program handed over go first, in its order, as TFLite applies its delegates.
  std::vector<LoadedPlugin*> foreign;
  for (const EnvironmentOptions::ForeignDelegate& f : options.foreign_delegates) {
    auto wrapped = env->registry_->wrap_object(f.format, f.object, f.name);
    if (!wrapped) return wrapped.status();
    if (Status s = wrapped.value()->ensure_created(); !s) return Status::error(f.name + ": " + s.message());
    foreign.push_back(wrapped.value());
  }
  if (!foreign.empty()) {
    for (ChainPlacement& p : env->placements_) p.position += p.position >= 0 ? static_cast<int>(foreign.size()) : 0;
    for (size_t i = 0; i < foreign.size(); ++i) {
      env->placements_.insert(env->placements_.begin() + static_cast<std::ptrdiff_t>(i),
                              ChainPlacement{foreign[i]->name, static_cast<int>(i), "handed over by the program"});
    }
    env->delegates_.insert(env->delegates_.begin(), foreign.begin(), foreign.end());
  }
  // What this environment will never call costs it no memory: a delegate outside the chain and a loader
  // that wrapped nothing are unloaded (unless isolated, created, or, for a delegate, never probed).
  for (const auto& p : env->registry_->plugins()) {
    const bool in_chain = std::find(env->delegates_.begin(), env->delegates_.end(), p.get()) != env->delegates_.end();
    bool wrapped_some = false;
    for (const auto& other : env->registry_->plugins()) wrapped_some = wrapped_some || other->loaded_by == p->name;
    if ((p->kind == BATON_PLUGIN_DELEGATE && !in_chain) || (p->kind == BATON_PLUGIN_LOADER && !wrapped_some)) {
      p->unload();
    }
  }
  env->park_unused_plugins();
  return env;
}

void Environment::park_unused_plugins() const {
  if (!park_plugins_) return;
  for (const auto& p : registry_->plugins()) {
    p->park();  // op packs and chain delegates; park() leaves the others
  }
}

void Environment::share_model(const Model& model) const {
  if (!shares_memory()) return;
  model.share_mapping([](const void* base, size_t size, int fd) -> std::shared_ptr<void> {
    const uint64_t block = isolation::register_block(base, size, fd, false);
    return std::shared_ptr<void>(reinterpret_cast<void*>(block), [](void* id) {
      isolation::unregister_block(reinterpret_cast<uint64_t>(id));
    });
  });
}

void Environment::record_plugin_deaths(CrashJournal& journal) const {
  for (const isolation::ChildDeath& d : isolation::take_child_deaths()) {
    journal.child_died(d.plugin, d.stage);
    count_plugin_death(d.plugin);
  }
}

void Environment::count_plugin_death(const std::string& plugin) const {
  std::lock_guard lock(deaths_mutex_);
  ++deaths_[plugin];
}

uint64_t Environment::plugin_deaths(const std::string& plugin) const {
  std::lock_guard lock(deaths_mutex_);
  const auto it = deaths_.find(plugin);
  return it == deaths_.end() ? 0 : it->second;
}

}  // namespace baton
