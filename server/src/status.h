// The outcome of a server operation, independent of the protocol it came in on: REST and gRPC each map
// a Code to their own status (400 / INVALID_ARGUMENT, 404 / NOT_FOUND, ...). The message is what the
// client reads: it names the model, input or setting at fault and the reason.
#pragma once

#include <string>
#include <utility>

namespace baton::serve {

enum class Code {
  kOk,
  kInvalidArgument,   // the request is malformed or does not fit the model
  kNotFound,          // no such model or version
  kTooLarge,          // the request is over a size limit
  kUnavailable,       // the queue is full or the server is shutting down
  kDeadlineExceeded,  // the request's deadline passed before or while it ran
  kInternal,          // the runtime failed to run a valid request
};

struct Status {
  Code code = Code::kOk;
  std::string message;

  bool ok() const { return code == Code::kOk; }
  static Status error(Code code, std::string message) { return {code, std::move(message)}; }
};

}  // namespace baton::serve
