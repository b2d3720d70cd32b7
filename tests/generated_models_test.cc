// Small float32 networks as TensorFlow's converter writes them, against the native TensorFlow Lite 2.9
// library's outputs on the same inputs: within 1e-5 of the largest reference magnitude, with the builtin
// pack alone, with XNNPACK before it, and with the cpu delegate first, at one and two threads (the GEMM of
// BATCH_MATMUL and FULLY_CONNECTED splits its work across threads).
//  - tests/data/transformer (tools/make-transformer-cases.sh): BERT-style with token ids through GATHER, a
//    ViT-style block on image patches with the exact GELU, a keyword-spotting stack with the tanh GELU as
//    POW / TANH arithmetic, one head;
//  - tests/data/detector (tools/make-detector-cases.sh): YOLOX-style detectors (space-to-depth slices, SiLU
//    convolutions, nearest upsampling, the box decode), one with NMS and the GATHERs and CAST after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "interpreter.h"
#include "npy.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

// A case's folder; names are unique across the sets.
std::string case_dir(const std::string& name) {
  for (const char* set : {"transformer", "detector"}) {
    const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/data/" + set + "/" + name + "/";
    if (fs::exists(dir)) return dir;
  }
  return "";
}

std::vector<std::string> cases() {
  std::vector<std::string> out;
  for (const char* set : {"transformer", "detector"}) {
    for (const auto& e : fs::directory_iterator(std::string(BATON_SOURCE_ROOT) + "/tests/data/" + set)) {
      if (fs::exists(e.path() / "out_0.npy")) out.push_back(e.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

enum class Chain { builtin, xnnpack, cpu };

std::vector<Chain> chains() {
  std::vector<Chain> out{Chain::builtin};
#ifdef XNNPACK_PLUGIN_DIR
  out.push_back(Chain::xnnpack);
#endif
#ifdef CPU_PLUGIN_DIR
  out.push_back(Chain::cpu);
#endif
  return out;
}

std::vector<std::string> plugin_dirs(Chain chain) {
  std::vector<std::string> dirs{BUILTIN_PACK_DIR};
#ifdef CPU_PLUGIN_DIR
  if (chain == Chain::cpu) dirs.push_back(CPU_PLUGIN_DIR);
#endif
#ifdef XNNPACK_PLUGIN_DIR
  if (chain != Chain::builtin) dirs.push_back(XNNPACK_PLUGIN_DIR);
#endif
  return dirs;
}

std::vector<float> floats(const void* data, size_t bytes) {
  std::vector<float> v(bytes / sizeof(float));
  std::memcpy(v.data(), data, bytes);
  return v;
}

using Param = std::tuple<std::string, Chain, int>;

class GeneratedModel : public ::testing::TestWithParam<Param> {};

TEST_P(GeneratedModel, MatchesNativeTfLite) {
  const auto& [name, chain, threads] = GetParam();
  EnvironmentOptions o;
  o.plugin_dirs = plugin_dirs(chain);
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.threads = threads;
  o.state_dir = test_state_dir();
  o.log = [](baton_log_level, const std::string&) {};
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(case_dir(name) + "model.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();

  size_t delegated = 0;
  for (size_t n = 0; n < in.subgraph(0)->nodes().size(); ++n) delegated += in.placement(n).kind == "delegate";
  if (chain == Chain::builtin) {
    EXPECT_EQ(delegated, 0u);
  } else {
    EXPECT_GT(delegated, 0u) << "no node was delegated";
  }

  for (size_t i = 0; i < in.input_count(); ++i) {
    auto arr = tool::read_npy(case_dir(name) + "in_" + std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    ASSERT_EQ(arr->data.size(), in.input(i).bytes) << "input " << i;
    std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
  }
  const Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  for (size_t k = 0; k < in.output_count(); ++k) {
    auto want = tool::read_npy(case_dir(name) + "out_" + std::to_string(k) + ".npy");
    ASSERT_TRUE(want) << want.error();
    const Tensor& t = in.output(k);
    ASSERT_EQ(t.type, BATON_TYPE_FLOAT32);
    ASSERT_EQ(want->shape, t.shape) << "output " << k;
    const std::vector<float> got = floats(t.data, t.bytes), ref = floats(want->data.data(), want->data.size());
    const FloatDiff d = float_diff(got.data(), ref.data(), ref.size());
    EXPECT_LE(d.max_diff, 1e-5 * std::max(d.max_ref, 1.0)) << "output " << k << ": max |diff| " << d.max_diff
                                                           << ", max |ref| " << d.max_ref;
  }
}

std::string chain_name(Chain c) {
  switch (c) {
    case Chain::builtin: return "builtin";
    case Chain::xnnpack: return "xnnpack";
    case Chain::cpu: return "cpu";
  }
  return "";
}

INSTANTIATE_TEST_SUITE_P(Cases, GeneratedModel,
                         ::testing::Combine(::testing::ValuesIn(cases()), ::testing::ValuesIn(chains()),
                                            ::testing::Values(1, 2)),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::get<0>(info.param) + "_" + chain_name(std::get<1>(info.param)) + "_" +
                                  std::to_string(std::get<2>(info.param)) + "t";
                         });

}  // namespace
}  // namespace baton::test
