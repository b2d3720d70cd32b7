// Data-movement kernels work on any element type by size alone; this picks a trivially copyable type
// of that size, so each kernel is one template instantiated for 1, 2, 4 and 8 bytes.
#ifndef BATON_BUILTIN_KERNELS_ELEMENT_COPY_H
#define BATON_BUILTIN_KERNELS_ELEMENT_COPY_H

#include <cstddef>
#include <cstdint>

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

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_ELEMENT_COPY_H
