// Plan memory (memory_plan.h), and the Subgraph's use of its answer: the arena from the environment's
// allocator, each tensor pointed at its place.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <algorithm>
#include <cstring>

#include "memory_plan.h"

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

Expected<MemoryPlan> plan_memory(const MemoryPlanInputs& in) {
  // Lifetimes in steps; model inputs are alive for the whole run (no tensor is placed over them, so a
  // first run that fails in a delegate can be repeated from the same inputs without copying them), outputs
  // to the end.
  const std::span<const ExecutionStep> steps = in.steps;
  const int last_step = std::max<int>(0, static_cast<int>(steps.size()) - 1);
  std::vector<int> first(in.tensors.size(), -1), last(in.tensors.size(), -1);
  auto touch = [&](const Tensor* t, int step) {
    if (!t || t->is_constant || t->dynamic) return;  // a dynamic tensor gets its memory at invoke
    int i = t->index;
    if (first[i] < 0 || step < first[i]) first[i] = step;
    last[i] = std::max(last[i], step);
  };
  for (const Tensor* t : in.inputs) {
    touch(t, 0);
    touch(t, last_step);
  }
  for (size_t s = 0; s < steps.size(); ++s) {
    const int step = static_cast<int>(s);
    if (steps[s].partition) {
      // Tensors inside a partition live in the delegate's memory; only the boundary is the host's.
      for (const Tensor* t : steps[s].partition->inputs) touch(t, step);
      for (const Tensor* t : steps[s].partition->outputs) touch(t, step);
      continue;
    }
    for (const Tensor* t : steps[s].node->inputs) touch(t, step);
    for (const Tensor* t : steps[s].node->outputs) touch(t, step);
  }
  for (const Tensor* t : in.outputs) touch(t, last_step);
  for (const Tensor& t : in.tensors) {
    if (t.info->is_variable && !t.is_constant) {
      first[t.index] = 0;
      last[t.index] = last_step;
    }
  }
  MemoryPlan plan;
  std::vector<ArenaRequest> requests;
  for (Tensor& t : in.tensors) {
    if (first[t.index] < 0) continue;
    if (kGuardTensors) {
      requests.push_back({t.bytes + kRedzone, 0, last_step});
    } else {
      requests.push_back({t.bytes, first[t.index], last[t.index]});
    }
    plan.tensors.push_back(&t);
    plan.naive_bytes += (t.bytes + 63) / 64 * 64;
  }
  // A partition's scratch (ABI 1.6) lives for its step only.
  for (size_t s = 0; s < steps.size(); ++s) {
    Partition* p = steps[s].partition;
    if (!p || p->scratch_bytes == 0) continue;
    const int step = static_cast<int>(s);
    requests.push_back(kGuardTensors ? ArenaRequest{p->scratch_bytes + kRedzone, 0, last_step}
                                     : ArenaRequest{p->scratch_bytes, step, step});
    plan.scratch.push_back(p);
    plan.naive_bytes += (p->scratch_bytes + 63) / 64 * 64;
  }
  // An op-pack node's scratch (ABI 1.14) likewise.
  for (size_t s = 0; s < steps.size(); ++s) {
    Node* n = steps[s].node;
    if (steps[s].partition || !n || n->kernel_scratch_bytes == 0) continue;
    const int step = static_cast<int>(s);
    requests.push_back(kGuardTensors ? ArenaRequest{n->kernel_scratch_bytes + kRedzone, 0, last_step}
                                     : ArenaRequest{n->kernel_scratch_bytes, step, step});
    plan.node_scratch.push_back(n);
    plan.naive_bytes += (n->kernel_scratch_bytes + 63) / 64 * 64;
  }
  ArenaPlan arena = plan_arena(requests, 64);
  if (arena.total > in.limits.max_arena_bytes) {
    return Status::error(in.source + ": the arena needs " + std::to_string(arena.total) +
                         " bytes, over the limit of " + std::to_string(in.limits.max_arena_bytes));
  }
  for (const Tensor* t : plan.tensors) {
    if (t->bytes > in.limits.max_tensor_bytes) {
      return Status::error(in.source + ": tensor " + std::to_string(t->index) + " \"" + t->info->name +
                           "\" needs " + std::to_string(t->bytes) + " bytes, over the tensor limit of " +
                           std::to_string(in.limits.max_tensor_bytes));
    }
  }
  plan.offsets = std::move(arena.offsets);
  plan.bytes = arena.total;
  return plan;
}

Status Subgraph::place_tensors() {
  auto planned = plan_memory({plan_.steps, tensors_, inputs_, outputs_, state_.env->limits(), source()});
  if (!planned) return planned.status();
  const MemoryPlan& plan = planned.value();
  std::shared_ptr<uint8_t> arena;
  if (plan.bytes > 0) {
    // From the environment's allocator: shared memory when a plugin runs in a child process, whose invokes
    // then read and write tensors in place.
    arena = state_.env->allocate(plan.bytes);
    if (!arena) {
      return Status::error(source() + ": cannot allocate the " + std::to_string(plan.bytes) + "-byte arena" +
                           (state_.env->shares_memory() ? " in shared memory" : ""));
    }
  }
#if defined(__SANITIZE_ADDRESS__)
  if (arena_ && arena_bytes_ > 0) ASAN_UNPOISON_MEMORY_REGION(arena_.get(), arena_bytes_);
#endif
  // The arena is not cleared (every tensor is written before it is read, and clearing would only move the
  // first touch of each page out of the first run into load), except variable tensors, which start at
  // zero (an int8 one at its zero point, as in TFLite). Inputs keep their values across a new plan (a
  // fallback after a failed first run re-runs from them).
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    Tensor& t = *plan.tensors[i];
    const uint8_t* old = t.planned;
    t.data = arena.get() + plan.offsets[i];
    t.planned = nullptr;
    if (t.info->is_variable) {
      reset_variable(t);
    } else if (old && arena_ && old >= arena_.get() && old + t.bytes <= arena_.get() + arena_bytes_) {
      std::memcpy(t.data, old, t.bytes);
    }
  }
  for (size_t i = 0; i < plan.scratch.size(); ++i) {
    plan.scratch[i]->scratch = arena.get() + plan.offsets[plan.tensors.size() + i];
  }
  for (size_t i = 0; i < plan.node_scratch.size(); ++i) {
    plan.node_scratch[i]->kernel_scratch = arena.get() + plan.offsets[plan.tensors.size() + plan.scratch.size() + i];
  }
  arena_ = std::move(arena);
  arena_bytes_ = plan.bytes;
  naive_bytes_ = plan.naive_bytes;
#if defined(__SANITIZE_ADDRESS__)
  if (plan.bytes > 0) {
    ASAN_POISON_MEMORY_REGION(arena_.get(), plan.bytes);
    for (const Tensor* t : plan.tensors) ASAN_UNPOISON_MEMORY_REGION(t->data, t->bytes);
    for (const Partition* p : plan.scratch) ASAN_UNPOISON_MEMORY_REGION(p->scratch, p->scratch_bytes);
    for (const Node* n : plan.node_scratch) ASAN_UNPOISON_MEMORY_REGION(n->kernel_scratch, n->kernel_scratch_bytes);
  }
#endif
  return Status::ok();
}

}  // namespace baton
