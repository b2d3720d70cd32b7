// What the Vulkan delegate's suites (vulkan_test.cc, vulkan_real_models_test.cc, the op suites)
// share: an environment with the vulkan delegate (validation on, on the test device, shaders in a cache
// the process shares) and the builtin pack, whose log they read; the builtin pack alone; the TFLite op
// codes they build with, and a convolution graph.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "baton/tflite_ops.h"
#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {

// Compiled shaders shared by the tests of this process (the cache tests use their own folders).
inline const std::string& shared_cache_dir() {
  static TempDir dir;
  return dir.path();
}

struct VulkanEnv {
  TempDir conf;
  std::shared_ptr<Captured> log = std::make_shared<Captured>();
  std::shared_ptr<Environment> env;

  // The validation layer's reports from log line `from` on, which fail every test that looks.
  std::string validation_messages(size_t from = 0) const {
    std::string s;
    for (size_t i = from; i < log->lines.size(); ++i) {
      if (log->lines[i].find("vulkan: validation") != std::string::npos) s += log->lines[i] + "\n";
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
inline std::string test_device() { return "0"; }

// An environment with the vulkan delegate (validation on) and the builtin pack, plus `dirs`.
// `device`: the plugin must find its device (then the log says it runs with validation).
inline std::unique_ptr<VulkanEnv> vulkan_env(const std::string& delegates = "vulkan", const std::string& options = "",
                                             std::vector<std::string> dirs = {}, bool device = true) {
  auto e = std::make_unique<VulkanEnv>();
  const bool own_cache = options.find("cache-dir") != std::string::npos || options.find("shader-cache") != std::string::npos;
  // Lavapipe, a CPU implementation, is used only when the device option names it.
  const bool own_device = options.find("device =") != std::string::npos;
  // float32 unless the test asks about float16: the suites compare with float32 references at float32's
  // tolerance.
  const bool own_precision = options.find("fp16 =") != std::string::npos;
  e->conf.write("baton.conf", "delegates = " + delegates + "\n[plugin.vulkan]\nvalidation = true\n" +
                                  (own_cache ? "" : "cache-dir = " + shared_cache_dir() + "\n") +
                                  (own_device ? "" : "device = " + test_device() + "\n") +
                                  (own_precision ? "" : "fp16 = false\n") + options);
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

inline std::shared_ptr<Environment> builtin_env() {
  static std::shared_ptr<Environment> env = [] {
#ifdef MEDIAPIPE_PACK_DIR
    auto b = isolated_environment({BUILTIN_PACK_DIR, MEDIAPIPE_PACK_DIR});  // MediaPipe's custom ops too
#else
    auto b = isolated_environment({BUILTIN_PACK_DIR});
#endif
    EXPECT_TRUE(b) << b.error();
    return b ? b.value() : nullptr;
  }();
  return env;
}

inline std::string fallbacks_text(const Interpreter& in) {
  std::string s;
  for (const Fallback& f : in.fallbacks()) {
    s += f.plugin + " lost " + std::to_string(f.nodes.size()) + " nodes at " + f.stage + ": " + f.reason + "\n";
  }
  return s;
}

// TFLite op codes the suites build with.

inline OptionsFn conv_options(fb::Padding padding, int stride, int dilation, int activation) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                          fb::CreateConv2DOptions(fbb, padding, stride, stride, act(activation), dilation, dilation).Union());
  };
}

inline int32_t window_out(fb::Padding padding, int32_t in, int32_t kernel, int32_t stride, int32_t dilation) {
  const int32_t eff = (kernel - 1) * dilation + 1;
  return padding == fb::Padding_SAME ? (in + stride - 1) / stride : (in - eff) / stride + 1;
}

inline OpGraph conv_graph(fb::Padding padding, int stride, int dilation, int activation, bool bias, std::vector<int32_t> in_shape,
                          int32_t out_channels, int32_t kernel) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {out_channels, kernel, kernel, in_shape[3]}, 1);
  const int32_t b = bias ? random_weights(g, {out_channels}, 2) : -1;
  const int32_t out = g.output({in_shape[0], window_out(padding, in_shape[1], kernel, stride, dilation),
                                window_out(padding, in_shape[2], kernel, stride, dilation), out_channels});
  g.op(BATON_OP_CONV_2D, {in, f, b}, {out}, conv_options(padding, stride, dilation, activation));
  return g;
}

}  // namespace baton::test
