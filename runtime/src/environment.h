// An Environment is what several interpreters share: the config that was read and the plugins that
// were loaded from the plugin directories. Building one decides the plugin directories (in order:
// --plugin-dir, BATON_PLUGIN_PATH, the config's plugin-dirs, <libdir>/baton/plugins-N, and the build
// tree's plugin folders when the program runs from the build tree) and the delegate chain: the
// configured `delegates` list or --delegate exactly, else the default order of delegate_order.h. Only
// the chain's delegates are created.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "crash_journal.h"
#include "delegate_order.h"
#include "log.h"
#include "model.h"
#include "plugin_registry.h"
#include "status.h"

namespace baton {

struct EnvironmentOptions {
  std::string config_path;                            // --config; empty: look in the usual places
  std::vector<std::string> plugin_dirs;               // --plugin-dir, first in the search order
  std::optional<std::vector<std::string>> delegates;  // --delegate: replaces the configured order
  bool no_delegates = false;                          // --no-delegates
  int threads = 0;                                    // --threads; 0: config, else all cores
  bool verbose = false;
  bool use_environment_variables = true;  // BATON_CONFIG, BATON_PLUGIN_PATH
  bool use_default_dirs = true;           // the install and build-tree plugin folders
  bool read_config = true;                // false: no config file at all
  // Limits on untrusted models; each one set here (non-zero) replaces the config's.
  size_t max_model_bytes = 0, max_tensor_bytes = 0, max_arena_bytes = 0;
  // Where the crash journal lives; empty: $XDG_STATE_HOME/baton (default ~/.local/state/baton).
  std::string state_dir;
  LogSink log;                            // default: stderr
  // Plugins to run in a baton-plugin-host child of their own (by name), or all of them; the config's
  // `isolation` keys add to these.
  std::vector<std::string> isolate;
  bool isolate_all = false;
  // Delegate objects of a foreign format that a program handed over in-process (format, object, name):
  // each is wrapped by the loader that takes it and goes first in the chain, in this order.
  struct ForeignDelegate {
    std::string format;
    void* object = nullptr;
    std::string name;
  };
  std::vector<ForeignDelegate> foreign_delegates;
  // false: op packs and delegates stay loaded for the environment's life, never parked
  // (park_unused_plugins). For a process whose plugins must not be unloaded: a fuzzer's coverage counters
  // live in their libraries.
  bool park_plugins = true;
};

class Environment {
 public:
  static Expected<std::shared_ptr<Environment>> create(const EnvironmentOptions& options);

  const Config& config() const { return config_; }
  const PluginRegistry& registry() const { return *registry_; }
  // Delegates to try, in order; names that are not loaded delegates are dropped with a warning.
  const std::vector<LoadedPlugin*>& delegate_chain() const { return delegates_; }
  // Every loaded delegate: its place in the chain or why it is not there. Chain members first.
  const std::vector<ChainPlacement>& chain_placements() const { return placements_; }
  const ChainPlacement* find_placement(const std::string& name) const;
  // What decided the chain: "default", "--delegate", "the config's delegates key", "--no-delegates".
  const std::string& chain_source() const { return chain_source_; }
  const LogSink& log() const { return log_; }
  int threads() const { return threads_; }
  const LoadLimits& limits() const { return limits_; }
  // The crash journal's folder, or "" when the config turned the journal off.
  const std::string& journal_dir() const { return journal_dir_; }
  // Whether some plugin runs in a child process: arenas are then allocated in memory it can map.
  bool shares_memory() const;
  // Memory for tensors (an arena, a dynamic tensor): `bytes` rounded up to 64 and 64-byte aligned, in
  // shared memory a plugin's child process maps when shares_memory(), else on the heap. Null when none
  // can be had. The stages take their memory here and never ask where it comes from.
  std::shared_ptr<uint8_t> allocate(size_t bytes) const;
  // Lets a plugin in a child process map the model's constants instead of receiving copies, when some
  // plugin runs in one (shares_memory()); otherwise nothing. Once per model; thread-safe.
  void share_model(const Model& model) const;
  // Parks the op packs and delegates no model of this environment holds now (LoadedPlugin::park); a model
  // made later that needs one loads it again. Called when the environment is made and after each model; thread-safe.
  void park_unused_plugins() const;
  // The deaths of isolated plugins' child processes met on this thread since the last call (a crash, a
  // hang past its timeout; the process lived on): each goes into `journal` (repeated deaths on one model
  // quarantine the plugin for it) and into the environment's count.
  void record_plugin_deaths(CrashJournal& journal) const;
  // Deaths of isolated plugins' child processes (a crash, a hang past its timeout) met by this
  // environment's interpreters; the process lived on. By plugin name; safe from any thread.
  void count_plugin_death(const std::string& plugin) const;
  uint64_t plugin_deaths(const std::string& plugin) const;

 private:
  Config config_;
  std::unique_ptr<PluginRegistry> registry_;
  std::vector<LoadedPlugin*> delegates_;
  std::vector<ChainPlacement> placements_;
  std::string chain_source_;
  LogSink log_;
  int threads_ = 0;
  bool park_plugins_ = true;
  LoadLimits limits_;
  std::string journal_dir_;
  mutable std::mutex deaths_mutex_;
  mutable std::map<std::string, uint64_t> deaths_;
};

// The plugin folders that are searched when nothing else is configured.
std::vector<std::string> default_plugin_dirs();

}  // namespace baton
