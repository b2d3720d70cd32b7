// The Vulkan delegate (plugins/vulkan) on the machine's Vulkan driver (Mesa's lavapipe where there is no
// GPU), always with the Khronos validation layer on: any validation warning or error fails the test.
//  - the real float models without custom ops, with the chain [vulkan] (and [vulkan, xnnpack] for some),
//    against the committed reference outputs (tests/data/reference, 1e-3 of the largest magnitude);
//  - small graphs of each op, with odd sizes (channels not a multiple of 4, 1x1 spatial, stride 2 on odd
//    inputs), through vulkan and through the builtin pack alone, compared;
//  - the refusals `baton plan` shows, device selection, the shader cache, and failures that must come
//    back as statuses (a shader that does not compile, a failing Vulkan call, no driver at all).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "device_choice.h"
#include "gpu.h"
#include "interpreter.h"
#include "memory_plan.h"
#include "npy.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"

// LeakSanitizer reads this from the program. Debian's Khronos validation layer (1.3.239) never frees the
// state its synchronisation validation keeps per command buffer (a reference cycle inside the layer:
// every block is allocated by the layer, none is reachable only through baton), so LSan would fail
// every test that records commands with validation on. Only that library's frames are suppressed.
extern "C" const char* __lsan_default_suppressions() { return "leak:libVkLayer_khronos_validation.so\n"; }

namespace baton::test {
namespace {

namespace fs = std::filesystem;

// ---- environments ------------------------------------------------------------------------------------

// Compiled shaders shared by the tests of this process (the cache tests use their own folders).
const std::string& shared_cache_dir() {
  static TempDir dir;
  return dir.path();
}

struct VulkanEnv {
  TempDir conf;
  std::shared_ptr<Captured> log = std::make_shared<Captured>();
  std::shared_ptr<Environment> env;

  // The validation layer's reports, which fail every test that looks.
  std::string validation_messages() const {
    std::string s;
    for (const std::string& line : log->lines) {
      if (line.find("vulkan: validation") != std::string::npos) s += line + "\n";
    }
    return s;
  }
  bool logged(const std::string& text) const {
    for (const std::string& line : log->lines) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string log_text() const {
    std::string s;
    for (const std::string& line : log->lines) s += line + "\n";
    return s;
  }
};

// The device the tests run on: the first one the driver lists (lavapipe on a machine without a GPU), by
// index, since the delegate takes a CPU implementation only when the device option names it.
std::string test_device() { return "0"; }

// An environment with the vulkan delegate (validation on) and the builtin pack, plus `dirs`.
// `device`: the plugin must find its device (then the log says it runs with validation).
std::unique_ptr<VulkanEnv> vulkan_env(const std::string& delegates = "vulkan", const std::string& options = "",
                                      std::vector<std::string> dirs = {}, bool device = true) {
  auto e = std::make_unique<VulkanEnv>();
  const bool own_cache = options.find("cache-dir") != std::string::npos || options.find("shader-cache") != std::string::npos;
  // Lavapipe, a CPU implementation, is used only when the device option names it.
  const bool own_device = options.find("device =") != std::string::npos;
  e->conf.write("baton.conf", "delegates = " + delegates + "\n[plugin.vulkan]\nvalidation = true\n" +
                                  (own_cache ? "" : "cache-dir = " + shared_cache_dir() + "\n") +
                                  (own_device ? "" : "device = " + test_device() + "\n") + options);
  dirs.insert(dirs.begin(), {VULKAN_PLUGIN_DIR, BUILTIN_PACK_DIR});
  auto env = isolated_environment(dirs, e->conf.file("baton.conf"), e->log);
  EXPECT_TRUE(env) << env.error();
  if (!env) return nullptr;
  e->env = env.value();
  if (device) {
    EXPECT_TRUE(e->logged("with validation")) << "the validation layer is not on:\n" << e->log_text();
  }
  return e;
}

std::shared_ptr<Environment> builtin_env() {
  static std::shared_ptr<Environment> env = [] {
    auto b = isolated_environment({BUILTIN_PACK_DIR});
    EXPECT_TRUE(b) << b.error();
    return b ? b.value() : nullptr;
  }();
  return env;
}

std::string fallbacks_text(const Interpreter& in) {
  std::string s;
  for (const Fallback& f : in.fallbacks()) {
    s += f.plugin + " lost " + std::to_string(f.nodes.size()) + " nodes at " + f.stage + ": " + f.reason + "\n";
  }
  return s;
}

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

// Runs reference case `name` twice in `env` (the second run reuses the recorded command buffer) and
// compares every output with LiteRT's.
RealRun run_reference(VulkanEnv& env, const std::string& name, const std::string& plugin = "vulkan") {
  RealRun result;
  const std::string path = model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite";
  auto model = load_model_file(path);
  EXPECT_TRUE(model) << model.error();
  if (!model) return result;
  auto interp = Interpreter::create(env.env, model.value());
  EXPECT_TRUE(interp) << interp.error();
  if (!interp) return result;
  Interpreter& in = *interp.value();
  if (!run_reference_inputs(in, name, 2)) return result;
  EXPECT_TRUE(in.fallbacks().empty()) << fallbacks_text(in);
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

// Models whose custom ops come from the mediapipe pack: vulkan runs the rest.
TEST(VulkanRealModelWithOpPacks, SelfieSegmentation) {
  ASSERT_EQ(reference_models(true), (std::vector<std::string>{"selfie_segmentation", "selfie_segmentation-astronaut"}));
  if (!have_model("selfie_segmentation")) GTEST_SKIP() << "missing selfie_segmentation";
  for (const std::string& name : reference_models(true)) {
    auto env = vulkan_env("vulkan", "", {MEDIAPIPE_PACK_DIR});
    ASSERT_TRUE(env);
    const RealRun r = run_reference(*env, name);
    EXPECT_GT(r.taken, 0u);
    std::printf("[ vulkan   ] %s: vulkan took %zu of %zu running nodes in %zu partitions; worst = %.3g\n", name.c_str(),
                r.taken, r.running, r.partitions, r.worst);
  }
}

// ---- small graphs against the builtin pack ---------------------------------------------------------------

// Runs `g` through vulkan and through builtin alone on the same random inputs in [lo, hi]; every node
// must go to vulkan and the outputs must agree within `tolerance` of the largest magnitude.
void expect_same_as_builtin(const OpGraph& g, const std::string& what, float lo = -1.0f, float hi = 1.0f,
                            const std::vector<std::vector<int32_t>>& resize = {}, double tolerance = 1e-5) {
  SCOPED_TRACE(what);
  auto env = vulkan_env();
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), what + ".tflite");
  ASSERT_TRUE(model) << model.error();
  auto vi = Interpreter::create(env->env, model.value());
  ASSERT_TRUE(vi) << vi.error();
  auto bi = Interpreter::create(builtin_env(), model.value());
  ASSERT_TRUE(bi) << bi.error();
  Interpreter& v = *vi.value();
  Interpreter& b = *bi.value();
  for (size_t i = 0; i < v.nodes().size(); ++i) {
    const auto& refusals = v.refusals(i);
    EXPECT_EQ(v.placement(i).kind, "delegate") << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason);
  }
  for (size_t i = 0; i < resize.size(); ++i) {
    ASSERT_TRUE(v.resize_input(i, resize[i]));
    ASSERT_TRUE(b.resize_input(i, resize[i]));
  }
  ASSERT_TRUE(v.ensure_prepared());
  ASSERT_TRUE(b.ensure_prepared());
  for (int run = 0; run < 2; ++run) {  // the second run replays the same command buffer on new inputs
    for (size_t i = 0; i < v.input_count(); ++i) {
      const auto data = random_floats(v.input(i).bytes / 4, 17 + static_cast<uint32_t>(i + 7 * run), lo, hi);
      std::memcpy(v.input(i).data, data.data(), data.size());
      std::memcpy(b.input(i).data, data.data(), data.size());
    }
    Status sv = v.invoke();
    ASSERT_TRUE(sv) << sv.message();
    Status sb = b.invoke();
    ASSERT_TRUE(sb) << sb.message();
    EXPECT_TRUE(v.fallbacks().empty()) << fallbacks_text(v);
    for (size_t o = 0; o < v.output_count(); ++o) {
      ASSERT_EQ(v.output(o).shape, b.output(o).shape) << "output " << o;
      const double rel = relative_error(reinterpret_cast<const float*>(v.output(o).data),
                                        reinterpret_cast<const float*>(b.output(o).data), b.output(o).bytes / 4);
      EXPECT_LE(rel, tolerance) << what << " output " << o << " run " << run;
    }
  }
  EXPECT_EQ(env->validation_messages(), "");
}

// TFLite op codes used below.
enum : int32_t {
  kAdd = 0, kAveragePool2d = 1, kConcatenation = 2, kConv2d = 3, kDepthwiseConv2d = 4, kDepthToSpace = 5,
  kFullyConnected = 9, kLogistic = 14, kMaxPool2d = 17, kMul = 18, kRelu = 19, kReluN1To1 = 20, kRelu6 = 21,
  kReshape = 22, kResizeBilinear = 23, kSoftmax = 25, kTanh = 28, kPad = 34, kMean = 40, kSub = 41, kPrelu = 54,
  kPadV2 = 60, kHardSwish = 117,
};

OptionsFn conv_options(fb::Padding padding, int stride, int dilation, int activation) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                          fb::CreateConv2DOptions(fbb, padding, stride, stride, act(activation), dilation, dilation).Union());
  };
}

