// Real models (fetched by tools/fetch-models.sh, never committed) run through the builtin op pack alone
// and must match the reference outputs committed in tests/data/reference (made by
// tools/make-reference.sh with Google's LiteRT): per output, max |baton - ref| <= 1e-3 * max |ref|.
// That includes the DTLN model_quant_dynamic_* models (int8 weights, float activations). Models with
// custom ops no loaded pack has must fail cleanly, naming what is missing (the uint8 SSD model, whose
// quantized backbone the builtin pack runs, still needs the detection pack: tests/custom_ops_test.cc
// compares it with native TFLite).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "interpreter.h"
#include "npy.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

std::string model_cache() {
  const char* c = std::getenv("BATON_MODEL_CACHE");
  return c ? c : "";
}

// The cases this test runs with the builtin pack alone: those whose meta.json names no extra op packs
// ("op_packs", e.g. selfie_segmentation's mediapipe pack; tests/custom_ops_test.cc runs those).
std::vector<std::string> reference_cases() {
  return reference_case_names([](const ReferenceCase& c) { return !c.needs_op_packs; });
}

std::shared_ptr<Environment> builtin_only() {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  EXPECT_TRUE(env) << env.error();
  return env ? env.value() : nullptr;
}

// A chain of test delegates, with the builtin pack for the rest, against the builtin pack alone, on one
// model: the interpreters of both and what they need kept alive.
struct ChainVsBuiltin {
  TempDir plugins, conf;
  std::unique_ptr<Interpreter> delegated, plain;
};

// `test_plugins` are test plugins by file stem (e.g. "deleg_a"); `config` is the config file's text.
// Returns null (with a failure recorded) when anything does not load.
std::unique_ptr<ChainVsBuiltin> chain_vs_builtin(const std::string& model_path, const std::vector<std::string>& test_plugins,
                                                 const std::string& config) {
  auto c = std::make_unique<ChainVsBuiltin>();
  for (const std::string& p : test_plugins) c->plugins.add_plugin(p);
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", c->plugins.file("libbaton_builtin.so"));
  c->conf.write("baton.conf", config);
  auto env = isolated_environment({c->plugins.path()}, c->conf.file("baton.conf"));
  EXPECT_TRUE(env) << env.error();
  auto model = load_model_file(model_path);
  EXPECT_TRUE(model) << model.error();
  if (!env || !model) return nullptr;
  auto delegated = Interpreter::create(env.value(), model.value());
  EXPECT_TRUE(delegated) << delegated.error();
  auto plain = Interpreter::create(builtin_only(), model.value());
  EXPECT_TRUE(plain) << plain.error();
  if (!delegated || !plain) return nullptr;
  c->delegated = std::move(delegated.value());
  c->plain = std::move(plain.value());
  return c;
}

