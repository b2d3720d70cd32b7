// Cancels an interpreter's invoke when its request's deadline passes (baton_interpreter_cancel is the one
// call the C API allows from another thread). One thread for the whole server; workers arm it before an
// invoke and disarm it after.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "baton/c_api.h"
#include "inference_request.h"

namespace baton::serve {

class DeadlineWatchdog {
 public:
  DeadlineWatchdog();
  ~DeadlineWatchdog();
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  void arm(baton_interpreter* interp, Clock::time_point deadline);
  // True when the watchdog cancelled this interpreter's invoke since it was armed.
  bool disarm(baton_interpreter* interp);

 private:
  void loop();

  struct Armed {
    Clock::time_point deadline;
    bool fired = false;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<baton_interpreter*, Armed> armed_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace baton::serve
