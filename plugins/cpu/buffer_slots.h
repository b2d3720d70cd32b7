// Memory for the tensors that pass between two steps of one cpu partition: each lives from the step that
// writes it to the last step that reads it, and tensors whose lives do not overlap share one slot, so a
// partition of many steps holds about as much as its two or three largest tensors at a time.
#ifndef BATON_CPU_BUFFER_SLOTS_H
#define BATON_CPU_BUFFER_SLOTS_H

#include <algorithm>
#include <cstddef>
#include <vector>

namespace baton::cpu {

// Tensor b (of size[b] floats) is written by step written[b] and last read by step last_read[b]. Returns
// the slot of every tensor and sets slot_size to the floats each slot needs. A step's output never shares
// a slot with a tensor that step reads: a slot comes free only after its tensor's last reader.
inline std::vector<int> assign_slots(const std::vector<size_t>& size, const std::vector<int>& written,
                                     const std::vector<int>& last_read, std::vector<size_t>& slot_size) {
  const size_t n = size.size();
  std::vector<int> slot(n, -1), free_slots;
  slot_size.clear();
  int steps = 0;
  for (size_t b = 0; b < n; ++b) steps = std::max({steps, written[b] + 1, last_read[b] + 1});
  for (int step = 0; step < steps; ++step) {
    for (size_t b = 0; b < n; ++b) {
      if (written[b] != step) continue;
      // The free slot that fits best (the smallest big enough, else the largest, which grows).
      auto best = free_slots.end();
      for (auto it = free_slots.begin(); it != free_slots.end(); ++it) {
        const size_t have = slot_size[static_cast<size_t>(*it)];
        if (best == free_slots.end()) {
          best = it;
          continue;
        }
        const size_t best_have = slot_size[static_cast<size_t>(*best)];
        const bool fits = have >= size[b], best_fits = best_have >= size[b];
        if ((fits && (!best_fits || have < best_have)) || (!fits && !best_fits && have > best_have)) best = it;
      }
      if (best != free_slots.end()) {
        slot[b] = *best;
        free_slots.erase(best);
      } else {
        slot[b] = static_cast<int>(slot_size.size());
        slot_size.push_back(0);
      }
      slot_size[static_cast<size_t>(slot[b])] = std::max(slot_size[static_cast<size_t>(slot[b])], size[b]);
    }
    for (size_t b = 0; b < n; ++b) {
      if (slot[b] >= 0 && std::max(written[b], last_read[b]) == step) free_slots.push_back(slot[b]);
    }
  }
  return slot;
}

}  // namespace baton::cpu

#endif  // BATON_CPU_BUFFER_SLOTS_H
