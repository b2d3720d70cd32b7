// What the Vulkan delegate refuses, and the reason `baton plan` shows for each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu.h"
#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_ops_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

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
    if (r.plugin == "vulkan") return r.reason();
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
    g.op(BATON_OP_ADD, {a, b}, {out}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 4));
    EXPECT_EQ(vulkan_refusal(g, "vulkan, deleg-a", {plugins.path()}), "fused TANH activation not supported");
  }
  {
    OpGraph g;  // TFLite's converter's default for ARG_MAX: an int64 output
    const int32_t in = g.input({2, 3, 4});
    const int32_t axis = g.add({1}, ints({2}), 2);
    g.outputs.push_back(g.add({2, 3}, {}, 4));
    g.op(BATON_OP_ARG_MAX, {in, axis}, {g.outputs.back()}, [](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_ArgMaxOptions, fb::CreateArgMaxOptions(fbb, fb::TensorType_INT64).Union());
    });
    EXPECT_EQ(vulkan_refusal(g), "INT64 output (int32 only)");
  }
  {
    OpGraph g;
    const int32_t a = g.input({2, 3}, 2);
    const int32_t b = g.input({2, 3}, 2);
    g.outputs.push_back(g.add({2, 3}, {}, 2));
    g.op(BATON_OP_POW, {a, b}, {g.outputs.back()});
    EXPECT_EQ(vulkan_refusal(g), "int32 inputs (float32 only)");
  }
  {
    OpGraph g;  // the filter is an input of the model: weights are uploaded once, they must be constant
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t f = g.input({3, 1, 1, 2});
    const int32_t out = g.output({1, 4, 4, 3});
    g.op(BATON_OP_CONV_2D, {in, f, -1}, {out}, conv_options(fb::Padding_SAME, 1, 1, 0));
    EXPECT_EQ(vulkan_refusal(g), "non-constant filter");
  }
  {
    OpGraph g;
    const int32_t in = g.input({2, 3});
    const int32_t w = g.input({4, 3});
    const int32_t out = g.output({2, 4});
    g.op(BATON_OP_FULLY_CONNECTED, {in, w, -1}, {out}, fc_options(0, false));
    EXPECT_EQ(vulkan_refusal(g), "non-constant weights");
  }
  {
    OpGraph g;
    const int32_t in = g.input({1, 2, 2, 2, 2});
    g.outputs.push_back(g.add({1, 2, 2, 2, 2}, {}, 2));
    g.op(BATON_OP_CAST, {in}, {g.outputs.back()});  // rank 5 (first dimension 1) goes to the elementwise and data ops only
    EXPECT_EQ(vulkan_refusal(g), "input 0 of rank 5 (at most 4)");
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
  g.op(BATON_OP_RELU, {in}, {out});
  EXPECT_EQ(vulkan_refusal(g), "an input of " + std::to_string(int64_t{h} * 1024 * 16) +
                                   " bytes on the device is larger than its storage buffer range (" + std::to_string(range) + ")");
}

}  // namespace
}  // namespace baton::test
