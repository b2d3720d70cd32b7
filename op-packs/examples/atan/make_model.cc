// make-atan-model: writes atan.tflite, the smallest model that needs the Atan pack: one float32 input x
// of shape [N], one custom node Atan (version 1), one output y. Built with the flatbuffers builder over
// baton's schema. Usage: make-atan-model OUT.tflite [N] (default N = 8).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "tflite_generated.h"

namespace fb = baton::tflite;

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: make-atan-model OUT.tflite [N]\n");
    return 2;
  }
  const int n = argc == 3 ? std::atoi(argv[2]) : 8;
  if (n < 1) {
    std::fprintf(stderr, "make-atan-model: N must be at least 1\n");
    return 2;
  }
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
  const std::vector<int32_t> shape = {n};
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors = {
      fb::CreateTensorDirect(b, &shape, fb::TensorType_FLOAT32, 0, "x"),
      fb::CreateTensorDirect(b, &shape, fb::TensorType_FLOAT32, 0, "y"),
  };
  std::vector<flatbuffers::Offset<fb::OperatorCode>> codes = {
      fb::CreateOperatorCode(b, fb::BuiltinOperator_CUSTOM, b.CreateString("Atan"), 1, fb::BuiltinOperator_CUSTOM)};
  const std::vector<int32_t> in = {0}, out = {1};
  std::vector<flatbuffers::Offset<fb::Operator>> ops = {fb::CreateOperatorDirect(b, 0, &in, &out)};
  std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
      fb::CreateSubGraphDirect(b, &tensors, &in, &out, &ops, "main")};
  auto model = fb::CreateModelDirect(b, 3, &codes, &subgraphs, "atan example", &buffers);
  fb::FinishModelBuffer(b, model);
  std::ofstream file(argv[1], std::ios::binary);
  file.write(reinterpret_cast<const char*>(b.GetBufferPointer()), static_cast<std::streamsize>(b.GetSize()));
  if (!file) {
    std::fprintf(stderr, "make-atan-model: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
