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

// A node's scratch: in the host's arena where the host gives it (shared with every other node's, so a
// graph of many products needs one block of scratch, not one each), else a ScratchBuffer of its own.
// `prepare` in the kernel's prepare, `data` in its invoke (64-byte aligned either way).
class NodeScratch {
 public:
  template <typename Context>
  void prepare(const Context& ctx, size_t bytes) {
    in_arena_ = bytes > 0 && ctx.request_arena_scratch(bytes);
    own_.resize(in_arena_ ? 0 : bytes);
  }
  template <typename Context>
  uint8_t* data(const Context& ctx) {
    return in_arena_ ? static_cast<uint8_t*>(ctx.arena_scratch()) : own_.data();
  }
  template <typename T, typename Context>
  T* as(const Context& ctx) {
    return reinterpret_cast<T*>(data(ctx));
  }

 private:
  bool in_arena_ = false;
  ScratchBuffer own_;
};

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_SCRATCH_BUFFER_H
