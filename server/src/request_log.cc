#include "request_log.h"

#include <cstdio>

namespace baton::serve {

namespace {

// What a client sent, made safe for one log line: quotes, backslashes and control characters become '?'.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

// A message on one line: control characters (a newline in a name a client sent) become '?'.
std::string one_line(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "INVALID_ARGUMENT";
    case Code::kNotFound: return "NOT_FOUND";
    case Code::kTooLarge: return "RESOURCE_EXHAUSTED";
    case Code::kUnavailable: return "UNAVAILABLE";
    case Code::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

void RequestLog::record(const std::string& id, const std::string& model, const std::string& version,
                        const Status& status, double seconds) const {
  const uint64_t number = numbers_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (status.ok() && !every_) return;
  std::string line = "baton serve: request " + std::to_string(number);
  if (!id.empty()) line += " id=\"" + printable(id) + "\"";
  line += " model " + printable(model);
  if (!version.empty()) line += " version " + printable(version);
  char took[48];
  std::snprintf(took, sizeof took, " in %.3f ms", seconds * 1e3);
  line += std::string(": ") + code_name(status.code) + took;
  if (!status.ok()) line += ": " + one_line(status.message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);  // one call: lines of different threads do not mix
}

}  // namespace baton::serve
