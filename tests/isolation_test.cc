// Process isolation (runtime/isolation/): a plugin with isolation = process runs in a baton-plugin-host
// child. A child that segfaults, aborts, exits or hangs in init, prepare or invoke takes only itself
// down: the first run completes on the rest of the chain with the outputs of a run without that plugin
// (worked by hand here), and the warning names the plugin, the stage and the signal or timeout. A
// well-behaved delegate (xnnpack) and op pack (builtin) give bit-identical outputs isolated and in process.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "baton/c_api.h"
#include "interpreter.h"
#include "isolated_plugin.h"
#include "shared_memory.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

const std::vector<float> kX = {1, 2, 3, 4, 5, 6}, kY = {0.5f, -1, 2, 0, 3, -2};

// out = (x + y) * y, worked out here.
std::vector<float> expected() {
  std::vector<float> out;
  for (size_t i = 0; i < kX.size(); ++i) out.push_back((kX[i] + kY[i]) * kY[i]);
  return out;
}

TinyTensor tensor(std::vector<int32_t> shape, const std::string& name) {
  TinyTensor t;
  t.shape = std::move(shape);
  t.name = name;
  return t;
}

std::vector<uint8_t> add_mul_model() {
  TinyModel m;
  m.tensors = {tensor({2, 3}, "x"), tensor({2, 3}, "y"), tensor({2, 3}, "t"), tensor({2, 3}, "out")};
  m.ops = {{0, "", 1, {0, 1}, {2}}, {18, "", 1, {2, 1}, {3}}};
  m.inputs = {0, 1};
  m.outputs = {3};
  return m.build();
}

struct Rig {
  TempDir dir;
  TempDir state;
  std::shared_ptr<Captured> log = std::make_shared<Captured>();
  std::shared_ptr<Environment> env;

  // `plugin` is "crashdeleg" or "crashpack"; `section` is the rest of its config section. The plugin file
  // is this rig's own copy, or the one in `plugins_of`'s folder.
  void start(const std::string& plugin, const std::string& section, const Rig* plugins_of = nullptr) {
    if (!plugins_of) dir.add_plugin("lib" + plugin);
    std::string config = plugin == "crashdeleg" ? "delegates = crashdeleg\n" : "op-pack-precedence = crashpack, builtin\n";
    config += "[plugin." + plugin + "]\nisolation = process\n" + section;
    dir.write("baton.conf", config);
    EnvironmentOptions o;
    o.plugin_dirs = {plugins_of ? plugins_of->dir.path() : dir.path(), BUILTIN_PACK_DIR};
    o.config_path = dir.file("baton.conf");
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.threads = 1;
    o.state_dir = state.path();  // deaths counted per test
    auto log_lines = log;
    o.log = [log_lines](baton_log_level, const std::string& line) { log_lines->lines.push_back(line); };
    auto e = Environment::create(o);
    ASSERT_TRUE(e) << e.error();
    env = e.value();
  }

  std::vector<float> run_once(Status* status = nullptr, std::string* plugin_of_add = nullptr) {
    auto model = load_model_buffer(add_mul_model(), "add_mul.tflite");
    EXPECT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env, model.value());
    EXPECT_TRUE(interp) << interp.error();
    if (!interp) return {};
    Interpreter& in = *interp.value();
    std::memcpy(in.input(0).data, kX.data(), sizeof(float) * kX.size());
    std::memcpy(in.input(1).data, kY.data(), sizeof(float) * kY.size());
    Status s = in.invoke();
    if (status) *status = s;
    EXPECT_TRUE(s) << s.message();
    if (plugin_of_add) *plugin_of_add = in.placement(0).plugin;
    const auto* out = reinterpret_cast<const float*>(in.output(0).data);
    return std::vector<float>(out, out + 6);
  }

  bool logged(const std::string& text) const {
    for (const std::string& line : log->lines) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string all_lines() const {
    std::string s;
    for (const std::string& line : log->lines) s += line + "\n";
    return s;
  }
};

