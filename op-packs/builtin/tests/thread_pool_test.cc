// How the builtin pack deals a run's tasks to its workers (kernels/parallel.h's TaskShares, used by the
// pack's own ThreadPool and by its workers on the host's pthreadpool): each lane owns a contiguous share
// and takes it first, in order, so that consecutive ops split rows alike; a lane done with its share
// helps the others; every task runs exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/thread_pool.h"

namespace baton::builtin::testing {
namespace {

TEST(TaskShares, EachLaneTakesItsOwnShareInOrderThenHelpsTheNext) {
  TaskShares shares;
  EXPECT_EQ(shares.deal(10, 3), 3);  // [0, 3), [3, 6), [6, 10)
  std::vector<int> order, workers;
  shares.work(1, 7, [&](int task, int worker) {
    order.push_back(task);
    workers.push_back(worker);
  });
  // Lane 1 alone: its share, then lane 2's, then lane 0's.
  EXPECT_EQ(order, (std::vector<int>{3, 4, 5, 6, 7, 8, 9, 0, 1, 2}));
  EXPECT_EQ(workers, std::vector<int>(10, 7));
}

TEST(TaskShares, WhatALaneLeftIsTakenOnceByTheOthers) {
  TaskShares shares;
  EXPECT_EQ(shares.deal(9, 3), 3);  // [0, 3), [3, 6), [6, 9)
  std::vector<int> first, second;
  // Lane 0 stops after its own share's first task (as if preempted); lane 2 then does the rest.
  int taken = 0;
  shares.work(0, 0, [&](int task, int) {
    first.push_back(task);
    if (++taken == 1) shares.work(2, 2, [&](int t, int) { second.push_back(t); });
  });
  EXPECT_EQ(first, (std::vector<int>{0}));
  EXPECT_EQ(second, (std::vector<int>{6, 7, 8, 1, 2, 3, 4, 5}));
}

TEST(TaskShares, FewerTasksThanLanesUseOneLaneATask) {
  TaskShares shares;
  EXPECT_EQ(shares.deal(2, 8), 2);
  EXPECT_EQ(shares.deal(1000, 200), TaskShares::kMaxLanes);
  std::vector<int> seen(1000, 0);
  for (int lane = 0; lane < TaskShares::kMaxLanes; ++lane) shares.work(lane, lane, [&](int t, int) { ++seen[t]; });
  EXPECT_EQ(seen, std::vector<int>(1000, 1));
}

TEST(ThreadPool, EveryTaskRunsOnceOnAValidWorker) {
  for (int workers : {1, 2, 3, 5}) {
    ThreadPool pool(workers);
    for (int n : {0, 1, 2, 3, 7, 64, 1001}) {
      std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
      std::atomic<bool> bad_worker{false};
      pool.run(n, [&](int task, int worker) {
        runs[static_cast<size_t>(task)].fetch_add(1);
        if (worker < 0 || worker >= workers) bad_worker = true;
      });
      for (int i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<size_t>(i)].load(), 1) << workers << " workers, task " << i << " of " << n;
      EXPECT_FALSE(bad_worker);
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
