// The server's request log: one line on stderr per infer request that failed and, when asked
// (--log-requests), per request. Each line names the request by the server's number for it and by the
// client's id when it gave one, so a client's complaint can be found in the log.
//
//   baton serve: request 17 id="cam-4/0091" model face version 1: OK in 3.402 ms
//   baton serve: request 18 model face: INVALID_ARGUMENT in 0.021 ms: input 'input': shape [1,64,64,3] ...
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "status.h"

namespace baton::serve {

class RequestLog {
 public:
  explicit RequestLog(bool every_request) : every_(every_request) {}

  // `version` may be "" (a request refused before a version was chosen). Thread-safe; a line is written
  // whole.
  void record(const std::string& id, const std::string& model, const std::string& version, const Status& status,
              double seconds) const;

 private:
  bool every_;
  mutable std::atomic<uint64_t> numbers_{0};
};

// The protocol's name of a code, as gRPC spells it: OK, INVALID_ARGUMENT, NOT_FOUND, ...
const char* code_name(Code code);

}  // namespace baton::serve
