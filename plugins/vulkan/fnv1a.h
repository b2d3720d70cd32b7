// FNV-1a, 64 bits: names cache files (compiled shaders, the device listing) after their keys.
#ifndef BATON_VULKAN_FNV1A_H
#define BATON_VULKAN_FNV1A_H

#include <cstdint>
#include <string>

namespace baton::vulkan {

inline uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_FNV1A_H
