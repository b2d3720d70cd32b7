// Offsets of a partition's device tensors in one arena: tensors whose lifetimes (first to last step
// that touches them) overlap never share bytes; the others reuse memory. Greedy, largest first, each at
// the lowest aligned offset that fits beside the tensors already placed that live at the same time.
#ifndef BATON_VULKAN_MEMORY_PLAN_H
#define BATON_VULKAN_MEMORY_PLAN_H

#include <cstdint>
#include <vector>

namespace baton::vulkan {

struct Lifetime {
  int64_t bytes = 0;
  int first = 0, last = 0;  // steps, inclusive
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per lifetime
  int64_t total = 0;             // arena bytes
};

MemoryPlan plan_memory(const std::vector<Lifetime>& tensors, int64_t alignment);

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_MEMORY_PLAN_H
