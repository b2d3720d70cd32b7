// The XNNPACK delegate (plugins/xnnpack): the real float models with the chain [xnnpack] and the builtin
// pack for the rest, against the committed reference outputs; and the plugin's thread count from the run
// and from its config section. The small one-op models are in xnnpack_ops_test.cc, the quantized ones in
// xnnpack_quantized_test.cc. Each test runs in an isolated environment whose plugin folder holds copies
// of the plugins (xnnpack_support.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
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

// A connected group of only elementwise nodes smaller than min-elementwise-group (3 by default), between
// nodes that run elsewhere, stays with the op packs, unchecked, so XNNPACK does not start for it: a lone
// SQRT between EXPs (an op xnnpack does not declare), as an 8-bit model's float tail has; a chain of three
// is taken, and so is a small model's whole graph (XnnpackStart above). Each node's reason is its own
// (graph_refuse_node): the EXPs keep "op not declared". With the option at 1 the SQRT is taken. Outputs
// match the builtin pack's on either side.
TEST(XnnpackSelection, SmallElementwiseIslandsStayWithTheOpPacks) {
  auto model_of = [](int chain) {
    Graph g;
    const int32_t x = g.add({2, 8});
    const int32_t first = g.add({2, 8});
    const int32_t r = g.add({2, 8});
    const int32_t e = g.add({2, 8});
    g.inputs = {x};
    g.ops.push_back({BATON_OP_EXP, {x}, {first}, nullptr});
    g.ops.push_back({BATON_OP_SQRT, {first}, {r}, nullptr});
    g.ops.push_back({BATON_OP_EXP, {r}, {e}, nullptr});
    int32_t last = e;
    for (int i = 0; i < chain; ++i) {
      const int32_t next = g.add({2, 8});
      g.ops.push_back({i % 2 ? BATON_OP_MUL : BATON_OP_ADD, {last, e}, {next}, [](flatbuffers::FlatBufferBuilder& fbb) {
                         return std::make_pair(tflite::BuiltinOptions_AddOptions, tflite::CreateAddOptions(fbb).Union());
                       }});
      if (i % 2) g.ops.back().options = [](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(tflite::BuiltinOptions_MulOptions, tflite::CreateMulOptions(fbb).Union());
      };
      last = next;
    }
    const int32_t y = g.add({2, 8});
    g.ops.push_back({BATON_OP_EXP, {last}, {y}, nullptr});
    g.outputs = {y};
    return g;
  };
  auto plan = [](const std::string& config, const Graph& g, std::shared_ptr<Captured> log) {
    TempDir plugins, conf;
    fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
    fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", plugins.file("libbaton_builtin.so"));
    conf.write("baton.conf", "delegates = xnnpack\n" + config);
    auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"), log);
    EXPECT_TRUE(env) << env.error();
    auto model = load_model_buffer(g.build(), "tail.tflite");
    EXPECT_TRUE(model) << model.error();
    auto in = Interpreter::create(env.value(), model.value());
    EXPECT_TRUE(in) << in.error();
    return std::move(in.value());
  };
  auto starts = [](const Captured& log) {
    return std::count_if(log.lines.begin(), log.lines.end(),
                         [](const std::string& l) { return l.find("xnnpack: XNNPACK started") != std::string::npos; });
  };
  auto xnnpack_reason = [](const Interpreter& in, int node) {
    for (const Refusal& r : in.refusals(node)) {
      if (r.plugin == "xnnpack") return r.reason();
    }
    return std::string();
  };
  auto expect_builtin_outputs = [](Interpreter& in, const Graph& g) {
    auto reference = Interpreter::create(shared_envs()->builtin, load_model_buffer(g.build(), "tail.tflite").value());
    ASSERT_TRUE(reference) << reference.error();
    std::vector<float> x(16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.05f * static_cast<float>(i + 1);
    for (Interpreter* run : {&in, reference.value().get()}) {
      std::memcpy(run->input(0).data, x.data(), 64);
      ASSERT_TRUE(run->invoke());
    }
    const auto* got = reinterpret_cast<const float*>(in.output(0).data);
    const auto* want = reinterpret_cast<const float*>(reference.value()->output(0).data);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * std::abs(want[i])) << i;
  };

  // A lone SQRT: refused for its group, unchecked; XNNPACK never starts.
  auto log = std::make_shared<Captured>();
  const Graph lone = model_of(0);
  auto in = plan("", lone, log);
  EXPECT_TRUE(in->partitions().empty());
  EXPECT_EQ(xnnpack_reason(*in, 1),
            "only elementwise ops in a group of 1 node(s) between nodes that run elsewhere (min-elementwise-group = 3): "
            "left to the rest of the chain, which runs them as fast without starting XNNPACK and without two host "
            "round trips");
  EXPECT_EQ(xnnpack_reason(*in, 0), "op not declared");
  EXPECT_EQ(starts(*log), 0);
  expect_builtin_outputs(*in, lone);

  // ADD, MUL, ADD between the EXPs: a group of three, taken; the lone SQRT still refused.
  log = std::make_shared<Captured>();
  const Graph three = model_of(3);
  in = plan("", three, log);
  ASSERT_EQ(in->partitions().size(), 1u);
  EXPECT_EQ(in->partitions()[0]->nodes.size(), 3u);
  EXPECT_NE(xnnpack_reason(*in, 1).find("group of 1 node(s)"), std::string::npos);
  EXPECT_EQ(starts(*log), 1);
  expect_builtin_outputs(*in, three);
  // Two: refused, both.
  in = plan("", model_of(2), std::make_shared<Captured>());
  EXPECT_TRUE(in->partitions().empty());
  for (int node : {3, 4}) {
    EXPECT_NE(xnnpack_reason(*in, node).find("group of 2 node(s)"), std::string::npos) << xnnpack_reason(*in, node);
  }

  // min-elementwise-group = 1: every node it can run, the lone SQRT too.
  log = std::make_shared<Captured>();
  in = plan("[plugin.xnnpack]\nmin-elementwise-group = 1\n", lone, log);
  ASSERT_EQ(in->partitions().size(), 1u);
  EXPECT_EQ(xnnpack_reason(*in, 1), "");
  EXPECT_EQ(starts(*log), 1);
  expect_builtin_outputs(*in, lone);
}

}  // namespace
}  // namespace baton::test
