// The state folder of a test process: its crash journal never lands in the user's. Included by
// test_support.h, so by every test that uses it, and by the tests that do not (the TFLite C API's).
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace baton::test {

// This process's crash-journal folder: fresh per process, so a record left by an earlier run (or by a
// death test's child) never quarantines a plugin here; removed when the process exits normally.
inline const std::string& test_state_dir() {
  struct Folder {
    std::string path = (std::filesystem::temp_directory_path() / ("baton-test-state-" + std::to_string(getpid()))).string();
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Folder folder;
  return folder.path;
}

// Before main, in every test binary: $XDG_STATE_HOME is this process's folder. Whatever creates an
// environment without a state_dir of its own (the C API, TFLite's C API, EnvironmentOptions left at its
// default, the baton CLI or any child started with this environment) keeps its journal there, never in
// the $XDG_STATE_HOME or ~/.local/state of the user who runs the tests. One per translation unit: an
// internal-linkage variable is always initialized, where an unused inline one may never be.
[[maybe_unused]] static const bool kStateHomeIsThisTestsOwn = [] {
  setenv("XDG_STATE_HOME", test_state_dir().c_str(), 1);
  return true;
}();

}  // namespace baton::test
