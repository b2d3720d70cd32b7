// libFuzzer target: load, resolve, fold, partition, plan, prepare and invoke on the builtin op pack, for
// arbitrary bytes. Limits keep one input's memory bounded; any failure must be an error, not a crash. A
// model may loop for ever (a WHILE whose condition stays true is a valid model): a watchdog cancels any
// invoke that runs longer than a second, as an application would. The crash journal lives in a folder of
// this process's own, never the user's: an input that kills the fuzzer mid-prepare leaves a record there,
// which in the user's state folder would quarantine the builtin pack for that model in normal use.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include "fuzz_budget.h"
#include "interpreter.h"

namespace {

// A fresh folder under the temp dir ($TMPDIR), removed when the fuzzer exits normally; one that a crash
// leaves behind is never read again (the next process makes its own).
const std::string& state_dir() {
  static struct Folder {
    std::string path;
    Folder() {
      std::string tmpl = (std::filesystem::temp_directory_path() / "baton-fuzz-state-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) __builtin_trap();
      path = tmpl;
    }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } folder;
  return folder.path;
}

std::shared_ptr<baton::Environment> environment() {
  static std::shared_ptr<baton::Environment> env = [] {
    baton::EnvironmentOptions o;
    o.state_dir = state_dir();
    o.plugin_dirs = {BUILTIN_PACK_DIR};
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.read_config = false;
    o.threads = 1;
    // libFuzzer keeps the coverage counters of every instrumented library it saw load, and clears them
    // before each input: the builtin pack must never be unloaded under it.
    o.park_plugins = false;
    o.max_tensor_bytes = size_t(16) << 20;
    o.max_arena_bytes = size_t(64) << 20;
    o.log = [](baton_log_level, const std::string&) {};
    auto e = baton::Environment::create(o);
    if (!e || e.value()->registry().plugins().empty()) __builtin_trap();  // the fuzzer must test something
    return e.value();
  }();
  return env;
}

// The interpreter whose invoke runs, and since when; the watchdog cancels it after a second.
std::mutex g_running_mutex;
baton::Interpreter* g_running = nullptr;
std::chrono::steady_clock::time_point g_started;

void start_watchdog() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::thread([] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::lock_guard<std::mutex> lock(g_running_mutex);
        if (g_running && std::chrono::steady_clock::now() - g_started > std::chrono::seconds(1)) g_running->cancel();
      }
    }).detach();
  });
}

struct Watched {
  explicit Watched(baton::Interpreter& in) {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    g_running = &in;
    g_started = std::chrono::steady_clock::now();
  }
  ~Watched() {
    std::lock_guard<std::mutex> lock(g_running_mutex);
    g_running = nullptr;
  }
};


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto env = environment();
  auto model = baton::load_model_buffer({data, size}, "fuzz.tflite", env->limits());
  if (!model) return 0;
  // Skip graphs too costly for one fuzz iteration (the limits bound memory, not time).
  if (!baton::fuzz::within_budget(*model.value())) return 0;
  auto interp = baton::Interpreter::create(env, model.value());
  if (!interp) return 0;
  baton::Interpreter& in = *interp.value();
  for (size_t i = 0; i < in.input_count(); ++i) {
    if (in.input(i).data) std::memset(in.input(i).data, 0, in.input(i).bytes);
  }
  start_watchdog();
  Watched watched(in);
  (void)in.invoke();
  return 0;
}
