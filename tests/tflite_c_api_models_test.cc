// baton's libtensorflowlite_c.so running models as a TFLite application runs them (TFLite 2.9's C
// headers only, as in tflite_c_api_test.cc): TfLiteDelegate objects through the tflite-delegates loader
// and the XNNPACK delegate functions; the one-op quantized models against native TFLite 2.9's outputs
// bit for bit (tests/data/quant-ops) with their quantization parameters; outputs whose shapes an invoke
// sets (tests/data/control-flow) against native TFLite's; a real float model against LiteRT's
// (tests/data/reference); a cancel from another thread; and common.h's helpers.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "npy.h"
#include "op_graph.h"
#include "state_folder.h"
#include "tflite_c_test_support.h"
#include "tflite_extras.h"

namespace {

namespace fs = std::filesystem;
using baton::test::add_relu_model;
using baton::test::Reported;

// A TfLiteDelegate object (ours, tests/plugins/tflite_test_delegate.cc, which computes ADD itself) runs
// first in the chain through the tflite-delegates loader; an empty delegate takes nothing.
TEST(TfLiteCApi, TfliteDelegateObjectsRunThroughTheAdapter) {
  if (!std::filesystem::exists(TFLITE_TEST_DELEGATE)) GTEST_SKIP() << "not built: " << TFLITE_TEST_DELEGATE;
  void* lib = dlopen(TFLITE_TEST_DELEGATE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Create = TfLiteDelegate* (*)(char**, char**, size_t, void (*)(const char*));
  auto create = reinterpret_cast<Create>(dlsym(lib, "tflite_plugin_create_delegate"));
  auto destroy = reinterpret_cast<void (*)(TfLiteDelegate*)>(dlsym(lib, "tflite_plugin_destroy_delegate"));
  auto invokes = reinterpret_cast<int (*)()>(dlsym(lib, "baton_test_tflite_invokes"));
  ASSERT_TRUE(create && destroy && invokes);
  TfLiteDelegate* ours = create(nullptr, nullptr, 0, [](const char*) {});
  ASSERT_NE(ours, nullptr);
  TfLiteDelegate empty = TfLiteDelegateCreate();  // no Prepare: takes nothing
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsAddDelegate(options, &empty);
  TfLiteInterpreterOptionsAddDelegate(options, ours);
  Reported r;
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  const std::vector<uint8_t> bytes = add_relu_model(4);
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
  const float x[4] = {1.0f, 3.0f, -2.0f, 0.25f};
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, 0), x, sizeof x), kTfLiteOk);
  const int before = invokes();
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
  EXPECT_EQ(invokes(), before + 1);  // the ADD ran in our delegate's kernel
  float y[4];
  ASSERT_EQ(TfLiteTensorCopyToBuffer(TfLiteInterpreterGetOutputTensor(interp, 0), y, sizeof y), kTfLiteOk);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], std::max(0.0f, x[i] + (static_cast<float>(i) - 2.0f))) << i;
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
  destroy(ours);
  dlclose(lib);
}

// The XNNPACK delegate of TFLite's API: accepted, and the model runs (on baton's xnnpack).
TEST(TfLiteCApi, XnnpackDelegateRuns) {
  const std::vector<uint8_t> bytes = add_relu_model(8);
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  TfLiteXNNPackDelegateOptions xo = TfLiteXNNPackDelegateOptionsDefault();
  EXPECT_EQ(xo.num_threads, 0);
  xo.num_threads = 2;
  TfLiteDelegate* xnn = TfLiteXNNPackDelegateCreate(&xo);
  ASSERT_NE(xnn, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreterOptionsAddDelegate(options, xnn);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  EXPECT_EQ(TfLiteInterpreterModifyGraphWithDelegate(interp, xnn), kTfLiteError);
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk);
  std::vector<float> x(8, 0.5f);
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, 0), x.data(), 32), kTfLiteOk);
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
  const float* y = TfLiteInterpreterGetOutputTensor(interp, 0)->data.f;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], std::max(0.0f, 0.5f + static_cast<float>(i) - 2.0f));
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteXNNPackDelegateDelete(xnn);
  TfLiteModelDelete(model);
}

