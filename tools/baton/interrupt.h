// Ctrl-C during `baton run` or `baton bench`: the first SIGINT cancels the running invoke (the command then
// says so and exits with 130, as a shell reports an interrupted program); a second one ends the process
// the usual way. Installed for the life of one object; the previous handler comes back after it.
#pragma once

#include <signal.h>

#include "baton/baton.hpp"

namespace baton::tool {

class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(api::Interpreter& interp);
  ~CancelOnInterrupt();
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;
  // True once a SIGINT arrived while this object lived.
  static bool interrupted();

 private:
  struct sigaction previous_ {};
};

// The exit status of a command that SIGINT stopped.
inline constexpr int kExitInterrupted = 130;

}  // namespace baton::tool
