// NumPy .npy files (format 1.0/2.0, little-endian, C order) in and out: the exchange format with the
// reference runner, which reads and writes the same files. A string tensor is a NumPy array of fixed-width
// bytes ('|S<n>') or text ('<U<n>', written as UTF-8) in, and of bytes out; its NpyArray holds TFLite's
// packed buffer (baton/string_tensor.hpp). NumPy pads each element with NULs and drops trailing NULs on
// reading, and so does this: a string that ends in NUL bytes loses them on the way through a file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "status.h"

namespace baton::tool {

struct NpyArray {
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> data;
};

Expected<NpyArray> read_npy(const std::string& path);
Status write_npy(const std::string& path, const NpyArray& array);
// The NumPy dtype text ("<f4") of a type, or "" when .npy has none for it.
std::string npy_descr(baton_tensor_type type);

}  // namespace baton::tool
