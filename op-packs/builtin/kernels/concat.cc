#include "kernels/concat.h"

#include <cstring>

#include "kernels/element_copy.h"

namespace baton::builtin {

namespace {

// Chunks this short (a few channels a pixel) are copied element by element: a library call per chunk
// costs more than the copy.
constexpr int64_t kShortChunkBytes = 64;

}  // namespace

void concat(int64_t outer, const int64_t* chunk, const void* const* inputs, int count, void* out,
            size_t element_size) {
  bool short_chunks = true;
  for (int i = 0; i < count; ++i) short_chunks = short_chunks && chunk[i] * static_cast<int64_t>(element_size) <= kShortChunkBytes;
  bool inline_chunks = true;  // every chunk one inline copy (PACK of int8 boxes: 4 bytes each)
  for (int i = 0; i < count; ++i) inline_chunks = inline_chunks && copies_inline(chunk[i] * element_size);
  if (inline_chunks && outer > 1) {
    auto* dst = static_cast<unsigned char*>(out);
    for (int64_t o = 0; o < outer; ++o) {
      for (int i = 0; i < count; ++i) {
        const size_t bytes = static_cast<size_t>(chunk[i]) * element_size;
        copy_run(dst, static_cast<const unsigned char*>(inputs[i]) + o * bytes, bytes);
        dst += bytes;
      }
    }
    return;
  }
  if (short_chunks && outer > 1) {
    bool done = false;
    with_element_type(element_size, [&](auto zero) {
      using T = decltype(zero);
      T* dst = static_cast<T*>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int i = 0; i < count; ++i) {
          const T* src = static_cast<const T*>(inputs[i]) + o * chunk[i];
          for (int64_t e = 0; e < chunk[i]; ++e) *dst++ = src[e];
        }
      }
      done = true;
    });
    if (done) return;
  }
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