int32_t window_out(fb::Padding padding, int32_t in, int32_t kernel, int32_t stride, int32_t dilation) {
  const int32_t eff = (kernel - 1) * dilation + 1;
  return padding == fb::Padding_SAME ? (in + stride - 1) / stride : (in - eff) / stride + 1;
}

OpGraph conv_graph(fb::Padding padding, int stride, int dilation, int activation, bool bias, std::vector<int32_t> in_shape,
                   int32_t out_channels, int32_t kernel) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {out_channels, kernel, kernel, in_shape[3]}, 1);
  const int32_t b = bias ? random_weights(g, {out_channels}, 2) : -1;
  const int32_t out = g.output({in_shape[0], window_out(padding, in_shape[1], kernel, stride, dilation),
                                window_out(padding, in_shape[2], kernel, stride, dilation), out_channels});
  g.op(kConv2d, {in, f, b}, {out}, conv_options(padding, stride, dilation, activation));
  return g;
}

TEST(VulkanOps, Conv2d) {
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 3 /* RELU6 */, true, {1, 9, 11, 3}, 5, 3), "same, stride 2 on 9x11, 3 -> 5 channels, relu6");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 1, 1, 1 /* RELU */, false, {1, 9, 11, 3}, 5, 3), "valid, no bias, relu");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 1, 2, 0, true, {1, 9, 11, 3}, 5, 3), "same, dilation 2");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 2, 2, 2 /* RELU_N1_TO_1 */, true, {1, 9, 11, 3}, 5, 3), "valid, stride 2, dilation 2");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 1, 1, 0, true, {2, 1, 1, 7}, 10, 1), "1x1 spatial, 7 -> 10 channels, batch 2");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 1, 1, 1, true, {1, 6, 7, 20}, 18, 3), "20 -> 18 channels (tiles of 4 blocks, one short)");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 0, true, {1, 7, 5, 16}, 8, 5), "5x5 kernel, stride 2 on 7x5");
}

TEST(VulkanOps, Conv2dRebuildsForANewInputShape) {
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 0, true, {1, 9, 11, 3}, 5, 3), "conv resized", -1.0f, 1.0f, {{2, 14, 6, 3}});
}

OpGraph depthwise_graph(fb::Padding padding, int stride, int multiplier, std::vector<int32_t> in_shape, int activation = 1) {
  OpGraph g;
  const int32_t c = in_shape[3] * multiplier;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {1, 3, 3, c}, 3);
  const int32_t b = random_weights(g, {c}, 4);
  const int32_t out = g.output({in_shape[0], window_out(padding, in_shape[1], 3, stride, 1), window_out(padding, in_shape[2], 3, stride, 1), c});
  g.op(kDepthwiseConv2d, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                          fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, multiplier, act(activation)).Union());
  });
  return g;
}

TEST(VulkanOps, DepthwiseConv2d) {
  for (int multiplier : {1, 2}) {
    for (auto padding : {fb::Padding_SAME, fb::Padding_VALID}) {
      expect_same_as_builtin(depthwise_graph(padding, 2, multiplier, {1, 10, 9, 4}),
                             "multiplier " + std::to_string(multiplier) + (padding == fb::Padding_SAME ? " same" : " valid"));
    }
  }
  expect_same_as_builtin(depthwise_graph(fb::Padding_SAME, 1, 1, {1, 7, 8, 3}, 3), "3 channels, relu6");
  expect_same_as_builtin(depthwise_graph(fb::Padding_SAME, 2, 3, {2, 5, 7, 3}), "multiplier 3 on 3 channels, stride 2 on 5x7");
  expect_same_as_builtin(depthwise_graph(fb::Padding_SAME, 1, 1, {1, 1, 1, 6}), "1x1 spatial");
}

OptionsFn fc_options(int activation, bool keep_dims) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                          fb::CreateFullyConnectedOptions(fbb, act(activation), fb::FullyConnectedOptionsWeightsFormat_DEFAULT, keep_dims).Union());
  };
}

