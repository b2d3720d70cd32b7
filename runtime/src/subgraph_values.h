// What the runtime's own nodes (runtime_nodes.cc, subgraph_calls.cc) share: reading a tensor's bytes
// wherever they live, copying values between subgraphs, and setting a shape.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "graph.h"

namespace baton::subgraph_values {

inline const uint8_t* bytes_of(const Tensor& t) { return t.is_constant ? t.constant : t.data; }

// Copies a value of the same shape (the caller has checked it).
inline void copy_tensor(Tensor& to, const Tensor& from) {
  if (to.bytes == 0 || &to == &from || to.data == bytes_of(from)) return;
  std::memcpy(to.data, bytes_of(from), to.bytes);
}

inline void set_shape(Tensor& t, const std::vector<int32_t>& shape) {
  if (t.shape != shape) t.shape = shape;
  checked_byte_size(t.shape, t.type, &t.bytes);
}

}  // namespace baton::subgraph_values