struct Failure {
  std::string plugin;  // crashdeleg or crashpack
  std::string fail;    // KIND-STAGE
};

std::string what_the_warning_says(const std::string& kind) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer in the child catches the segfault, reports it and exits with its own status.
  if (kind == "segv") return "exited with status";
#endif
  if (kind == "segv") return "was killed by signal 11 (SIGSEGV)";
  if (kind == "abort") return "was killed by signal 6 (SIGABRT)";
  if (kind == "exit") return "exited with status 3";
  return "did not answer within 1000 ms; killed";
}

class ChildDies : public ::testing::TestWithParam<Failure> {};

TEST_P(ChildDies, FirstRunCompletesOnTheRestOfTheChain) {
  const Failure f = GetParam();
  Rig s;
  s.start(f.plugin, "fail = " + f.fail + "\ninvoke-timeout-ms = 1000\nprepare-timeout-ms = 1000\n");
  ASSERT_TRUE(s.env);
  EXPECT_EQ(s.run_once(), expected());
  const std::string kind = f.fail.substr(0, f.fail.find('-'));
  const std::string stage = f.fail.substr(f.fail.find('-') + 1);
  const std::string where = (f.plugin == "crashdeleg" ? "partition " : "kernel ") + stage;
  EXPECT_TRUE(s.logged("isolated plugin " + f.plugin + " failed in " + where + ": its process " +
                       what_the_warning_says(kind)))
      << s.all_lines();
}

