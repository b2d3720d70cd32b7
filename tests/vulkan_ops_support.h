// What the Vulkan delegate's op suites (vulkan_ops_test.cc, vulkan_data_ops_test.cc, vulkan_index_ops_test.cc,
// vulkan_int_ops_test.cc) share: small graphs run through vulkan and through the builtin pack alone on the
// same inputs and compared, in both storage precisions, with the validation layer on.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
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

// ---- graphs with int32 tensors against the builtin pack -------------------------------------------------

inline std::vector<uint8_t> int_bytes(const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Writes input `i` of an interpreter (the same values for vulkan and the builtin pack).
using Feed = std::function<void(size_t i, Tensor& t)>;

inline std::vector<int32_t> as_ints(const Tensor& t) {
  std::vector<int32_t> v(t.bytes / 4);
  std::memcpy(v.data(), t.data, t.bytes);
  return v;
}

// Runs `g` through vulkan (every node delegated, in one partition) and through the builtin pack on what
// `feed` writes, in float32 and float16 storage. Float outputs agree within `tolerance` (float32) or
// kFloat16OpTolerance (float16) of the largest magnitude; int32 outputs are equal, or within `int_slack`
// in float16 storage (a float rounded to 11 bits before it is truncated to an int).
inline void expect_like_builtin(const OpGraph& g, const std::string& what, const Feed& feed, double tolerance = 0.0,
                         int int_slack = 0) {
  for (const bool f16 : {false, true}) {
    SCOPED_TRACE(what + (f16 ? " (float16 storage)" : " (float32)"));
    const auto& env = shared_vulkan_env(f16);
    ASSERT_TRUE(env);
    const size_t log_mark = env->log->lines.size();
    const GraphRun opened = open_graph(*env, g, what);
    ASSERT_TRUE(opened.vulkan && opened.builtin);
    Interpreter& v = *opened.vulkan;
    Interpreter& b = *opened.builtin;
    expect_every_node_delegated(v);
    ASSERT_TRUE(v.ensure_prepared());
    ASSERT_TRUE(b.ensure_prepared());
    for (size_t i = 0; i < v.input_count(); ++i) {
      feed(i, v.input(i));
      feed(i, b.input(i));
    }
    const Status sv = v.invoke();
    ASSERT_TRUE(sv) << sv.message();
    const Status sb = b.invoke();
    ASSERT_TRUE(sb) << sb.message();
    EXPECT_TRUE(v.fallbacks().empty()) << fallbacks_text(v);
    for (size_t o = 0; o < v.output_count(); ++o) {
      const Tensor& got = v.output(o);
      const Tensor& want = b.output(o);
      ASSERT_EQ(got.shape, want.shape) << "output " << o;
      ASSERT_EQ(got.type, want.type) << "output " << o;
      if (want.type == BATON_TYPE_INT32) {
        const std::vector<int32_t> gi = as_ints(got), wi = as_ints(want);
        int worst = 0;
        for (size_t k = 0; k < wi.size(); ++k) worst = std::max(worst, std::abs(gi[k] - wi[k]));
        EXPECT_LE(worst, f16 ? int_slack : 0) << "output " << o;
      } else {
        const double rel = relative_error(reinterpret_cast<const float*>(got.data), reinterpret_cast<const float*>(want.data),
                                          want.bytes / 4);
        EXPECT_LE(rel, f16 ? std::max(tolerance, kFloat16OpTolerance) : tolerance) << "output " << o;
      }
    }
    EXPECT_EQ(env->validation_messages(log_mark), "");
  }
}

// After a good first run (a first run that fails hands the partition to the builtin pack), int `k` of
// input `input` set to `bad` fails the run with `error`, and the next run with `feed`'s values works.
inline void expect_bad_index_fails(const OpGraph& g, const std::string& what, const Feed& feed, size_t input, size_t k,
                            int32_t bad, const std::string& error) {
  const auto& env = shared_vulkan_env(false);
  ASSERT_TRUE(env);
  const GraphRun opened = open_graph(*env, g, what);
  ASSERT_TRUE(opened.vulkan);
  Interpreter& v = *opened.vulkan;
  ASSERT_EQ(v.placement(0).kind, "delegate") << (v.refusals(0).empty() ? "" : v.refusals(0).back().reason());
  ASSERT_TRUE(v.ensure_prepared());
  for (size_t i = 0; i < v.input_count(); ++i) feed(i, v.input(i));
  ASSERT_TRUE(v.invoke());
  std::memcpy(v.input(input).data + 4 * k, &bad, 4);
  const Status s = v.invoke();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(error), std::string::npos) << s.message();
  feed(input, v.input(input));
  const Status again = v.invoke();
  EXPECT_TRUE(again) << again.message();
}

inline void write_ints(Tensor& t, const std::function<int32_t(size_t)>& value) {
  for (size_t k = 0; k < t.bytes / 4; ++k) {
    const int32_t v = value(k);
    std::memcpy(t.data + 4 * k, &v, 4);
  }
}

inline void write_floats(Tensor& t, const std::function<float(size_t)>& value) {
  for (size_t k = 0; k < t.bytes / 4; ++k) {
    const float v = value(k);
    std::memcpy(t.data + 4 * k, &v, 4);
  }
}

inline int32_t int_output(OpGraph& g, std::vector<int32_t> shape) {
  g.outputs.push_back(g.add(std::move(shape), {}, 2));
  return g.outputs.back();
}

// FULLY_CONNECTED's options.
inline OptionsFn fc_options(int activation, bool keep_dims) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                          fb::CreateFullyConnectedOptions(fbb, act(activation), fb::FullyConnectedOptionsWeightsFormat_DEFAULT, keep_dims).Union());
  };
}

}  // namespace baton::test
