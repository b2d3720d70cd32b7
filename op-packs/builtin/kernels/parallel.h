// How kernels split work across threads without knowing who runs it: a `Parallel` runs tasks 0..n-1 and
// tells each which worker (0..worker_count-1) runs it, so a task can use that worker's scratch. A null
// `Parallel*` means "run serially on the caller". Nothing here allocates: invoke must not.
#ifndef BATON_BUILTIN_KERNELS_PARALLEL_H
#define BATON_BUILTIN_KERNELS_PARALLEL_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace baton::builtin {

// A non-owning reference to a callable: a pointer and a trampoline, never a heap allocation.
template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F>
  FunctionRef(F&& f)  // NOLINT: implicit on purpose, like std::function_ref
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int worker_count() const = 0;
  // Runs task(i, worker) for every i in [0, n) and returns when all have finished.
  virtual void run(int n, FunctionRef<void(int task, int worker)> task) = 0;
};

// The task indices of one run dealt to `lanes` workers in contiguous shares: lane l owns
// [n*l/lanes, n*(l+1)/lanes), takes it in order, then helps lanes l+1, l+2, ... with what is left of theirs.
// A pool that gives lane l to the same thread every run splits consecutive ops' rows alike, so a thread
// reads the rows it wrote a moment before from its own cache. (A shared counter dealt them alternately:
// half of every read came from the other core's cache, and DeepLabv3 int8 at two threads took 32 ms
// instead of 27.)
class TaskShares {
 public:
  static constexpr int kMaxLanes = 64;

  // Deals [0, n) to min(lanes, n, kMaxLanes) lanes and returns that count. Before the workers start.
  int deal(int n, int lanes) {
    lanes_ = std::max(1, std::min({lanes, n, kMaxLanes}));
    for (int l = 0; l < lanes_; ++l) {
      shares_[l].next.store(static_cast<int>(static_cast<int64_t>(n) * l / lanes_), std::memory_order_relaxed);
      shares_[l].end = static_cast<int>(static_cast<int64_t>(n) * (l + 1) / lanes_);
    }
    return lanes_;
  }
  // Runs task(i, worker) for the tasks left, lane `first`'s share first.
  void work(int first, int worker, FunctionRef<void(int, int)> task) {
    for (int k = 0; k < lanes_; ++k) {
      Share& s = shares_[(first + k) % lanes_];
      for (int i = s.next.fetch_add(1, std::memory_order_relaxed); i < s.end; i = s.next.fetch_add(1, std::memory_order_relaxed)) {
        task(i, worker);
      }
    }
  }

 private:
  struct alignas(64) Share {
    std::atomic<int> next{0};
    int end = 0;
  };
  Share shares_[kMaxLanes];
  int lanes_ = 1;
};

inline int worker_count(const Parallel* parallel) { return parallel ? parallel->worker_count() : 1; }

inline void parallel_run(Parallel* parallel, int n, FunctionRef<void(int, int)> task) {
  if (parallel && n > 1 && parallel->worker_count() > 1) {
    parallel->run(n, task);
  } else {
    for (int i = 0; i < n; ++i) task(i, 0);
  }
}

// Runs body(begin, end) over the items [0, count) in contiguous ranges, one a task: as many tasks as
// `workers` (or `max_tasks` when given) allow with at least `min_work` units of work each, an item being
// `work_per_item` units; range ends on multiples of `align` but the last. One call on the caller's thread
// when that leaves a single task. For work whose items are computed alone, so the split never changes an
// output.
inline void parallel_ranges(Parallel* parallel, int workers, int64_t count, int64_t work_per_item, int64_t min_work,
                            FunctionRef<void(int64_t, int64_t)> body, int max_tasks = 0, int64_t align = 1) {
  const int64_t most = max_tasks > 0 ? max_tasks : workers;
  const int tasks = static_cast<int>(std::min<int64_t>({most, count, count * work_per_item / min_work}));
  if (tasks <= 1) {
    if (count > 0) body(0, count);
    return;
  }
  auto edge = [&](int task) { return task == tasks ? count : count * task / tasks / align * align; };
  parallel_run(parallel, tasks, [&](int task, int) {
    const int64_t begin = edge(task), end = edge(task + 1);
    if (begin < end) body(begin, end);
  });
}

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_PARALLEL_H