TEST(VulkanOps, FullyConnected) {
  {
    OpGraph g;  // keep_num_dims, no bias
    const int32_t in = g.input({2, 3, 8});
    const int32_t w = random_weights(g, {6, 8}, 5);
    const int32_t out = g.output({2, 3, 6});
    g.op(kFullyConnected, {in, w, -1}, {out}, fc_options(0, true));
    expect_same_as_builtin(g, "keep_num_dims");
  }
  {
    OpGraph g;  // rows of 16 across the input's last two dimensions: regrouped before the product
    const int32_t in = g.input({1, 2, 2, 8});
    const int32_t w = random_weights(g, {7, 16}, 6);
    const int32_t b = random_weights(g, {7}, 7);
    const int32_t out = g.output({2, 7});
    g.op(kFullyConnected, {in, w, b}, {out}, fc_options(1, false));
    expect_same_as_builtin(g, "flattened rows, relu");
  }
  {
    OpGraph g;  // one long row: the depth is split over the workgroup
    const int32_t in = g.input({1, 1, 1, 1153});
    const int32_t w = random_weights(g, {5, 1153}, 8);
    const int32_t b = random_weights(g, {5}, 9);
    const int32_t out = g.output({1, 5});
    g.op(kFullyConnected, {in, w, b}, {out}, fc_options(0, false));
    expect_same_as_builtin(g, "depth 1153");
  }
}

TEST(VulkanOps, BinaryWithBroadcastingAndActivations) {
  struct Case {
    int32_t code;
    OptionsFn options;
    const char* name;
  };
  const std::vector<Case> cases = {
      {kAdd, with_activation(fb::BuiltinOptions_AddOptions, add_options, 1), "ADD relu"},
      {kSub, with_activation(fb::BuiltinOptions_SubOptions, sub_options, 3), "SUB relu6"},
      {kMul, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 2), "MUL relu_n1_to_1"},
      {kMul, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0), "MUL"},
      {kPrelu, nullptr, "PRELU"},
  };
  for (const Case& c : cases) {
    {
      OpGraph g;  // [2,1,4,3] op [5,1,1]: both sides broadcast, b over the channels too
      const int32_t a = g.input({2, 1, 4, 3});
      const int32_t b = g.input({5, 1, 1});
      const int32_t out = g.output({2, 5, 4, 3});
      g.op(c.code, {a, b}, {out}, c.options);
      expect_same_as_builtin(g, std::string(c.name) + " broadcast both ways", -2.0f, 2.0f);
    }
    {
      OpGraph g;  // a constant operand of one value per channel
      const int32_t x = g.input({1, 3, 3, 5});
      const int32_t y = g.add({5}, floats({0.5f, -2.0f, 1.5f, 3.0f, -0.25f}));
      const int32_t z = g.output({1, 3, 3, 5});
      g.op(c.code, {x, y}, {z}, c.options);
      expect_same_as_builtin(g, std::string(c.name) + " constant operand", -2.0f, 2.0f);
    }
    {
      OpGraph g;  // same shapes, 6 channels
      const int32_t x = g.input({1, 2, 3, 6});
      const int32_t y = g.input({1, 2, 3, 6});
      const int32_t z = g.output({1, 2, 3, 6});
      g.op(c.code, {x, y}, {z}, c.options);
      expect_same_as_builtin(g, std::string(c.name) + " same shapes", -2.0f, 2.0f);
    }
  }
}

TEST(VulkanOps, Activations) {
  for (int32_t code : {kRelu, kRelu6, kReluN1To1, kLogistic, kTanh, kHardSwish}) {
    OpGraph g;
    const int32_t in = g.input({1, 3, 5, 7});
    const int32_t out = g.output({1, 3, 5, 7});
    g.op(code, {in}, {out});
    expect_same_as_builtin(g, "op " + std::to_string(code), -8.0f, 8.0f);
  }
  for (int32_t code : {kLogistic, kTanh}) {  // saturation: no inf / inf, no NaN
    OpGraph g;
    const int32_t in = g.input({2, 9});
    const int32_t out = g.output({2, 9});
    g.op(code, {in}, {out});
    expect_same_as_builtin(g, "op " + std::to_string(code) + " far from 0", -200.0f, 200.0f);
  }
}

OpGraph pool_graph(int32_t code, fb::Padding padding, int filter, int stride, std::vector<int32_t> in_shape, int activation = 0) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t out = g.output({in_shape[0], window_out(padding, in_shape[1], filter, stride, 1),
                                window_out(padding, in_shape[2], filter, stride, 1), in_shape[3]});
  g.op(code, {in}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                          fb::CreatePool2DOptions(fbb, padding, stride, stride, filter, filter, act(activation)).Union());
  });
  return g;
}

TEST(VulkanOps, Pooling) {
  for (int32_t code : {kAveragePool2d, kMaxPool2d}) {
    const std::string name = code == kMaxPool2d ? "max" : "average";
    expect_same_as_builtin(pool_graph(code, fb::Padding_SAME, 3, 2, {1, 7, 8, 3}), name + " same 3x3/2");
    expect_same_as_builtin(pool_graph(code, fb::Padding_VALID, 2, 2, {1, 7, 8, 3}), name + " valid 2x2/2");
    expect_same_as_builtin(pool_graph(code, fb::Padding_SAME, 3, 2, {2, 9, 9, 6}, 3), name + " same 3x3/2 on 9x9, relu6");
    expect_same_as_builtin(pool_graph(code, fb::Padding_VALID, 2, 2, {1, 2, 2, 5}), name + " to 1x1");
  }
}

TEST(VulkanOps, MeanOverSpatialAxes) {
  for (bool keep : {false, true}) {
    for (const std::vector<int32_t>& shape : {std::vector<int32_t>{2, 5, 6, 4}, std::vector<int32_t>{1, 7, 3, 5}, std::vector<int32_t>{1, 1, 1, 6}}) {
      OpGraph g;
      const int32_t in = g.input(shape);
      const int32_t axes = g.add({2}, ints({2, 1}), 2);
      const int32_t out = keep ? g.output({shape[0], 1, 1, shape[3]}) : g.output({shape[0], shape[3]});
      g.op(kMean, {in, axes}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, keep).Union());
      });
      expect_same_as_builtin(g, std::string(keep ? "keep_dims " : "") + std::to_string(shape[1]) + "x" + std::to_string(shape[2]));
    }
  }
}

TEST(VulkanOps, Softmax) {
  for (auto [shape, beta] : {std::pair{std::vector<int32_t>{6, 10}, 1.0f}, std::pair{std::vector<int32_t>{2, 3, 1001}, 0.5f},
                            std::pair{std::vector<int32_t>{1, 5}, 2.0f}}) {
    OpGraph g;
    const int32_t in = g.input(shape);
    const int32_t out = g.output(shape);
    g.op(kSoftmax, {in}, {out}, [beta = beta](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_SoftmaxOptions, fb::CreateSoftmaxOptions(fbb, beta).Union());
    });
    expect_same_as_builtin(g, "softmax of " + std::to_string(shape.back()), -5.0f, 5.0f);
  }
}

