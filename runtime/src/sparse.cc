#include "sparse.h"

#include <cstring>

namespace baton {

namespace {

struct Walker {
  const TensorInfo& t;
  const Sparsity& s;
  size_t esize;
  size_t value_count;
  std::vector<size_t> strides;   // dense strides of the original dimensions
  std::vector<int32_t> coords;   // original-dimension coordinates
  std::vector<uint8_t>& out;
  std::string error;

  bool walk(size_t level, size_t position) {
    if (level == s.dims.size()) {
      if (position >= value_count) {
        error = "sparse value " + std::to_string(position) + " is past the " + std::to_string(value_count) + " stored";
        return false;
      }
      size_t offset = 0;
      for (size_t d = 0; d < coords.size(); ++d) offset += static_cast<size_t>(coords[d]) * strides[d];
      std::memcpy(out.data() + offset * esize, t.data.data() + position * esize, esize);
      return true;
    }
    const Sparsity::Dimension& dim = s.dims[level];
    const int32_t original = s.traversal_order[level];
    const int32_t extent = t.shape[original];
    if (!dim.sparse) {
      if (dim.dense_size != extent) {
        error = "dense dimension " + std::to_string(level) + " has size " + std::to_string(dim.dense_size) +
                ", the shape says " + std::to_string(extent);
        return false;
      }
      for (int32_t i = 0; i < extent; ++i) {
        coords[original] = i;
        if (!walk(level + 1, position * static_cast<size_t>(extent) + static_cast<size_t>(i))) return false;
      }
      return true;
    }
    if (position + 1 >= dim.segments.size()) {
      error = "sparse dimension " + std::to_string(level) + " has too few segments";
      return false;
    }
    const int32_t begin = dim.segments[position], end = dim.segments[position + 1];
    if (begin < 0 || end < begin || static_cast<size_t>(end) > dim.indices.size()) {
      error = "sparse dimension " + std::to_string(level) + " has a bad segment [" + std::to_string(begin) + ", " +
              std::to_string(end) + ")";
      return false;
    }
    for (int32_t k = begin; k < end; ++k) {
      const int32_t index = dim.indices[k];
      if (index < 0 || index >= extent) {
        error = "sparse index " + std::to_string(index) + " is outside dimension " + std::to_string(original) +
                " of size " + std::to_string(extent);
        return false;
      }
      coords[original] = index;
      if (!walk(level + 1, static_cast<size_t>(k))) return false;
    }
    return true;
  }
};

}  // namespace

Status densify(const TensorInfo& tensor, std::vector<uint8_t>& out) {
  const std::string where = "tensor " + std::to_string(tensor.index) + " \"" + tensor.name + "\"";
  if (!tensor.sparsity) return Status::error(where + " is not sparse");
  const Sparsity& s = *tensor.sparsity;
  if (!s.block_map.empty()) return Status::error(where + ": block-sparse tensors are not supported yet");
  const size_t rank = tensor.shape.size();
  if (s.traversal_order.size() != rank) return Status::error(where + ": traversal order does not match the rank");
  std::vector<bool> seen(rank, false);
  for (int32_t d : s.traversal_order) {
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[d]) {
      return Status::error(where + ": traversal order is not a permutation of the dimensions");
    }
    seen[d] = true;
  }
  const size_t esize = element_size(tensor.type);
  size_t bytes = 0;
  if (esize == 0 || !checked_byte_size(tensor.shape, tensor.type, &bytes)) {
    return Status::error(where + ": cannot densify type " + type_name(tensor.type));
  }
  out.assign(bytes, 0);
  Walker w{tensor, s, esize, tensor.data.size() / esize, std::vector<size_t>(rank, 1), std::vector<int32_t>(rank, 0),
           out, {}};
  for (size_t d = rank; d-- > 1;) w.strides[d - 1] = w.strides[d] * static_cast<size_t>(tensor.shape[d]);
  if (!w.walk(0, 0)) return Status::error(where + ": malformed sparse data: " + w.error);
  return Status::ok();
}

}  // namespace baton
