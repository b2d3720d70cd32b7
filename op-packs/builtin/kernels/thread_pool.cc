#include "kernels/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BATON_PAUSE() _mm_pause()
#else
#define BATON_PAUSE() ((void)0)
#endif

namespace baton::builtin {

ThreadPool::ThreadPool(int workers) {
  for (int w = 1; w < workers; ++w) threads_.emplace_back([this, w] { worker_loop(w); });
}

namespace {
// About 20-50 microseconds of polling before a thread sleeps.
constexpr int kSpins = 4000;
}  // namespace

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::work(int worker) { shares_.work(worker % TaskShares::kMaxLanes, worker, *job_); }

void ThreadPool::worker_loop(int worker) {
  unsigned seen = 0;
  for (;;) {
    for (int i = 0; i < kSpins && generation_.load(std::memory_order_acquire) == seen &&
                    !stopping_.load(std::memory_order_relaxed);
         ++i) {
      BATON_PAUSE();
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
    }
    if (stopping_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    work(worker);
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mutex_);
      done_.notify_one();
    }
  }
}

void ThreadPool::run(int n, FunctionRef<void(int, int)> task) {
  if (threads_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) task(i, 0);
    return;
  }
  job_ = &task;
  shares_.deal(n, worker_count());
  busy_workers_.store(static_cast<int>(threads_.size()), std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  start_.notify_all();
  work(0);
  for (int i = 0; i < kSpins && busy_workers_.load(std::memory_order_acquire) != 0; ++i) BATON_PAUSE();
  if (busy_workers_.load(std::memory_order_acquire) != 0) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return busy_workers_.load(std::memory_order_acquire) == 0; });
  }
  job_ = nullptr;
}

}  // namespace baton::builtin
