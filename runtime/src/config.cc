#include "config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "posix_files.h"

namespace baton {

namespace fs = std::filesystem;

namespace {

bool parse_isolation(const std::string& value, bool& process) {
  if (value == "process") return process = true, true;
  if (value == "in-process" || value == "none") return process = false, true;
  return false;
}

const char* const kKnownKeys[] = {"plugin-dirs", "delegates", "disabled", "op-pack-precedence", "threads", "strict",
                                   "allow-unsafe-plugin-dirs", "max-model-bytes", "max-tensor-bytes",
                                   "max-arena-bytes", "crash-journal", "isolation"};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

struct KeyLine {
  std::string section;
  std::string key;
  std::string value;
  int line;
};

// The INI lines, each key with its section, value and line: `#` starts a comment anywhere on a line,
// names and values are trimmed.
Status scan_lines(const std::string& path, const std::string& text, std::vector<KeyLine>& keys,
                  std::map<std::string, int>& section_lines) {
  std::istringstream in(text);
  std::string raw;
  std::string section;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string s = trim(raw.substr(0, raw.find('#')));
    if (s.empty()) continue;
    if (s[0] == '[') {
      if (s.back() != ']' || s.size() < 3) {
        return Status::error(path + ":" + std::to_string(line) + ": malformed section header '" + s + "'");
      }
      section = trim(s.substr(1, s.size() - 2));
      if (section != "baton" && section != "serve" && section.rfind("plugin.", 0) != 0) {
        return Status::error(path + ":" + std::to_string(line) + ": unknown section [" + section +
                             "] (expected [baton], [serve] or [plugin.NAME])");
      }
      if (section.rfind("plugin.", 0) == 0 && section.size() == 7) {
        return Status::error(path + ":" + std::to_string(line) + ": section [plugin.] names no plugin");
      }
      section_lines.emplace(section, line);
      continue;
    }
    size_t eq = s.find('=');
    if (eq == std::string::npos) {
      return Status::error(path + ":" + std::to_string(line) + ": expected 'key = value', got '" + s + "'");
    }
    std::string key = trim(s.substr(0, eq));
    if (key.empty()) return Status::error(path + ":" + std::to_string(line) + ": empty key");
    keys.push_back({section, key, trim(s.substr(eq + 1)), line});
  }
  return Status::ok();
}

bool parse_int(const std::string& s, long long& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end && *end == '\0';
}

}  // namespace

std::vector<std::string> split_list(const std::string& text, const std::string& separators) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = text.find_first_of(separators, pos);
    if (next == std::string::npos) next = text.size();
    if (next > pos) out.push_back(text.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

std::string Config::where(int line) const {
  if (path.empty()) return "";
  return path + ":" + std::to_string(line) + ": ";
}

Expected<std::optional<std::string>> find_config_file(const std::string& explicit_path, bool search) {
  auto must_exist = [](const std::string& p, const char* from) -> Expected<std::optional<std::string>> {
    if (!is_regular_file(p)) {
      return Status::error("config file " + p + " (from " + from + ") does not exist or is not a file");
    }
    return std::optional<std::string>(p);
  };
  if (!explicit_path.empty()) return must_exist(explicit_path, "--config");
  if (!search) return std::optional<std::string>();
  if (const char* env = std::getenv("BATON_CONFIG"); env && *env) return must_exist(env, "BATON_CONFIG");
  std::string xdg;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) {
    xdg = x;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    xdg = std::string(home) + "/.config";
  }
  if (!xdg.empty() && is_regular_file(xdg + "/baton/baton.conf")) {
    return std::optional<std::string>(xdg + "/baton/baton.conf");
  }
  if (is_regular_file("/etc/baton/baton.conf")) return std::optional<std::string>("/etc/baton/baton.conf");
  return std::optional<std::string>();
}

