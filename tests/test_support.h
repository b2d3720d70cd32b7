// Helpers shared by the runtime tests: temporary plugin folders holding chosen test plugins, and an
// environment isolated from the machine's config and plugin folders.
#pragma once

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "environment.h"
#include "state_folder.h"

namespace baton::test {

inline std::string test_plugin(const std::string& name) {
  return std::string(TEST_PLUGIN_BUILD_DIR) + "/" + name + ".so";
}

// A fresh folder under the system temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "baton-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write(const std::string& name, const std::string& text) const { std::ofstream(file(name)) << text; }
  void add_plugin(const std::string& plugin, const std::string& as = "") const {
    std::filesystem::copy_file(test_plugin(plugin), file(as.empty() ? plugin + ".so" : as));
  }

 private:
  std::string path_;
};

struct Captured {
  std::vector<std::string> lines;
};

// The case folders in `dir` (one a case: model.tflite, in_*.npy, out_*.npy), sorted; none where `dir` is
// missing.
inline std::vector<std::string> case_folders(const std::string& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::is_directory(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_directory()) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

#ifdef BATON_SOURCE_ROOT
// The cases in tests/data/reference (one folder each: in_*.npy, out_*.npy and meta.json), with what the
// tests choose them by: whether the model needs op packs besides builtin (meta.json's "op_packs") and
// whether its first input is float32 (quantized models' are not).
struct ReferenceCase {
  std::string name;
  bool needs_op_packs = false;
  bool float_input = true;
};

inline std::vector<ReferenceCase> reference_cases_where(bool (*keep)(const ReferenceCase&)) {
  std::vector<ReferenceCase> cases;
  for (const auto& e : std::filesystem::directory_iterator(std::string(BATON_SOURCE_ROOT) + "/tests/data/reference")) {
    if (!e.is_directory()) continue;
    std::ifstream meta(e.path() / "meta.json");
    const std::string text((std::istreambuf_iterator<char>(meta)), std::istreambuf_iterator<char>());
    ReferenceCase c;
    c.name = e.path().filename().string();
    c.needs_op_packs = text.find("\"op_packs\"") != std::string::npos;
    const size_t inputs = text.find("\"inputs\"");
    const size_t dtype = inputs == std::string::npos ? inputs : text.find("\"dtype\"", inputs);
    c.float_input = dtype == std::string::npos || text.compare(text.find('"', text.find(':', dtype)), 9, "\"float32\"") == 0;
    if (keep(c)) cases.push_back(c);
  }
  std::sort(cases.begin(), cases.end(), [](const ReferenceCase& a, const ReferenceCase& b) { return a.name < b.name; });
  return cases;
}

inline std::vector<std::string> reference_case_names(bool (*keep)(const ReferenceCase&)) {
  std::vector<std::string> names;
  for (const ReferenceCase& c : reference_cases_where(keep)) names.push_back(c.name);
  return names;
}
#endif  // BATON_SOURCE_ROOT

// Whether the shared object at `path` is mapped in this process now.
inline bool library_mapped(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!handle) return false;
  dlclose(handle);
  return true;
}

// An environment that sees only `dirs` and `config_path`, and records its log lines.
// The options of isolated_environment, without a log sink: for a test that changes one before creating.
inline EnvironmentOptions isolated_options(const std::vector<std::string>& dirs, int threads = 1) {
  EnvironmentOptions o;
  o.plugin_dirs = dirs;
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.threads = threads;
  // Keep the tests' crash journal out of the user's state folder.
  o.state_dir = test_state_dir();
  return o;
}

inline Expected<std::shared_ptr<Environment>> isolated_environment(const std::vector<std::string>& dirs,
                                                                  const std::string& config_path = "",
                                                                  std::shared_ptr<Captured> log = nullptr,
                                                                  int threads = 1) {
  EnvironmentOptions o = isolated_options(dirs, threads);
  o.config_path = config_path;
  if (!log) log = std::make_shared<Captured>();
  o.log = [log](baton_log_level, const std::string& line) { log->lines.push_back(line); };
  return Environment::create(o);
}

// The largest |got - want| and the largest |want| over n floats, for the float comparisons with a
// reference ("within 1e-5 of the largest reference magnitude").
struct FloatDiff {
  double max_diff = 0, max_ref = 0;
};
inline FloatDiff float_diff(const float* got, const float* want, size_t n) {
  FloatDiff d;
  for (size_t k = 0; k < n; ++k) {
    d.max_ref = std::max(d.max_ref, std::abs(static_cast<double>(want[k])));
    d.max_diff = std::max(d.max_diff, std::abs(static_cast<double>(got[k]) - want[k]));
  }
  return d;
}

}  // namespace baton::test