// Feeds both interpreters the reference inputs of case `name` and runs them `runs` times; the outputs
// must be equal bit for bit every time.
void expect_same_outputs(Interpreter& d, Interpreter& p, const std::string& name, int runs = 1) {
  for (size_t i = 0; i < d.input_count(); ++i) {
    auto arr = tool::read_npy(std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + name + "/in_" +
                              std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    std::memcpy(d.input(i).data, arr->data.data(), arr->data.size());
    std::memcpy(p.input(i).data, arr->data.data(), arr->data.size());
  }
  for (int run = 0; run < runs; ++run) {
    ASSERT_TRUE(d.invoke());
    ASSERT_TRUE(p.invoke());
    for (size_t o = 0; o < d.output_count(); ++o) {
      ASSERT_EQ(d.output(o).bytes, p.output(o).bytes);
      EXPECT_EQ(std::memcmp(d.output(o).data, p.output(o).data, d.output(o).bytes), 0) << name << " output " << o;
    }
  }
}

// The model of a reference case; skips (or fails, when BATON_REQUIRE_MODELS is set) when it was not fetched.
#define REAL_MODEL_PATH_OR_SKIP(path, name)                                      \
  const std::string path = model_cache() + "/" + (name) + ".tflite";             \
  if (!fs::exists(path)) {                                                       \
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path;       \
    GTEST_SKIP() << "missing " << path;                                          \
  }

class RealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(RealModel, MatchesTheReference) {
  const std::string name = GetParam();
  const std::string model_name = name.substr(0, name.find('-')) + ".tflite";
  const std::string path = model_cache() + "/" + model_name;
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path << " (run tools/fetch-models.sh)";
    GTEST_SKIP() << "missing " << path;
  }
  auto env = builtin_only();
  ASSERT_TRUE(env);
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env, model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + name + "/";
  for (size_t i = 0; i < in.input_count(); ++i) {
    auto arr = tool::read_npy(ref + "in_" + std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    ASSERT_EQ(arr->shape, in.input(i).shape) << "input " << i;
    ASSERT_EQ(arr->data.size(), in.input(i).bytes);
    std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
  }
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  double worst_model = 0;
  for (size_t o = 0; o < in.output_count(); ++o) {
    auto arr = tool::read_npy(ref + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    const Tensor& t = in.output(o);
    ASSERT_EQ(arr->shape, t.shape) << "output " << o;
    const size_t n = arr->data.size() / 4;
    const float* want = reinterpret_cast<const float*>(arr->data.data());
    const float* got = reinterpret_cast<const float*>(t.data);
    double max_ref = 0, max_diff = 0;
    for (size_t k = 0; k < n; ++k) {
      max_ref = std::max(max_ref, std::abs(static_cast<double>(want[k])));
      const double d = std::abs(static_cast<double>(got[k]) - want[k]);
      if (!(d <= max_diff)) max_diff = d;  // NaN counts as worst
    }
    const double rel = max_ref > 0 ? max_diff / max_ref : max_diff;
    worst_model = std::max(worst_model, rel);
    EXPECT_LE(rel, 1e-3) << name << " output " << o << ": max |diff| " << max_diff << " vs max |ref| " << max_ref;
  }
  RecordProperty("worst_relative_error", std::to_string(worst_model));
  std::printf("[ worst    ] %s: max |baton - ref| / max |ref| = %.3g (%zu nodes, %zu folded)\n", name.c_str(),
              worst_model, in.nodes().size(), in.folded_nodes());
}

// The delegate chain on real graphs: a test delegate takes every same-shape ADD (scattered through the
// graph, so there are many partitions and boundaries); every node must be placed exactly once and the
// outputs must equal the builtin-only run bit for bit (the delegate adds the same floats).
TEST_P(RealModel, DelegateChainGivesTheSameOutputs) {
  const std::string name = GetParam();
  if (name.find('-') != std::string::npos) GTEST_SKIP() << "photo variant: same graph as " << name.substr(0, name.find('-'));
  REAL_MODEL_PATH_OR_SKIP(path, name);
  auto chain = chain_vs_builtin(path, {"deleg_a"}, "delegates = deleg-a\n[plugin.deleg-a]\nops = ADD\n");
  ASSERT_TRUE(chain);
  Interpreter& d = *chain->delegated;
  size_t in_partitions = 0, adds = 0;
  for (const auto& part : d.partitions()) in_partitions += part->nodes.size();
  for (size_t i = 0; i < d.nodes().size(); ++i) {
    const Placement pl = d.placement(i);
    if (d.nodes()[i].info->op_code == 0) ++adds;
    if (pl.kind == "delegate") {
      EXPECT_EQ(d.nodes()[i].info->op_code, 0) << "node " << i << " is not an ADD but went to the delegate";
      EXPECT_EQ(d.partitions()[pl.partition]->plugin->name, "deleg-a");
    } else {
      EXPECT_TRUE(pl.kind == "op-pack" || pl.kind == "folded") << pl.kind;
    }
  }
  size_t delegated_nodes = 0;
  for (size_t i = 0; i < d.nodes().size(); ++i) delegated_nodes += d.placement(i).kind == "delegate";
  EXPECT_EQ(delegated_nodes, in_partitions);  // each delegated node in exactly one partition
  expect_same_outputs(d, *chain->plain, name);
  std::printf("[ chain    ] %s: %zu of %zu ADD nodes delegated in %zu partitions\n", name.c_str(), delegated_nodes, adds,
              d.partitions().size());
}

// A chain of two delegates on real graphs: kernel-deleg (tests/plugins/kernel_delegate.cc, the builtin
// kernels called through its own code, intermediates in its own memory) takes the convolutions,
// activations and reshapes, deleg-a the ADDs, the builtin pack the rest. The partitions interleave, so
// every boundary is crossed many times; every node must be placed exactly once, each where the chain's
// order says, and the outputs must equal the builtin-only run bit for bit (the same kernels compute).
TEST_P(RealModel, TwoDelegateChainWithOwnIntermediatesGivesTheSameOutputs) {
  const std::string name = GetParam();
  if (name.find('-') != std::string::npos) GTEST_SKIP() << "photo variant: same graph as " << name.substr(0, name.find('-'));
  REAL_MODEL_PATH_OR_SKIP(path, name);
  const std::string kernel_ops = "CONV_2D,DEPTHWISE_CONV_2D,MUL,SUB,RELU,RELU6,LOGISTIC,TANH,HARD_SWISH,RESHAPE";
  auto chain = chain_vs_builtin(path, {"kernel_deleg", "deleg_a"},
                                "delegates = kernel-deleg, deleg-a\n[plugin.kernel-deleg]\nops = " + kernel_ops +
                                    "\n[plugin.deleg-a]\nops = ADD\n");
  ASSERT_TRUE(chain);
  Interpreter& d = *chain->delegated;
  EXPECT_TRUE(d.fallbacks().empty());
  std::map<std::string, size_t> placed;
  size_t in_partitions = 0;
  for (const auto& part : d.partitions()) in_partitions += part->nodes.size();
  for (size_t i = 0; i < d.nodes().size(); ++i) {
    const Placement pl = d.placement(i);
    const int32_t code = d.nodes()[i].info->op_code;
    const std::string op = node_op_name(*d.nodes()[i].info);
    const bool kernel_op = kernel_ops.find(op) != std::string::npos && (kernel_ops.find(op + ",") != std::string::npos ||
                                                                        kernel_ops.ends_with(op));
    if (pl.kind == "folded") continue;
    ++placed[pl.kind == "delegate" ? pl.plugin : "op-pack"];
    if (kernel_op) {
      // float32 ops of the set go to the first delegate (a non-float one would carry a refusal).
      if (d.refusals(i).empty()) EXPECT_EQ(pl.plugin, "kernel-deleg") << "node " << i << " " << op;
    } else if (code == 0) {
      // An ADD goes to deleg-a unless deleg-a refused it (it takes same-shape ADDs only).
      bool refused_by_a = false;
      for (const Refusal& r : d.refusals(i)) refused_by_a |= r.plugin == "deleg-a";
      if (!refused_by_a) EXPECT_EQ(pl.plugin, "deleg-a") << "node " << i << " ADD";
    } else {
      EXPECT_EQ(pl.kind, "op-pack") << "node " << i << " " << op;
    }
  }
  EXPECT_EQ(placed["kernel-deleg"] + placed["deleg-a"], in_partitions);  // each in exactly one partition
  EXPECT_GT(placed["kernel-deleg"], 0u);
  expect_same_outputs(d, *chain->plain, name, 2);  // the second run reuses the partitions' own buffers
  std::printf("[ chain2   ] %s: kernel-deleg %zu nodes, deleg-a %zu, op packs %zu, in %zu partitions\n", name.c_str(),
              placed["kernel-deleg"], placed["deleg-a"], placed["op-pack"], d.partitions().size());
}

// The same chain with kernel-deleg's partitions limited (at least 3 nodes, at most 4 partitions) and
// deleg-a failing to prepare every partition it gets: the limits hold, the nodes they drop go on down the
// chain (to deleg-a for ADDs, else op packs), every deleg-a partition falls back to op packs with a
// recorded fallback, and the outputs still equal the builtin-only run.
TEST_P(RealModel, LimitsAndPrepareFallbacksOnARealGraph) {
  const std::string name = GetParam();
  if (name.find('-') != std::string::npos) GTEST_SKIP() << "photo variant: same graph as " << name.substr(0, name.find('-'));
  REAL_MODEL_PATH_OR_SKIP(path, name);
  auto chain = chain_vs_builtin(path, {"kernel_deleg", "deleg_a"},
                                "delegates = kernel-deleg, deleg-a\n"
                                "[plugin.kernel-deleg]\nops = CONV_2D,DEPTHWISE_CONV_2D,ADD,RELU\n"
                                "min-nodes-per-partition = 3\nmax-partitions = 4\n"
                                "[plugin.deleg-a]\nops = ADD\nfail = prepare\n");
  ASSERT_TRUE(chain);
  Interpreter& d = *chain->delegated;
  size_t kernel_partitions = 0;
  for (const auto& part : d.partitions()) {
    EXPECT_EQ(part->plugin->name, "kernel-deleg");  // deleg-a lost all of its partitions
    EXPECT_GE(part->nodes.size(), 3u);
    ++kernel_partitions;
  }
  EXPECT_LE(kernel_partitions, 4u);
  size_t lost_to_a = 0;
  for (const Fallback& f : d.fallbacks()) {
    EXPECT_EQ(f.plugin, "deleg-a");
    EXPECT_EQ(f.stage, "prepare");
    EXPECT_EQ(f.reason, "simulated prepare failure");
    for (int n : f.nodes) {
      EXPECT_EQ(d.nodes()[n].info->op_code, 0) << "deleg-a only ever got ADDs";
      EXPECT_EQ(d.placement(n).kind, "op-pack");
    }
    lost_to_a += f.nodes.size();
  }
  // Every model exercises one path or both (DTLN's convolutions come in runs too short for kernel-deleg;
  // hand_landmark's ADDs all fall inside kernel-deleg's large partitions).
  EXPECT_GT(kernel_partitions + lost_to_a, 0u);
  expect_same_outputs(d, *chain->plain, name);
  std::printf("[ limits   ] %s: kernel-deleg %zu partitions, deleg-a lost %zu nodes at prepare\n", name.c_str(),
              kernel_partitions, lost_to_a);
}

INSTANTIATE_TEST_SUITE_P(Reference, RealModel, ::testing::ValuesIn(reference_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

struct Unsupported {
  const char* model;
  const char* message;
};

class UnsupportedModel : public ::testing::TestWithParam<Unsupported> {};

TEST_P(UnsupportedModel, FailsCleanlyNamingWhatIsMissing) {
  const std::string path = model_cache() + "/" + GetParam().model;
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path;
    GTEST_SKIP() << "missing " << path;
  }
  auto env = builtin_only();
  ASSERT_TRUE(env);
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env, model.value());
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find(GetParam().message), std::string::npos) << interp.error();
}

INSTANTIATE_TEST_SUITE_P(
    Models, UnsupportedModel,
    ::testing::Values(
        Unsupported{"selfie_segmentation.tflite", "no op pack supports custom op 'Convolution2DTransposeBias'"},
        Unsupported{"face_landmark_with_attention.tflite", "custom op 'Landmarks2TransformMatrix'"},
        Unsupported{"mobilenet_ssd_v2_coco_quant_postprocess.tflite", "custom op 'TFLite_Detection_PostProcess'"},
        Unsupported{"mobilenet_ssd_v2_coco_quant_postprocess_edgetpu.tflite", "custom op 'edgetpu-custom-op'"}),
    [](const ::testing::TestParamInfo<Unsupported>& info) {
      std::string n = info.param.model;
      n = n.substr(0, n.find('.'));
      for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return n;
    });

}  // namespace
}  // namespace baton::test
