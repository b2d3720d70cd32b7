// TFLite's own delegate binaries hosted by baton through the tflite-delegates loader
// (plugins/tflite-delegates): Google's XNNPACK delegate from the pinned TFLite 2.9 C library, returned by
// a small external delegate of ours (tests/plugins/tflite_xnn_ext.c), runs every real float model and
// matches the reference; our own external delegate (tests/plugins/tflite_test_delegate.cc) computes ADD
// and MUL through the emulated TfLiteContext, and each way it can misbehave is named while the model
// still runs. Skips when the TFLite C library is not there (tools/fetch-tflite-c.sh fetches it).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "interpreter.h"
#include "isolated_plugin.h"
#include "npy.h"
#include "op_graph.h"
#include "plugin_registry.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_delegates_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

using namespace tflite_delegates;  // NOLINT: the shared set-up

// ---- Google's XNNPACK delegate on the real models ------------------------------------------------------

std::vector<std::string> float_cases() {
  return reference_case_names([](const ReferenceCase& c) { return c.float_input; });
}

// Runs reference case `name` with `chain` (Google's XNNPACK as xnn_ext, after `before` when given) and
// the builtin and mediapipe packs for the rest; every output must match the reference.
void google_xnnpack_case(const std::string& name, const std::string& before) {
  if (!have_tflite()) GTEST_SKIP() << "no TFLite C library at " << TFLITE_C_LIB;
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string path = std::string(cache ? cache : "") + "/" + name.substr(0, name.find('-')) + ".tflite";
  if (!fs::exists(path)) GTEST_SKIP() << "missing " << path;
  std::string config = "delegates = " + (before.empty() ? "" : before + ", ") + "xnn_ext\n" +
                       "[plugin.xnn_ext]\nlibrary = " TFLITE_C_LIB "\nthreads = 2\n";
  // lavapipe where there is no GPU; float32, as the bound is float32's
  if (before == "vulkan") config += "[plugin.vulkan]\ndevice = 0\nfp16 = false\n";
  auto s = setup({{"tflite_xnn_ext", "libxnn_ext.so"}}, config, before == "vulkan");
  ASSERT_TRUE(s);
  const std::unique_ptr<Interpreter> interp = s->open(path);
  ASSERT_TRUE(interp);
  Interpreter& in = *interp;
  ASSERT_TRUE(run_reference_inputs(in, name, 2));  // the second run must give the same outputs
  EXPECT_TRUE(in.fallbacks().empty()) << log_text(*s);
  const size_t taken = delegated_nodes(in, "xnn_ext");
  const size_t first = before.empty() ? taken : delegated_nodes(in, before);
  EXPECT_GT(first, 0u) << log_text(*s);
  const double worst = compare_with_reference(in, name, 1e-3);
  std::printf("[ tflite   ] %s: %s%s Google's XNNPACK took %zu of %zu running nodes in %zu partitions; worst %.3g\n",
              name.c_str(), before.c_str(), before.empty() ? "" : (" took " + std::to_string(first) + ",").c_str(),
              taken, in.nodes().size() - in.folded_nodes(), in.partitions().size(), worst);
}

class GoogleXnnpackRealModel : public ::testing::TestWithParam<std::string> {};
TEST_P(GoogleXnnpackRealModel, FirstInTheChainMatchesTheReference) { google_xnnpack_case(GetParam(), ""); }

#ifdef VULKAN_PLUGIN_DIR
TEST_P(GoogleXnnpackRealModel, AfterVulkanMatchesTheReference) { google_xnnpack_case(GetParam(), "vulkan"); }
#endif

// The same delegate in a child process (the loader opens the file there only): bit for bit the outputs
// of the in-process run, which match the reference.
std::vector<std::vector<uint8_t>> output_bytes(const Interpreter& in) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < in.output_count(); ++i) {
    const auto* d = static_cast<const uint8_t*>(in.output(i).data);
    out.emplace_back(d, d + in.output(i).bytes);
  }
  return out;
}

