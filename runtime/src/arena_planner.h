// Memory planning: every non-constant tensor gets an offset in one arena. Tensors whose lifetimes (first
// and last step that touches them, in execution order) overlap never share bytes; the others may.
// Offsets come from a greedy best-fit: largest tensors first, each into the smallest gap between
// already-placed tensors that are alive at the same time. Offsets are aligned to `alignment`.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace baton {

struct ArenaRequest {
  size_t bytes = 0;
  int first = 0;  // first step the tensor is alive (inclusive)
  int last = 0;   // last step the tensor is alive (inclusive)
};

struct ArenaPlan {
  std::vector<size_t> offsets;  // one per request
  size_t total = 0;             // bytes the arena needs
};

ArenaPlan plan_arena(std::span<const ArenaRequest> requests, size_t alignment = 64);

}  // namespace baton
