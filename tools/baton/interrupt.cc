#include "interrupt.h"

#include <atomic>

namespace baton::tool {

namespace {

std::atomic<api::Interpreter*> g_running{nullptr};
std::atomic<bool> g_interrupted{false};

void on_sigint(int) {
  // Async-signal-safe: atomic stores only. The next Ctrl-C gets the default action.
  g_interrupted.store(true);
  if (api::Interpreter* interp = g_running.load()) interp->cancel();
  signal(SIGINT, SIG_DFL);
}

}  // namespace

CancelOnInterrupt::CancelOnInterrupt(api::Interpreter& interp) {
  g_interrupted.store(false);
  g_running.store(&interp);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_);
}

CancelOnInterrupt::~CancelOnInterrupt() {
  sigaction(SIGINT, &previous_, nullptr);
  g_running.store(nullptr);
}

bool CancelOnInterrupt::interrupted() { return g_interrupted.load(); }

}  // namespace baton::tool
