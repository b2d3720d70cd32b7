// Grouping accepted nodes into partitions: hand-made graphs whose naive grouping would be cyclic, and a
// property test over thousands of random DAGs and support sets.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "partitioner.h"

namespace baton {
namespace {

// Checks every invariant of a grouping; returns the owner array after it.
std::vector<int> check_grouping(const PartitionGraph& g, const std::vector<bool>& accepted, const GroupingResult& r,
                                const PartitionLimits& limits) {
  const size_t n = g.owner.size();
  std::vector<int> owner = g.owner;
  int next_id = 0;
  for (int o : g.owner) next_id = std::max(next_id, o + 1);
  std::set<int> placed;
  for (const auto& part : r.partitions) {
    EXPECT_GE(part.size(), limits.min_nodes);
    EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
    for (int node : part) {
      EXPECT_TRUE(accepted[node]) << "node " << node << " was not accepted";
      EXPECT_EQ(g.owner[node], -1) << "node " << node << " already belonged to a partition";
      EXPECT_TRUE(placed.insert(node).second) << "node " << node << " placed twice";
      owner[node] = next_id;
    }
    ++next_id;
  }
  if (limits.max_partitions) EXPECT_LE(r.partitions.size(), limits.max_partitions);
  std::set<int> dropped;
  for (const auto& [node, why] : r.dropped) {
    EXPECT_TRUE(dropped.insert(node).second);
    EXPECT_FALSE(why.empty());
  }
  for (size_t i = 0; i < n; ++i) {
    if (g.owner[i] == -1 && accepted[i]) {
      EXPECT_TRUE(placed.count(static_cast<int>(i)) + dropped.count(static_cast<int>(i)) == 1)
          << "accepted node " << i << " neither placed nor dropped";
    }
  }
  // Acyclic: every unit gets a place in a topological order, and that order respects every edge.
  PartitionGraph after{g.producers, owner};
  std::vector<Step> order = execution_order(after);
  std::set<int> units;
  for (size_t i = 0; i < n; ++i) units.insert(owner[i] < 0 ? -1 - static_cast<int>(i) : owner[i]);
  EXPECT_EQ(order.size(), units.size()) << "the partitioned graph has a cycle";
  std::vector<int> position(n, -1);
  for (size_t k = 0; k < order.size(); ++k) {
    for (size_t i = 0; i < n; ++i) {
      if ((order[k].node == static_cast<int>(i)) || (order[k].partition >= 0 && owner[i] == order[k].partition)) {
        position[i] = static_cast<int>(k);
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (int p : g.producers[i]) {
      if (owner[p] >= 0 && owner[p] == owner[i]) continue;
      EXPECT_LT(position[p], position[i]) << "node " << i << " runs before its producer " << p;
    }
  }
  return owner;
}

TEST(Partitioner, ChainIsOnePartition) {
  PartitionGraph g{{{}, {0}, {1}, {2}}, {-1, -1, -1, -1}};
  auto r = group_partitions(g, {true, true, true, true}, {});
  check_grouping(g, {true, true, true, true}, r, {});
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0], (std::vector<int>{0, 1, 2, 3}));
}

TEST(Partitioner, NaiveGroupingWouldBeCyclic) {
  // 0 (yes) -> 1 (no) -> 2 (yes), and 0 -> 2. One partition {0, 2} would both feed and wait on node 1.
  PartitionGraph g{{{}, {0}, {0, 1}}, {-1, -1, -1}};
  std::vector<bool> acc = {true, false, true};
  auto r = group_partitions(g, acc, {});
  check_grouping(g, acc, r, {});
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0], (std::vector<int>{0}));
  EXPECT_EQ(r.partitions[1], (std::vector<int>{2}));
}

TEST(Partitioner, DiamondWithUnsupportedSideBranch) {
  //     0 (yes)
  //    /      \
  //  1 (yes)  2 (no)
  //    \      /
  //     3 (yes)
  PartitionGraph g{{{}, {0}, {0}, {1, 2}}, {-1, -1, -1, -1}};
  std::vector<bool> acc = {true, true, false, true};
  auto r = group_partitions(g, acc, {});
  check_grouping(g, acc, r, {});
  ASSERT_EQ(r.partitions.size(), 2u);
  EXPECT_EQ(r.partitions[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(r.partitions[1], (std::vector<int>{3}));
}

TEST(Partitioner, IndependentBranchesShareAnEpoch) {
  // Two separate chains, both supported: one epoch, so one partition.
  PartitionGraph g{{{}, {0}, {}, {2}}, {-1, -1, -1, -1}};
  std::vector<bool> acc = {true, true, true, true};
  auto r = group_partitions(g, acc, {});
  check_grouping(g, acc, r, {});
  EXPECT_EQ(r.partitions.size(), 1u);
}

TEST(Partitioner, EarlierPartitionsAreOpaque) {
  // Nodes 1 and 2 belong to an earlier delegate's partition 0; 0 -> [1,2] -> 3, and 3 also reads 0.
  PartitionGraph g{{{}, {0}, {1}, {2, 0}}, {-1, 0, 0, -1}};
  std::vector<bool> acc = {true, false, false, true};
  auto r = group_partitions(g, acc, {});
  check_grouping(g, acc, r, {});
  ASSERT_EQ(r.partitions.size(), 2u);
}

TEST(Partitioner, MinNodesAndMaxPartitionsGiveNodesBack) {
  // yes yes no yes no yes yes yes (a chain): epochs {0,1} {3} {5,6,7}.
  std::vector<std::vector<int>> prod = {{}, {0}, {1}, {2}, {3}, {4}, {5}, {6}};
  PartitionGraph g{prod, std::vector<int>(8, -1)};
  std::vector<bool> acc = {true, true, false, true, false, true, true, true};
  PartitionLimits min2{2, 0};
  auto r = group_partitions(g, acc, min2);
  check_grouping(g, acc, r, min2);
  ASSERT_EQ(r.partitions.size(), 2u);
  ASSERT_EQ(r.dropped.size(), 1u);
  EXPECT_EQ(r.dropped[0].first, 3);
  EXPECT_NE(r.dropped[0].second.find("below min-nodes-per-partition 2"), std::string::npos);
  PartitionLimits max1{1, 1};
  r = group_partitions(g, acc, max1);
  check_grouping(g, acc, r, max1);
  ASSERT_EQ(r.partitions.size(), 1u);
  EXPECT_EQ(r.partitions[0], (std::vector<int>{5, 6, 7}));
  EXPECT_EQ(r.dropped.size(), 3u);
}

TEST(Partitioner, RandomDagsAndSupportSetsKeepEveryInvariant) {
  std::mt19937 rng(2026);
  for (int round = 0; round < 3000; ++round) {
    const int n = 1 + static_cast<int>(rng() % 40);
    PartitionGraph g;
    g.producers.resize(n);
    g.owner.assign(n, -1);
    for (int i = 1; i < n; ++i) {
      const int edges = static_cast<int>(rng() % 4);
      std::set<int> ps;
      for (int e = 0; e < edges; ++e) ps.insert(static_cast<int>(rng() % i));
      g.producers[i].assign(ps.begin(), ps.end());
    }
    // A chain of up to three delegates, each seeing the previous ones' partitions as opaque.
    for (int d = 0; d < 3; ++d) {
      std::vector<bool> acc(n);
      for (int i = 0; i < n; ++i) acc[i] = g.owner[i] < 0 && rng() % 3 != 0;
      PartitionLimits limits{1 + rng() % 3, rng() % 4};
      auto r = group_partitions(g, acc, limits);
      g.owner = check_grouping(g, acc, r, limits);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace baton
