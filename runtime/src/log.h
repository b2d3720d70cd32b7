// Where the runtime's and the plugins' messages go. The default writes "baton: warning: ..." lines to
// stderr and drops debug and info unless verbose.
#pragma once

#include <functional>
#include <string>

#include "baton/plugin_api.h"

namespace baton {

using LogSink = std::function<void(baton_log_level, const std::string&)>;

LogSink stderr_log_sink(bool verbose);

}  // namespace baton
