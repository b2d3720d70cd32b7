// The builtin pack's workers on the host's shared pthreadpool (plugin_kit_pthreadpool.hpp: the pool of N
// threads every plugin asking for N shares, ABI 1.4), so that in a plan that alternates builtin nodes and
// xnnpack or cpu partitions one set of threads serves them all. Two pools of spinning workers on the same
// cores took turns with the scheduler: MoveNet int8 at two threads on two cores ran a median 17.7 ms
// against 4.3 ms on the builtin pack alone. Built where libpthreadpool is (BATON_BUILTIN_PTHREADPOOL);
// elsewhere, and from a host that cannot start the pool, the pack keeps its own ThreadPool.
#ifndef BATON_BUILTIN_GLUE_SHARED_POOL_H
#define BATON_BUILTIN_GLUE_SHARED_POOL_H

#ifdef BATON_BUILTIN_PTHREADPOOL

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "baton/plugin_kit_pthreadpool.hpp"
#include "kernels/parallel.h"

namespace baton::builtin {

// Parallel over a pthreadpool. pthreadpool does not tell a task which thread runs it, so run() hands the
// pool one item per worker ("lanes"): lane i is worker i, never run twice at once, which is what
// per-worker scratch needs. The tasks are dealt to the lanes in contiguous shares (TaskShares), and
// pthreadpool gives lane i to the same thread every run.
class SharedPoolParallel final : public Parallel {
 public:
  bool start(const baton_host_api* api, const baton_plugin_host* host, int workers) {
    workers_ = workers;
    return pool_.start(api, host, workers) && pool_.get() != nullptr;
  }
  int worker_count() const override { return workers_; }
  void run(int n, FunctionRef<void(int task, int worker)> task) override {
    if (n <= 1) {
      for (int i = 0; i < n; ++i) task(i, 0);
      return;
    }
    TaskShares shares;  // on the stack: two interpreters may run on the pack at once
    const int lanes = shares.deal(n, workers_);
    auto lane = [&](size_t worker) { shares.work(static_cast<int>(worker), static_cast<int>(worker), task); };
    pthreadpool_parallelize_1d(pool_.get(), lane, static_cast<size_t>(lanes));
  }

 private:
  kit::SharedPool pool_;
  int workers_ = 1;
};

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_PTHREADPOOL

#endif  // BATON_BUILTIN_GLUE_SHARED_POOL_H
