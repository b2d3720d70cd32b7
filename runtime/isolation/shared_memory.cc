#include "shared_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

namespace baton::isolation {
namespace {

struct Block {
  uint64_t id;
  size_t size;
  int fd;
  bool writable;
};

struct Blocks {
  std::mutex mutex;
  std::map<uintptr_t, Block> by_base;
  uint64_t next_id = 1;
  std::atomic<uint64_t> generation{0};
};

Blocks& blocks() {
  static Blocks* b = new Blocks;  // never destroyed: arenas may go after static destructors ran
  return *b;
}

}  // namespace

uint64_t register_block(const void* base, size_t size, int fd, bool writable) {
  Blocks& b = blocks();
  std::lock_guard lock(b.mutex);
  const uint64_t id = b.next_id++;
  b.by_base[reinterpret_cast<uintptr_t>(base)] = Block{id, size, fd, writable};
  return id;
}

void unregister_block(uint64_t id) {
  Blocks& b = blocks();
  std::lock_guard lock(b.mutex);
  for (auto it = b.by_base.begin(); it != b.by_base.end(); ++it) {
    if (it->second.id != id) continue;
    ::close(it->second.fd);
    b.by_base.erase(it);
    b.generation.fetch_add(1, std::memory_order_release);
    return;
  }
}

std::optional<SharedLocation> find_shared(const void* p, size_t size) {
  Blocks& b = blocks();
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(b.mutex);
  auto it = b.by_base.upper_bound(at);
  if (it == b.by_base.begin()) return std::nullopt;
  --it;
  const uintptr_t base = it->first;
  if (at + size > base + it->second.size) return std::nullopt;
  return SharedLocation{it->second.id, at - base, it->second.size, it->second.fd, it->second.writable};
}

std::vector<uint64_t> live_blocks() {
  Blocks& b = blocks();
  std::lock_guard lock(b.mutex);
  std::vector<uint64_t> ids;
  for (const auto& entry : b.by_base) ids.push_back(entry.second.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

uint64_t blocks_generation() { return blocks().generation.load(std::memory_order_acquire); }

std::unique_ptr<SharedArena> SharedArena::allocate(size_t size) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const size_t rounded = (size + static_cast<size_t>(page) - 1) / static_cast<size_t>(page) * static_cast<size_t>(page);
  const int fd = ::memfd_create("baton-arena", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (::ftruncate(fd, static_cast<off_t>(rounded)) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<SharedArena> arena(new SharedArena);
  arena->data_ = static_cast<uint8_t*>(p);
  arena->size_ = rounded;
  arena->id_ = register_block(p, rounded, fd, true);
  return arena;
}

SharedArena::~SharedArena() {
  unregister_block(id_);
  if (data_) ::munmap(data_, size_);
}

}  // namespace baton::isolation
