#include "kernels/concat.h"

#include <cstring>

namespace baton::builtin {

void concat(int64_t outer, const int64_t* chunk, const void* const* inputs, int count, void* out,
            size_t element_size) {
  auto* dst = static_cast<unsigned char*>(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < count; ++i) {
      const size_t bytes = static_cast<size_t>(chunk[i]) * element_size;
      std::memcpy(dst, static_cast<const unsigned char*>(inputs[i]) + o * bytes, bytes);
      dst += bytes;
    }
  }
}

void split(int64_t outer, const int64_t* chunk, const void* in, void* const* outputs, int count,
           size_t element_size) {
  const auto* src = static_cast<const unsigned char*>(in);
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < count; ++i) {
      const size_t bytes = static_cast<size_t>(chunk[i]) * element_size;
      std::memcpy(static_cast<unsigned char*>(outputs[i]) + o * bytes, src, bytes);
      src += bytes;
    }
  }
}

}  // namespace baton::builtin
