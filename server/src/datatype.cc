#include "datatype.h"

#include <cstring>

namespace baton::serve {

namespace {

struct Entry {
  baton_tensor_type type;
  std::string_view name;
  size_t size;
};

// STRING is BYTES: TFLite's string tensors hold bytes, which is what the protocol's BYTES carries.
constexpr Entry kTypes[] = {
    {BATON_TYPE_BOOL, "BOOL", 1},     {BATON_TYPE_UINT8, "UINT8", 1},     {BATON_TYPE_UINT16, "UINT16", 2},
    {BATON_TYPE_UINT32, "UINT32", 4}, {BATON_TYPE_UINT64, "UINT64", 8},   {BATON_TYPE_INT8, "INT8", 1},
    {BATON_TYPE_INT16, "INT16", 2},   {BATON_TYPE_INT32, "INT32", 4},     {BATON_TYPE_INT64, "INT64", 8},
    {BATON_TYPE_FLOAT16, "FP16", 2},  {BATON_TYPE_FLOAT32, "FP32", 4},    {BATON_TYPE_FLOAT64, "FP64", 8},
    {BATON_TYPE_BFLOAT16, "BF16", 2}, {BATON_TYPE_STRING, "BYTES", 0},
};

}  // namespace

std::optional<std::string_view> protocol_datatype(baton_tensor_type type) {
  for (const Entry& e : kTypes) {
    if (e.type == type) return e.name;
  }
  return std::nullopt;
}

bool is_protocol_datatype(std::string_view name) {
  for (const Entry& e : kTypes) {
    if (e.name == name) return true;
  }
  return false;
}

size_t datatype_size(std::string_view name) {
  for (const Entry& e : kTypes) {
    if (e.name == name) return e.size;
  }
  return 0;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace baton::serve
