// The config file: INI style, read with Boost.Program_options. It sets plugin directories, the delegate
// order, disabled plugins, op-pack precedence, the default thread count and, in a [plugin.NAME] section
// per plugin, that plugin's options (checked against what the plugin declared once it is loaded).
// Every error names the file, the line and the key.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model.h"
#include "status.h"

namespace baton {

struct ConfigValue {
  std::string value;
  int line = 0;
};

struct PluginSection {
  int line = 0;
  // Host keys: `isolation` (process / in-process), `invoke-timeout-ms`, `prepare-timeout-ms`.
  std::optional<bool> isolate;
  std::optional<int> invoke_timeout_ms, prepare_timeout_ms;
  std::vector<std::pair<std::string, ConfigValue>> options;  // in file order
};

struct Config {
  std::string path;  // empty when no file was read
  std::vector<std::string> plugin_dirs;  // absolute, or relative to the file's folder made absolute
  std::optional<std::vector<std::string>> delegates;
  std::vector<std::string> disabled;
  std::vector<std::string> op_pack_precedence;
  std::optional<int> threads;
  bool strict = false;  // fail when a node would fall back to op packs
  bool allow_unsafe_plugin_dirs = false;
  bool crash_journal = true;  // record and quarantine plugins that take the process down
  bool isolate_all = false;   // isolation = process: every plugin in a baton-plugin-host child
  LoadLimits limits;  // max-model-bytes, max-tensor-bytes, max-arena-bytes
  std::map<std::string, PluginSection> plugins;
  std::map<std::string, int> lines;  // top-level key -> line

  // "FILE:LINE: " for messages about a key; "" when there is no file.
  std::string where(int line) const;
};

// Which file to read: `explicit_path` (from --config) if given, then $BATON_CONFIG, then
// $XDG_CONFIG_HOME/baton/baton.conf (default ~/.config), then /etc/baton/baton.conf. An explicitly
// named file that does not exist is an error; missing default files mean "no config".
// With `search` false only `explicit_path` is considered.
Expected<std::optional<std::string>> find_config_file(const std::string& explicit_path, bool search = true);

Expected<Config> load_config(const std::string& path);

// Splits "a, b c" into {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text, const std::string& separators = ", \t");

}  // namespace baton