TEST_P(GoogleXnnpackRealModel, IsolatedGivesTheBitsOfInProcess) {
  if (!have_tflite()) GTEST_SKIP() << "no TFLite C library at " << TFLITE_C_LIB;
  const std::string name = GetParam();
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string path = std::string(cache ? cache : "") + "/" + name.substr(0, name.find('-')) + ".tflite";
  if (!fs::exists(path)) GTEST_SKIP() << "missing " << path;
  std::vector<std::vector<uint8_t>> results[2];
  for (int isolate = 0; isolate < 2; ++isolate) {
    auto s = setup({{"tflite_xnn_ext", "libxnn_ext.so"}},
                   std::string("delegates = xnn_ext\n[plugin.xnn_ext]\nlibrary = " TFLITE_C_LIB "\nthreads = 2\n") +
                       (isolate ? "isolation = process\n" : ""));
    ASSERT_TRUE(s);
    const LoadedPlugin* p = s->env->registry().find("xnn_ext");
    ASSERT_TRUE(p) << log_text(*s);
    EXPECT_EQ(p->isolated != nullptr, isolate == 1);
    const std::unique_ptr<Interpreter> interp = s->open(path);
    ASSERT_TRUE(interp);
    ASSERT_TRUE(run_reference_inputs(*interp, name, 1));
    EXPECT_TRUE(interp->fallbacks().empty()) << log_text(*s);
    EXPECT_GT(delegated_nodes(*interp, "xnn_ext"), 0u) << log_text(*s);
    compare_with_reference(*interp, name, 1e-3);
    results[isolate] = output_bytes(*interp);
  }
  EXPECT_EQ(results[0], results[1]);
}

INSTANTIATE_TEST_SUITE_P(Reference, GoogleXnnpackRealModel, ::testing::ValuesIn(float_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(TfliteDelegates, DiscoveryNamesKindAndOptions) {
  auto s = setup({{"tflite_xnn_ext", "libxnn_ext.so"}, {"tflite_test_delegate", "libtfl_test.so.1"}},
                 "delegates = tfl_test\n[plugin.xnn_ext]\nanything = goes\n");
  ASSERT_TRUE(s);
  const PluginRegistry& reg = s->env->registry();
  const LoadedPlugin* loader = reg.find("tflite-delegates");
  ASSERT_TRUE(loader);
  EXPECT_STREQ(loader->kind_name(), "loader");
  for (const char* name : {"xnn_ext", "tfl_test"}) {
    const LoadedPlugin* p = reg.find(name);
    ASSERT_TRUE(p) << name << "\n" << log_text(*s);
    EXPECT_STREQ(p->kind_name(), "delegate");
    EXPECT_EQ(p->loaded_by, "tflite-delegates");
    EXPECT_NE(p->description.find("TFLite external delegate"), std::string::npos);
    EXPECT_NE(p->description.find("cannot validate"), std::string::npos);
  }
  EXPECT_EQ(reg.find("xnn_ext")->option_values.at("anything"), "goes");
}

// ---- our own TFLite delegate: computes, and misbehaves -------------------------------------------------

const std::pair<std::string, std::string> kOurs = {"tflite_test_delegate", "libtfl_test.so"};

TEST(TfliteDelegates, OurDelegateComputesAddAndMul) {
  AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 4u);
  EXPECT_EQ(r.interp->partitions().size(), 2u);
  EXPECT_TRUE(r.interp->fallbacks().empty());
  // The node it left: the plan says why.
  bool said = false;
  for (const Refusal& f : r.interp->refusals(3)) said |= f.plugin == "tfl_test" && f.reason() == "not claimed by the TFLite delegate";
  EXPECT_TRUE(said);
}

// An input resize: the adapter brings the inputs' dims up to date before the kernel's prepare, and the
// kernel resizes its partition's outputs through the context's ResizeTensor.
TEST(TfliteDelegates, ResizedInputsReachTheKernelAndItsOutputsResize) {
  TinyModel m;  // out = (x + y) + y
  m.tensors = {{{1, 4}, 0, {}, "x"}, {{1, 4}, 0, {}, "y"}, {{1, 4}, 0, {}, "s"}, {{1, 4}, 0, {}, "out"}};
  m.ops = {{0, "", 1, {0, 1}, {2}, 0}, {0, "", 1, {2, 1}, {3}, 0}};
  m.inputs = {0, 1};
  m.outputs = {3};
  AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n", m.build());
  ASSERT_TRUE(r.interp);
  Interpreter& in = *r.interp;
  ASSERT_TRUE(in.resize_input(0, {2, 4}));
  ASSERT_TRUE(in.resize_input(1, {2, 4}));
  ASSERT_TRUE(in.ensure_prepared());
  const float x[8] = {1, 2, 3, 4, -1, -2, 0.5f, 8}, y[8] = {0.5f, -1, 2, -3, 4, 4, -4, 0};
  std::memcpy(in.input(0).data, x, sizeof x);
  std::memcpy(in.input(1).data, y, sizeof y);
  Status st = in.invoke();
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(in.output(0).shape, (std::vector<int32_t>{2, 4}));
  const float* out = reinterpret_cast<const float*>(in.output(0).data);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], x[i] + y[i] + y[i]) << i;
  EXPECT_EQ(delegated_nodes(in, "tfl_test"), 2u);
  EXPECT_TRUE(in.fallbacks().empty());
}