TEST(VulkanOps, Pad) {
  struct Case {
    std::vector<int32_t> in;
    std::initializer_list<int32_t> pads;
    const char* name;
  };
  for (const Case& c : {Case{{1, 3, 4, 2}, {0, 0, 1, 2, 0, 1, 0, 0}, "spatial"},
                        Case{{1, 2, 3, 4}, {0, 0, 0, 0, 0, 0, 0, 4}, "channels after, whole vec4s"},
                        Case{{1, 2, 3, 5}, {0, 0, 1, 0, 0, 0, 1, 2}, "channels before and after"},
                        Case{{3, 5}, {1, 0, 2, 3}, "rank 2"}}) {
    OpGraph g;
    const int32_t in = g.input(c.in);
    const int32_t pads = g.add({static_cast<int32_t>(c.in.size()), 2}, ints(c.pads), 2);
    std::vector<int32_t> out_shape = c.in;
    const std::vector<int32_t> p(c.pads);
    for (size_t i = 0; i < out_shape.size(); ++i) out_shape[i] += p[2 * i] + p[2 * i + 1];
    const int32_t out = g.output(out_shape);
    g.op(kPad, {in, pads}, {out});
    expect_same_as_builtin(g, std::string("pad ") + c.name);
  }
  OpGraph g;  // PADV2 with a value
  const int32_t in = g.input({1, 2, 2, 3});
  const int32_t pads = g.add({4, 2}, ints({0, 0, 1, 1, 0, 2, 0, 1}), 2);
  const int32_t value = g.add({}, floats({0.75f}));
  const int32_t out = g.output({1, 4, 4, 4});
  g.op(kPadV2, {in, pads, value}, {out});
  expect_same_as_builtin(g, "padv2");
}

TEST(VulkanOps, ReshapeAndConcatenation) {
  {
    OpGraph g;  // the last dimension changes (2 -> 4): a gather; then back to 3 columns
    const int32_t in = g.input({1, 3, 4, 2});
    const int32_t s1 = g.add({2}, ints({6, -1}), 2);
    const int32_t mid = g.add({6, 4});
    const int32_t s2 = g.add({2}, ints({8, 3}), 2);
    const int32_t out = g.output({8, 3});
    g.op(kReshape, {in, s1}, {mid});
    g.op(kReshape, {mid, s2}, {out});
    expect_same_as_builtin(g, "reshape changing the last dimension");
  }
  {
    OpGraph g;  // the same last dimension: a copy
    const int32_t in = g.input({1, 2, 2, 6});
    const int32_t s = g.add({3}, ints({1, 4, 6}), 2);
    const int32_t out = g.output({1, 4, 6});
    g.op(kReshape, {in, s}, {out});
    expect_same_as_builtin(g, "reshape keeping the last dimension");
  }
  auto concat = [](int axis) {
    return [axis](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_ConcatenationOptions, fb::CreateConcatenationOptions(fbb, axis).Union());
    };
  };
  {
    OpGraph g;  // channels 3 + 5 + 2: offsets inside vec4s
    const int32_t a = g.input({1, 2, 3, 3});
    const int32_t b = g.input({1, 2, 3, 5});
    const int32_t c = g.input({1, 2, 3, 2});
    const int32_t out = g.output({1, 2, 3, 10});
    g.op(kConcatenation, {a, b, c}, {out}, concat(-1));
    expect_same_as_builtin(g, "concat channels 3+5+2");
  }
  {
    OpGraph g;  // channels 4 + 8 + 3, one constant: whole vec4s, the last one with a tail
    const int32_t a = g.input({1, 2, 2, 4});
    const int32_t b = random_weights(g, {1, 2, 2, 8}, 21);
    const int32_t c = g.input({1, 2, 2, 3});
    const int32_t out = g.output({1, 2, 2, 15});
    g.op(kConcatenation, {a, b, c}, {out}, concat(3));
    expect_same_as_builtin(g, "concat channels 4+8+3 with a constant");
  }
  {
    OpGraph g;  // along the height
    const int32_t a = g.input({1, 2, 3, 5});
    const int32_t b = g.input({1, 4, 3, 5});
    const int32_t out = g.output({1, 6, 3, 5});
    g.op(kConcatenation, {a, b}, {out}, concat(1));
    expect_same_as_builtin(g, "concat height");
  }
  {
    OpGraph g;  // rank 3, along the middle axis (the device's width)
    const int32_t a = g.input({2, 3, 7});
    const int32_t b = g.input({2, 1, 7});
    const int32_t out = g.output({2, 4, 7});
    g.op(kConcatenation, {a, b}, {out}, concat(1));
    expect_same_as_builtin(g, "concat rank 3");
  }
}

TEST(VulkanOps, DepthToSpaceAndResizeBilinear) {
  for (auto [in_shape, block] : {std::pair{std::vector<int32_t>{1, 3, 4, 8}, 2}, std::pair{std::vector<int32_t>{2, 2, 3, 16}, 2},
                                 std::pair{std::vector<int32_t>{1, 2, 2, 27}, 3}}) {
    OpGraph g;
    const int32_t in = g.input(in_shape);
    const int32_t out = g.output({in_shape[0], in_shape[1] * block, in_shape[2] * block, in_shape[3] / (block * block)});
    g.op(kDepthToSpace, {in}, {out}, [block = block](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_DepthToSpaceOptions, fb::CreateDepthToSpaceOptions(fbb, block).Union());
    });
    expect_same_as_builtin(g, "depth to space, " + std::to_string(in_shape[3]) + " channels, block " + std::to_string(block));
  }
  for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    for (auto [in_shape, size] : {std::pair{std::vector<int32_t>{1, 5, 7, 3}, std::pair{9, 12}},
                                  std::pair{std::vector<int32_t>{2, 8, 8, 4}, std::pair{3, 5}}}) {
      OpGraph g;
      const int32_t in = g.input(in_shape);
      const int32_t sz = g.add({2}, ints({size.first, size.second}), 2);
      const int32_t out = g.output({in_shape[0], size.first, size.second, in_shape[3]});
      g.op(kResizeBilinear, {in, sz}, {out}, [align = align, half = half](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_ResizeBilinearOptions, fb::CreateResizeBilinearOptions(fbb, align, half).Union());
      }, 3);
      expect_same_as_builtin(g, std::string("resize bilinear to ") + std::to_string(size.first) + "x" + std::to_string(size.second) +
                                    (align ? " align_corners" : "") + (half ? " half_pixel_centers" : ""));
    }
  }
}

