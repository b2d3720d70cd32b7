// Shared by the tests of the tflite-delegates loader (tflite_delegates_test.cc, external delegates;
// tflite_stable_delegates_test.cc, stable delegates): a plugin folder with the loader and the packs,
// and a small model whose ADD and MUL nodes our test delegates take.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "interpreter.h"
#include "plugin_registry.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test::tflite_delegates {

namespace fs = std::filesystem;

inline bool have_tflite() { return fs::exists(TFLITE_C_LIB); }

// A plugin folder with the loader, the builtin and mediapipe packs and the given test plugins (file stem
// -> the name to give the file), and a config.
struct Setup {
  TempDir plugins, conf;
  std::shared_ptr<Captured> log = std::make_shared<Captured>();
  std::shared_ptr<Environment> env;

  // An interpreter of the model at `path` in this environment, or null with the failure recorded.
  std::unique_ptr<Interpreter> open(const std::string& path) const {
    auto model = load_model_file(path);
    EXPECT_TRUE(model) << model.error();
    if (!model) return nullptr;
    auto interp = Interpreter::create(env, model.value());
    EXPECT_TRUE(interp) << interp.error();
    return interp ? std::move(interp.value()) : nullptr;
  }
};

inline std::unique_ptr<Setup> setup(const std::vector<std::pair<std::string, std::string>>& test_plugins,
                             const std::string& config, bool with_vulkan = false) {
  auto s = std::make_unique<Setup>();
  fs::copy_file(std::string(TFLITE_LOADER_DIR) + "/libbaton_tflite_delegates.so",
                s->plugins.file("libbaton_tflite_delegates.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", s->plugins.file("libbaton_builtin.so"));
  fs::copy_file(std::string(MEDIAPIPE_PACK_DIR) + "/libbaton_mediapipe.so", s->plugins.file("libbaton_mediapipe.so"));
#ifdef VULKAN_PLUGIN_DIR
  if (with_vulkan) {
    // With the shader compiler it loads from beside itself: a cold shader cache (a fresh machine, or
    // shaders changed since the last run) compiles.
    for (const char* file : {"libbaton_vulkan.so", "baton-vulkan-glslang.module"}) {
      fs::copy_file(std::string(VULKAN_PLUGIN_DIR) + "/" + file, s->plugins.file(file));
    }
  }
#endif
  (void)with_vulkan;
  for (const auto& [stem, as] : test_plugins) s->plugins.add_plugin(stem, as);
  s->conf.write("baton.conf", config);
  auto env = isolated_environment({s->plugins.path()}, s->conf.file("baton.conf"), s->log);
  EXPECT_TRUE(env) << env.error();
  if (!env) return nullptr;
  s->env = env.value();
  return s;
}

inline std::string log_text(const Setup& s) {
  std::string out;
  for (const std::string& l : s.log->lines) out += l + "\n";
  return out;
}

// x, y -> a = x + y -> m = a * c (constant) -> s = m + x -> LOGISTIC (never taken by the delegate) ->
// out = sig * c: the delegate's nodes form two partitions, [0, 1, 2] and [4].
inline std::vector<uint8_t> add_mul_model() {
  TinyModel m;
  m.tensors = {{{1, 4}, 0, {}, "x"},
               {{1, 4}, 0, {}, "y"},
               {{1, 4}, 0, {}, "a"},
               {{1, 4}, 0, floats({0.5f, -2.0f, 3.0f, 1.0f}), "c"},
               {{1, 4}, 0, {}, "m"},
               {{1, 4}, 0, {}, "s"},
               {{1, 4}, 0, {}, "sig"},
               {{1, 4}, 0, {}, "out"}};
  m.ops = {{0, "", 1, {0, 1}, {2}, 0}, {18, "", 1, {2, 3}, {4}}, {0, "", 1, {4, 0}, {5}, 0}, {14, "", 1, {5}, {6}},
           {18, "", 1, {6, 3}, {7}}};
  m.inputs = {0, 1};
  m.outputs = {7};
  return m.build();
}

struct AddMulRun {
  std::unique_ptr<Setup> setup;
  std::unique_ptr<Interpreter> interp;
  std::vector<float> out;
};

inline AddMulRun run_add_mul(const std::vector<std::pair<std::string, std::string>>& plugins, const std::string& config,
                      const std::vector<uint8_t>& bytes = add_mul_model()) {
  AddMulRun r;
  r.setup = setup(plugins, config);
  EXPECT_TRUE(r.setup);
  if (!r.setup) return r;
  TempDir dir;
  dir.write("m.tflite", std::string(bytes.begin(), bytes.end()));
  r.interp = r.setup->open(dir.file("m.tflite"));
  if (!r.interp) return r;
  const float x[4] = {1, 2, 3, 4}, y[4] = {0.5f, -1, 2, -3};
  std::memcpy(r.interp->input(0).data, x, sizeof x);
  std::memcpy(r.interp->input(1).data, y, sizeof y);
  Status st = r.interp->invoke();
  EXPECT_TRUE(st) << st.message();
  const float* out = reinterpret_cast<const float*>(r.interp->output(0).data);
  r.out.assign(out, out + 4);
  return r;
}

// What the model computes, written out.
inline std::vector<float> expected_add_mul() {
  const float x[4] = {1, 2, 3, 4}, y[4] = {0.5f, -1, 2, -3}, c[4] = {0.5f, -2.0f, 3.0f, 1.0f};
  std::vector<float> out(4);
  for (int i = 0; i < 4; ++i) out[i] = c[i] / (1.0f + std::exp(-((x[i] + y[i]) * c[i] + x[i])));
  return out;
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

}  // namespace baton::test::tflite_delegates
