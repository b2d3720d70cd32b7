// A byte buffer whose usable start is 64-byte aligned, sized in prepare and reused by every invoke
// (SIMD kernels and per-worker scratch want cache-line alignment; std::vector gives 16).
#ifndef BATON_BUILTIN_GLUE_SCRATCH_BUFFER_H
#define BATON_BUILTIN_GLUE_SCRATCH_BUFFER_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::builtin {

class ScratchBuffer {
 public:
  void resize(size_t bytes) { storage_.resize(bytes + 64); }
  uint8_t* data() {
    const auto address = reinterpret_cast<uintptr_t>(storage_.data());
    return storage_.data() + ((64 - address % 64) % 64);
  }

 private:
  std::vector<uint8_t> storage_;
};

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_SCRATCH_BUFFER_H
