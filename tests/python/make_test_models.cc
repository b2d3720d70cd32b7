// Writes the small models the Python tests need and no committed model has, into the folder given:
//   add_signatures.tflite  sum = relu(x + y), x and y float32 [1, 4] with shape signature [-1, 4];
//                          signature "serving_default" (subgraph 0: x, y -> sum) and "on_copy" naming
//                          subgraph 1, a copy (run by the signature's own interpreter)
//   throw_in_invoke.tflite y = ThrowInInvoke(x), x float32 [2]: the misbehaving test pack throws there
//   complex_parts.tflite   x complex64 [2, 3] -> RESHAPE to [3, 2] (complex64), REAL, IMAG, COMPLEX_ABS
//                          (float32 [2, 3]), four outputs in that order
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tiny_model.h"

namespace {

bool write(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-python-test-models FOLDER\n");
    return 2;
  }
  const std::string dir = argv[1];
  using baton::test::TinyModel;
  TinyModel add;
  add.tensors = {
      {{1, 4}, 0, {}, "serving_default_x:0"},
      {{1, 4}, 0, {}, "serving_default_y:0"},
      {{1, 4}, 0, {}, "PartitionedCall:0"},
  };
  add.tensors[0].shape_signature = {-1, 4};
  add.tensors[1].shape_signature = {-1, 4};
  add.tensors[2].shape_signature = {-1, 4};
  add.ops = {{0, "", 1, {0, 1}, {2}, 1 /* RELU */}};
  add.inputs = {0, 1};
  add.outputs = {2};
  add.extra_subgraphs = 1;
  add.signatures = {{"serving_default", 0, {{"x", 0}, {"y", 1}}, {{"sum", 2}}},
                    {"on_copy", 1, {{"x", 0}, {"y", 1}}, {{"sum", 2}}}};

  TinyModel thrower;
  thrower.tensors = {{{2}, 0, {}, "x"}, {{2}, 0, {}, "y"}};
  thrower.ops = {{32, "ThrowInInvoke", 1, {0}, {1}}};
  thrower.inputs = {0};
  thrower.outputs = {1};

  TinyModel complex_parts;
  const int32_t target[] = {3, 2};
  std::vector<uint8_t> target_bytes(sizeof target);
  std::memcpy(target_bytes.data(), target, sizeof target);
  constexpr int8_t kComplex64 = 8;
  complex_parts.tensors = {{{2, 3}, kComplex64, {}, "x"},        {{2}, 2, target_bytes, "shape"},
                           {{3, 2}, kComplex64, {}, "reshaped"}, {{2, 3}, 0, {}, "real"},
                           {{2, 3}, 0, {}, "imag"},              {{2, 3}, 0, {}, "abs"}};
  complex_parts.ops = {{22, "", 1, {0, 1}, {2}}, {134, "", 1, {0}, {3}}, {133, "", 1, {0}, {4}}, {135, "", 1, {0}, {5}}};
  complex_parts.inputs = {0};
  complex_parts.outputs = {2, 3, 4, 5};

  if (!write(dir + "/add_signatures.tflite", add.build()) || !write(dir + "/throw_in_invoke.tflite", thrower.build()) ||
      !write(dir + "/complex_parts.tflite", complex_parts.build())) {
    std::fprintf(stderr, "make-python-test-models: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
