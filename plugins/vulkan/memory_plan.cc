#include "memory_plan.h"

#include <algorithm>
#include <numeric>

namespace baton::vulkan {

MemoryPlan plan_memory(const std::vector<Lifetime>& tensors, int64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(tensors.size(), 0);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].bytes > tensors[b].bytes; });
  auto align = [&](int64_t v) { return (v + alignment - 1) / alignment * alignment; };
  std::vector<size_t> placed;
  for (size_t i : order) {
    const Lifetime& t = tensors[i];
    // The placed tensors alive at the same time, by offset; take the first gap that fits.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed) {
      const Lifetime& u = tensors[j];
      if (u.first <= t.last && t.first <= u.last) busy.emplace_back(plan.offsets[j], plan.offsets[j] + u.bytes);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + t.bytes <= begin) break;
      offset = std::max(offset, align(end));
    }
    plan.offsets[i] = offset;
    plan.total = std::max(plan.total, align(offset + t.bytes));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace baton::vulkan
