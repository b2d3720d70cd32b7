// The arena planner: tensors alive at the same time never overlap; the arena never exceeds the plain
// sum of the (aligned) sizes; and reuse actually happens on a chain.
#include <gtest/gtest.h>

#include <random>

#include "arena_planner.h"

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

}  // namespace
}  // namespace baton
