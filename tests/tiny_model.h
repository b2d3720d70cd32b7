// Builds small .tflite models in tests with the flatbuffers builder, so each test states its graph
// in a few lines and can break exactly one thing in it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace baton::test {

struct TinyTensor {
  std::vector<int32_t> shape;
  int8_t type = 0;  // TFLite TensorType, 0 = FLOAT32
  std::vector<uint8_t> data;  // constant bytes; empty for activations
  std::string name;
  uint64_t buffer_offset = 0;  // non-zero: data "outside the flatbuffer" at this file offset
  uint64_t buffer_size = 0;
  std::vector<float> scales;  // non-empty: quantization parameters (one per tensor, or per channel)
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
  std::vector<int32_t> shape_signature = {};  // non-empty: written as the tensor's shape_signature (-1: dynamic)
  bool is_variable = false;
  int32_t blockwise_scales = -1;  // >= 0: BlockwiseQuantization details naming this scales tensor
  int32_t blockwise_block = 32;   // and its block size
};

struct TinyOp {
  int32_t code = 0;  // builtin op code; 32 = CUSTOM
  std::string custom;
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs;
  int8_t activation = -1;  // >= 0: give AddOptions with this fused activation
  bool only_deprecated_code = false;  // write the code in deprecated_builtin_code only, like old converters
};

struct TinySignature {
  std::string key;
  int32_t subgraph = 0;
  std::vector<std::pair<std::string, int32_t>> inputs, outputs;  // name, tensor index
};

struct TinyModel {
  std::vector<TinyTensor> tensors;
  std::vector<TinyOp> ops;
  std::vector<int32_t> inputs, outputs;
  std::string description = "tiny test model";
  std::vector<std::pair<std::string, std::string>> metadata;  // name, bytes
  std::vector<TinySignature> signatures;
  int32_t extra_subgraphs = 0;  // copies of the main subgraph after it, for signatures that name them

  std::vector<uint8_t> build() const;
};

inline std::vector<uint8_t> floats(std::initializer_list<float> values) {
  std::vector<uint8_t> out(values.size() * sizeof(float));
  size_t i = 0;
  for (float v : values) {
    std::memcpy(out.data() + i, &v, sizeof v);
    i += sizeof v;
  }
  return out;
}

// a + b -> c (ADD with RELU), TimesTwo(c) -> d. Inputs a, b [2,3] float32, output d.
TinyModel add_then_double();
// x -> TimesThree -> y, [2,3] float32 (the op only the triplepack test plugin declares).
TinyModel times_three();

}  // namespace baton::test
