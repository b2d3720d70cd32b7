#include "log.h"

#include <cstdio>

namespace baton {

LogSink stderr_log_sink(bool verbose) {
  return [verbose](baton_log_level level, const std::string& message) {
    if (level < BATON_LOG_WARNING && !verbose) return;
    const char* tag = level == BATON_LOG_ERROR ? "error: "
                      : level == BATON_LOG_WARNING ? "warning: "
                      : level == BATON_LOG_INFO ? ""
                      : "debug: ";
    std::fprintf(stderr, "baton: %s%s\n", tag, message.c_str());
  };
}

}  // namespace baton
