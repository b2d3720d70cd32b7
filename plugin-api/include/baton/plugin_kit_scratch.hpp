// Memory a delegate partition computes in (headers only, for C++ plugins):
//  - plan_offsets: the tensors that pass between two steps of one partition each live from the step that
//    writes them to the last step that reads them; tensors whose lives do not overlap share memory (the
//    host plans its arena with the same planner);
//  - plan_with_regions: the same, with memory beside the block that the partition may compute in for a
//    part of its run (ABI 1.8: an output until the step that writes it, a reusable input after the last
//    step that reads it), so that a long partition needs no scratch where such tensors lie idle;
//  - PartitionScratch: one block for those tensors, in the host's arena where the host gives it (ABI 1.6:
//    alive only while the partition runs, so it shares memory with the tensors not alive then and with
//    other partitions' scratch), else allocated by the plugin.
#ifndef BATON_PLUGIN_KIT_SCRATCH_HPP
#define BATON_PLUGIN_KIT_SCRATCH_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "baton/plugin_api.h"

namespace baton::kit {

// A block of `bytes` alive from step `first` to step `last` (both inclusive, in execution order).
struct Lifetime {
  size_t bytes = 0;
  int first = 0, last = 0;
};

// Offsets for blocks in one buffer: blocks whose lifetimes overlap never share bytes, the others may (a
// step's output never shares with what the step reads). A greedy best fit: largest blocks first, each
// into the smallest gap between placed blocks alive at the same time. Offsets are multiples of
// `alignment`; *total is the buffer's size.
inline std::vector<size_t> plan_offsets(const std::vector<Lifetime>& blocks, size_t alignment, size_t* total) {
  auto align_up = [alignment](size_t v) { return (v + alignment - 1) / alignment * alignment; };
  std::vector<size_t> offsets(blocks.size(), 0);
  std::vector<size_t> order(blocks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (blocks[a].bytes != blocks[b].bytes) return blocks[a].bytes > blocks[b].bytes;
    return blocks[a].first < blocks[b].first;
  });
  *total = 0;
  std::vector<size_t> placed, live;
  for (size_t r : order) {
    const Lifetime& block = blocks[r];
    const size_t need = align_up(std::max<size_t>(block.bytes, 1));
    live.clear();
    for (size_t p : placed) {
      if (blocks[p].first <= block.last && block.first <= blocks[p].last) live.push_back(p);
    }
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (size_t p : live) {
      const size_t start = offsets[p];
      if (start > cursor && start - cursor >= need && start - cursor < best_gap) {
        best = cursor;
        best_gap = start - cursor;
      }
      cursor = std::max(cursor, align_up(start + std::max<size_t>(blocks[p].bytes, 1)));
    }
    if (best == SIZE_MAX) best = cursor;
    offsets[r] = best;
    *total = std::max(*total, best + need);
    placed.push_back(r);
  }
  return offsets;
}

// Memory beside the scratch block, free from step `first` to step `last` (both inclusive).
struct Region {
  size_t bytes = 0;
  int first = 0, last = 0;
};

// Where a block lies: in region `region` (-1: the scratch block) at `offset` bytes into it.
struct Place {
  int region = -1;
  size_t offset = 0;
};

// Places blocks in the regions first (largest blocks first, each into the smallest region whose free
// steps hold its life and where plan_offsets fits it beside the blocks placed there before), the rest in
// the scratch block by plan_offsets; *total is the block's size.
inline std::vector<Place> plan_with_regions(const std::vector<Lifetime>& blocks, const std::vector<Region>& regions,
                                            size_t alignment, size_t* total) {
  std::vector<Place> places(blocks.size());
  std::vector<size_t> order(blocks.size()), by_size(regions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) { return regions[a].bytes < regions[b].bytes; });
  std::vector<std::vector<size_t>> members(regions.size());  // block indices, in the order they came
  auto subset = [&](const std::vector<size_t>& ids, std::vector<size_t>* offsets) {
    std::vector<Lifetime> lives;
    for (size_t id : ids) lives.push_back(blocks[id]);
    size_t bytes = 0;
    *offsets = plan_offsets(lives, alignment, &bytes);
    return bytes;
  };
  std::vector<size_t> offsets;
  for (size_t b : order) {
    if (blocks[b].bytes == 0) continue;
    for (size_t r : by_size) {
      const Region& region = regions[r];
      if (blocks[b].bytes > region.bytes || blocks[b].first < region.first || blocks[b].last > region.last) continue;
      members[r].push_back(b);
      if (subset(members[r], &offsets) <= region.bytes) {
        places[b].region = static_cast<int>(r);
        break;
      }
      members[r].pop_back();
    }
  }
  for (size_t r = 0; r < regions.size(); ++r) {
    (void)subset(members[r], &offsets);
    for (size_t k = 0; k < members[r].size(); ++k) places[members[r][k]].offset = offsets[k];
  }
  std::vector<size_t> rest;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (places[b].region < 0) rest.push_back(b);
  }
  const size_t scratch = subset(rest, &offsets);
  for (size_t k = 0; k < rest.size(); ++k) places[rest[k]].offset = offsets[k];
  *total = rest.empty() ? 0 : scratch;
  return places;
}

class PartitionScratch {
 public:
  // During partition_prepare: `bytes` for this partition (0 for none). Throws std::bad_alloc when the
  // host gives no scratch and memory of the plugin's own cannot be had.
  void request(const baton_host_api* api, const baton_partition* partition, size_t bytes) {
    own_.reset();
    in_arena_ = false;
    if (bytes == 0) return;
    const bool host_gives = BATON_STRUCT_HAS(api, baton_host_api, partition_scratch) && api->partition_request_scratch &&
                            api->partition_scratch;
    if (host_gives && api->partition_request_scratch(partition, bytes, nullptr) == BATON_OK) {
      in_arena_ = true;
      return;
    }
    own_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    if (!own_) throw std::bad_alloc();
  }

  // The block's address, from the end of the prepare that asked for it to the next prepare.
  uint8_t* data(const baton_host_api* api, const baton_partition* partition) const {
    return in_arena_ ? static_cast<uint8_t*>(api->partition_scratch(partition)) : own_.get();
  }

  bool in_arena() const { return in_arena_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> own_;
  bool in_arena_ = false;
};

}  // namespace baton::kit

#endif  // BATON_PLUGIN_KIT_SCRATCH_HPP
