// baton's libtensorflowlite_c.so used as a TFLite application uses it: this program includes only
// TFLite 2.9's C headers (the pinned npm tfjs-tflite-node@0.0.2 ones) and the declarations of the
// functions TFLite exports beyond them (tflite_extras.h), and links against baton's library. Here, TFLite's
// documented behaviour (data valid after AllocateTensors, invoke before allocate fails through the error
// reporter, resize then allocate, options and model deleted right after creation, tensor fields as
// common.h lays them out), complex64 and string tensors, a lookup table, and clear errors for what is not
// supported. Models run against native TFLite's and LiteRT's outputs, delegates, cancel and common.h's
// helpers: tflite_c_api_models_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
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

TEST(TfLiteCApi, VersionAndTypeNames) {
  EXPECT_EQ(std::string(TfLiteVersion()).rfind("2.9", 0), 0u) << TfLiteVersion();
  EXPECT_STREQ(TfLiteTypeGetName(kTfLiteFloat32), "FLOAT32");
  EXPECT_STREQ(TfLiteTypeGetName(kTfLiteInt8), "INT8");
}

TEST(TfLiteCApi, LifecycleAsTfLiteDocumentsIt) {
  const std::vector<uint8_t> bytes = add_relu_model(4);
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(options, 1);
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  // Options and model may go as soon as the interpreter exists.
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);

  ASSERT_EQ(TfLiteInterpreterGetInputTensorCount(interp), 1);
  ASSERT_EQ(TfLiteInterpreterGetOutputTensorCount(interp), 1);
  EXPECT_EQ(TfLiteInterpreterGetInputTensor(interp, 1), nullptr);
  // Invoke before AllocateTensors fails through the error reporter.
  EXPECT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteError);
  EXPECT_TRUE(r.said("Invoke called on model that is not ready")) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk);

  TfLiteTensor* in = TfLiteInterpreterGetInputTensor(interp, 0);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(TfLiteTensorType(in), kTfLiteFloat32);
  ASSERT_EQ(TfLiteTensorNumDims(in), 2);
  EXPECT_EQ(TfLiteTensorDim(in, 1), 4);
  EXPECT_EQ(TfLiteTensorByteSize(in), 16u);
  ASSERT_NE(TfLiteTensorData(in), nullptr);
  // The struct itself, as common.h lays it out, says the same as the accessors.
  EXPECT_EQ(in->type, kTfLiteFloat32);
  EXPECT_EQ(in->bytes, 16u);
  EXPECT_EQ(in->data.raw, TfLiteTensorData(in));
  ASSERT_NE(in->dims, nullptr);
  EXPECT_EQ(in->dims->size, 2);
  EXPECT_EQ(in->dims->data[1], 4);
  EXPECT_STREQ(in->name, TfLiteTensorName(in));
  ASSERT_NE(in->dims_signature, nullptr);
  EXPECT_EQ(in->dims_signature->size, 2);

  const float x[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  EXPECT_EQ(TfLiteTensorCopyFromBuffer(in, x, 12), kTfLiteError);  // wrong size
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(in, x, sizeof x), kTfLiteOk);
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
  // TFLite's API has no state folder to pass: the crash journal follows $XDG_STATE_HOME, which is this
  // test's own (state_folder.h), never the user's.
  EXPECT_TRUE(fs::is_directory(baton::test::test_state_dir() + "/baton/journal"));
  const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, 0);
  float y[4];
  ASSERT_EQ(TfLiteTensorCopyToBuffer(out, y, sizeof y), kTfLiteOk);
  // relu(1 + (i - 2)): by hand.
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 2.0f);
  EXPECT_EQ(std::memcmp(y, out->data.f, sizeof y), 0);
  TfLiteInterpreterDelete(interp);
}

