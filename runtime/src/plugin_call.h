// Every call from the host into a plugin goes through these: a plugin that is not reentrant (no
// BATON_PLUGIN_FLAG_REENTRANT) gets one call at a time across all interpreters that share it, and a C++
// exception that escapes a plugin becomes an error status instead of crossing the C boundary.
#pragma once

#include "graph.h"
#include "plugin_registry.h"

namespace baton {

template <typename F>
baton_status guarded_call(LoadedPlugin& plugin, baton_error& error, F&& call) {
  auto lock = plugin.lock();
  try {
    return call();
  } catch (...) {
    error.message = "the plugin threw an exception across the C boundary";
    return BATON_ERROR;
  }
}

// For calls that release something and cannot report failure.
template <typename F>
void guarded_release(LoadedPlugin& plugin, F&& call) {
  auto lock = plugin.lock();
  try {
    call();
  } catch (...) {
  }
}

}  // namespace baton
