// An inference request and its result as the server's core sees them, after REST's JSON or gRPC's
// protobuf has been decoded and before either is encoded: tensors as little-endian row-major bytes
// (strings for BYTES), shapes as the protocol gives them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "status.h"

namespace baton::serve {

using Clock = std::chrono::steady_clock;

struct InputTensor {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;
  std::string bytes;                 // fixed-size datatypes: the elements, row-major, little-endian
  std::vector<std::string> strings;  // BYTES: one string per element
};

struct OutputTensor {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;
  std::string bytes;
  std::vector<std::string> strings;
};

struct InferRequest {
  std::string model;
  std::string version;  // "" : the model's default (highest) version
  std::string id;
  std::vector<InputTensor> inputs;
  std::vector<std::string> outputs;  // requested outputs by name; empty: all of the model's
  Clock::time_point deadline = Clock::time_point::max();
};

struct InferResult {
  Status status;
  std::string model_version;
  std::vector<OutputTensor> outputs;  // in the requested order (the model's when none were requested)
};

// The elements a shape holds, or -1 when a dimension is negative or the product overflows int64.
int64_t element_count(const std::vector<int64_t>& shape);

// BYTES elements in the binary layout of the protocol (REST's binary extension, gRPC's raw contents):
// each a 4-byte little-endian length, then its bytes.
Status decode_length_prefixed(const std::string& tensor_name, const char* data, size_t size,
                              std::vector<std::string>* strings);
std::string encode_length_prefixed(const std::vector<std::string>& strings);

}  // namespace baton::serve