// With baton's xnnpack plugin disabled by the config, TfLiteXNNPackDelegateCreate's delegate cannot be
// honoured: a clear error, not a silent run elsewhere. In a child process: the library keeps one
// environment per setting for the life of the process.
TEST(TfLiteCApiDeathTest, XnnpackDelegateWithoutTheXnnpackPlugin) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no environment made yet
  const std::string conf = (fs::temp_directory_path() / ("baton-tflite-c-" + std::to_string(getpid()) + ".conf")).string();
  { std::FILE* f = std::fopen(conf.c_str(), "w"); std::fputs("disabled = xnnpack\n", f); std::fclose(f); }
  EXPECT_EXIT(
      {
        setenv("BATON_CONFIG", conf.c_str(), 1);
        const std::vector<uint8_t> bytes = add_relu_model(2);
        TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
        TfLiteDelegate* xnn = TfLiteXNNPackDelegateCreate(nullptr);
        Reported r;
        TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
        TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
        TfLiteInterpreterOptionsAddDelegate(options, xnn);
        const bool refused = TfLiteInterpreterCreate(model, options) == nullptr &&
                             r.said("baton's xnnpack delegate is not installed");
        TfLiteInterpreterOptionsDelete(options);
        TfLiteXNNPackDelegateDelete(xnn);
        TfLiteModelDelete(model);
        fs::remove(conf);  // this child re-ran the test from the top and wrote a file of its own pid
        std::exit(refused ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "");
  fs::remove(conf);
}

// Native TFLite 2.9's outputs on the one-op uint8/int8 models: equal bit for bit, as through baton's API;
// the quantization parameters as TFLite gives them. Also LiteRT's on the blockwise INT4 weights, which
// TFLite 2.9's C API has no quantization type for (the weights show as not quantized).
TEST(TfLiteCApi, QuantizedOneOpModelsMatchTheirReference) {
  const fs::path data = fs::path(BATON_SOURCE_ROOT) / "tests" / "data";
  std::vector<fs::path> dirs{data / "op-cases" / "fully_connected_blockwise_int4_f16_scales",
                             data / "op-cases" / "embedding_lookup_blockwise_int4_f16_scales"};
  for (const auto& entry : fs::directory_iterator(data / "quant-ops")) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  int checked = 0;
  for (const fs::path& path : dirs) {
    const std::string dir = path.string() + "/";
    SCOPED_TRACE(dir);
    TfLiteModel* model = TfLiteModelCreateFromFile((dir + "model.tflite").c_str());
    ASSERT_NE(model, nullptr);
    Reported r;
    TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
    TfLiteInterpreterOptionsSetNumThreads(options, 1);
    TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
    TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
    ASSERT_NE(interp, nullptr) << r.all();
    ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
    for (int32_t i = 0; i < TfLiteInterpreterGetInputTensorCount(interp); ++i) {
      auto arr = baton::tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
      ASSERT_TRUE(arr) << arr.error();
      ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, i), arr->data.data(), arr->data.size()),
                kTfLiteOk);
    }
    ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
    auto want = baton::tool::read_npy(dir + "out_0.npy");
    ASSERT_TRUE(want) << want.error();
    const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, 0);
    ASSERT_EQ(TfLiteTensorByteSize(out), want->data.size());
    if (TfLiteTensorType(out) == kTfLiteFloat32) {
      const float* w = reinterpret_cast<const float*>(want->data.data());
      float peak = 0;
      for (size_t k = 0; k < want->data.size() / 4; ++k) peak = std::max(peak, std::fabs(w[k]));
      for (size_t k = 0; k < want->data.size() / 4; ++k) EXPECT_NEAR(out->data.f[k], w[k], 1e-5f * std::max(peak, 1e-6f));
    } else {
      EXPECT_EQ(std::memcmp(TfLiteTensorData(out), want->data.data(), want->data.size()), 0);
      // Affine quantization, per tensor, as TFLite's struct and accessor give it.
      const TfLiteQuantizationParams q = TfLiteTensorQuantizationParams(out);
      EXPECT_GT(q.scale, 0.0f);
      ASSERT_EQ(out->quantization.type, kTfLiteAffineQuantization);
      const auto* affine = static_cast<const TfLiteAffineQuantization*>(out->quantization.params);
      ASSERT_EQ(affine->scale->size, 1);
      EXPECT_EQ(affine->scale->data[0], q.scale);
      EXPECT_EQ(affine->zero_point->data[0], q.zero_point);
    }
    TfLiteInterpreterDelete(interp);
    TfLiteInterpreterOptionsDelete(options);
    TfLiteModelDelete(model);
    ++checked;
  }
  EXPECT_GE(checked, 32);
}

