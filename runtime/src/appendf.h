// printf into a std::string, for the reports the runtime writes as text (g++ 12 has no std::format).
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace baton {

[[gnu::format(printf, 2, 3)]] inline void appendf(std::string& out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (n > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, format, again);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

}  // namespace baton