std::vector<Failure> failures() {
  std::vector<Failure> out;
  for (const char* plugin : {"crashdeleg", "crashpack"}) {
    for (const char* kind : {"segv", "abort", "exit", "hang"}) {
      for (const char* stage : {"init", "prepare", "invoke"}) out.push_back({plugin, std::string(kind) + "-" + stage});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Isolation, ChildDies, ::testing::ValuesIn(failures()),
                         [](const ::testing::TestParamInfo<Failure>& info) {
                           std::string name = info.param.plugin + "_" + info.param.fail;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(Isolation, WellBehavedPluginsComputeInTheirProcess) {
  for (const std::string plugin : {"crashdeleg", "crashpack"}) {
    Rig s;
    s.start(plugin, "fail = none\n");
    ASSERT_TRUE(s.env);
    std::string took;
    EXPECT_EQ(s.run_once(nullptr, &took), expected());
    EXPECT_EQ(took, plugin) << s.all_lines();
    const LoadedPlugin* p = s.env->registry().find(plugin);
    ASSERT_TRUE(p && p->isolated);
    EXPECT_GT(p->isolated->pid(), 0);
    EXPECT_NE(p->isolated->pid(), ::getpid());
  }
}

// A model loaded from a file, under an environment with an isolated plugin, is shared with the child as
// a block of shared memory (the child maps the constants instead of receiving copies) from the first
// interpreter on, and the block goes with the model; without an isolated plugin nothing is shared.
TEST(Isolation, AFileModelIsSharedWithTheChildWhileItLives) {
  Rig s;
  s.start("crashpack", "fail = none\n");
  ASSERT_TRUE(s.env);
  s.dir.write("add_mul.tflite", "");
  {
    const std::vector<uint8_t> bytes = add_mul_model();
    std::ofstream(s.dir.file("add_mul.tflite"), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const void* base = nullptr;
  {
    auto model = load_model_file(s.dir.file("add_mul.tflite"));
    ASSERT_TRUE(model) << model.error();
    const auto* first_byte = static_cast<const uint8_t*>(model.value()->mapped_bytes());
    ASSERT_NE(first_byte, nullptr);
    base = first_byte;
    EXPECT_FALSE(isolation::find_shared(base, 1));
    auto interp = Interpreter::create(s.env, model.value());
    ASSERT_TRUE(interp) << interp.error();
    const auto shared = isolation::find_shared(base, 1);
    ASSERT_TRUE(shared);
    EXPECT_FALSE(shared->writable);
    EXPECT_EQ(shared->offset, 0u);
  }
  EXPECT_FALSE(isolation::find_shared(base, 1));  // unregistered with the model, before its munmap

  Rig plain;
  plain.dir.add_plugin("libcrashpack");
  EnvironmentOptions o;
  o.plugin_dirs = {plain.dir.path(), BUILTIN_PACK_DIR};
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.read_config = false;
  o.state_dir = plain.state.path();
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(s.dir.file("add_mul.tflite"));
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_FALSE(isolation::find_shared(model.value()->mapped_bytes(), 1));
}

TEST(Isolation, NoCodeOfTheIsolatedPluginRunsInTheHost) {
  TempDir marker_dir;
  const std::string marker = marker_dir.file("opened");
  ::setenv("BATON_TEST_OPENED_MARKER", marker.c_str(), 1);
  {
    Rig s;
    s.start("crashdeleg", "fail = none\n");
    ASSERT_TRUE(s.env);
    EXPECT_EQ(s.run_once(), expected());
  }
  ::unsetenv("BATON_TEST_OPENED_MARKER");
  std::ifstream in(marker);
  std::string name, opened, in_word;
  int pid = 0, lines = 0;
  while (in >> name >> opened >> in_word >> pid) {
    ++lines;
    EXPECT_EQ(name, "crashdeleg");
    EXPECT_NE(pid, ::getpid()) << "the library's constructor ran in the host";
  }
  EXPECT_EQ(lines, 1);  // opened once, in its child
}

TEST(Isolation, AKilledChildIsReplacedForTheNextInterpreter) {
  Rig s;
  s.start("crashdeleg", "fail = none\n");
  ASSERT_TRUE(s.env);
  EXPECT_EQ(s.run_once(), expected());
  const LoadedPlugin* p = s.env->registry().find("crashdeleg");
  const pid_t first = p->isolated->pid();
  ASSERT_GT(first, 0);
  ::kill(first, SIGKILL);
  // Until it is gone (a zombie, not yet reaped by the host): a signal is delivered asynchronously.
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(first) + "/stat");
    std::string pid_text, comm, state;
    stat >> pid_text >> comm >> state;
    if (state == "Z") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string took;
  EXPECT_EQ(s.run_once(nullptr, &took), expected());
  EXPECT_EQ(took, "crashdeleg");
  EXPECT_GT(p->isolated->pid(), 0);
  EXPECT_NE(p->isolated->pid(), first);
}

// A death under a later run of a stateless model costs that run a fallback, not its answer: the run is
// repeated on the op packs, the interpreter keeps that plan, and the environment counts the death.
TEST(Isolation, ADeathInALaterRunFallsBackAndTheRunIsAnswered) {
  Rig s;
  s.start("crashdeleg", "fail = segv-invoke\nfail-every = 2\n");  // the child dies at its second invoke
  ASSERT_TRUE(s.env);
  auto model = load_model_buffer(add_mul_model(), "add_mul.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(s.env, model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  for (int run = 0; run < 3; ++run) {
    std::memcpy(in.input(0).data, kX.data(), sizeof(float) * kX.size());
    std::memcpy(in.input(1).data, kY.data(), sizeof(float) * kY.size());
    const Status st = in.invoke();
    ASSERT_TRUE(st) << "run " << run << ": " << st.message();
    const auto* out = reinterpret_cast<const float*>(in.output(0).data);
    EXPECT_EQ(std::vector<float>(out, out + 6), expected()) << "run " << run;
    EXPECT_EQ(in.placement(0).plugin, run == 0 ? "crashdeleg" : "builtin") << "run " << run;
  }
  EXPECT_TRUE(s.logged("delegate crashdeleg lost partition 0 (2 nodes) at invoke")) << s.all_lines();
  EXPECT_EQ(s.env->plugin_deaths("crashdeleg"), 1u);
}

TEST(Isolation, RepeatedDeathsOnAModelQuarantineThePlugin) {
  Rig s;
  s.start("crashdeleg", "fail = segv-invoke\n");
  ASSERT_TRUE(s.env);
  EXPECT_EQ(s.run_once(), expected());  // death 1
  EXPECT_EQ(s.run_once(), expected());  // death 2: quarantined from now on
  s.log->lines.clear();
  std::string took;
  EXPECT_EQ(s.run_once(nullptr, &took), expected());
  EXPECT_EQ(took, "builtin");
  EXPECT_TRUE(s.logged("plugin crashdeleg is quarantined for add_mul.tflite")) << s.all_lines();
  EXPECT_TRUE(s.logged("its isolated process died 2 times")) << s.all_lines();
}

TEST(Isolation, InterpretersInThreadsShareOneChild) {
  Rig s;
  s.start("crashdeleg", "fail = none\n");
  ASSERT_TRUE(s.env);
  auto model = load_model_buffer(add_mul_model(), "add_mul.tflite");
  ASSERT_TRUE(model);
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto interp = Interpreter::create(s.env, model.value());
      if (!interp) return;
      Interpreter& in = *interp.value();
      for (int run = 0; run < 25; ++run) {
        std::vector<float> x = kX;
        for (float& v : x) v += static_cast<float>(t);
        std::memcpy(in.input(0).data, x.data(), sizeof(float) * 6);
        std::memcpy(in.input(1).data, kY.data(), sizeof(float) * 6);
        if (!in.invoke()) return;
        const auto* out = reinterpret_cast<const float*>(in.output(0).data);
        bool same = true;
        for (int i = 0; i < 6; ++i) same = same && out[i] == (x[i] + kY[i]) * kY[i];
        good[t] += same;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good, std::vector<int>(4, 25));
  EXPECT_GT(s.env->registry().find("crashdeleg")->isolated->pid(), 0);
}

// Environments of one process that isolate the same plugin file share its child: each is an instance
// there, with its own options. One whose plugin dies takes the child down; the other's next interpreter
// gets a fresh child with its instance created again, and its outputs stay right.
TEST(Isolation, EnvironmentsOfOneProcessShareOneChild) {
  Rig a;
  a.start("crashdeleg", "fail = none\n");
  ASSERT_TRUE(a.env);
  Rig b;
  b.start("crashdeleg", "fail = segv-invoke\n", &a);  // a's plugin file, b's own options
  ASSERT_TRUE(b.env);

  std::string took;
  EXPECT_EQ(a.run_once(nullptr, &took), expected());
  EXPECT_EQ(took, "crashdeleg");
  const pid_t child = a.env->registry().find("crashdeleg")->isolated->pid();
  ASSERT_GT(child, 0);
  EXPECT_EQ(b.env->registry().find("crashdeleg")->isolated->pid(), child);

  // b's instance was created with fail = segv-invoke: its invoke kills the shared child.
  EXPECT_EQ(b.run_once(nullptr, &took), expected());
  EXPECT_TRUE(b.logged("isolated plugin crashdeleg failed in partition invoke")) << b.all_lines();
  // a's next interpreter starts a fresh child and creates a's instance (fail = none) in it again.
  EXPECT_EQ(a.run_once(nullptr, &took), expected());
  EXPECT_EQ(took, "crashdeleg") << a.all_lines();
  const pid_t fresh = a.env->registry().find("crashdeleg")->isolated->pid();
  EXPECT_GT(fresh, 0);
  EXPECT_NE(fresh, child);
  // The child outlives the Environments that leave, while one remains.
  b.env.reset();
  EXPECT_EQ(a.run_once(nullptr, &took), expected());
  EXPECT_EQ(took, "crashdeleg");
  EXPECT_EQ(a.env->registry().find("crashdeleg")->isolated->pid(), fresh);
}

// The child has no stdin (/dev/null), the host's stdout and stderr, its socket as fd 3, nothing else,
// and dies with its parent.
TEST(Isolation, TheChildInheritsOnlyWhatItNeeds) {
  Rig s;
  s.start("crashdeleg", "fail = none\n");
  ASSERT_TRUE(s.env);
  EXPECT_EQ(s.run_once(), expected());  // blocks mapped and closed in the child
  const pid_t child = s.env->registry().find("crashdeleg")->isolated->pid();
  ASSERT_GT(child, 0);
  const std::filesystem::path fds = "/proc/" + std::to_string(child) + "/fd";
  std::set<int> open;
  for (const auto& entry : std::filesystem::directory_iterator(fds)) open.insert(std::stoi(entry.path().filename()));
  EXPECT_EQ(open, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(std::filesystem::read_symlink(fds / "0").string(), "/dev/null");
  EXPECT_EQ(std::filesystem::read_symlink(fds / "3").string().rfind("socket:", 0), 0u);
  std::ifstream status("/proc/" + std::to_string(child) + "/status");
  std::string line;
  bool parent = false;
  while (std::getline(status, line)) parent = parent || line == "PPid:\t" + std::to_string(::getpid());
  EXPECT_TRUE(parent);
}

// The C API names the plugins to isolate (the C++ API's Environment takes the same options).
TEST(Isolation, TheCApiIsolatesByName) {
  Rig rig;  // for its temporary folders
  rig.dir.add_plugin("libcrashdeleg");
  rig.dir.write("baton.conf", "delegates = crashdeleg\n[plugin.crashdeleg]\nfail = abort-invoke\n");
  const char* previous_state = std::getenv("XDG_STATE_HOME");
  const std::string saved = previous_state ? previous_state : "";
  ::setenv("XDG_STATE_HOME", rig.state.path().c_str(), 1);  // this test's crash journal
  const std::string plugins = rig.dir.path(), config = rig.dir.file("baton.conf");
  const char* dirs[] = {plugins.c_str(), BUILTIN_PACK_DIR};
  const char* isolate[] = {"crashdeleg"};
  baton_environment_options o{};
  o.struct_size = sizeof o;
  o.config_path = config.c_str();
  o.plugin_dirs = dirs;
  o.plugin_dir_count = 2;
  o.threads = 1;
  o.no_default_dirs = 1;
  o.isolate = isolate;
  o.isolate_count = 1;
  baton_environment* env = baton_environment_create(&o);
  ASSERT_NE(env, nullptr) << baton_last_error();
  const std::vector<uint8_t> bytes = add_mul_model();
  baton_interpreter* interp = baton_interpreter_create_from_buffer(env, bytes.data(), bytes.size());
  ASSERT_NE(interp, nullptr) << baton_last_error();
  ASSERT_EQ(baton_interpreter_set_input(interp, 0, kX.data(), sizeof(float) * 6), BATON_OK);
  ASSERT_EQ(baton_interpreter_set_input(interp, 1, kY.data(), sizeof(float) * 6), BATON_OK);
  EXPECT_EQ(baton_interpreter_invoke(interp), BATON_OK) << baton_interpreter_last_error(interp);
  std::vector<float> out(6);
  EXPECT_EQ(baton_interpreter_get_output(interp, 0, out.data(), sizeof(float) * 6), BATON_OK);
  EXPECT_EQ(out, expected());
  // The environment counts the child's death against crashdeleg (a server's metrics read it), and only
  // against it: the builtin pack ran in this process.
  std::map<std::string, uint64_t> deaths;
  for (int32_t i = 0; i < baton_environment_plugin_count(env); ++i) {
    deaths[baton_environment_plugin_name(env, i)] = baton_environment_plugin_deaths(env, i);
  }
  EXPECT_EQ(deaths, (std::map<std::string, uint64_t>{{"builtin", 0}, {"crashdeleg", 1}}));
  EXPECT_EQ(baton_environment_plugin_name(env, baton_environment_plugin_count(env)), nullptr);
  EXPECT_EQ(baton_environment_plugin_deaths(env, -1), 0u);
  baton_interpreter_destroy(interp);
  baton_environment_destroy(env);
  if (saved.empty()) {
    ::unsetenv("XDG_STATE_HOME");
  } else {
    ::setenv("XDG_STATE_HOME", saved.c_str(), 1);
  }
}

TEST(Isolation, ConfigErrorsNameTheKey) {
  TempDir dir;
  dir.write("a.conf", "[plugin.builtin]\nisolation = sometimes\n");
  auto c = load_config(dir.file("a.conf"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("bad value 'sometimes' for key 'isolation' in [plugin.builtin]: expected process or in-process"),
            std::string::npos)
      << c.error();
  dir.write("b.conf", "[plugin.builtin]\ninvoke-timeout-ms = 0\n");
  c = load_config(dir.file("b.conf"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("key 'invoke-timeout-ms' in [plugin.builtin]: expected milliseconds"), std::string::npos)
      << c.error();
  dir.write("c.conf", "isolation = yes\n");
  c = load_config(dir.file("c.conf"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("bad value 'yes' for key 'isolation'"), std::string::npos) << c.error();
}

// A real delegate and a real op pack, isolated and in process, on a real model: the same bits.
std::vector<std::vector<uint8_t>> run_model(const std::string& path, const std::vector<std::string>& dirs,
                                            bool no_delegates, const std::vector<std::string>& isolate) {
  EnvironmentOptions o;
  o.plugin_dirs = dirs;
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.read_config = false;
  o.threads = 1;
  o.no_delegates = no_delegates;
  o.isolate = isolate;
  o.state_dir = test_state_dir();
  o.log = [](baton_log_level, const std::string&) {};
  auto env = Environment::create(o);
  EXPECT_TRUE(env) << env.error();
  if (!env) return {};
  auto model = load_model_file(path);
  EXPECT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  EXPECT_TRUE(interp) << interp.error();
  if (!interp) return {};
  Interpreter& in = *interp.value();
  uint32_t seed = 12345;
  for (size_t i = 0; i < in.input_count(); ++i) {
    auto* data = reinterpret_cast<float*>(in.input(i).data);
    for (size_t k = 0; k < in.input(i).bytes / sizeof(float); ++k) {
      seed = seed * 1664525u + 1013904223u;
      data[k] = static_cast<float>(seed >> 8) / 16777216.0f;
    }
  }
  Status s = in.invoke();
  EXPECT_TRUE(s) << s.message();
  std::vector<std::vector<uint8_t>> outs;
  for (size_t i = 0; i < in.output_count(); ++i) {
    const uint8_t* p = in.output(i).data;
    outs.emplace_back(p, p + in.output(i).bytes);
  }
  return outs;
}

TEST(Isolation, XnnpackAndBuiltinGiveTheSameBitsIsolated) {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string path = std::string(cache ? cache : "") + "/hand_landmark_lite.tflite";
  if (!cache || !std::ifstream(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path;
    GTEST_SKIP() << "no " << path;
  }
  const std::vector<std::string> dirs = {XNNPACK_PLUGIN_DIR, BUILTIN_PACK_DIR};
  const auto xnn = run_model(path, dirs, false, {});
  ASSERT_FALSE(xnn.empty());
  EXPECT_EQ(run_model(path, dirs, false, {"xnnpack"}), xnn);
  const auto builtin = run_model(path, dirs, true, {});
  ASSERT_FALSE(builtin.empty());
  EXPECT_EQ(run_model(path, dirs, true, {"builtin"}), builtin);
}

}  // namespace
}  // namespace baton::test
