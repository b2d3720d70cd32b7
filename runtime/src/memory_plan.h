// Plan memory: tensor lifetimes from the execution order, one arena placed by the best-fit planner
// (arena_planner.h); model inputs live for the whole run, a partition's inner tensors are the delegate's,
// and the scratch a delegate asks for a partition (or an op-pack kernel for its node) lives while that
// step runs. Returns where each tensor and scratch goes; the caller allocates and points (Subgraph::place_tensors).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "delegation.h"
#include "graph.h"
#include "model.h"
#include "status.h"

namespace baton {

struct MemoryPlanInputs {
  std::span<const ExecutionStep> steps;
  std::vector<Tensor>& tensors;  // the subgraph's (the plan points at them)
  std::span<Tensor* const> inputs;
  std::span<Tensor* const> outputs;
  const LoadLimits& limits;   // a tensor or an arena over its limit is an error naming it
  const std::string& source;  // the model, for messages
};

struct MemoryPlan {
  std::vector<Tensor*> tensors;     // the tensors in the arena
  std::vector<Partition*> scratch;  // the partitions with scratch (ABI 1.6)
  std::vector<Node*> node_scratch;  // the op-pack nodes with scratch (ABI 1.14)
  std::vector<size_t> offsets;      // of `tensors`, then of `scratch`, then of `node_scratch`
  size_t bytes = 0;                 // the arena
  size_t naive_bytes = 0;           // the same tensors and scratch without sharing (64-byte aligned)
};

Expected<MemoryPlan> plan_memory(const MemoryPlanInputs& in);

}  // namespace baton
