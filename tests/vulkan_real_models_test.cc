// The Vulkan delegate (plugins/vulkan) on the real float models, with the validation layer on: the
// models without custom ops with the chain [vulkan] (and [vulkan, xnnpack] for some), and selfie
// segmentation with the mediapipe pack for its custom ops, against the committed reference outputs
// (tests/data/reference, 1e-3 of the largest magnitude). Skipped without the model cache unless
// BATON_REQUIRE_MODELS. Also the generated transformer encoders and detectors (tests/data/transformer,
// tests/data/detector) against native TFLite 2.9, every node on vulkan in one partition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "interpreter.h"
#include "npy.h"
#include "reference_run.h"
#include "test_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

// ---- real models ---------------------------------------------------------------------------------------

// The float32 reference cases (a model, or a model on a photo: `NAME-astronaut`), with or without op packs besides builtin (the Vulkan delegate is float32 only).
std::vector<std::string> reference_models(bool with_op_packs) {
  return with_op_packs ? reference_case_names([](const ReferenceCase& c) { return c.float_input && c.needs_op_packs; })
                       : reference_case_names([](const ReferenceCase& c) { return c.float_input && !c.needs_op_packs; });
}

struct RealRun {
  double worst = 0;
  size_t taken = 0, running = 0, partitions = 0;
};

// Runs reference case `name` twice in `env` (the second run reuses the recorded command buffer), with no
// fallback; null where that failed (a test failure already).
std::unique_ptr<Interpreter> run_reference_case(VulkanEnv& env, const std::string& name) {
  const std::string path = model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite";
  auto model = load_model_file(path);
  EXPECT_TRUE(model) << model.error();
  if (!model) return nullptr;
  auto interp = Interpreter::create(env.env, model.value());
  EXPECT_TRUE(interp) << interp.error();
  if (!interp || !run_reference_inputs(*interp.value(), name, 2)) return nullptr;
  EXPECT_TRUE(interp.value()->fallbacks().empty()) << fallbacks_text(*interp.value());
  return std::move(interp.value());
}

// run_reference_case, then every output compared with LiteRT's.
RealRun run_reference(VulkanEnv& env, const std::string& name, const std::string& plugin = "vulkan") {
  RealRun result;
  const std::unique_ptr<Interpreter> interp = run_reference_case(env, name);
  if (!interp) return result;
  Interpreter& in = *interp;
  result.taken = delegated_nodes(in, plugin);
  result.running = in.nodes().size() - in.folded_nodes();
  result.partitions = in.partitions().size();
  result.worst = compare_with_reference(in, name, 1e-3);
  EXPECT_EQ(env.validation_messages(), "");
  return result;
}