// The preview groups as TFLite does (two partitions here); the delegate keeps the larger one.
TEST(TfliteDelegates, PreviewDelegatePartitioningGroupsLikeTflite) {
  AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n[plugin.tfl_test]\nmode = preview\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 3u) << log_text(*r.setup);
  EXPECT_EQ(r.interp->placement(4).kind, "op-pack");
  EXPECT_TRUE(r.interp->fallbacks().empty());
}

// Each bad ReplaceNodeSubsetsWithDelegateKernels call: the delegate takes nothing, the reason names the
// delegate and what was wrong, the model runs on the op packs.
void expect_refused(const std::string& mode, const std::string& chain, const std::string& reason,
                    const std::vector<std::pair<std::string, std::string>>& more = {}) {
  auto plugins = more;
  plugins.push_back(kOurs);
  AddMulRun r = run_add_mul(plugins, "delegates = " + chain + "\n[plugin.tfl_test]\nmode = " + mode + "\n");
  ASSERT_TRUE(r.interp) << mode;
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 0u) << mode;
  const std::string log = log_text(*r.setup);
  EXPECT_NE(log.find("delegate tfl_test: node selection failed"), std::string::npos) << log;
  EXPECT_NE(log.find(reason), std::string::npos) << mode << ": " << log;
}

TEST(TfliteDelegates, NodeListedTwice) { expect_refused("twice", "tfl_test", "is listed twice"); }
TEST(TfliteDelegates, UnknownNode) { expect_refused("unknown", "tfl_test", "node 100000 is not a node of this graph"); }
TEST(TfliteDelegates, NullRegistration) { expect_refused("null-registration", "tfl_test", "has no invoke function"); }
TEST(TfliteDelegates, NodeHeldByAnotherDelegate) {
  expect_refused("held", "deleg-a, tfl_test", "is not in the execution plan", {{"deleg_a", ""}});
}

TEST(TfliteDelegates, FailingPrepareAndInvokeFallBack) {
  for (const std::string mode : {"prepare-fails", "invoke-fails"}) {
    AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n[plugin.tfl_test]\nmode = " + mode + "\n");
    ASSERT_TRUE(r.interp) << mode;
    expect_near(r.out, expected_add_mul());
    const std::vector<Fallback> fallbacks = r.interp->fallbacks();  // a copy: every subgraph's
    ASSERT_FALSE(fallbacks.empty()) << mode;
    const Fallback& f = fallbacks.front();
    EXPECT_EQ(f.plugin, "tfl_test");
    EXPECT_EQ(f.stage, mode == "prepare-fails" ? "prepare" : "invoke");
    EXPECT_NE(f.reason.find("simulated"), std::string::npos) << f.reason;
  }
}

// Without a TFLite delegate in the plugin folders the loader wraps nothing: it is destroyed and its
// library unloaded once the environment is made, and the report says so. Once it wraps one, its library
// stays (what it wrapped points into it).
TEST(TfliteDelegates, ALoaderThatWrapsNothingIsUnloaded) {
  auto none = setup({}, "");
  ASSERT_TRUE(none);
  const LoadedPlugin* loader = none->env->registry().find("tflite-delegates");
  ASSERT_NE(loader, nullptr);
  EXPECT_TRUE(loader->unloaded());
  EXPECT_FALSE(library_mapped(loader->path));
  auto some = setup({kOurs}, "delegates = tfl_test\n");
  ASSERT_TRUE(some);
  const LoadedPlugin* wrapping = some->env->registry().find("tflite-delegates");
  ASSERT_NE(wrapping, nullptr);
  EXPECT_FALSE(wrapping->unloaded());
  EXPECT_TRUE(library_mapped(wrapping->path));
}