Expected<Config> load_config(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Status::error("config file " + path + ": cannot be read");
  std::stringstream buffer;
  buffer << file.rdbuf();
  const std::string text = buffer.str();

  Config config;
  config.path = path;
  std::vector<KeyLine> keys;
  std::map<std::string, int> section_lines;
  if (Status s = scan_lines(path, text, keys, section_lines); !s) return s;

  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  for (const KeyLine& kl : keys) {
    const std::string& value = kl.value;
    const std::string at = path + ":" + std::to_string(kl.line) + ": ";
    if (kl.section == "serve") continue;  // baton serve's keys: the server reads and checks them
    if (kl.section.rfind("plugin.", 0) == 0) {
      const std::string plugin = kl.section.substr(7);
      PluginSection& section = config.plugins[plugin];
      section.line = section_lines[kl.section];
      // Keys of the host about how it runs the plugin, for every kind of plugin; never the plugin's options.
      if (kl.key == "isolation") {
        bool process = false;
        if (!parse_isolation(value, process)) {
          return Status::error(at + "bad value '" + value + "' for key 'isolation' in [plugin." + plugin +
                               "]: expected process or in-process");
        }
        section.isolate = process;
        continue;
      }
      if (kl.key == "invoke-timeout-ms" || kl.key == "prepare-timeout-ms") {
        long long ms = 0;
        if (!parse_int(value, ms) || ms < 1 || ms > 86400000) {
          return Status::error(at + "bad value '" + value + "' for key '" + kl.key + "' in [plugin." + plugin +
                               "]: expected milliseconds from 1 to 86400000");
        }
        (kl.key == "invoke-timeout-ms" ? section.invoke_timeout_ms : section.prepare_timeout_ms) = static_cast<int>(ms);
        continue;
      }
      section.options.emplace_back(kl.key, ConfigValue{value, kl.line});
      continue;
    }
    if (std::find_if(std::begin(kKnownKeys), std::end(kKnownKeys), [&](const char* k) { return kl.key == k; }) ==
        std::end(kKnownKeys)) {
      return Status::error(at + "unknown key '" + kl.key + "' (known: plugin-dirs, delegates, disabled, "
                           "op-pack-precedence, threads, strict, allow-unsafe-plugin-dirs, max-model-bytes, max-tensor-bytes, max-arena-bytes, crash-journal, isolation, and "
                           "[plugin.NAME] sections)");
    }
    config.lines[kl.key] = kl.line;
    if (kl.key == "plugin-dirs") {
      for (const std::string& d : split_list(value, ",:")) {
        std::string dir = trim(d);
        if (dir.empty()) continue;
        config.plugin_dirs.push_back(fs::path(dir).is_absolute() ? dir : (base / dir).lexically_normal().string());
      }
    } else if (kl.key == "delegates") {
      if (!config.delegates) config.delegates.emplace();
      for (const std::string& d : split_list(value)) config.delegates->push_back(d);
    } else if (kl.key == "disabled") {
      for (const std::string& d : split_list(value)) config.disabled.push_back(d);
    } else if (kl.key == "op-pack-precedence") {
      for (const std::string& d : split_list(value)) config.op_pack_precedence.push_back(d);
    } else if (kl.key == "threads") {
      long long n = 0;
      if (!parse_int(value, n) || n < 0 || n > 1024) {
        return Status::error(at + "bad value '" + value + "' for key 'threads': expected a whole number from 0 "
                             "(all cores) to 1024");
      }
      config.threads = static_cast<int>(n);
    } else if (kl.key == "max-model-bytes" || kl.key == "max-tensor-bytes" || kl.key == "max-arena-bytes") {
      size_t bytes = 0;
      if (!parse_byte_limit(value, &bytes)) {
        return Status::error(at + "bad value '" + value + "' for key '" + kl.key +
                             "': expected a byte count, optionally with K, M or G, or none (0) for no limit");
      }
      (kl.key == "max-model-bytes" ? config.limits.max_file_bytes
       : kl.key == "max-tensor-bytes" ? config.limits.max_tensor_bytes
                                      : config.limits.max_arena_bytes) = bytes;
    } else if (kl.key == "isolation") {
      if (!parse_isolation(value, config.isolate_all)) {
        return Status::error(at + "bad value '" + value + "' for key 'isolation': expected process (every plugin in a "
                             "process of its own) or in-process");
      }
    } else if (kl.key == "strict" || kl.key == "allow-unsafe-plugin-dirs" || kl.key == "crash-journal") {
      bool flag = false;
      if (value == "true" || value == "yes" || value == "on" || value == "1") {
        flag = true;
      } else if (!(value == "false" || value == "no" || value == "off" || value == "0")) {
        return Status::error(at + "bad value '" + value + "' for key '" + kl.key + "': expected true or false");
      }
      (kl.key == "strict" ? config.strict
       : kl.key == "crash-journal" ? config.crash_journal
                                   : config.allow_unsafe_plugin_dirs) = flag;
    }
  }
  for (const auto& [section, line] : section_lines) {
    if (section.rfind("plugin.", 0) == 0) config.plugins[section.substr(7)].line = line;
  }
  return config;
}

}  // namespace baton
