#include "arena_planner.h"

#include "baton/plugin_kit_scratch.hpp"

namespace baton {

// The planner is the one delegates plan their scratch with (plugin_kit_scratch.hpp).
ArenaPlan plan_arena(std::span<const ArenaRequest> requests, size_t alignment) {
  std::vector<kit::Lifetime> blocks;
  blocks.reserve(requests.size());
  for (const ArenaRequest& r : requests) blocks.push_back({r.bytes, r.first, r.last});
  ArenaPlan plan;
  plan.offsets = kit::plan_offsets(blocks, alignment, &plan.total);
  return plan;
}

}  // namespace baton
