#include "arena_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace baton {

namespace {
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
}  // namespace

ArenaPlan plan_arena(std::span<const ArenaRequest> requests, size_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    return requests[a].first < requests[b].first;
  });

  std::vector<size_t> placed;  // indices of requests already given an offset
  std::vector<size_t> live;
  for (size_t r : order) {
    const ArenaRequest& req = requests[r];
    const size_t need = align_up(std::max<size_t>(req.bytes, 1), alignment);
    live.clear();
    for (size_t p : placed) {
      if (requests[p].first <= req.last && req.first <= requests[p].last) live.push_back(p);
    }
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    size_t best = std::numeric_limits<size_t>::max();
    size_t best_gap = std::numeric_limits<size_t>::max();
    size_t cursor = 0;
    for (size_t p : live) {
      const size_t start = plan.offsets[p];
      if (start > cursor && start - cursor >= need && start - cursor < best_gap) {
        best = cursor;
        best_gap = start - cursor;
      }
      cursor = std::max(cursor, align_up(start + std::max<size_t>(requests[p].bytes, 1), alignment));
    }
    if (best == std::numeric_limits<size_t>::max()) best = cursor;
    plan.offsets[r] = best;
    plan.total = std::max(plan.total, best + need);
    placed.push_back(r);
  }
  return plan;
}

}  // namespace baton
