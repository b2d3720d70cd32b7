// The XNNPACK delegate (plugins/xnnpack): the real float models with the chain [xnnpack] and the builtin
// pack for the rest, against the committed reference outputs; and the plugin's thread count from the run
// and from its config section. The small one-op models are in xnnpack_ops_test.cc, the quantized ones in
// xnnpack_quantized_test.cc. Each test runs in an isolated environment whose plugin folder holds copies
// of the plugins (xnnpack_support.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cpu_budget.h"
#include "interpreter.h"
#include "reference_run.h"
#include "test_support.h"
#include "xnnpack_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

// ---- real models ---------------------------------------------------------------------------------------

// Every reference case with float32 inputs (quantized models have no float path through xnnpack); the
// builtin and mediapipe packs run what xnnpack does not take.
std::vector<std::string> reference_cases() {
  return reference_case_names([](const ReferenceCase& c) { return c.float_input; });
}

class XnnpackRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(XnnpackRealModel, MatchesTheReference) {
  const std::string name = GetParam();
  const std::string path = model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite";
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path << " (run tools/fetch-models.sh)";
    GTEST_SKIP() << "missing " << path;
  }
  auto envs = make_envs(2);  // two threads: the pthreadpool is exercised too
  ASSERT_TRUE(envs);
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  // Twice: the second run reuses the runtime's setup, the outputs must not change.
  ASSERT_TRUE(run_reference_inputs(in, name, 2));
  EXPECT_TRUE(in.fallbacks().empty()) << fallbacks_text(in);
  const size_t taken = delegated_nodes(in, "xnnpack");
  EXPECT_GT(taken, 0u);
  const double worst = compare_with_reference(in, name, 1e-3);
  const size_t running = in.nodes().size() - in.folded_nodes();
  // MediaPipe's Convolution2DTransposeBias is XNNPACK's deconvolution: selfie segmentation runs whole.
  if (name.rfind("selfie_segmentation", 0) == 0) {
    EXPECT_EQ(taken, running);
  }
  std::printf("[ xnnpack  ] %s: xnnpack took %zu of %zu running nodes in %zu partitions; worst |diff|/max|ref| = %.3g\n",
              name.c_str(), taken, running, in.partitions().size(), worst);
}

INSTANTIATE_TEST_SUITE_P(Reference, XnnpackRealModel, ::testing::ValuesIn(reference_cases()),
                         param_name);

// --threads (EnvironmentOptions::threads) sets every plugin's thread count, except a plugin whose config
// section sets its own `threads`; without either, all cores.
TEST(XnnpackOptions, ThreadsFromTheRunUnlessThePluginSectionSetsThem) {
  TempDir plugins, conf;
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", plugins.file("libbaton_builtin.so"));
  auto threads_of = [&](const std::string& config, int run_threads, const std::string& plugin) {
    conf.write("baton.conf", config);
    EnvironmentOptions o;
    o.plugin_dirs = {plugins.path()};
    o.config_path = conf.file("baton.conf");
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.threads = run_threads;
    o.state_dir = test_state_dir();
    o.log = [](baton_log_level, const std::string&) {};
    auto env = Environment::create(o);
    EXPECT_TRUE(env) << env.error();
    if (!env) return -1;
    const LoadedPlugin* p = env.value()->registry().find(plugin);
    return p ? p->threads : -1;
  };
  // Every count is capped at the CPUs the process may run on (cpu_budget.h).
  const int cpus = usable_cpus();
  EXPECT_EQ(threads_of("", 3, "xnnpack"), std::min(3, cpus));
  EXPECT_EQ(threads_of("", 3, "builtin"), std::min(3, cpus));
  EXPECT_EQ(threads_of("[plugin.xnnpack]\nthreads = 1\n", 3, "xnnpack"), 1);
  EXPECT_EQ(threads_of("[plugin.xnnpack]\nthreads = 1\n", 3, "builtin"), std::min(3, cpus));
  EXPECT_EQ(threads_of("threads = 2\n", 0, "xnnpack"), std::min(2, cpus));
  EXPECT_EQ(threads_of("", 0, "xnnpack"), cpus);
}

// XNNPACK and its thread pool start with the first node that reaches them, not when the delegate joins the
// chain: an 8-bit model, refused on its types (the `quantized` option is off), never starts them; the
// first float node does, once for all the interpreters of the environment.
TEST(XnnpackStart, OnlyWithTheFirstNodeThatNeedsIt) {
  TempDir plugins, conf;
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", plugins.file("libbaton_builtin.so"));
  conf.write("baton.conf", "delegates = xnnpack\n");
  auto log = std::make_shared<Captured>();
  auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"), log);
  ASSERT_TRUE(env) << env.error();
  auto starts = [&] {
    return std::count_if(log->lines.begin(), log->lines.end(),
                         [](const std::string& l) { return l.find("xnnpack: XNNPACK started") != std::string::npos; });
  };
  auto add_model = [](int8_t type) {
    Graph g;
    const Quantization q{{0.05f}, {3}, 0};
    const int32_t a = type == 0 ? g.add({2, 8}) : g.quantized({2, 8}, type, q);
    const int32_t b = type == 0 ? g.add({2, 8}) : g.quantized({2, 8}, type, q);
    const int32_t out = type == 0 ? g.add({2, 8}) : g.quantized({2, 8}, type, q);
    g.inputs = {a, b};
    g.outputs = {out};
    g.ops.push_back({BATON_OP_ADD, {a, b}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(tflite::BuiltinOptions_AddOptions, tflite::CreateAddOptions(fbb).Union());
                     }});
    return g;
  };
  auto plan = [&](int8_t type) {
    auto model = load_model_buffer(add_model(type).build(), "add.tflite");
    EXPECT_TRUE(model) << model.error();
    auto in = Interpreter::create(env.value(), model.value());
    EXPECT_TRUE(in) << in.error();
    return in ? in.value()->refusals(0) : std::vector<Refusal>{};
  };
  for (int8_t type : {int8_t{3}, int8_t{9}}) {
    const std::vector<Refusal> refusals = plan(type);
    ASSERT_EQ(refusals.size(), 1u);
    EXPECT_NE(refusals[0].reason().find("quantized nodes are taken only with the option quantized = true"),
              std::string::npos) << refusals[0].reason();
  }
  EXPECT_EQ(starts(), 0);
  EXPECT_TRUE(plan(0).empty());  // float32: xnnpack takes it
  EXPECT_EQ(starts(), 1);
  EXPECT_TRUE(plan(0).empty());
  EXPECT_EQ(starts(), 1);
}

}  // namespace
}  // namespace baton::test
