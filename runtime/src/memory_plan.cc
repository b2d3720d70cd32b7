// Plan memory: tensor lifetimes from the execution order, one arena placed by the best-fit planner
// (arena_planner.h); model inputs live for the whole run, a partition's inner tensors are the delegate's,
// and the scratch a delegate asks for a partition lives while that partition runs.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <cstring>

#include "arena_planner.h"
#include "subgraph.h"

namespace baton {

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer every tensor gets its own place in the arena with a poisoned redzone after
// it, so a plugin that writes past its output is caught at the write instead of corrupting a neighbour.
constexpr bool kGuardTensors = true;
constexpr size_t kRedzone = 64;
#else
constexpr bool kGuardTensors = false;
constexpr size_t kRedzone = 0;
#endif

Status Subgraph::plan_memory() {
  // Lifetimes in steps; model inputs are alive for the whole run (no tensor is placed over them, so a
  // first run that fails in a delegate can be repeated from the same inputs without copying them), outputs
  // to the end.
  const int last_step = std::max<int>(0, static_cast<int>(plan_.steps.size()) - 1);
  std::vector<int> first(tensors_.size(), -1), last(tensors_.size(), -1);
  auto touch = [&](const Tensor* t, int step) {
    if (!t || t->is_constant || t->dynamic) return;  // a dynamic tensor gets its memory at invoke
    int i = t->index;
    if (first[i] < 0 || step < first[i]) first[i] = step;
    last[i] = std::max(last[i], step);
  };
  for (const Tensor* t : inputs_) {
    touch(t, 0);
    touch(t, last_step);
  }
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const int step = static_cast<int>(s);
    if (plan_.steps[s].partition) {
      // Tensors inside a partition live in the delegate's memory; only the boundary is the host's.
      for (const Tensor* t : plan_.steps[s].partition->inputs) touch(t, step);
      for (const Tensor* t : plan_.steps[s].partition->outputs) touch(t, step);
      continue;
    }
    for (const Tensor* t : plan_.steps[s].node->inputs) touch(t, step);
    for (const Tensor* t : plan_.steps[s].node->outputs) touch(t, step);
  }
  for (const Tensor* t : outputs_) touch(t, last_step);
  for (const Tensor& t : tensors_) {
    if (t.info->is_variable && !t.is_constant) {
      first[t.index] = 0;
      last[t.index] = last_step;
    }
  }
  std::vector<ArenaRequest> requests;
  std::vector<Tensor*> owners;
  naive_bytes_ = 0;
  for (Tensor& t : tensors_) {
    if (first[t.index] < 0) continue;
    if (kGuardTensors) {
      requests.push_back({t.bytes + kRedzone, 0, last_step});
    } else {
      requests.push_back({t.bytes, first[t.index], last[t.index]});
    }
    owners.push_back(&t);
    naive_bytes_ += (t.bytes + 63) / 64 * 64;
  }
  // A partition's scratch (ABI 1.6) lives for its step only.
  std::vector<Partition*> scratch_owners;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    Partition* p = plan_.steps[s].partition;
    if (!p || p->scratch_bytes == 0) continue;
    const int step = static_cast<int>(s);
    requests.push_back(kGuardTensors ? ArenaRequest{p->scratch_bytes + kRedzone, 0, last_step}
                                     : ArenaRequest{p->scratch_bytes, step, step});
    scratch_owners.push_back(p);
    naive_bytes_ += (p->scratch_bytes + 63) / 64 * 64;
  }
  ArenaPlan plan = plan_arena(requests, 64);
  if (plan.total > state_.env->limits().max_arena_bytes) {
    return Status::error(source() + ": the arena needs " + std::to_string(plan.total) +
                         " bytes, over the limit of " + std::to_string(state_.env->limits().max_arena_bytes));
  }
  for (const Tensor* t : owners) {
    if (t->bytes > state_.env->limits().max_tensor_bytes) {
      return Status::error(source() + ": tensor " + std::to_string(t->index) + " \"" + t->info->name +
                           "\" needs " + std::to_string(t->bytes) + " bytes, over the tensor limit of " +
                           std::to_string(state_.env->limits().max_tensor_bytes));
    }
  }
  std::shared_ptr<uint8_t> arena;
  if (plan.total > 0) {
    // In shared memory when a plugin runs in a child process: its invokes read and write tensors in place.
    arena = state_.env->allocate(plan.total);
    if (!arena) {
      return Status::error(source() + ": cannot allocate the " + std::to_string(plan.total) + "-byte arena" +
                           (state_.env->shares_memory() ? " in shared memory" : ""));
    }
  }
#if defined(__SANITIZE_ADDRESS__)
  if (arena_ && arena_bytes_ > 0) ASAN_UNPOISON_MEMORY_REGION(arena_.get(), arena_bytes_);
#endif
  // The arena is not cleared (every tensor is written before it is read, and clearing would only move the
  // first touch of each page out of the first run into load), except variable tensors, which start at zero (an int8 one at its zero point, as in TFLite).
  // Inputs keep their values across a new plan (a fallback after a failed first run re-runs from them).
  for (size_t i = 0; i < owners.size(); ++i) {
    Tensor& t = *owners[i];
    const uint8_t* old = t.planned;
    t.data = arena.get() + plan.offsets[i];
    t.planned = nullptr;
    if (t.info->is_variable) {
      reset_variable(t);
    } else if (old && arena_ && old >= arena_.get() && old + t.bytes <= arena_.get() + arena_bytes_) {
      std::memcpy(t.data, old, t.bytes);
    }
  }
  for (size_t i = 0; i < scratch_owners.size(); ++i) {
    scratch_owners[i]->scratch = arena.get() + plan.offsets[owners.size() + i];
  }
  arena_ = std::move(arena);
  arena_bytes_ = plan.total;
#if defined(__SANITIZE_ADDRESS__)
  if (plan.total > 0) {
    ASAN_POISON_MEMORY_REGION(arena_.get(), plan.total);
    for (const Tensor* t : owners) ASAN_UNPOISON_MEMORY_REGION(t->data, t->bytes);
    for (const Partition* p : scratch_owners) ASAN_UNPOISON_MEMORY_REGION(p->scratch, p->scratch_bytes);
  }
#endif
  return Status::ok();
}

}  // namespace baton
