// What the Vulkan delegate's op suites (vulkan_ops_test.cc, vulkan_data_ops_test.cc) share: small graphs
// run through vulkan and through the builtin pack alone on the same random inputs and compared, in both
// storage precisions, with the validation layer on.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_support.h"

namespace baton::test {

// ---- small graphs against the builtin pack ---------------------------------------------------------------

// Interpreters of `g` in vulkan's environment and in the builtin pack's; null where one could not be made
// (a test failure already).
struct GraphRun {
  std::unique_ptr<Interpreter> vulkan, builtin;
};
inline GraphRun open_graph(const VulkanEnv& env, const OpGraph& g, const std::string& name) {
  GraphRun r;
  auto model = load_model_buffer(g.build(), name + ".tflite");
  EXPECT_TRUE(model) << model.error();
  if (!model) return r;
  auto vi = Interpreter::create(env.env, model.value());
  EXPECT_TRUE(vi) << vi.error();
  auto bi = Interpreter::create(builtin_env(), model.value());
  EXPECT_TRUE(bi) << bi.error();
  if (vi && bi) r = {std::move(vi.value()), std::move(bi.value())};
  return r;
}

// Every node of `v` in a delegate partition; a node that is not, with the last refusal's reason.
inline void expect_every_node_delegated(const Interpreter& v) {
  for (size_t i = 0; i < v.nodes().size(); ++i) {
    const auto& refusals = v.refusals(i);
    EXPECT_EQ(v.placement(i).kind, "delegate") << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason());
  }
}

// One vulkan environment per precision (`fp16` false, true), shared by the cases of this process: each
// case gets its own interpreters (and partitions), not its own Vulkan instance and device.
inline const std::unique_ptr<VulkanEnv>& shared_vulkan_env(bool f16) {
  static std::unique_ptr<VulkanEnv> envs[2];
  auto& env = envs[f16];
  if (!env) env = vulkan_env("vulkan", f16 ? "fp16 = true\n" : "");
  return env;
}

// The tolerance of an op in float16 storage (the `fp16` option), relative to the output's largest magnitude:
// the inputs, weights and output each rounded to 11 significant bits (4.9e-4 apart), the products added in
// float32.
constexpr double kFloat16OpTolerance = 4e-3;

// Runs `g` through vulkan and through builtin alone on the same random inputs in [lo, hi]; every node
// must go to vulkan and the outputs must agree within `tolerance` of the largest magnitude. Twice: with
// float32 storage, then (unless `float16` is false) with float16 storage within kFloat16OpTolerance (or
// `tolerance` when larger).
inline void expect_same_as_builtin(const OpGraph& g, const std::string& what, float lo = -1.0f, float hi = 1.0f,
                            const std::vector<std::vector<int32_t>>& resize = {}, double tolerance = 1e-5,
                            bool float16 = true) {
  for (const bool f16 : {false, true}) {
    if (f16 && !float16) break;
    SCOPED_TRACE(what + (f16 ? " (float16 storage)" : " (float32)"));
    const auto& env = shared_vulkan_env(f16);
    ASSERT_TRUE(env);
    ASSERT_EQ(env->logged("; float16 storage"), f16);
    const size_t log_mark = env->log->lines.size();
    const double bound = f16 ? std::max(tolerance, kFloat16OpTolerance) : tolerance;
    const GraphRun opened = open_graph(*env, g, what);
    ASSERT_TRUE(opened.vulkan && opened.builtin);
    Interpreter& v = *opened.vulkan;
    Interpreter& b = *opened.builtin;
    expect_every_node_delegated(v);
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
        EXPECT_LE(rel, bound) << what << " output " << o << " run " << run;
      }
    }
    EXPECT_EQ(env->validation_messages(log_mark), "");
  }
}

// FULLY_CONNECTED's options.
inline OptionsFn fc_options(int activation, bool keep_dims) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                          fb::CreateFullyConnectedOptions(fbb, act(activation), fb::FullyConnectedOptionsWeightsFormat_DEFAULT, keep_dims).Union());
  };
}

}  // namespace baton::test
