// Memory that an isolated plugin's child process sees at the same bytes as the host: arenas allocated
// in anonymous shared files (memfd) and model files mapped from disk. Every such block is registered
// with an id that is never reused in the process, so a child maps each block once (from the descriptor
// the host sends) and a tensor travels as (block id, offset): an invoke moves no tensor data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace baton::isolation {

struct SharedLocation {
  uint64_t block = 0;   // the block's id
  uint64_t offset = 0;  // from the block's start
  size_t block_size = 0;
  int fd = -1;          // borrowed: valid while the block is registered
  bool writable = false;
};

// Registers [base, base + size) as block `fd` (owned from now on: closed at unregister). Returns its id.
uint64_t register_block(const void* base, size_t size, int fd, bool writable);
void unregister_block(uint64_t id);
// The block holding `size` bytes at `p`, if any (thread-safe).
std::optional<SharedLocation> find_shared(const void* p, size_t size);
// The ids of every block registered now, in increasing order (to tell a child what it may unmap).
std::vector<uint64_t> live_blocks();
// Changes whenever a block goes (a lock-free read): a place found before is stale once it changed, even
// where a new block took the old one's address.
uint64_t blocks_generation();

// Zeroed, page-aligned memory in a memfd, registered while it lives; for arenas.
class SharedArena {
 public:
  static std::unique_ptr<SharedArena> allocate(size_t size);  // null when the system refuses
  ~SharedArena();
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  SharedArena() = default;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint64_t id_ = 0;
};

}  // namespace baton::isolation
