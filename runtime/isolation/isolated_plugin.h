// The host side of process isolation: a plugin configured with `isolation = process` is opened only in a
// `baton-plugin-host` child (plugin_host_main.cc), never in the host. IsolatedPlugin starts the child,
// reads the plugin's descriptor from it and gives the registry an ordinary baton descriptor whose
// functions forward every call of the ABI to the child (protocol.h), so the rest of the runtime treats
// the plugin like any other. A child that dies or overruns its deadline is killed; the call fails with
// the plugin, the stage and the signal or timeout, and the caller falls back as for any failing call.
// The next call that starts something new (check_node, a partition's or a kernel's init) starts a fresh
// child; work that lived in the dead one stays failed. One child per plugin file per process: the
// Environments that isolate it are instances in that child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "log.h"
#include "status.h"
#include "wire.h"

namespace baton::isolation {

struct IsolationSettings {
  int prepare_timeout_ms = 60000;  // loading, create, probe, check_node, init, prepare, free
  int invoke_timeout_ms = 10000;   // each invoke
};

// A child that died or was killed during a call, for the crash journal of the interpreter that made the
// call (the calls run on the interpreter's thread, so it collects them with take_child_deaths()).
struct ChildDeath {
  std::string plugin;
  std::string stage;
  std::string reason;
};
std::vector<ChildDeath> take_child_deaths();

// Where baton-plugin-host is: $BATON_PLUGIN_HOST, the build tree's when libbaton runs from it, else the
// installed one.
std::string plugin_host_executable();

class PluginProcess;  // one child, shared by the IsolatedPlugins of every Environment of this process

// One Environment's view of an isolated plugin: its descriptor and its instance in the child (its own
// create, options and state). Every Environment of the process that isolates the same plugin file with the
// same timeouts shares one child.
class IsolatedPlugin {
 public:
  // Starts the child (or joins the one this process already has for the file) and reads the descriptor;
  // fails with the reason the plugin cannot be used. With `wrapped`, `path` is a loader: the child opens
  // it and has it wrap the file `wrapped`, whose plugin it then serves; *declined says the loader did not
  // take the file (not one of its format).
  static Expected<std::shared_ptr<IsolatedPlugin>> start(const std::string& path, const IsolationSettings& settings,
                                                         const std::string& wrapped = {}, bool* declined = nullptr);
  ~IsolatedPlugin();

  // The descriptor to adopt: the plugin's declarations, with functions that forward to the child.
  const baton_plugin_desc* descriptor() const { return &desc_; }
  pid_t pid() const;
  const IsolationSettings& settings() const { return settings_; }
  // This Environment's instance in the child: requests that concern it carry the id after their type.
  uint64_t instance() const { return instance_; }

  // What the forwarding functions call (isolated_calls.cc).
  struct Reply {
    baton_status status = BATON_OK;
    std::string error;
    std::vector<uint8_t> bytes;  // the whole frame; `reader` is past status and error
    size_t body = 0;
    uint64_t generation = 0;  // of the child that answered
    Reader reader() const { return Reader(bytes.data() + body, bytes.size() - body); }
  };
  struct Block {
    uint64_t id = 0;
    size_t size = 0;
    int fd = -1;
    bool writable = false;
  };
  // Sends `request` (after mapping `blocks` in the child where needed) and waits for the reply. A dead
  // child is restarted first only when `may_restart` (and this instance created again in it). Fails when
  // the child is gone or gets killed.
  Expected<Reply> call(Writer& request, const std::vector<Block>& blocks, bool invoke, const char* stage,
                       bool may_restart);
  // create (the request carries the instance's settings) and destroy of this instance.
  Expected<Reply> create(Writer request);
  void destroy();
  // The child generation now: handles made in an earlier one are gone with it.
  uint64_t generation() const;
  const baton_plugin_host* host = nullptr;  // set at create, for log lines
  std::string name;
  std::vector<baton_device> devices;
  std::vector<std::string> device_names;

 private:
  IsolatedPlugin() = default;
  Status read_descriptor(const Reply& reply);

  std::shared_ptr<PluginProcess> process_;
  IsolationSettings settings_;
  uint64_t instance_ = 0;
  // Under the process's mutex: the create request, to create the instance again in a fresh child, and the
  // generation it was last created in (0: not created).
  Writer create_request_;
  uint64_t created_generation_ = 0;

  // The descriptor and what it points at.
  baton_plugin_desc desc_{};
  std::string version_, description_;
  std::deque<std::string> strings_;  // custom names, option names, defaults, help
  std::vector<baton_op_decl> ops_;
  std::vector<baton_option_decl> options_;
};

// The forwarding functions the descriptor points at (isolated_calls.cc).
namespace forward {
extern const baton_kernel kernel;
extern const baton_delegate_api delegate;            // for a delegate that answers check_node
extern const baton_delegate_api selecting_delegate;  // for one that gives select_nodes
baton_status create(const baton_plugin_host* host, void** state, baton_error* error);
void destroy(void* state);
baton_status probe(const baton_plugin_host* host, const baton_device** devices, size_t* count, baton_error* error);
}  // namespace forward

}  // namespace baton::isolation
