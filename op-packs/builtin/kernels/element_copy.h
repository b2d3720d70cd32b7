// Data-movement kernels work on any element type by size alone; this picks a trivially copyable type
// of that size, so each kernel is one template instantiated for 1, 2, 4 and 8 bytes.
#ifndef BATON_BUILTIN_KERNELS_ELEMENT_COPY_H
#define BATON_BUILTIN_KERNELS_ELEMENT_COPY_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace baton::builtin {

template <typename F>
void with_element_type(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: break;
  }
}

// Copies one run of `bytes` (a pixel's channels, a block's row). The kernels that move many short runs
// (DEPTH_TO_SPACE, SPACE_TO_BATCH_ND, RESIZE_NEAREST_NEIGHBOR: 16 int8 channels make 16 bytes) spent
// more in the call to memcpy than in the copy: runs of whole 16-byte pieces up to 128 bytes, and of 4 or
// 8 bytes, are copied inline.
inline bool copies_inline(size_t bytes) { return bytes == 4 || bytes == 8 || (bytes % 16 == 0 && bytes <= 128); }

inline void copy_run(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (bytes % 16 == 0 && bytes <= 128) {
    for (size_t i = 0; i < bytes; i += 16) std::memcpy(d + i, s + i, 16);
  } else if (bytes == 8) {
    std::memcpy(d, s, 8);
  } else if (bytes == 4) {
    std::memcpy(d, s, 4);
  } else {
    std::memcpy(d, s, bytes);
  }
}

// A run that may be long: copy_run's inline pieces up to 64 bytes, memcpy's wider moves past that (128-byte
// pixels of 32 floats copied in 16-byte pieces were slower than memcpy on Zen 4).
inline void copy_block(void* dst, const void* src, size_t bytes) {
  if (bytes > 64) std::memcpy(dst, src, bytes);
  else copy_run(dst, src, bytes);
}

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_ELEMENT_COPY_H