// A delegate that keeps its boundary tensors in buffers of its own (buffer handles) and never touches
// the host's memory: the adapter fills its buffers before each invoke (CopyToBufferHandle) and brings
// back what it wrote (CopyFromBufferHandle), so the op pack between its partitions and the caller read
// this invoke's values; the handles are freed with the graph.
TEST(TfliteDelegates, BufferHandlesAreCopiedAcrossPartitionBoundaries) {
  AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n[plugin.tfl_test]\nmode = buffer-handles\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 4u);
  EXPECT_TRUE(r.interp->fallbacks().empty()) << log_text(*r.setup);
  void* lib = dlopen(r.setup->plugins.file(kOurs.second).c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto counter = [&](const char* name) {
    auto fn = reinterpret_cast<int (*)()>(dlsym(lib, name));
    return fn ? fn() : -1;
  };
  // Another invoke with other inputs: partition [0, 1, 2] copies x and y in and s out, partition [4]
  // copies sig in and out out.
  const int to = counter("baton_test_tflite_copies_to"), from = counter("baton_test_tflite_copies_from");
  EXPECT_GE(to, 3);
  EXPECT_GE(from, 2);
  Interpreter& in = *r.interp;
  const float x[4] = {-1, 0.25f, 5, 2}, y[4] = {2, 2, -7, 0.5f}, c[4] = {0.5f, -2.0f, 3.0f, 1.0f};
  std::memcpy(in.input(0).data, x, sizeof x);
  std::memcpy(in.input(1).data, y, sizeof y);
  ASSERT_TRUE(in.invoke());
  const float* out = reinterpret_cast<const float*>(in.output(0).data);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], c[i] / (1.0f + std::exp(-((x[i] + y[i]) * c[i] + x[i]))), 1e-6) << i;
  EXPECT_EQ(counter("baton_test_tflite_copies_to"), to + 3);
  EXPECT_EQ(counter("baton_test_tflite_copies_from"), from + 2);
  EXPECT_EQ(counter("baton_test_tflite_handles_freed"), 0);
  r.interp.reset();
  EXPECT_EQ(counter("baton_test_tflite_handles_freed"), 5);  // x, y, s, sig, out
  dlclose(lib);
}

TEST(TfliteDelegates, CreateReturningNullIsSkippedWithItsMessage) {
  AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n[plugin.tfl_test]\nmode = create-fails\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  const ChainPlacement* p = r.setup->env->find_placement("tfl_test");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->position, -1);
  EXPECT_NE(p->reason.find("simulated create failure"), std::string::npos) << p->reason;
}

// The loader needs ABI 1.2 (loaders, select_nodes); an older host gets a clear refusal, not a crash.
TEST(TfliteDelegates, LoaderRefusesAnOlderHost) {
  void* lib = dlopen((std::string(TFLITE_LOADER_DIR) + "/libbaton_tflite_delegates.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry = reinterpret_cast<baton_plugin_entry_fn>(dlsym(lib, BATON_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  baton_host_api api = *host_api_table();
  api.abi_minor = 1;
  api.struct_size = offsetof(baton_host_api, plugin_path);  // a 1.1 host's table
  baton_error error;
  EXPECT_EQ(entry(1, 1, &api, &error), nullptr);
  EXPECT_NE(error.message.find("needs a host with ABI 1.2"), std::string::npos) << error.message;
  dlclose(lib);
}

}  // namespace
}  // namespace baton::test