// A graph whose intermediate tensors die young: the arena reuses their memory (the partition's log line
// says how much), and the add reads the model input again after four other nodes.
TEST(VulkanOps, ChainReusesMemoryAndHasTwoOutputs) {
  OpGraph g;  // conv -> depthwise -> add(residual) -> mean -> fully connected; the add is also an output
  const int32_t in = g.input({1, 8, 8, 4});
  const int32_t f1 = random_weights(g, {4, 1, 1, 4}, 11);
  const int32_t b1 = random_weights(g, {4}, 12);
  const int32_t c1 = g.add({1, 8, 8, 4});
  const int32_t r1 = g.add({1, 8, 8, 4});
  const int32_t f2 = random_weights(g, {1, 3, 3, 4}, 13);
  const int32_t b2 = random_weights(g, {4}, 14);
  const int32_t c2 = g.add({1, 8, 8, 4});
  const int32_t r2 = g.add({1, 8, 8, 4});
  const int32_t sum = g.output({1, 8, 8, 4});
  const int32_t axes = g.add({2}, ints({1, 2}), 2);
  const int32_t pooled = g.add({1, 4});
  const int32_t w = random_weights(g, {3, 4}, 15);
  const int32_t out = g.output({1, 3});
  g.op(kConv2d, {in, f1, b1}, {c1}, conv_options(fb::Padding_SAME, 1, 1, 0));
  g.op(kRelu, {c1}, {r1});
  g.op(kDepthwiseConv2d, {r1, f2, b2}, {c2}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions, fb::CreateDepthwiseConv2DOptions(fbb, fb::Padding_SAME, 1, 1, 1).Union());
  });
  g.op(kHardSwish, {c2}, {r2});
  g.op(kAdd, {r2, in}, {sum}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
  g.op(kMean, {sum, axes}, {pooled}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, false).Union());
  });
  g.op(kFullyConnected, {pooled, w, -1}, {out}, fc_options(0, false));
  expect_same_as_builtin(g, "chain");

  auto env = vulkan_env();
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), "chain.tflite");
  ASSERT_TRUE(model) << model.error();
  auto vi = Interpreter::create(env->env, model.value());
  ASSERT_TRUE(vi) << vi.error();
  // "arena A KiB (B KiB without reuse)": 1 KiB tensors, at most three alive at once.
  const std::string log = env->log_text();
  const size_t at = log.find("arena ");
  ASSERT_NE(at, std::string::npos) << log;
  int arena = 0, unshared = 0;
  ASSERT_EQ(std::sscanf(log.c_str() + at, "arena %d KiB (%d KiB without reuse)", &arena, &unshared), 2) << log;
  EXPECT_LT(arena, unshared) << log;
}

// A RELU whose input nothing else reads runs inside the node before it; a RELU6 whose input another
// node also reads stays a dispatch of its own. 5 nodes: ADD -> RELU (folded), MUL, RELU6, ADD; with the
// two inputs packed (5 channels) and the output unpacked, 7 dispatches.
TEST(VulkanOps, StandaloneActivationsFoldIntoTheNodeBefore) {
  OpGraph g;
  const int32_t a = g.input({1, 4, 4, 5});
  const int32_t b = g.input({1, 4, 4, 5});
  const int32_t s = g.add({1, 4, 4, 5});
  const int32_t r = g.add({1, 4, 4, 5});
  const int32_t t = g.add({1, 4, 4, 5});
  const int32_t u = g.add({1, 4, 4, 5});
  const int32_t out = g.output({1, 4, 4, 5});
  g.op(kAdd, {a, b}, {s}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
  g.op(kRelu, {s}, {r});
  g.op(kMul, {r, a}, {t}, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0));
  g.op(kRelu6, {t}, {u});
  g.op(kAdd, {t, u}, {out}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
  expect_same_as_builtin(g, "folded activations", -4.0f, 4.0f);
  auto env = vulkan_env();
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), "fold.tflite");
  ASSERT_TRUE(model);
  ASSERT_TRUE(Interpreter::create(env->env, model.value()));
  EXPECT_TRUE(env->logged("partition 0: 5 nodes in 7 dispatches")) << env->log_text();
}

// ---- refusals ----------------------------------------------------------------------------------------

// The reason vulkan gave for node 0 of `g` (empty if it took it). `chain` and `dirs` add a delegate that
// runs what neither vulkan nor the builtin pack can (deleg-a: any float32 ADD, activation ignored).
std::string vulkan_refusal(const OpGraph& g, const std::string& chain = "vulkan", std::vector<std::string> dirs = {}) {
  auto env = vulkan_env(chain, "", std::move(dirs));
  if (!env) return "no environment";
  auto model = load_model_buffer(g.build(), "refusal.tflite");
  if (!model) return model.error();
  auto in = Interpreter::create(env->env, model.value());
  if (!in) return in.error();
  for (const Refusal& r : in.value()->refusals(0)) {
    if (r.plugin == "vulkan") return r.reason;
  }
  return "";
}

// Only nodes something else can run are shown here: a model whose node no plugin runs does not load.
TEST(VulkanRefusals, SayWhy) {
  {
    TempDir plugins;
    plugins.add_plugin("deleg_a");
    OpGraph g;
    const int32_t a = g.input({1, 4});
    const int32_t b = g.input({1, 4});
    const int32_t out = g.output({1, 4});
    g.op(kAdd, {a, b}, {out}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 4));
    EXPECT_EQ(vulkan_refusal(g, "vulkan, deleg-a", {plugins.path()}), "fused TANH activation not supported");
  }
  {
    OpGraph g;
    const int32_t in = g.input({1, 3, 3, 4});
    const int32_t axes = g.add({1}, ints({3}), 2);
    const int32_t out = g.output({1, 3, 3});
    g.op(kMean, {in, axes}, {out});
    EXPECT_EQ(vulkan_refusal(g), "MEAN only over the spatial axes (1, 2) of a rank-4 input");
  }
  {
    OpGraph g;  // the filter is an input of the model: weights are uploaded once, they must be constant
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t f = g.input({3, 1, 1, 2});
    const int32_t out = g.output({1, 4, 4, 3});
    g.op(kConv2d, {in, f, -1}, {out}, conv_options(fb::Padding_SAME, 1, 1, 0));
    EXPECT_EQ(vulkan_refusal(g), "non-constant filter");
  }
  {
    OpGraph g;
    const int32_t in = g.input({2, 3});
    const int32_t w = g.input({4, 3});
    const int32_t out = g.output({2, 4});
    g.op(kFullyConnected, {in, w, -1}, {out}, fc_options(0, false));
    EXPECT_EQ(vulkan_refusal(g), "non-constant weights");
  }
  {
    OpGraph g;
    const int32_t in = g.input({1, 2, 2, 2, 2});
    const int32_t out = g.output({1, 2, 2, 2, 2});
    g.op(kRelu, {in}, {out});
    EXPECT_EQ(vulkan_refusal(g), "output of rank 5 (at most 4)");
  }
}

// A tensor larger than one storage buffer binding may hold on this device is refused, naming the size.
TEST(VulkanRefusals, TensorsLargerThanTheDeviceBindsAreRefused) {
  int64_t range = 0;
  {
    vulkan::Gpu gpu({test_device(), false}, nullptr);
    range = gpu.limits().maxStorageBufferRange;
  }
  if (range > (int64_t{1} << 28)) GTEST_SKIP() << "the device binds " << range << " bytes: the test would need too much memory";
  // [1, H, 1024, 3]: four lanes of 4 bytes per pixel on the device, the first H with more than `range`.
  const int32_t h = static_cast<int32_t>(range / (1024 * 16) + 1);
  OpGraph g;
  const int32_t in = g.input({1, h, 1024, 3});
  const int32_t out = g.output({1, h, 1024, 3});
  g.op(kRelu, {in}, {out});
  EXPECT_EQ(vulkan_refusal(g), "an input of " + std::to_string(int64_t{h} * 1024 * 16) +
                                   " bytes on the device is larger than its storage buffer range (" + std::to_string(range) + ")");
}

