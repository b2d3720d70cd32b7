// For plugins that compute on a pthreadpool (libpthreadpool, as XNNPACK does): the pool of N threads that
// every plugin of the host asking for N shares (the host table's shared_object, key "pthreadpool/N",
// ABI 1.4), so two such plugins in one delegate chain run on one set of threads instead of each keeping
// its own workers spinning on the same cores. From an older host the plugin gets a pool of its own.
#ifndef BATON_PLUGIN_KIT_PTHREADPOOL_HPP
#define BATON_PLUGIN_KIT_PTHREADPOOL_HPP

#include <pthreadpool.h>

#include <cstddef>
#include <string>

#include "baton/plugin_api.h"

namespace baton::kit {

class SharedPool {
 public:
  SharedPool() = default;
  SharedPool(const SharedPool&) = delete;
  SharedPool& operator=(const SharedPool&) = delete;
  ~SharedPool() {
    if (owned_ && pool_) pthreadpool_destroy(pool_);
  }

  // A pool of `threads` threads (none for one thread: pthreadpool then runs on the caller's thread).
  // False when no pool could be started.
  bool start(const baton_host_api* api, const baton_plugin_host* host, int threads) {
    if (threads <= 1) return true;
    size_t count = static_cast<size_t>(threads);
    if (BATON_STRUCT_HAS(api, baton_host_api, shared_object) && api->shared_object) {
      const std::string key = "pthreadpool/" + std::to_string(count);
      pool_ = static_cast<pthreadpool_t>(api->shared_object(
          host, key.c_str(), [](void* n) -> void* { return pthreadpool_create(*static_cast<size_t*>(n)); },
          [](void* pool) { pthreadpool_destroy(static_cast<pthreadpool_t>(pool)); }, &count));
      owned_ = false;
    } else {
      pool_ = pthreadpool_create(count);
      owned_ = true;
    }
    return pool_ != nullptr;
  }

  pthreadpool_t get() const { return pool_; }
  bool shared() const { return pool_ && !owned_; }

 private:
  pthreadpool_t pool_ = nullptr;
  bool owned_ = false;
};

}  // namespace baton::kit

#endif  // BATON_PLUGIN_KIT_PTHREADPOOL_HPP