// Outputs whose shapes an invoke sets (a loop growing a variable, branches of different shapes, a growing
// resource variable, a computed RESHAPE: tests/data/control-flow) show their shape, size and memory after
// TfLiteInterpreterInvoke, as kTfLiteDynamic tensors, against native TFLite 2.9's outputs.
TEST(TfLiteCApi, ShapesSetAtInvokeShowAfterIt) {
  const fs::path root = fs::path(BATON_SOURCE_ROOT) / "tests" / "data" / "control-flow";
  for (const char* name : {"while_grows", "if_shapes_then", "if_shapes_else", "variable_grows", "reshape_computed"}) {
    const std::string dir = (root / name).string() + "/";
    SCOPED_TRACE(dir);
    TfLiteModel* model = TfLiteModelCreateFromFile((dir + "model.tflite").c_str());
    ASSERT_NE(model, nullptr);
    Reported r;
    TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
    TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
    TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
    ASSERT_NE(interp, nullptr) << r.all();
    ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
    for (int32_t i = 0; i < TfLiteInterpreterGetInputTensorCount(interp); ++i) {
      auto arr = baton::tool::read_npy(dir + "in_" + std::to_string(i) + ".npy");
      ASSERT_TRUE(arr) << arr.error();
      ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, i), arr->data.data(), arr->data.size()),
                kTfLiteOk);
    }
    ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
    int dynamic = 0;
    for (int32_t o = 0; o < TfLiteInterpreterGetOutputTensorCount(interp); ++o) {
      auto want = baton::tool::read_npy(dir + "out_" + std::to_string(o) + ".npy");
      ASSERT_TRUE(want) << want.error();
      const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, o);
      dynamic += out->allocation_type == kTfLiteDynamic;
      ASSERT_EQ(TfLiteTensorNumDims(out), static_cast<int32_t>(want->shape.size())) << "output " << o;
      for (size_t d = 0; d < want->shape.size(); ++d) EXPECT_EQ(TfLiteTensorDim(out, static_cast<int32_t>(d)), want->shape[d]);
      std::vector<uint8_t> got(want->data.size());
      ASSERT_EQ(TfLiteTensorCopyToBuffer(out, got.data(), got.size()), kTfLiteOk) << "output " << o;
      if (TfLiteTensorType(out) == kTfLiteFloat32) {
        const float* w = reinterpret_cast<const float*>(want->data.data());
        const float* g = reinterpret_cast<const float*>(got.data());
        float peak = 0;
        for (size_t k = 0; k < got.size() / 4; ++k) peak = std::max(peak, std::fabs(w[k]));
        for (size_t k = 0; k < got.size() / 4; ++k) EXPECT_NEAR(g[k], w[k], 1e-5f * std::max(peak, 1.0f));
      } else {
        EXPECT_EQ(got, want->data) << "output " << o;
      }
    }
    EXPECT_GT(dynamic, 0);
    TfLiteInterpreterDelete(interp);
    TfLiteInterpreterOptionsDelete(options);
    TfLiteModelDelete(model);
  }
}