// ---- devices -------------------------------------------------------------------------------------------

using vulkan::choose_device;
using vulkan::DeviceSummary;

TEST(VulkanDeviceChoice, PrefersDiscreteThenIntegratedThenAny) {
  // VkPhysicalDeviceType: 1 integrated, 2 discrete, 3 virtual, 4 CPU.
  const DeviceSummary cpu{"llvmpipe", 4, VK_API_VERSION_1_3, "", ""};
  const DeviceSummary igpu{"Intel Iris", 1, VK_API_VERSION_1_3, "", ""};
  const DeviceSummary dgpu{"Radeon RX", 2, VK_API_VERSION_1_2, "", ""};
  const DeviceSummary old{"Old GPU", 2, VK_API_VERSION_1_0, "", "Vulkan 1.0 only (1.1 needed)"};
  std::string why;
  const DeviceSummary vgpu{"virtio-gpu", 3, VK_API_VERSION_1_2, "", ""};
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "", &why), 2);
  EXPECT_EQ(choose_device({cpu, igpu}, "", &why), 1);
  EXPECT_EQ(choose_device({cpu, vgpu}, "", &why), 1);
  // A CPU implementation only when named: slower than a CPU delegate.
  EXPECT_EQ(choose_device({cpu}, "", &why), -1);
  EXPECT_NE(why.find("only a CPU implementation of Vulkan was found (0: llvmpipe"), std::string::npos) << why;
  EXPECT_NE(why.find("used only when the device option names it"), std::string::npos) << why;
  EXPECT_EQ(choose_device({old, cpu}, "", &why), -1);  // an unusable discrete GPU is passed over, lavapipe unnamed
  EXPECT_EQ(choose_device({old, cpu}, "llvm", &why), 1);
  EXPECT_EQ(choose_device({old, cpu}, "1", &why), 1);
  // The option: an index, or part of the name in any case.
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "0", &why), 0);
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "iris", &why), 1);
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "3", &why), -1);
  EXPECT_NE(why.find("no Vulkan device matches device = '3'"), std::string::npos) << why;
  EXPECT_EQ(choose_device({old, cpu}, "old", &why), -1);
  EXPECT_NE(why.find("Vulkan 1.0 only"), std::string::npos) << why;
  EXPECT_EQ(choose_device({}, "", &why), -1);
  EXPECT_EQ(why, "no Vulkan device found");
  EXPECT_EQ(choose_device({old}, "", &why), -1);
  EXPECT_NE(why.find("no usable Vulkan device"), std::string::npos) << why;
}

// A real device picked by the option, by index and by name; a name that matches nothing leaves the plugin
// loaded, refusing every node with the reason, and the model runs on the builtin pack.
TEST(VulkanDeviceChoice, OptionPicksTheDeviceOrEveryNodeIsRefused) {
  const vulkan::DeviceListing listing = vulkan::list_devices();
  ASSERT_FALSE(listing.devices.empty()) << listing.error;
  const std::string name = listing.devices[0].name;
  OpGraph g;
  const int32_t in = g.input({1, 4});
  const int32_t out = g.output({1, 4});
  g.op(kRelu, {in}, {out});
  for (const std::string& option : {std::string("0"), name.substr(0, 4)}) {
    auto env = vulkan_env("vulkan", "device = " + option + "\n");
    ASSERT_TRUE(env);
    EXPECT_TRUE(env->logged("running on device 0: " + name)) << env->log_text();
  }
  auto env = vulkan_env("vulkan", "device = no-such-device\n", {}, false);
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), "relu.tflite");
  ASSERT_TRUE(model);
  auto in_or = Interpreter::create(env->env, model.value());
  ASSERT_TRUE(in_or) << in_or.error();
  Interpreter& interp = *in_or.value();
  EXPECT_EQ(interp.placement(0).plugin, "builtin");
  ASSERT_FALSE(interp.refusals(0).empty());
  EXPECT_NE(interp.refusals(0)[0].reason.find("no Vulkan device matches device = 'no-such-device'"), std::string::npos)
      << interp.refusals(0)[0].reason;
  const float values[4] = {-1.0f, 2.0f, -3.0f, 4.0f};
  std::memcpy(interp.input(0).data, values, sizeof values);
  ASSERT_TRUE(interp.invoke());
  const float* got = reinterpret_cast<const float*>(interp.output(0).data);
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 2.0f);
}

// The messenger really reports: an invalid call (a buffer with no usage bits) is one validation error.
TEST(VulkanValidation, TheMessengerCountsWhatTheLayerReports) {
  std::vector<std::string> lines;
  vulkan::Gpu gpu({test_device(), true}, [&](int, const std::string& m) { lines.push_back(m); });
  EXPECT_EQ(gpu.validation_messages(), 0u);
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = 64;
  info.usage = 0;  // VUID-VkBufferCreateInfo-usage-requiredbitmask
  VkBuffer buffer = VK_NULL_HANDLE;
  if (vkCreateBuffer(gpu.device(), &info, nullptr, &buffer) == VK_SUCCESS) vkDestroyBuffer(gpu.device(), buffer, nullptr);
  EXPECT_GE(gpu.validation_messages(), 1u);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("validation error"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("usage"), std::string::npos) << lines[0];
}

// Synchronisation validation is on: two writes to one buffer without a barrier between them are a
// hazard the layer reports (so the delegate's barriers are checked by every test, not only by results).
TEST(VulkanValidation, AMissingBarrierIsReported) {
  std::vector<std::string> lines;
  vulkan::Gpu gpu({test_device(), true}, [&](int, const std::string& m) { lines.push_back(m); });
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = 256;
  info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateBuffer(gpu.device(), &info, nullptr, &buffer), VK_SUCCESS);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(gpu.device(), buffer, &req);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = gpu.memory_type(req.memoryTypeBits, 0, 0);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  ASSERT_EQ(vkAllocateMemory(gpu.device(), &alloc, nullptr, &memory), VK_SUCCESS);
  ASSERT_EQ(vkBindBufferMemory(gpu.device(), buffer, memory, 0), VK_SUCCESS);
  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.queueFamilyIndex = gpu.queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateCommandPool(gpu.device(), &pool_info, nullptr, &pool), VK_SUCCESS);
  VkCommandBufferAllocateInfo cb_info{};
  cb_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cb_info.commandPool = pool;
  cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cb_info.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  ASSERT_EQ(vkAllocateCommandBuffers(gpu.device(), &cb_info, &cb), VK_SUCCESS);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  ASSERT_EQ(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
  vkCmdFillBuffer(cb, buffer, 0, 256, 1u);
  EXPECT_EQ(gpu.validation_messages(), 0u) << (lines.empty() ? "" : lines[0]);
  vkCmdFillBuffer(cb, buffer, 0, 256, 2u);  // write after write, no barrier
  EXPECT_GE(gpu.validation_messages(), 1u);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("SYNC-HAZARD-WRITE-AFTER-WRITE"), std::string::npos) << lines[0];
  vkEndCommandBuffer(cb);
  vkDestroyCommandPool(gpu.device(), pool, nullptr);
  vkDestroyBuffer(gpu.device(), buffer, nullptr);
  vkFreeMemory(gpu.device(), memory, nullptr);
}