// Complex64 tensors as TFLite's C API shows them (kTfLiteComplex64, 8 bytes an element, data.c64): x
// [2, 3] in, back out through RESHAPE byte for byte, its real parts and magnitudes through REAL and
// COMPLEX_ABS; then a spectrogram (frames, window, RFFT2D, COMPLEX_ABS: tests/data/op-cases) against
// native TFLite 2.9's magnitudes.
TEST(TfLiteCApi, Complex64Tensors) {
  constexpr int8_t kComplex64 = 8;
  baton::test::OpGraph g;
  const int32_t x = g.input({2, 3}, kComplex64);
  const int32_t target[] = {3, 2};
  std::vector<uint8_t> target_bytes(sizeof target);
  std::memcpy(target_bytes.data(), target, sizeof target);
  const int32_t shape = g.add({2}, target_bytes, 2);
  const int32_t moved = g.add({3, 2}, {}, kComplex64);
  g.outputs.push_back(moved);
  const int32_t real = g.output({2, 3});
  const int32_t magnitude = g.output({2, 3});
  g.op(22 /* RESHAPE */, {x, shape}, {moved});
  g.op(134 /* REAL */, {x}, {real});
  g.op(135 /* COMPLEX_ABS */, {x}, {magnitude});
  const std::vector<uint8_t> bytes = g.build();
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
  TfLiteTensor* in = TfLiteInterpreterGetInputTensor(interp, 0);
  EXPECT_EQ(TfLiteTensorType(in), kTfLiteComplex64);
  EXPECT_STREQ(TfLiteTypeGetName(kTfLiteComplex64), "COMPLEX64");
  ASSERT_EQ(TfLiteTensorByteSize(in), 48u);
  const float parts[12] = {3, 4, -1, 0, 0.5f, -2, 6, 8, -5, 12, 0, 0};
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(in, parts, sizeof parts), kTfLiteOk);
  EXPECT_EQ(static_cast<void*>(in->data.c64), TfLiteTensorData(in));
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
  const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, 0);
  EXPECT_EQ(TfLiteTensorType(out), kTfLiteComplex64);
  ASSERT_EQ(TfLiteTensorNumDims(out), 2);
  EXPECT_EQ(TfLiteTensorDim(out, 0), 3);
  ASSERT_EQ(TfLiteTensorByteSize(out), sizeof parts);
  EXPECT_EQ(std::memcmp(TfLiteTensorData(out), parts, sizeof parts), 0);
  const TfLiteTensor* re = TfLiteInterpreterGetOutputTensor(interp, 1);
  const TfLiteTensor* abs = TfLiteInterpreterGetOutputTensor(interp, 2);
  ASSERT_EQ(TfLiteTensorType(re), kTfLiteFloat32);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(re->data.f[i], parts[2 * i]);
    EXPECT_EQ(abs->data.f[i], std::hypot(parts[2 * i], parts[2 * i + 1]));
  }
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);

  const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/data/op-cases/rfft2d_spectrogram_expand_squeeze/";
  model = TfLiteModelCreateFromFile((dir + "model.tflite").c_str());
  ASSERT_NE(model, nullptr);
  interp = TfLiteInterpreterCreate(model, nullptr);
  ASSERT_NE(interp, nullptr);
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk);
  auto frames = baton::tool::read_npy(dir + "in_0.npy");
  auto want = baton::tool::read_npy(dir + "out_0.npy");
  ASSERT_TRUE(frames && want);
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(TfLiteInterpreterGetInputTensor(interp, 0), frames->data.data(),
                                       frames->data.size()), kTfLiteOk);
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk);
  out = TfLiteInterpreterGetOutputTensor(interp, 0);
  ASSERT_EQ(TfLiteTensorByteSize(out), want->data.size());
  const float* w = reinterpret_cast<const float*>(want->data.data());
  float peak = 0;
  for (size_t k = 0; k < want->data.size() / 4; ++k) peak = std::max(peak, std::fabs(w[k]));
  for (size_t k = 0; k < want->data.size() / 4; ++k) EXPECT_NEAR(out->data.f[k], w[k], 1e-5f * peak) << k;
  TfLiteInterpreterDelete(interp);
  TfLiteModelDelete(model);
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// String tensors as a TFLite application handles them (tests/data/string-cases, native TFLite 2.9's
// outputs): a string input gets its value the way TFLite's own string writer gives one,
// TfLiteTensorRealloc on the tensor and the packed bytes into data.raw (the C API copies only into
// tensors of a fixed size); a string output is read from TfLiteTensorData, TfLiteTensorByteSize bytes.
TEST(TfLiteCApi, StringTensors) {
  const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/data/string-cases/skip_gram_3_skip2_all/";
  TfLiteModel* model = TfLiteModelCreateFromFile((dir + "model.tflite").c_str());
  ASSERT_NE(model, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
  TfLiteTensor* in = TfLiteInterpreterGetInputTensor(interp, 0);
  EXPECT_EQ(TfLiteTensorType(in), kTfLiteString);
  EXPECT_EQ(in->allocation_type, kTfLiteDynamic);
  EXPECT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteError);  // no value yet
  EXPECT_TRUE(r.said("is a string tensor without a value")) << r.all();
  const std::vector<uint8_t> sentence = file_bytes(dir + "in_0.str");
  for (int round = 0; round < 2; ++round) {
    TfLiteTensorRealloc(sentence.size(), in);
    ASSERT_EQ(in->bytes, sentence.size());
    std::memcpy(in->data.raw, sentence.data(), sentence.size());
    ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
    const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, 0);
    const std::vector<uint8_t> want = file_bytes(dir + "out_0.str");
    ASSERT_EQ(TfLiteTensorByteSize(out), want.size());
    EXPECT_EQ(std::memcmp(TfLiteTensorData(out), want.data(), want.size()), 0);
    EXPECT_EQ(TfLiteTensorDim(out, 0), 75);  // n-grams
  }
  // A buffer that is not a packed string buffer fails the invoke with the reason.
  const uint8_t bad[8] = {3, 0, 0, 0, 8, 0, 0, 0};
  TfLiteTensorRealloc(sizeof bad, in);
  std::memcpy(in->data.raw, bad, sizeof bad);
  EXPECT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteError);
  EXPECT_TRUE(r.said("holds 3 strings where its shape has 1")) << r.all();
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
}