bool have_model(const std::string& name) {
  if (fs::exists(model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite")) return true;
  if (std::getenv("BATON_REQUIRE_MODELS")) ADD_FAILURE() << "missing model " << name << " (run tools/fetch-models.sh)";
  return false;
}

class VulkanRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanRealModel, MatchesTheReference) {
  const std::string name = GetParam();
  if (!have_model(name)) GTEST_SKIP() << "missing " << name;
  auto env = vulkan_env();
  ASSERT_TRUE(env);
  const RealRun r = run_reference(*env, name);
  EXPECT_GT(r.taken, 0u);
  std::printf("[ vulkan   ] %s: vulkan took %zu of %zu running nodes in %zu partitions; worst |diff|/max|ref| = %.3g\n",
              name.c_str(), r.taken, r.running, r.partitions, r.worst);
}

INSTANTIATE_TEST_SUITE_P(Reference, VulkanRealModel, ::testing::ValuesIn(reference_models(false)), param_name);

// With `fp16 = true` (the default on a GPU; the suites set it) activations and weights are stored as float16.
// Float16 keeps 11 significant bits (a rounding moves a value by up to 2^-11 = 4.9e-4 of it) and every
// stored intermediate is rounded once more than in float32, so errors add along a model's depth. Computed
// in float32 (`fp16-arithmetic = false`) the bound is |diff| <= kFloat16Bound * max(max |ref|, 1) per output
// (probabilities near zero are compared absolutely). Computed in float16 too (the default where the device
// has shaderFloat16, as lavapipe has), every product's multiply-add rounds as well; measured on these
// models the worst is 0.056 (pose_landmark_lite's output 4, 0.058 of about 1), then 0.042 (its landmarks,
// 8 of 190 pixels) and 0.028 (face_detection_short_range's boxes): kFloat16ArithmeticBound. One output is
// compared otherwise: pose_landmark's segmentation logits (output 2, up to +-660 on a 256x256 map) move by up
// to a quarter of their range in the deep negative and positive regions, so the test holds the mask they
// give (logit > 0) to kFloat16MaskAgreement of the pixels (kFloat16ArithmeticMaskAgreement in float16
// arithmetic: 0.993 measured).
constexpr double kFloat16Bound = 2e-2;
constexpr double kFloat16MaskAgreement = 0.995;
constexpr double kFloat16ArithmeticBound = 8e-2;
constexpr double kFloat16ArithmeticMaskAgreement = 0.99;

class VulkanFloat16RealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanFloat16RealModel, MatchesTheReferenceWithinFloat16Tolerance) {
  const std::string name = GetParam();
  if (!have_model(name)) GTEST_SKIP() << "missing " << name;
  for (const bool arithmetic : {false, true}) {
    SCOPED_TRACE(arithmetic ? "float16 arithmetic" : "float32 arithmetic");
    auto env = vulkan_env("vulkan", std::string("fp16 = true\nfp16-arithmetic = ") + (arithmetic ? "true" : "false") + "\n");
    ASSERT_TRUE(env);
    ASSERT_TRUE(env->logged(arithmetic ? "; float16 storage and arithmetic"
                                       : "; float16 storage, float32 arithmetic (fp16-arithmetic = false)"))
        << env->log_text();
    const double bound = arithmetic ? kFloat16ArithmeticBound : kFloat16Bound;
    const double mask_agreement = arithmetic ? kFloat16ArithmeticMaskAgreement : kFloat16MaskAgreement;
    const char* mode = arithmetic ? "float16 arithmetic" : "float16 storage";
    const std::unique_ptr<Interpreter> interp = run_reference_case(*env, name);
    ASSERT_TRUE(interp);
    Interpreter& in = *interp;
    EXPECT_GT(delegated_nodes(in, "vulkan"), 0u);
    const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + name + "/";
    double worst = 0;
    for (size_t o = 0; o < in.output_count(); ++o) {
      auto want = tool::read_npy(ref + "out_" + std::to_string(o) + ".npy");
      ASSERT_TRUE(want) << want.error();
      ASSERT_EQ(want->shape, in.output(o).shape) << "output " << o;
      const auto* got = reinterpret_cast<const float*>(in.output(o).data);
      const auto* ref_values = reinterpret_cast<const float*>(want->data.data());
      const size_t n = want->data.size() / 4;
      if (name.rfind("pose_landmark", 0) == 0 && o == 2) {
        size_t same = 0;
        for (size_t k = 0; k < n; ++k) same += (got[k] > 0) == (ref_values[k] > 0);
        EXPECT_GE(static_cast<double>(same) / n, mask_agreement) << "segmentation mask";
        std::printf("[ vulkan   ] %s in %s: segmentation mask %zu of %zu pixels as the reference's\n", name.c_str(),
                    mode, same, n);
        continue;
      }
      const FloatDiff d = float_diff(got, ref_values, n);
      const double rel = d.max_diff / std::max(d.max_ref, 1.0);
      EXPECT_LE(rel, bound) << "output " << o << ": max |diff| " << d.max_diff << " of max |ref| " << d.max_ref;
      worst = std::max(worst, rel);
    }
    EXPECT_EQ(env->validation_messages(), "");
    std::printf("[ vulkan   ] %s in %s: worst |diff| / max(max |ref|, 1) = %.3g\n", name.c_str(), mode, worst);
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, VulkanFloat16RealModel, ::testing::ValuesIn(reference_models(false)), param_name);

// The chain [vulkan, xnnpack]: xnnpack gets what vulkan refuses (model_2's SQUARED_DIFFERENCE).
class VulkanXnnpackRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanXnnpackRealModel, MatchesTheReference) {
  const std::string name = GetParam();
  if (!have_model(name)) GTEST_SKIP() << "missing " << name;
  auto env = vulkan_env("vulkan, xnnpack", "", {XNNPACK_PLUGIN_DIR});
  ASSERT_TRUE(env);
  const RealRun r = run_reference(*env, name);
  EXPECT_GT(r.taken, 0u);
  std::printf("[ vulkan   ] %s with vulkan,xnnpack: vulkan took %zu of %zu running nodes, %zu partitions in all; worst = %.3g\n",
              name.c_str(), r.taken, r.running, r.partitions, r.worst);
}

INSTANTIATE_TEST_SUITE_P(Reference, VulkanXnnpackRealModel,
                         ::testing::Values("face_detection_short_range", "model_2"), param_name);

