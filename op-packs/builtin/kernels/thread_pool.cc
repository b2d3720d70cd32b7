#include "kernels/thread_pool.h"

namespace baton::builtin {

ThreadPool::ThreadPool(int workers) {
  for (int w = 1; w < workers; ++w) threads_.emplace_back([this, w] { worker_loop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::work(int worker) {
  for (int i = next_task_.fetch_add(1, std::memory_order_relaxed); i < job_size_;
       i = next_task_.fetch_add(1, std::memory_order_relaxed)) {
    (*job_)(i, worker);
  }
}

void ThreadPool::worker_loop(int worker) {
  unsigned seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    work(worker);
    {
      std::lock_guard lock(mutex_);
      if (--busy_workers_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::run(int n, FunctionRef<void(int, int)> task) {
  if (threads_.empty() || n <= 1) {
    for (int i = 0; i < n; ++i) task(i, 0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &task;
    job_size_ = n;
    next_task_.store(0, std::memory_order_relaxed);
    busy_workers_ = static_cast<int>(threads_.size());
    ++generation_;
  }
  start_.notify_all();
  work(0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return busy_workers_ == 0; });
  job_ = nullptr;
}

}  // namespace baton::builtin
