// A fixed set of worker threads behind the `Parallel` interface. The calling thread works too (as worker
// 0), so a pool of N workers starts N-1 threads. run() gives each worker a contiguous share of the task
// indices (worker w the same share of every job, so consecutive ops split rows alike and each thread
// reads what it wrote), lets a worker that finished its share help the others, and returns when every
// task has finished; it allocates nothing. Between jobs the workers spin briefly
// before they sleep: a model runs dozens of short parallel kernels back to back, and waking a sleeping
// thread costs more than many of them take.
#ifndef BATON_BUILTIN_KERNELS_THREAD_POOL_H
#define BATON_BUILTIN_KERNELS_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/parallel.h"

namespace baton::builtin {

class ThreadPool final : public Parallel {
 public:
  explicit ThreadPool(int workers);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int worker_count() const override { return static_cast<int>(threads_.size()) + 1; }
  void run(int n, FunctionRef<void(int task, int worker)> task) override;

 private:
  void worker_loop(int worker);
  void work(int worker);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  // The job being run; written under mutex_ before generation_ changes.
  FunctionRef<void(int, int)>* job_ = nullptr;
  TaskShares shares_;
  std::atomic<int> busy_workers_{0};
  std::atomic<unsigned> generation_{0};  // a new job is published by incrementing it (release)
  std::atomic<bool> stopping_{false};
};

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_THREAD_POOL_H