namespace baton::test {
namespace {

using namespace tflite_delegates;  // NOLINT: the shared set-up

// ---- our delegate isolated: in a child of its own, with the loader opened there too ----------------------

bool maps_file(pid_t pid, const std::string& file) {
  std::ifstream maps("/proc/" + (pid ? std::to_string(pid) : std::string("self")) + "/maps");
  const std::string name = fs::path(file).filename().string();
  for (std::string line; std::getline(maps, line);) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(TfliteDelegatesIsolated, OurDelegateComputesInItsOwnProcessAndNeverInTheHost) {
  AddMulRun in_process = run_add_mul({kOurs}, "delegates = tfl_test\n");
  ASSERT_TRUE(in_process.interp);
  for (const std::string how : {"[plugin.tfl_test]\nisolation = process\n", "isolation = process\n"}) {
    AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n" + how);
    ASSERT_TRUE(r.interp) << how;
    EXPECT_EQ(r.out, in_process.out) << how;
    expect_near(r.out, expected_add_mul());
    EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 4u) << log_text(*r.setup);
    EXPECT_EQ(r.interp->partitions().size(), 2u);
    EXPECT_TRUE(r.interp->fallbacks().empty()) << log_text(*r.setup);
    const LoadedPlugin* p = r.setup->env->registry().find("tfl_test");
    ASSERT_TRUE(p && p->isolated);
    EXPECT_EQ(p->loaded_by, "tflite-delegates");
    const pid_t child = p->isolated->pid();
    ASSERT_GT(child, 0);
    // The delegate's file is open in its child only (this process has the in-process run's copy,
    // in another folder).
    const std::string file = r.setup->plugins.file(kOurs.second);
    EXPECT_TRUE(maps_file(child, file));
    std::ifstream self("/proc/self/maps");
    bool here = false;
    for (std::string line; std::getline(self, line);) here |= line.find(file) != std::string::npos;
    EXPECT_FALSE(here) << file;
  }
}

// Isolating the loader isolates each file it wraps, each in a child of its own; the loader's code does
// not wrap anything in the host.
TEST(TfliteDelegatesIsolated, IsolatingTheLoaderIsolatesWhatItWraps) {
  AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\n[plugin.tflite-delegates]\nisolation = process\n");
  ASSERT_TRUE(r.interp);
  expect_near(r.out, expected_add_mul());
  const PluginRegistry& reg = r.setup->env->registry();
  ASSERT_TRUE(reg.find("tflite-delegates") && reg.find("tflite-delegates")->isolated);
  const LoadedPlugin* p = reg.find("tfl_test");
  ASSERT_TRUE(p && p->isolated) << log_text(*r.setup);
  EXPECT_NE(p->isolated->pid(), reg.find("tflite-delegates")->isolated->pid());
  EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 4u) << log_text(*r.setup);
}

// A delegate that dies or hangs in its own Prepare over the graph, its kernel's prepare or its kernel's
// invoke: the child is killed, the first run completes on the op packs with the right outputs, and the
// warning names the plugin, the stage and the signal or the timeout.
TEST(TfliteDelegatesIsolated, ADelegateThatCrashesOrHangsDoesNotTakeTheRunDown) {
  struct Case {
    std::string mode, stage, why;
  };
  const std::vector<Case> cases = {{"segv-select", "node selection", "SIGSEGV"},
                                   {"abort-prepare", "prepare", "SIGABRT"},
                                   {"segv-invoke", "invoke", "SIGSEGV"},
                                   {"hang-invoke", "invoke", "did not answer within 500 ms"}};
  for (const Case& c : cases) {
    // The journal would quarantine the plugin for this model after two deaths; each mode's first run is the point.
    AddMulRun r = run_add_mul({kOurs}, "delegates = tfl_test\ncrash-journal = false\n[plugin.tfl_test]\nisolation = process\n"
                                       "invoke-timeout-ms = 500\nmode = " + c.mode + "\n");
    ASSERT_TRUE(r.interp) << c.mode;
    expect_near(r.out, expected_add_mul());
    const std::string log = log_text(*r.setup);
    const std::string call = c.stage == "node selection" ? c.stage : "partition " + c.stage;
    EXPECT_NE(log.find("isolated plugin tfl_test failed in " + call), std::string::npos) << c.mode << "\n" << log;
    // Under a sanitizer the child reports its signal and exits.
    EXPECT_TRUE(log.find(c.why) != std::string::npos || log.find("exited with status") != std::string::npos)
        << c.mode << "\n" << log;
    if (c.stage == "node selection") {
      EXPECT_EQ(delegated_nodes(*r.interp, "tfl_test"), 0u);
    } else {
      const std::vector<Fallback> fallbacks = r.interp->fallbacks();
      ASSERT_FALSE(fallbacks.empty()) << c.mode;
      EXPECT_EQ(fallbacks.front().plugin, "tfl_test");
      EXPECT_EQ(fallbacks.front().stage, c.stage) << c.mode;
    }
  }
}

}  // namespace
}  // namespace baton::test
