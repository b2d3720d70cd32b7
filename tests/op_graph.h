// Small multi-op models with builtin options (and custom ops, and quantized tensors), built with the
// flatbuffers builder, for delegate tests that run one graph through a delegate and through the op packs
// and compare (tests/xnnpack_test.cc, tests/vulkan_test.cc).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tflite_generated.h"
#include "tiny_model.h"

namespace baton::test {

namespace fb = baton::tflite;

using OptionsFn =
    std::function<std::pair<fb::BuiltinOptions, flatbuffers::Offset<void>>(flatbuffers::FlatBufferBuilder&)>;

struct GraphOp {
  int32_t code = 0;
  std::vector<int32_t> inputs, outputs;
  OptionsFn options;
  int32_t version = 1;
  std::string custom;                   // the name, when code is 32 (CUSTOM)
  std::vector<uint8_t> custom_options;  // raw bytes
  std::vector<int32_t> intermediates;   // tensors that only carry a quantization (integer LSTMs)
};

struct Quantization {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t dimension = 0;
};

struct OpGraph {
  std::vector<TinyTensor> tensors;               // shape, type, constant bytes, name
  std::map<int32_t, Quantization> quantization;  // by tensor index
  std::vector<GraphOp> ops;
  std::vector<int32_t> inputs, outputs;

  // A quantized tensor (type 3 = UINT8, 9 = INT8, 2 = INT32), constant when `data` is given.
  int32_t quantized(std::vector<int32_t> shape, int8_t type, Quantization q, std::vector<uint8_t> data = {}) {
    const int32_t t = add(std::move(shape), std::move(data), type);
    quantization[t] = std::move(q);
    return t;
  }

  int32_t add(std::vector<int32_t> shape, std::vector<uint8_t> data = {}, int8_t type = 0) {
    TinyTensor t;
    t.shape = std::move(shape);
    t.type = type;
    t.data = std::move(data);
    t.name = "t";
    t.name += std::to_string(tensors.size());  // appended: "t" + to_string() trips a false -Wrestrict in GCC 12
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
  }
  int32_t input(std::vector<int32_t> shape, int8_t type = 0) {
    inputs.push_back(add(std::move(shape), {}, type));
    return inputs.back();
  }
  int32_t output(std::vector<int32_t> shape) {
    outputs.push_back(add(std::move(shape)));
    return outputs.back();
  }
  void op(int32_t code, std::vector<int32_t> in, std::vector<int32_t> out, OptionsFn options = nullptr, int32_t version = 1) {
    GraphOp o;
    o.code = code;
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    o.options = std::move(options);
    o.version = version;
    ops.push_back(std::move(o));
  }

  std::vector<uint8_t> build() const {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
    std::vector<flatbuffers::Offset<fb::Tensor>> ts;
    for (const TinyTensor& t : tensors) {
      uint32_t buffer = 0;
      if (!t.data.empty()) {
        b.ForceVectorAlignment(t.data.size(), 1, 16);
        buffers.push_back(fb::CreateBuffer(b, b.CreateVector(t.data)));
        buffer = static_cast<uint32_t>(buffers.size() - 1);
      }
      flatbuffers::Offset<fb::QuantizationParameters> q = 0;
      if (auto it = quantization.find(static_cast<int32_t>(ts.size())); it != quantization.end()) {
        q = fb::CreateQuantizationParametersDirect(b, nullptr, nullptr, &it->second.scales, &it->second.zero_points,
                                                   fb::QuantizationDetails_NONE, 0, it->second.dimension);
      }
      ts.push_back(fb::CreateTensorDirect(b, &t.shape, static_cast<fb::TensorType>(t.type), buffer, t.name.c_str(), q,
                                          t.is_variable));
    }
    std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<fb::Operator>> os;
    for (const GraphOp& op : ops) {
      codes.push_back(fb::CreateOperatorCode(b, static_cast<int8_t>(std::min(op.code, 127)),
                                             op.custom.empty() ? 0 : b.CreateString(op.custom), op.version,
                                             static_cast<fb::BuiltinOperator>(op.code)));
      auto [type, options] =
          op.options ? op.options(b) : std::make_pair(fb::BuiltinOptions_NONE, flatbuffers::Offset<void>());
      os.push_back(fb::CreateOperatorDirect(b, static_cast<uint32_t>(codes.size() - 1), &op.inputs, &op.outputs,
                                            type, options, op.custom_options.empty() ? nullptr : &op.custom_options,
                                            fb::CustomOptionsFormat_FLEXBUFFERS, nullptr,
                                            op.intermediates.empty() ? nullptr : &op.intermediates));
    }
    std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
        fb::CreateSubGraphDirect(b, &ts, &inputs, &outputs, &os, "main")};
    fb::FinishModelBuffer(b, fb::CreateModelDirect(b, 3, &codes, &subgraphs, "op graph test", &buffers));
    return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  }
};

inline std::vector<uint8_t> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<uint8_t> out(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    std::memcpy(out.data() + i * sizeof v, &v, sizeof v);
  }
  return out;
}

inline std::vector<uint8_t> ints(std::initializer_list<int32_t> values) {
  std::vector<uint8_t> out(values.size() * sizeof(int32_t));
  size_t i = 0;
  for (int32_t v : values) std::memcpy(out.data() + 4 * i++, &v, sizeof v);
  return out;
}

inline size_t count_of(const std::vector<int32_t>& shape) {
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

// Random weights of `shape`, as a constant tensor.
inline int32_t random_weights(OpGraph& g, std::vector<int32_t> shape, uint32_t seed) {
  const size_t n = count_of(shape);
  return g.add(std::move(shape), random_floats(n, seed));
}

inline fb::ActivationFunctionType act(int a) { return static_cast<fb::ActivationFunctionType>(a); }

// Options of an elementwise op with fused activation `a`: with_activation(BuiltinOptions_AddOptions,
// add_options, 1) gives ADD's options with RELU.
template <typename Options>
OptionsFn with_activation(fb::BuiltinOptions type, Options (*create)(flatbuffers::FlatBufferBuilder&, fb::ActivationFunctionType),
                          int a) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) { return std::make_pair(type, create(fbb, act(a)).Union()); };
}
inline flatbuffers::Offset<fb::AddOptions> add_options(flatbuffers::FlatBufferBuilder& b, fb::ActivationFunctionType a) {
  return fb::CreateAddOptions(b, a);
}
inline flatbuffers::Offset<fb::SubOptions> sub_options(flatbuffers::FlatBufferBuilder& b, fb::ActivationFunctionType a) {
  return fb::CreateSubOptions(b, a);
}
inline flatbuffers::Offset<fb::MulOptions> mul_options(flatbuffers::FlatBufferBuilder& b, fb::ActivationFunctionType a) {
  return fb::CreateMulOptions(b, a);
}
inline flatbuffers::Offset<fb::DivOptions> div_options(flatbuffers::FlatBufferBuilder& b, fb::ActivationFunctionType a) {
  return fb::CreateDivOptions(b, a);
}

// max |got - want| / max |want| (NaN counts as worst).
inline double relative_error(const float* got, const float* want, size_t n) {
  double max_ref = 0, max_diff = 0;
  for (size_t k = 0; k < n; ++k) {
    max_ref = std::max(max_ref, std::abs(static_cast<double>(want[k])));
    const double d = std::abs(static_cast<double>(got[k]) - want[k]);
    if (!(d <= max_diff)) max_diff = d;
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

}  // namespace baton::test
