// What the control-flow tests (control_flow_test.cc, control_flow_shapes_test.cc) share: the cases of
// tests/data/control-flow (made by tools/make-control-flow-cases.sh), interpreters over them with the
// builtin pack (and XNNPACK), and comparison of outputs with native TFLite 2.9's (float within 1e-5 of the
// largest reference magnitude, the rest bit for bit).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "interpreter.h"
#include "npy.h"
#include "test_support.h"

namespace baton::test {

namespace fs = std::filesystem;

inline std::string case_dir(const std::string& name) {
  return std::string(BATON_SOURCE_ROOT) + "/tests/data/control-flow/" + name + "/";
}

inline std::vector<std::string> reference_cases() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(case_dir(""))) {
    if (fs::exists(e.path() / "out_0.npy")) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<std::string> plugin_dirs(bool xnnpack) {
  std::vector<std::string> dirs{BUILTIN_PACK_DIR};
#ifdef XNNPACK_PLUGIN_DIR
  if (xnnpack) dirs.push_back(XNNPACK_PLUGIN_DIR);
#else
  (void)xnnpack;
#endif
  return dirs;
}

// An empty config, so no user's config changes what the tests see.
inline const std::string& empty_config() {
  static const struct File {
    std::string path = (fs::temp_directory_path() / ("baton-empty-" + std::to_string(getpid()) + ".conf")).string();
    File() { std::ofstream(path) << "# nothing\n"; }
    ~File() { fs::remove(path); }
  } file;
  return file.path;
}

inline std::unique_ptr<Interpreter> open(const std::string& name, bool xnnpack, const InterpreterOptions& o = {}) {
  auto env = isolated_environment(plugin_dirs(xnnpack));
  EXPECT_TRUE(env) << env.error();
  if (!env) return nullptr;
  auto model = load_model_file(case_dir(name) + "model.tflite");
  EXPECT_TRUE(model) << model.error();
  if (!model) return nullptr;
  auto interp = Interpreter::create(env.value(), model.value(), o);
  EXPECT_TRUE(interp) << interp.error();
  return interp ? std::move(interp.value()) : nullptr;
}

inline void feed(Interpreter& in, const std::string& name) {
  for (size_t i = 0; i < in.input_count(); ++i) {
    auto arr = tool::read_npy(case_dir(name) + "in_" + std::to_string(i) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    ASSERT_EQ(arr->data.size(), in.input(i).bytes) << "input " << i;
    if (!arr->data.empty()) std::memcpy(in.input(i).data, arr->data.data(), arr->data.size());
  }
}

inline std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(t.bytes / 4);
  std::memcpy(v.data(), t.data, t.bytes);
  return v;
}

inline std::vector<float> npy_floats(const std::string& path) {
  auto arr = tool::read_npy(path);
  EXPECT_TRUE(arr) << arr.error();
  std::vector<float> v(arr ? arr->data.size() / 4 : 0);
  if (arr) std::memcpy(v.data(), arr->data.data(), arr->data.size());
  return v;
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const FloatDiff d = float_diff(got.data(), want.data(), want.size());
  EXPECT_LE(d.max_diff, 1e-5 * std::max(d.max_ref, 1.0)) << what << ": max |diff| " << d.max_diff;
}

inline void expect_outputs_match(Interpreter& in, const std::string& name) {
  for (size_t o = 0; o < in.output_count(); ++o) {
    auto want = tool::read_npy(case_dir(name) + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(want) << want.error();
    const Tensor& t = in.output(o);
    ASSERT_EQ(want->type, t.type) << name << " output " << o;
    ASSERT_EQ(want->shape, t.shape) << name << " output " << o;
    if (t.type == BATON_TYPE_FLOAT32) {
      expect_near(floats(t), npy_floats(case_dir(name) + "out_" + std::to_string(o) + ".npy"),
                  name + " output " + std::to_string(o));
    } else {
      ASSERT_EQ(want->data.size(), t.bytes);
      EXPECT_EQ(std::memcmp(want->data.data(), t.data, t.bytes), 0) << name << " output " << o;
    }
  }
}

}  // namespace baton::test