// A converted lookup table, as the converter writes it (a CALL_ONCE fills it, HASHTABLE_FIND reads it):
// the int64 keys through TfLiteTensorCopyFromBuffer, the string values read in place, as TFLite 2.9 gave
// them (tests/data/string-cases), on two invokes (the table is filled once and kept).
TEST(TfLiteCApi, HashTableLookup) {
  const std::string dir = std::string(BATON_SOURCE_ROOT) + "/tests/data/string-cases/hashtable_int64_to_str_call_once/";
  TfLiteModel* model = TfLiteModelCreateFromFile((dir + "model.tflite").c_str());
  ASSERT_NE(model, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
  const int64_t keys[5] = {7, -3, int64_t{1} << 35, 0, 7};  // the case's in_0.npy
  const std::vector<uint8_t> want = file_bytes(dir + "out_0.str");
  for (int round = 0; round < 2; ++round) {
    TfLiteTensor* in = TfLiteInterpreterGetInputTensor(interp, 0);
    ASSERT_EQ(TfLiteTensorType(in), kTfLiteInt64);
    ASSERT_EQ(TfLiteTensorCopyFromBuffer(in, keys, sizeof keys), kTfLiteOk) << r.all();
    ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
    const TfLiteTensor* values = TfLiteInterpreterGetOutputTensor(interp, 0);
    EXPECT_EQ(TfLiteTensorType(values), kTfLiteString);
    ASSERT_EQ(TfLiteTensorByteSize(values), want.size());
    EXPECT_EQ(std::memcmp(TfLiteTensorData(values), want.data(), want.size()), 0);
    int64_t size = 0;
    ASSERT_EQ(TfLiteTensorCopyToBuffer(TfLiteInterpreterGetOutputTensor(interp, 1), &size, sizeof size), kTfLiteOk);
    EXPECT_EQ(size, 4);  // the four keys the initialisation subgraph imports
  }
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
}

// Resize, then the new shape shows at once, invoke fails until AllocateTensors, after which the data
// pointer is valid for the new size.
TEST(TfLiteCApi, ResizeThenAllocate) {
  baton::test::OpGraph g;
  const int32_t x = g.input({1, 2});
  const int32_t y = g.output({1, 2});
  g.op(19 /* RELU */, {x}, {y});
  const std::vector<uint8_t> bytes = g.build();
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  Reported r;
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteInterpreter* interp = TfLiteInterpreterCreate(model, options);
  ASSERT_NE(interp, nullptr) << r.all();
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk);
  const int dims[2] = {3, 5};
  ASSERT_EQ(TfLiteInterpreterResizeInputTensor(interp, 0, dims, 2), kTfLiteOk) << r.all();
  TfLiteTensor* in = TfLiteInterpreterGetInputTensor(interp, 0);
  EXPECT_EQ(TfLiteTensorDim(in, 0), 3);
  EXPECT_EQ(TfLiteTensorDim(in, 1), 5);
  EXPECT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteError);
  ASSERT_EQ(TfLiteInterpreterAllocateTensors(interp), kTfLiteOk) << r.all();
  ASSERT_EQ(TfLiteTensorByteSize(in), 60u);
  std::vector<float> v(15);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 7.0f;
  ASSERT_EQ(TfLiteTensorCopyFromBuffer(in, v.data(), 60), kTfLiteOk);
  ASSERT_EQ(TfLiteInterpreterInvoke(interp), kTfLiteOk) << r.all();
  const TfLiteTensor* out = TfLiteInterpreterGetOutputTensor(interp, 0);
  ASSERT_EQ(TfLiteTensorByteSize(out), 60u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(out->data.f[i], std::max(0.0f, v[i]));
  // A bad index is an error through the reporter, not a crash.
  EXPECT_EQ(TfLiteInterpreterResizeInputTensor(interp, 3, dims, 2), kTfLiteError);
  EXPECT_TRUE(r.said("no input 3")) << r.all();
  TfLiteInterpreterDelete(interp);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
}

TEST(TfLiteCApi, BadModelsAndUnsupportedRequestsAreClearErrors) {
  const char junk[] = "certainly not a flatbuffer";
  EXPECT_EQ(TfLiteModelCreate(junk, sizeof junk), nullptr);
  EXPECT_EQ(TfLiteModelCreateFromFile("/nonexistent/model.tflite"), nullptr);

  const std::vector<uint8_t> bytes = add_relu_model(2);
  TfLiteModel* model = TfLiteModelCreate(bytes.data(), bytes.size());
  ASSERT_NE(model, nullptr);
  Reported r;
  // A registered TfLiteRegistration kernel: refused with the reason, never called.
  TfLiteInterpreterOptions* options = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetErrorReporter(options, &Reported::reporter, &r);
  TfLiteRegistration registration{};
  TfLiteInterpreterOptionsAddCustomOp(options, "MyOp", &registration, 1, 1);
  EXPECT_EQ(TfLiteInterpreterCreate(model, options), nullptr);
  EXPECT_TRUE(r.said("cannot run in baton yet")) << r.all();
  EXPECT_EQ(TfLiteInterpreterCreateWithSelectedOps(model, options), nullptr);
  TfLiteInterpreterOptionsDelete(options);
  TfLiteModelDelete(model);
}

}  // namespace
