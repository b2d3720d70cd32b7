// The arena planner: tensors alive at the same time never overlap; the arena never exceeds the plain
// sum of the (aligned) sizes; and reuse actually happens on a chain.
#include <gtest/gtest.h>

#include <random>

#include "arena_planner.h"
#include "memory_plan.h"

namespace baton {
namespace {

size_t aligned(size_t v) { return (std::max<size_t>(v, 1) + 63) / 64 * 64; }

void check_plan(const std::vector<ArenaRequest>& reqs, const ArenaPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), reqs.size());
  size_t sum = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 64, 0u);
    EXPECT_LE(plan.offsets[i] + reqs[i].bytes, plan.total);
    sum += aligned(reqs[i].bytes);
    for (size_t j = i + 1; j < reqs.size(); ++j) {
      const bool live_together = reqs[i].first <= reqs[j].last && reqs[j].first <= reqs[i].last;
      if (!live_together || reqs[i].bytes == 0 || reqs[j].bytes == 0) continue;
      const bool disjoint = plan.offsets[i] + reqs[i].bytes <= plan.offsets[j] ||
                            plan.offsets[j] + reqs[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "tensors " << i << " and " << j << " are alive together and overlap";
    }
  }
  EXPECT_LE(plan.total, sum);
}

TEST(ArenaPlanner, ChainReusesMemory) {
  // t0 -> t1 -> t2 -> t3, each alive for two steps: only two need to exist at once.
  std::vector<ArenaRequest> reqs = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaPlan plan = plan_arena(reqs);
  check_plan(reqs, plan);
  EXPECT_EQ(plan.total, 2 * aligned(1000));
}

TEST(ArenaPlanner, BestFitPicksTheSmallestGap) {
  // Largest first: A(640,[0,1]) at 0; E(512,[2,3]) at 0 (A is dead by then); C(256,[0,5]) after A at 640;
  // B(128,[0,1]) after C at 896. D(128,[2,3]) sees E at 0..512 and C at 640..896: the 128-byte gap at 512
  // fits exactly, so best fit puts it there rather than at the end.
  std::vector<ArenaRequest> reqs = {{640, 0, 1}, {128, 0, 1}, {256, 0, 5}, {128, 2, 3}, {512, 2, 3}};
  ArenaPlan plan = plan_arena(reqs);
  check_plan(reqs, plan);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[4], 0u);
  EXPECT_EQ(plan.offsets[2], 640u);
  EXPECT_EQ(plan.offsets[1], 896u);
  EXPECT_EQ(plan.offsets[3], 512u);
  EXPECT_EQ(plan.total, 1024u);
}

TEST(ArenaPlanner, RandomLifetimesNeverOverlapAndNeverExceedTheSum) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<ArenaRequest> reqs(1 + rng() % 40);
    for (auto& r : reqs) {
      r.bytes = rng() % 5 == 0 ? 0 : rng() % 100000;
      r.first = static_cast<int>(rng() % 30);
      r.last = r.first + static_cast<int>(rng() % 10);
    }
    ArenaPlan plan = plan_arena(reqs);
    check_plan(reqs, plan);
  }
}

// A chain of three host nodes t0 -> t1 -> t2 -> t3 (t0 the model input, t3 its output, 64 bytes each),
// as the memory stage sees it.
struct Chain {
  std::vector<TensorInfo> infos = std::vector<TensorInfo>(4);
  std::vector<Tensor> tensors = std::vector<Tensor>(4);
  std::vector<Node> nodes = std::vector<Node>(3);
  std::vector<ExecutionStep> steps;
  std::vector<Tensor*> inputs, outputs;
  Chain() {
    for (int i = 0; i < 4; ++i) {
      infos[i].index = i;
      infos[i].name = "t" + std::to_string(i);
      tensors[i].info = &infos[i];
      tensors[i].index = i;
      tensors[i].bytes = 64;
    }
    for (int n = 0; n < 3; ++n) {
      nodes[n].inputs = {&tensors[n]};
      nodes[n].outputs = {&tensors[n + 1]};
      steps.push_back({&nodes[n], nullptr});
    }
    inputs = {&tensors[0]};
    outputs = {&tensors[3]};
  }
  Expected<MemoryPlan> plan(const LoadLimits& limits = {}) {
    return plan_memory({steps, tensors, inputs, outputs, limits, "chain.tflite"});
  }
};

// The chain: the input is alive for the whole run, so it shares with nothing; t1 (steps 0-1) and t3
// (step 2) may share. Limits are errors naming the tensor or the arena.
TEST(MemoryPlan, ChainSharesAllButTheInputAndLimitsNameTheirSubject) {
  Chain chain;
  LoadLimits limits;
  auto plan = chain.plan(limits);
  ASSERT_TRUE(plan) << plan.error();
  ASSERT_EQ(plan->tensors.size(), 4u);
  ASSERT_EQ(plan->offsets.size(), 4u);
  EXPECT_EQ(plan->naive_bytes, 4u * 64);
  auto overlap = [&](int a, int b) {
    return plan->offsets[a] < plan->offsets[b] + 64 && plan->offsets[b] < plan->offsets[a] + 64;
  };
  // Alive at the same time: never the same bytes.
  for (int other = 1; other < 4; ++other) EXPECT_FALSE(overlap(0, other)) << other;
  EXPECT_FALSE(overlap(1, 2));
  EXPECT_FALSE(overlap(2, 3));
#if !defined(__SANITIZE_ADDRESS__)  // under AddressSanitizer every tensor has its own place and a red zone
  EXPECT_TRUE(overlap(1, 3));
  EXPECT_EQ(plan->bytes, 3u * 64);
#endif

  limits.max_tensor_bytes = 32;
  auto tensor_over = chain.plan(limits);
  ASSERT_FALSE(tensor_over);
  EXPECT_EQ(tensor_over.error(), "chain.tflite: tensor 0 \"t0\" needs 64 bytes, over the tensor limit of 32");
  limits.max_tensor_bytes = SIZE_MAX;
  limits.max_arena_bytes = 100;
  auto arena_over = chain.plan(limits);
  ASSERT_FALSE(arena_over);
  EXPECT_NE(arena_over.error().find("chain.tflite: the arena needs "), std::string::npos) << arena_over.error();
  EXPECT_NE(arena_over.error().find(" bytes, over the limit of 100"), std::string::npos) << arena_over.error();
}

// An op-pack node's scratch (ABI 1.14) at steps 0 and 2 of the chain lives for its step only, so the two
// blocks share their bytes, and the naive size counts both.
TEST(MemoryPlan, NodeScratchLivesForItsStep) {
  Chain chain;
  chain.nodes[0].kernel_scratch_bytes = 256;
  chain.nodes[2].kernel_scratch_bytes = 128;
  auto plan = chain.plan();
  ASSERT_TRUE(plan) << plan.error();
  ASSERT_EQ(plan->node_scratch.size(), 2u);
  EXPECT_EQ(plan->node_scratch[0], &chain.nodes[0]);
  EXPECT_EQ(plan->node_scratch[1], &chain.nodes[2]);
  ASSERT_EQ(plan->offsets.size(), 6u);
  EXPECT_EQ(plan->naive_bytes, 4u * 64 + 256 + 128);
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(plan->offsets[4], plan->offsets[5]);
  EXPECT_LT(plan->bytes, plan->naive_bytes);
#endif
}

}  // namespace
}  // namespace baton