// A real float model against LiteRT's outputs (the model cache; skipped without it unless required).
TEST(TfLiteCApi, RealModelMatchesTheReference) {
  const char* cache = std::getenv("BATON_MODEL_CACHE");
  const std::string model_path = std::string(cache ? cache : "") + "/face_detection_short_range.tflite";
  if (!cache || !fs::exists(model_path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "no model cache at " << model_path;
    GTEST_SKIP() << "no model cache (BATON_MODEL_CACHE): tools/fetch-models.sh";
  }
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/face_detection_short_range/";
  TfLiteModel* model = TfLiteModelCreateFromFile(model_path.c_str());
  ASSERT_NE(model, nullptr);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, nullptr);
  ASSERT_NE(interp, nullptr);
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk);
  auto in = baton::tool::read_npy(ref + "in_0.npy");
  ASSERT_TRUE(in) << in.error();
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, 0), in->data.data(), in->data.size()),
            kTfLiteOk);
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk);
  for (int32_t o = 0; o < TfLiteInterpreterGetOutputTensorCount(interp); ++o) {
    auto want = baton::tool::read_npy(ref + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(want) << want.error();
    const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, o);
    ASSERT_EQ(TfLiteTensorByteSize(out), want->data.size());
    const float* w = reinterpret_cast<const float*>(want->data.data());
    float peak = 0, worst = 0;
    for (size_t k = 0; k < want->data.size() / 4; ++k) peak = std::max(peak, std::fabs(w[k]));
    for (size_t k = 0; k < want->data.size() / 4; ++k) worst = std::max(worst, std::fabs(out->data.f[k] - w[k]));
    EXPECT_LE(worst, 1e-3f * peak) << "output " << o;
  }
  TfLiteInterpreterDelete(interp);
  TfLiteModelDelete(model);
}

// TfLiteInterpreterCancel (later TFLite's c_api_experimental.h) from another thread stops the running
// invoke; the next one runs whole. TANH runs node by node on the op packs here (xnnpack has no TANH), so
// a cancel lands between nodes.
TEST(TfLiteCApi, CancelFromAnotherThread) {
  baton::test::OpGraph g;
  int32_t t = g.input({1, 16384});
  for (int i = 0; i < 2000; ++i) {
    const int32_t next = i + 1 == 2000 ? g.output({1, 16384}) : g.add({1, 16384});
    g.op(28 /* TANH */, {t}, {next});
    t = next;
  }
  const std::vector<uint8_t> bytes = g.build();
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk);
  std::atomic<bool> done{false};
  std::thread canceller([&] {
    while (!done.load()) {
      TfLiteInterpreterCancel(interp);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  const TfLiteStatus cancelled = TfLiteInterpreterInvoke(interp);
  done.store(true);
  canceller.join();
  EXPECT_EQ(cancelled, kTfLiteError);
  EXPECT_TRUE(r.said("invoke cancelled")) << r.all();
  std::vector<float> x(16384, 0.5f);
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, 0), x.data(), x.size() * 4), kTfLiteOk);
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
  float y = 0.5f;
  for (int i = 0; i < 2000; ++i) y = std::tanh(y);
  EXPECT_NEAR(TfLiteInterpreterGetOutputTensor(interp, 0)->data.f[0], y, 1e-5f);
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
}

// The common.h helpers: arrays and tensor reset/copy/free.
TEST(TfLiteCApi, CommonHelpers) {
  TfLiteIntArray* a = TfLiteIntArrayCreate(3);
  a->data[0] = 1;
  a->data[1] = 2;
  a->data[2] = 3;
  TfLiteIntArray* b = TfLiteIntArrayCopy(a);
  EXPECT_TRUE(TfLiteIntArrayEqual(a, b));
  const int c[3] = {1, 2, 4};
  EXPECT_FALSE(TfLiteIntArrayEqualsArray(a, 3, c));
  EXPECT_EQ(TfLiteIntArrayGetSizeInBytes(3), sizeof(TfLiteIntArray) + 3 * sizeof(int));
  TfLiteIntArrayFree(b);
  TfLiteTensor t{};
  TfLiteTensorReset(kTfLiteFloat32, "t", a, TfLiteQuantizationParams{0.5f, 3}, nullptr, 0, kTfLiteDynamic, nullptr,
                    false, &t);
  TfLiteTensorRealloc(16, &t);
  ASSERT_NE(t.data.raw, nullptr);
  EXPECT_EQ(t.bytes, 16u);
  EXPECT_EQ(t.params.zero_point, 3);
  TfLiteTensorFree(&t);  // frees dims (a) and the dynamic data
  EXPECT_EQ(t.dims, nullptr);
  EXPECT_EQ(t.data.raw, nullptr);
}

}  // namespace