// Selfie segmentation, whose head is MediaPipe's Convolution2DTransposeBias: vulkan runs that custom op too,
// so every running node (the mediapipe pack is there for the reference run's sake only).
TEST(VulkanRealModelWithOpPacks, SelfieSegmentation) {
  ASSERT_EQ(reference_models(true), (std::vector<std::string>{"selfie_segmentation", "selfie_segmentation-astronaut"}));
  if (!have_model("selfie_segmentation")) GTEST_SKIP() << "missing selfie_segmentation";
  for (const std::string& name : reference_models(true)) {
    auto env = vulkan_env("vulkan", "", {MEDIAPIPE_PACK_DIR});
    ASSERT_TRUE(env);
    const RealRun r = run_reference(*env, name);
    EXPECT_EQ(r.taken, r.running);
    EXPECT_EQ(r.partitions, 1u);
    std::printf("[ vulkan   ] %s: vulkan took %zu of %zu running nodes in %zu partitions; worst = %.3g\n", name.c_str(),
                r.taken, r.running, r.partitions, r.worst);
  }
}

// The transformer cases (attention: TRANSPOSE, BATCH_MATMUL, SOFTMAX; layer norm: MEAN over the last
// axis, SQUARED_DIFFERENCE, RSQRT; both GELUs, as POW and TANH or the op; the pooled MEAN over the sequence)
// and the detector cases (space-to-depth STRIDED_SLICEs, PADV2, SiLU, RESIZE_NEAREST_NEIGHBOR, the box
// decode's slices, EXP and LOGISTIC): every node on vulkan in one partition (BERT's token ids too: its
// GATHER reads them as int32), every output within 1e-5 of TFLite's (twice: the second run replays the
// command buffer). detector_nms's NON_MAX_SUPPRESSION_V4 alone stays on the CPU (its output's length
// depends on the data): two vulkan partitions around it, the second gathering the kept boxes and scores by
// its int32 indices and casting its count to float.
// In float16 (the default `fp16 = true`: storage, and arithmetic on a device with shaderFloat16): the same
// cases within kFloat16Bound, but for detector_nms's outputs: float16 scores may order near-equal boxes
// otherwise, and NMS then keeps others.
void generated_models_case(bool f16) {
  std::vector<fs::path> folders;
  for (const char* set : {"transformer", "detector"}) {
    for (const auto& e : fs::directory_iterator(std::string(BATON_SOURCE_ROOT) + "/tests/data/" + set)) folders.push_back(e.path());
  }
  size_t cases = 0;
  for (const fs::path& e : folders) {
    const std::string name = e.filename().string(), dir = e.string() + "/";
    SCOPED_TRACE(name + (f16 ? " in float16" : ""));
    ++cases;
    auto env = vulkan_env("vulkan", f16 ? "fp16 = true\n" : "");
    ASSERT_TRUE(env);
    auto model = load_model_file(dir + "model.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(env->env, model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& in = *interp.value();
    size_t nms = 0;
    for (const auto& node : in.nodes()) nms += node.info->op_code == BATON_OP_NON_MAX_SUPPRESSION_V4;
    EXPECT_EQ(delegated_nodes(in, "vulkan"), in.nodes().size() - in.folded_nodes() - nms);
    EXPECT_EQ(in.partitions().size(), nms ? 2u : 1u);
    for (int run = 0; run < 2; ++run) {
      for (size_t i = 0; i < in.input_count(); ++i) {
        auto arr = tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
        ASSERT_TRUE(arr) << arr.error();
        ASSERT_EQ(arr->data.size(), in.input(i).bytes);
        std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
      }
      const Status s = in.invoke();
      ASSERT_TRUE(s) << s.message();
      if (f16 && nms) continue;
      for (size_t k = 0; k < in.output_count(); ++k) {
        auto want = tool::read_npy(dir + "out_" + std::to_string(k) + ".npy");
        ASSERT_TRUE(want) << want.error();
        ASSERT_EQ(want->data.size(), in.output(k).bytes);
        const auto* got = reinterpret_cast<const float*>(in.output(k).data);
        const auto* ref = reinterpret_cast<const float*>(want->data.data());
        const FloatDiff d = float_diff(got, ref, want->data.size() / 4);
        EXPECT_LE(d.max_diff, (f16 ? kFloat16Bound : 1e-5) * std::max(d.max_ref, 1.0))
            << "run " << run << ", output " << k << ": max |diff| " << d.max_diff;
        if (run == 1) {
          std::printf("[ vulkan   ] %s%s, output %zu: max |diff| %.3g of max |ref| %.3g\n", name.c_str(), f16 ? " in float16" : "",
                      k, d.max_diff, d.max_ref);
        }
      }
    }
    EXPECT_TRUE(in.fallbacks().empty()) << fallbacks_text(in);
    EXPECT_EQ(env->validation_messages(), "");
  }
  EXPECT_EQ(cases, 7u);
}

TEST(VulkanGeneratedModels, MatchNativeTfLite) { generated_models_case(false); }
TEST(VulkanGeneratedModels, MatchNativeTfLiteInFloat16) { generated_models_case(true); }

}  // namespace
}  // namespace baton::test