// ---- memory planning ----------------------------------------------------------------------------------

TEST(VulkanMemoryPlan, TensorsShareMemoryOnlyWhenTheirLifetimesDoNotOverlap) {
  // a [0,1] 100 bytes, b [1,2] 60, c [2,3] 100, d [3,3] 40, alignment 16.
  // Largest first: a at 0 (ends 100); c overlaps b only in time, and b is not placed yet: c at 0.
  // b (60) overlaps a [0,100) and c [0,100): at 112 (100 aligned). d overlaps c [0,100): at 112.
  const vulkan::MemoryPlan plan = vulkan::plan_memory({{100, 0, 1}, {60, 1, 2}, {100, 2, 3}, {40, 3, 3}}, 16);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 112, 0, 112}));
  EXPECT_EQ(plan.total, 176);  // 112 + 60 = 172, aligned
}

// ---- the shader cache -----------------------------------------------------------------------------------

size_t spv_files(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.path().extension() == ".spv";
  return n;
}

struct Counts {
  int compiled = -1, cached = -1;
};

Counts shader_counts(const VulkanEnv& env) {
  const std::string log = env.log_text();
  const size_t at = log.find("shaders: ");
  Counts c;
  if (at == std::string::npos || std::sscanf(log.c_str() + at, "shaders: %d compiled, %d from the disk cache", &c.compiled, &c.cached) != 2) {
    return {};
  }
  return c;
}

// Runs the small conv model once in a fresh environment with `options`; returns what the log says.
Counts run_conv(const std::string& options, std::string* fallbacks = nullptr) {
  auto env = vulkan_env("vulkan", options);
  if (!env) return {};
  auto model = load_model_buffer(conv_graph(fb::Padding_SAME, 2, 1, 3, true, {1, 9, 11, 3}, 5, 3).build(), "conv.tflite");
  auto vi = Interpreter::create(env->env, model.value());
  EXPECT_TRUE(vi) << vi.error();
  if (!vi) return {};
  Interpreter& v = *vi.value();
  const auto data = random_floats(v.input(0).bytes / 4, 3);
  std::memcpy(v.input(0).data, data.data(), data.size());
  Status s = v.invoke();
  EXPECT_TRUE(s) << s.message();
  if (fallbacks) *fallbacks = fallbacks_text(v);
  EXPECT_EQ(env->validation_messages(), "");
  return shader_counts(*env);
}

TEST(VulkanShaderCache, TheSecondStartCompilesNothing) {
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\n";
  const Counts first = run_conv(options);
  EXPECT_GT(first.compiled, 0);
  EXPECT_EQ(first.cached, 0);
  const size_t files = spv_files(cache.path());
  EXPECT_EQ(files, static_cast<size_t>(first.compiled));
  const Counts second = run_conv(options);
  EXPECT_EQ(second.compiled, 0);
  EXPECT_EQ(second.cached, first.compiled);
  // A damaged file reads as a miss: that shader is compiled again and the file rewritten.
  for (const auto& e : fs::directory_iterator(cache.path())) {
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "BATONSPV garbage";
    break;
  }
  const Counts third = run_conv(options);
  EXPECT_EQ(third.compiled, 1);
  EXPECT_EQ(third.cached, first.compiled - 1);
  EXPECT_EQ(run_conv(options).compiled, 0);
}

TEST(VulkanShaderCache, CanBeTurnedOff) {
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\nshader-cache = false\n";
  EXPECT_GT(run_conv(options).compiled, 0);
  EXPECT_GT(run_conv(options).compiled, 0);
  EXPECT_EQ(spv_files(cache.path()), 0u);
}

// ---- failures come back as statuses ---------------------------------------------------------------------

TEST(VulkanFailures, AShaderThatDoesNotCompileFallsBackNamingTheShader) {
  TempDir shaders;
  shaders.write("conv2d.comp", "void main() { this is not GLSL; }\n");
  std::string fallbacks;
  run_conv("shader-cache = false\nshader-dir = " + shaders.path() + "\n", &fallbacks);
  EXPECT_NE(fallbacks.find("vulkan lost 1 nodes at init: shader conv2d did not compile: ERROR: 0:1:"), std::string::npos)
      << fallbacks;
}

// BATON_VULKAN_FAIL makes the named Vulkan call fail as a driver would (vk_error.h).
class ScopedFailure {
 public:
  explicit ScopedFailure(const char* call) { setenv("BATON_VULKAN_FAIL", call, 1); }
  ~ScopedFailure() { unsetenv("BATON_VULKAN_FAIL"); }
};

