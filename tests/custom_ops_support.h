// What the custom-op packs' suites (custom_ops_mediapipe_test.cc, custom_ops_detection_test.cc,
// custom_ops_real_models_test.cc) share: one-node models with custom options and quantization, built
// here with the schema; environments of the builtin, mediapipe and detection packs from their build
// folders; a run of such a model on float inputs; and the real models of the cache, skipped (or failed,
// with BATON_REQUIRE_MODELS) when missing.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "interpreter.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {

// One-node models with custom options and quantization, built here with the schema.

constexpr int8_t kF32 = 0, kU8 = 3;

struct MTensor {
  std::vector<int32_t> shape;
  int8_t type = kF32;
  std::vector<uint8_t> data;  // constant bytes; empty for activations
  float scale = 0;            // > 0: per-tensor quantization
  int64_t zero_point = 0;
};

struct MOp {
  std::string name;
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs;
  std::vector<uint8_t> options;
};

struct MGraph {
  std::vector<MTensor> tensors;
  std::vector<MOp> ops;
  std::vector<int32_t> inputs, outputs;

  int act(std::vector<int32_t> shape) {  // a non-constant float32 tensor
    MTensor t;
    t.shape = std::move(shape);
    return add(std::move(t));
  }
  int add(MTensor t) {
    tensors.push_back(std::move(t));
    return static_cast<int>(tensors.size() - 1);
  }

  std::vector<uint8_t> build() const {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
    std::vector<flatbuffers::Offset<fb::Tensor>> ts;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const MTensor& t = tensors[i];
      uint32_t buffer = 0;
      if (!t.data.empty()) {
        b.ForceVectorAlignment(t.data.size(), 1, 16);
        buffers.push_back(fb::CreateBuffer(b, b.CreateVector(t.data)));
        buffer = static_cast<uint32_t>(buffers.size() - 1);
      }
      flatbuffers::Offset<fb::QuantizationParameters> q = 0;
      if (t.scale > 0) {
        std::vector<float> scales = {t.scale};
        std::vector<int64_t> zps = {t.zero_point};
        q = fb::CreateQuantizationParametersDirect(b, nullptr, nullptr, &scales, &zps);
      }
      const std::string name = "t" + std::to_string(i);
      ts.push_back(fb::CreateTensorDirect(b, &t.shape, static_cast<fb::TensorType>(t.type), buffer, name.c_str(), q));
    }
    std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<fb::Operator>> operators;
    for (const MOp& op : ops) {
      codes.push_back(fb::CreateOperatorCode(b, 32, b.CreateString(op.name), op.version, fb::BuiltinOperator_CUSTOM));
      operators.push_back(fb::CreateOperatorDirect(b, static_cast<uint32_t>(codes.size() - 1), &op.inputs, &op.outputs,
                                                   fb::BuiltinOptions_NONE, 0,
                                                   op.options.empty() ? nullptr : &op.options));
    }
    std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
        fb::CreateSubGraphDirect(b, &ts, &inputs, &outputs, &operators, "main")};
    auto model = fb::CreateModelDirect(b, 3, &codes, &subgraphs, "custom ops test", &buffers);
    fb::FinishModelBuffer(b, model);
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
};

inline std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline std::vector<uint8_t> le32(std::initializer_list<int32_t> values) {
  std::vector<uint8_t> out;
  for (int32_t v : values) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i)));
  }
  return out;
}

template <typename F>
std::vector<uint8_t> flex_map(F&& fill) {
  flexbuffers::Builder fbb;
  const size_t start = fbb.StartMap();
  fill(fbb);
  fbb.EndMap(start);
  fbb.Finish();
  return fbb.GetBuffer();
}

enum Packs : unsigned { kBuiltin = 1, kMediapipe = 2, kDetection = 4 };

inline std::shared_ptr<Environment> environment(unsigned packs) {
  std::vector<std::string> dirs;
  if (packs & kBuiltin) dirs.push_back(BUILTIN_PACK_DIR);
  if (packs & kMediapipe) dirs.push_back(MEDIAPIPE_PACK_DIR);
  if (packs & kDetection) dirs.push_back(DETECTION_PACK_DIR);
  auto env = isolated_environment(dirs);
  EXPECT_TRUE(env) << env.error();
  return env ? env.value() : nullptr;
}

inline Expected<std::unique_ptr<Interpreter>> interpreter(const MGraph& g, unsigned packs) {
  auto model = load_model_buffer(g.build(), "custom ops test");
  if (!model) return Status::error(model.error());
  return Interpreter::create(environment(packs), model.value());
}

// Runs a graph whose inputs are all float32; returns every output as floats.
inline std::vector<std::vector<float>> run(const MGraph& g, unsigned packs, const std::vector<std::vector<float>>& inputs,
                                           std::vector<std::vector<int32_t>>* shapes = nullptr) {
  auto interp = interpreter(g, packs);
  EXPECT_TRUE(interp) << interp.error();
  if (!interp) return {};
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.input_count(), inputs.size());
  for (size_t i = 0; i < inputs.size() && i < in.input_count(); ++i) {
    EXPECT_EQ(in.input(i).bytes, inputs[i].size() * 4) << "input " << i;
    std::memcpy(in.input(i).data, inputs[i].data(), std::min(in.input(i).bytes, inputs[i].size() * 4));
  }
  Status s = in.invoke();
  EXPECT_TRUE(s) << s.message();
  std::vector<std::vector<float>> out;
  for (size_t o = 0; o < in.output_count(); ++o) {
    const Tensor& t = in.output(o);
    std::vector<float> v(t.bytes / 4);
    std::memcpy(v.data(), t.data, v.size() * 4);
    out.push_back(std::move(v));
    if (shapes) shapes->push_back(t.shape);
  }
  return out;
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

// The path of a cached real model, or "" (and the test is skipped or failed) when it is missing.
inline std::string real_model(const std::string& name) {
  const std::string path = model_cache() + "/" + name;
  if (!std::filesystem::exists(path)) return "";
  return path;
}

#define REQUIRE_MODEL(var, name)                                                                     \
  const std::string var = real_model(name);                                                          \
  if (var.empty()) {                                                                                 \
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << name << " (tools/fetch-models.sh)"; \
    GTEST_SKIP() << "missing " << name;                                                              \
  }

}  // namespace baton::test
