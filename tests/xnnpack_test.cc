// The XNNPACK delegate (plugins/xnnpack): the real float models with the chain [xnnpack] and the builtin
// pack for the rest, against the committed reference outputs; and the plugin's thread count from the run
// and from its config section. The small one-op models are in xnnpack_ops_test.cc, the quantized ones in
// xnnpack_quantized_test.cc. Each test runs in an isolated environment whose plugin folder holds copies
// of the plugins (xnnpack_support.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

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

}  // namespace
}  // namespace baton::test