TEST(VulkanFailures, AFailingVulkanCallFallsBackNamingTheResult) {
  OpGraph g = conv_graph(fb::Padding_SAME, 2, 1, 3, true, {1, 9, 11, 3}, 5, 3);
  struct Case {
    const char* call;
    bool at_invoke;        // fail the call during the first invoke, else while the partition is built
    const char* expected;  // in the fallback's text
  };
  for (const Case& c : {Case{"vkAllocateMemory", false, "at init: vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                        // The first pipeline made is the pack shader of the 3-channel input.
                        Case{"vkCreateComputePipelines", false,
                             "at init: vkCreateComputePipelines (shader pack) failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                        Case{"vkQueueSubmit", false, "at init: vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                        Case{"vkQueueSubmit", true, "at invoke: vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"}}) {
    SCOPED_TRACE(c.expected);
    auto env = vulkan_env();
    ASSERT_TRUE(env);
    auto model = load_model_buffer(g.build(), "conv.tflite");
    ASSERT_TRUE(model);
    auto bi = Interpreter::create(builtin_env(), model.value());
    ASSERT_TRUE(bi);
    std::unique_ptr<Interpreter> v;
    {
      std::unique_ptr<ScopedFailure> failure;
      if (!c.at_invoke) failure = std::make_unique<ScopedFailure>(c.call);
      auto vi = Interpreter::create(env->env, model.value());
      ASSERT_TRUE(vi) << vi.error();
      v = std::move(vi.value());
    }
    EXPECT_EQ(v->placement(0).plugin, c.at_invoke ? "vulkan" : "builtin");
    Interpreter& b = *bi.value();
    const auto data = random_floats(v->input(0).bytes / 4, 5);
    std::memcpy(v->input(0).data, data.data(), data.size());
    std::memcpy(b.input(0).data, data.data(), data.size());
    {
      std::unique_ptr<ScopedFailure> failure;
      if (c.at_invoke) failure = std::make_unique<ScopedFailure>(c.call);
      Status s = v->invoke();
      ASSERT_TRUE(s) << s.message();
    }
    ASSERT_TRUE(b.invoke());
    EXPECT_NE(fallbacks_text(*v).find(c.expected), std::string::npos) << fallbacks_text(*v);
    EXPECT_EQ(v->placement(0).plugin, "builtin");
    EXPECT_EQ(relative_error(reinterpret_cast<const float*>(v->output(0).data), reinterpret_cast<const float*>(b.output(0).data),
                             b.output(0).bytes / 4),
              0.0);
    EXPECT_EQ(env->validation_messages(), "");
  }
}

// ---- the command line -----------------------------------------------------------------------------------

struct Result {
  int code = -1;
  std::string out;
};

Result baton(const std::string& env, const std::string& args) {
  Result r;
  const std::string cmd = "XDG_STATE_HOME=" + test_state_dir() + " XDG_CACHE_HOME=" + shared_cache_dir() + " " + env + " " +
                          std::string(BATON_EXE) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class VulkanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(work_.file("relu.tflite"), std::ios::binary).write(reinterpret_cast<const char*>(model_.data()),
                                                                       static_cast<std::streamsize>(model_.size()));
    work_.write("empty.conf", "# nothing\n");
    common_ = " --config " + work_.file("empty.conf") + " --plugin-dir " + VULKAN_PLUGIN_DIR + " --plugin-dir " + BUILTIN_PACK_DIR;
  }
  std::vector<uint8_t> model_ = [] {
    OpGraph g;
    const int32_t in = g.input({1, 6});
    const int32_t out = g.output({1, 6});
    g.op(kRelu6, {in}, {out});
    return g.build();
  }();
  TempDir work_;
  std::string common_;
};

// `baton plugins` shows the devices the probe found, each with its kind, and the default chain with the
// reason for each delegate: on a machine whose only Vulkan device is a CPU implementation, vulkan is
// left out and xnnpack is the chain.
TEST_F(VulkanCli, PluginsListsTheDevicesAndTheDefaultChain) {
  const vulkan::DeviceListing listing = vulkan::list_devices();
  ASSERT_FALSE(listing.devices.empty()) << listing.error;
  const bool only_cpu = std::all_of(listing.devices.begin(), listing.devices.end(),
                                    [](const DeviceSummary& d) { return d.type == VK_PHYSICAL_DEVICE_TYPE_CPU; });
  Result r = baton("", "plugins" + common_ + " --plugin-dir " + XNNPACK_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(std::string(only_cpu ? "emulated: " : "gpu: ") + listing.devices[0].name), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cpu: "), std::string::npos) << r.out;  // xnnpack's
  if (only_cpu) {
    // The build tree's cpu delegate (preference 10) goes before xnnpack.
    EXPECT_NE(r.out.find("delegate chain: cpu xnnpack\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1. cpu: best device cpu"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2. xnnpack: best device cpu"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("vulkan: left out: its only devices are emulated (" + listing.devices[0].name), std::string::npos)
        << r.out;
  } else {
    EXPECT_NE(r.out.find("delegate chain: vulkan cpu xnnpack\n"), std::string::npos) << r.out;
  }
  // Named, it is in the chain and takes the node (with its device named).
  work_.write("lavapipe.conf", "[plugin.vulkan]\ndevice = 0\n");
  Result plan = baton("", "plan " + work_.file("relu.tflite") + " --delegate vulkan --config " + work_.file("lavapipe.conf") +
                              " --plugin-dir " + VULKAN_PLUGIN_DIR + " --plugin-dir " + BUILTIN_PACK_DIR);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("RELU6 v1                     vulkan (partition 0)"), std::string::npos) << plan.out;
}

// Unnamed, lavapipe is not used even when vulkan is named in the chain: every node is refused with the
// reason and runs on the next link.
TEST_F(VulkanCli, ACpuImplementationUnnamedTakesNothing) {
  const vulkan::DeviceListing listing = vulkan::list_devices();
  if (std::any_of(listing.devices.begin(), listing.devices.end(),
                  [](const DeviceSummary& d) { return d.type != VK_PHYSICAL_DEVICE_TYPE_CPU; })) {
    GTEST_SKIP() << "this machine has a Vulkan device that is not a CPU implementation";
  }
  Result plan = baton("", "plan " + work_.file("relu.tflite") + " --delegate vulkan" + common_);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("vulkan refused: only a CPU implementation of Vulkan was found"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("builtin"), std::string::npos) << plan.out;
}

// No Vulkan driver: the plugin loads, says so, refuses every node with that reason, and the model runs.
TEST_F(VulkanCli, NoDriverRefusesEveryNodeAndTheModelRuns) {
  const std::string no_driver = "VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json";
  Result p = baton(no_driver, "plugins" + common_);
  EXPECT_EQ(p.code, 0) << p.out;
  EXPECT_NE(p.out.find("devices: device probe failed: no Vulkan driver"), std::string::npos) << p.out;
  Result plan = baton(no_driver, "plan " + work_.file("relu.tflite") + " --delegate vulkan" + common_);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("vulkan refused: no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)"), std::string::npos)
      << plan.out;
  Result run = baton(no_driver, "run " + work_.file("relu.tflite") + " --delegate vulkan --output-dir " + work_.path() + common_);
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_TRUE(fs::exists(work_.file("out_0.npy")));
  // With a delegate after it, that one takes the node.
  Result next = baton(no_driver, "plan " + work_.file("relu.tflite") + " --delegate vulkan --delegate xnnpack" + common_ +
                                     " --plugin-dir " + XNNPACK_PLUGIN_DIR);
  EXPECT_EQ(next.code, 0) << next.out;
  EXPECT_NE(next.out.find("RELU6 v1                     xnnpack (partition 0)"), std::string::npos) << next.out;
}

// Validation asked for where the layer is not installed: the same, with the package to install.
TEST_F(VulkanCli, ValidationWithoutTheLayerIsAReason) {
  work_.write("validate.conf", "[plugin.vulkan]\nvalidation = true\ndevice = " + test_device() + "\n");
  Result plan = baton("VK_LAYER_PATH=/nonexistent", "plan " + work_.file("relu.tflite") + " --delegate vulkan --config " +
                                                        work_.file("validate.conf") + " --plugin-dir " + VULKAN_PLUGIN_DIR +
                                                        " --plugin-dir " + BUILTIN_PACK_DIR);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("vulkan refused: validation was asked for but VK_LAYER_KHRONOS_validation is not installed "
                          "(Debian: vulkan-validationlayers)"),
            std::string::npos)
      << plan.out;
}

}  // namespace
}  // namespace baton::test
