// Which pages of a model's bytes are mapped into this process now, through /proc/self/pagemap (bit 63:
// the page is present): the tests of ABI 1.15's tensor_release_constant, where a kernel that keeps a
// packed copy of its weights lets the host give their pages in the model file back.
#ifndef BATON_TEST_PAGE_RESIDENCY_H
#define BATON_TEST_PAGE_RESIDENCY_H

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "model.h"

namespace baton::test {

// How many of the pages lying wholly inside `bytes` are mapped into this process now; -1 if pagemap
// cannot be read.
inline int present_pages(std::span<const uint8_t> bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) / page * page;
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int present = 0;
  for (uintptr_t p = begin; p < end; p += page) {
    uint64_t entry = 0;
    if (pread(fd, &entry, sizeof entry, static_cast<off_t>(p / page * sizeof entry)) != sizeof entry) {
      close(fd);
      return -1;
    }
    present += (entry >> 63) & 1;
  }
  close(fd);
  return present;
}

inline int whole_pages(std::span<const uint8_t> bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) / page * page;
  return end > begin ? static_cast<int>((end - begin) / page) : 0;
}

inline uint32_t touch(std::span<const uint8_t> bytes) {
  uint32_t sum = 0;
  for (uint8_t b : bytes) sum += b;
  return sum;
}

// `bytes` loaded as a model file (the loader maps its constants from the file): written to a temporary
// file named after `stem`, which is removed at once (the mapping keeps its pages).
inline Expected<std::shared_ptr<const Model>> load_through_a_file(const std::vector<uint8_t>& bytes,
                                                                  const std::string& stem) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (stem + "-" + std::to_string(getpid()) + ".tflite")).string();
  { std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size()); }
  auto model = load_model_file(path);
  std::filesystem::remove(path);
  return model;
}

}  // namespace baton::test

#endif  // BATON_TEST_PAGE_RESIDENCY_H
