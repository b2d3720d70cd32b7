#include "deadline_watchdog.h"

namespace baton::serve {

DeadlineWatchdog::DeadlineWatchdog() : thread_([this] { loop(); }) {}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void DeadlineWatchdog::arm(baton_interpreter* interp, Clock::time_point deadline) {
  if (deadline == Clock::time_point::max()) return;
  {
    std::lock_guard lock(mutex_);
    armed_[interp] = {deadline, false};
  }
  changed_.notify_all();
}

bool DeadlineWatchdog::disarm(baton_interpreter* interp) {
  std::lock_guard lock(mutex_);
  auto it = armed_.find(interp);
  if (it == armed_.end()) return false;
  const bool fired = it->second.fired;
  armed_.erase(it);
  return fired;
}

void DeadlineWatchdog::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    Clock::time_point next = Clock::time_point::max();
    const Clock::time_point now = Clock::now();
    for (auto& [interp, a] : armed_) {
      if (a.fired) continue;
      if (a.deadline <= now) {
        baton_interpreter_cancel(interp);  // under the lock: disarm cannot free the interpreter meanwhile
        a.fired = true;
      } else if (a.deadline < next) {
        next = a.deadline;
      }
    }
    if (next == Clock::time_point::max()) {
      changed_.wait(lock);
    } else {
      changed_.wait_until(lock, next);
    }
  }
}

}  // namespace baton::serve
