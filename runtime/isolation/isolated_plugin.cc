#include "isolated_plugin.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <thread>
#include <tuple>

#include "protocol.h"
#include "shared_memory.h"

namespace baton {
const baton_host_api* host_api_table();  // plugin_registry.h: the host's own table, for the child's log lines
}

namespace baton::isolation {
namespace {

thread_local std::vector<ChildDeath> deaths;
constexpr int kLoadTimeoutMs = 30000;

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
}

}  // namespace

std::vector<ChildDeath> take_child_deaths() { return std::exchange(deaths, {}); }

std::string plugin_host_executable() {
  if (const char* env = std::getenv("BATON_PLUGIN_HOST"); env && *env) return env;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugin_host_executable), &info) != 0 && info.dli_fname) {
    std::error_code ec;
    const std::string lib = std::filesystem::weakly_canonical(info.dli_fname, ec).string();
    const std::string root = std::string(BATON_BUILD_ROOT) + "/";
    if (!ec && lib.rfind(root, 0) == 0) return root + "runtime/baton-plugin-host";
  }
  return BATON_PLUGIN_HOST_INSTALLED;
}

// The child of one plugin file, for the whole process. Everything but `path` and `settings` is guarded by
// `mutex`, which also keeps one call at a time on the socket.
class PluginProcess {
 public:
  using Reply = IsolatedPlugin::Reply;
  using Block = IsolatedPlugin::Block;
  // The process's child for the file and settings, started (and its descriptor read) when there is none.
  static Expected<std::shared_ptr<PluginProcess>> get(const std::string& path, const std::string& wrapped,
                                                      const IsolationSettings& settings, bool* declined);
  ~PluginProcess();

  // Makes sure a child runs: a dead one is noticed and, when `may_restart`, replaced (spawn, load, and a
  // check that it declares the same name); otherwise the call fails.
  Status ensure(bool may_restart);
  Expected<Reply> exchange(Writer& request, const std::vector<Block>& blocks, int timeout_ms, const char* stage,
                           const baton_plugin_host* log_host);

  std::string path;
  std::string wrapped;  // the file the loader at `path` wraps in the child; empty for a baton plugin
  IsolationSettings settings;
  std::mutex mutex;
  pid_t pid = -1;
  bool alive = false;
  uint64_t generation = 0;
  Reply descriptor;  // the child's answer to `load`
  std::string name;  // the name the plugin declares (its path until it has)
  uint64_t next_instance = 1;

 private:
  Status spawn();
  Status load(bool first, bool* declined = nullptr);
  void kill_child();
  std::string death_reason(bool timed_out, int timeout_ms);

  int socket_ = -1;
  std::set<uint64_t> mapped_;       // blocks the child has mapped
  uint64_t blocks_generation_ = 0;  // of shared_memory.h when `mapped_` was last pruned
};

Expected<std::shared_ptr<PluginProcess>> PluginProcess::get(const std::string& path, const std::string& wrapped,
                                                            const IsolationSettings& settings, bool* declined) {
  static std::mutex all_mutex;
  static std::map<std::tuple<std::string, std::string, int, int>, std::weak_ptr<PluginProcess>> all;
  auto canonical = [](const std::string& p) {
    std::error_code ec;
    std::string c = std::filesystem::weakly_canonical(p, ec).string();
    return ec ? p : c;
  };
  const auto key = std::make_tuple(canonical(path), wrapped.empty() ? wrapped : canonical(wrapped),
                                   settings.prepare_timeout_ms, settings.invoke_timeout_ms);
  std::lock_guard all_lock(all_mutex);
  std::erase_if(all, [](const auto& entry) { return entry.second.expired(); });
  if (auto existing = all[key].lock()) {
    std::lock_guard lock(existing->mutex);
    if (Status s = existing->ensure(true); !s) return s;
    return existing;
  }
  std::shared_ptr<PluginProcess> p(new PluginProcess);
  p->path = path;
  p->wrapped = wrapped;
  p->settings = settings;
  p->name = wrapped.empty() ? path : wrapped;
  {
    std::lock_guard lock(p->mutex);
    Status s = p->spawn();
    if (s) s = p->load(true, declined);
    take_child_deaths();  // a child that died while loading is this call's failure, no interpreter's
    if (!s) return s;
  }
  all[key] = p;
  return p;
}

PluginProcess::~PluginProcess() {
  if (socket_ >= 0) ::close(socket_);  // the child reads the end of its input and exits
  if (pid > 0) {
    // A child that does not leave within a second (a plugin stuck in a destructor) is killed.
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

Status PluginProcess::ensure(bool may_restart) {
  if (alive && may_restart) {
    // A child that went away between calls (killed from outside, or a plugin thread crashed) is noticed
    // before new work is given to it, not by that work failing.
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      alive = false;
      pid = -1;
    }
  }
  if (alive) return Status::ok();
  if (!may_restart) return Status::error("isolated plugin " + name + ": its process is gone (work made in it was lost)");
  if (Status s = spawn(); !s) return s;
  return load(false);
}

Expected<std::shared_ptr<IsolatedPlugin>> IsolatedPlugin::start(const std::string& path,
                                                                const IsolationSettings& settings,
                                                                const std::string& wrapped, bool* declined) {
  if (declined) *declined = false;
  auto process = PluginProcess::get(path, wrapped, settings, declined);
  if (!process) return process.status();
  std::shared_ptr<IsolatedPlugin> p(new IsolatedPlugin);
  p->process_ = *process;
  p->settings_ = settings;
  std::lock_guard lock(p->process_->mutex);
  p->instance_ = p->process_->next_instance++;
  p->name = p->process_->name;
  if (Status s = p->read_descriptor(p->process_->descriptor); !s) return s;
  return p;
}

IsolatedPlugin::~IsolatedPlugin() = default;

pid_t IsolatedPlugin::pid() const {
  std::lock_guard lock(process_->mutex);
  return process_->alive ? process_->pid : -1;
}

uint64_t IsolatedPlugin::generation() const {
  std::lock_guard lock(process_->mutex);
  return process_->generation;
}

Status PluginProcess::spawn() {
  const std::string exe = plugin_host_executable();
  if (::access(exe.c_str(), X_OK) != 0) {
    return Status::error("isolation: cannot run " + exe + " (" + std::strerror(errno) +
                         "); set BATON_PLUGIN_HOST to the baton-plugin-host program");
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::error(std::string("isolation: socketpair: ") + std::strerror(errno));
  }
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return Status::error(std::string("isolation: fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    // The child: only async-signal-safe calls until exec. The socket becomes fd 3, stdin /dev/null,
    // every other descriptor but stdout and stderr is closed, and the child dies with its parent.
    if (sv[1] == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else if (::dup2(sv[1], 3) != 3) {
      _exit(127);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != 0) ::dup2(null, 0);
    ::close_range(4, ~0u, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    char* const argv[] = {const_cast<char*>("baton-plugin-host"), const_cast<char*>(path.c_str()), nullptr};
    ::execv(exe.c_str(), argv);
    _exit(127);
  }
  ::close(sv[1]);
  if (socket_ >= 0) ::close(socket_);
  socket_ = sv[0];
  pid = child;
  alive = true;
  ++generation;
  mapped_.clear();
  blocks_generation_ = blocks_generation();
  return Status::ok();
}

void PluginProcess::kill_child() {
  if (pid > 0) ::kill(pid, SIGKILL);
  alive = false;
}

std::string PluginProcess::death_reason(bool timed_out, int timeout_ms) {
  if (timed_out) {
    kill_child();
    ::waitpid(pid, nullptr, 0);
    pid = -1;
    return "its process " + std::string("did not answer within ") + std::to_string(timeout_ms) + " ms; killed";
  }
  int status = 0;
  // The socket closed: the child is gone or going; wait for it (killing it if it lingers).
  pid_t got = 0;
  for (int i = 0; i < 200 && (got = ::waitpid(pid, &status, WNOHANG)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (got == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  alive = false;
  pid = -1;
  if (WIFSIGNALED(status)) return "its process was killed by " + signal_name(WTERMSIG(status));
  if (WIFEXITED(status)) return "its process exited with status " + std::to_string(WEXITSTATUS(status));
  return "its process went away";
}

Expected<IsolatedPlugin::Reply> PluginProcess::exchange(Writer& request, const std::vector<Block>& blocks,
                                                        int timeout_ms, const char* stage,
                                                        const baton_plugin_host* log_host) {
  auto died = [&](bool timed_out) -> Status {
    const std::string why = death_reason(timed_out, timeout_ms);
    deaths.push_back({name, stage, why});
    return Status::error("isolated plugin " + name + " failed in " + stage + ": " + why);
  };
  // Blocks gone since the last call are unmapped in the child, so it holds no arena the host freed.
  if (const uint64_t g = blocks_generation(); g != blocks_generation_) {
    blocks_generation_ = g;
    const std::vector<uint64_t> live = live_blocks();
    for (auto it = mapped_.begin(); it != mapped_.end();) {
      if (std::binary_search(live.begin(), live.end(), *it)) {
        ++it;
        continue;
      }
      Writer w;
      w.put(Message::unmap_block);
      w.put(*it);
      if (!send_frame(socket_, w.bytes())) return died(false);
      it = mapped_.erase(it);
    }
  }
  for (const Block& b : blocks) {
    if (mapped_.count(b.id)) continue;
    Writer w;
    w.put(Message::map_block);
    w.put(b.id);
    w.put<uint64_t>(b.size);
    w.put<uint8_t>(b.writable);
    if (!send_frame(socket_, w.bytes(), {b.fd})) return died(false);
    mapped_.insert(b.id);
  }
  if (!send_frame(socket_, request.bytes())) return died(false);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Reply reply;
  std::vector<int> fds;
  for (;;) {
    const Received got = receive_frame(socket_, deadline, reply.bytes, fds);
    for (int fd : fds) ::close(fd);
    fds.clear();
    if (got == Received::timed_out) return died(true);
    if (got != Received::frame) return died(false);
    Reader r(reply.bytes);
    const auto type = r.get<Message>();
    if (type == Message::log) {
      const auto level = static_cast<baton_log_level>(r.get<int32_t>());
      const std::string message = r.get_string();
      if (log_host) host_api_table()->log(log_host, level, message.c_str());
      continue;
    }
    if (type != Message::reply) {
      kill_child();
      return died(false);
    }
    reply.status = static_cast<baton_status>(r.get<int32_t>());
    reply.error = r.get_string();
    reply.body = sizeof(Message) + sizeof(int32_t) + sizeof(uint64_t) + reply.error.size();
    reply.generation = generation;
    if (r.failed()) {
      kill_child();
      return died(false);
    }
    return reply;
  }
}

Status PluginProcess::load(bool first, bool* declined) {
  Writer request;
  request.put(Message::load);
  // Starting a process and opening a library may take long on a loaded machine (or under a sanitizer):
  // loading gets at least kLoadTimeoutMs whatever the prepare timeout.
  const int timeout_ms = std::max(settings.prepare_timeout_ms, kLoadTimeoutMs);
  auto got = exchange(request, {}, timeout_ms, "loading", nullptr);
  if (got && got->status == BATON_OK && !wrapped.empty()) {
    // The loader is open in the child: it wraps the file there (its code never runs here either).
    Writer wrap;
    wrap.put(Message::wrap);
    wrap.put_string(wrapped);
    got = exchange(wrap, {}, timeout_ms, "loading", nullptr);
    if (got && got->status == BATON_UNSUPPORTED && got->error.empty() && declined) *declined = true;
  }
  if (!got) return got.status();
  if (got->status != BATON_OK) {
    kill_child();
    return Status::error(got->error.empty() ? "the loader does not take it" : got->error);
  }
  Reader r = got->reader();
  r.get<uint32_t>();
  r.get<uint32_t>();
  const std::string declared = r.get_string();
  if (!first && declared != name) {
    kill_child();
    return Status::error("isolated plugin " + name + ": its restarted process declares the name '" + declared + "'");
  }
  name = declared;
  descriptor = std::move(*got);
  return Status::ok();
}

Status IsolatedPlugin::read_descriptor(const Reply& reply) {
  Reader r = reply.reader();
  desc_ = baton_plugin_desc{};
  desc_.struct_size = sizeof desc_;
  desc_.abi_major = r.get<uint32_t>();
  desc_.abi_minor = r.get<uint32_t>();
  name = r.get_string();
  strings_.clear();
  strings_.push_back(name);
  desc_.name = strings_.back().c_str();
  version_ = r.get_string();
  desc_.version = version_.c_str();
  desc_.kind = static_cast<baton_plugin_kind>(r.get<int32_t>());
  description_ = r.get_string();
  desc_.description = description_.c_str();
  // Calls for one plugin cross one socket one at a time, so the forwarded plugin is never reentrant.
  desc_.flags = r.get<uint32_t>() & ~BATON_PLUGIN_FLAG_REENTRANT;
  const uint32_t op_count = r.get<uint32_t>();
  if (op_count > 100000) return Status::error("declares an implausible number of ops");
  ops_.assign(op_count, baton_op_decl{});
  for (baton_op_decl& o : ops_) {
    o.struct_size = sizeof o;
    o.builtin_code = r.get<int32_t>();
    strings_.push_back(r.get_string());
    o.custom_name = strings_.back().empty() ? nullptr : strings_.back().c_str();
    o.min_version = r.get<int32_t>();
    o.max_version = r.get<int32_t>();
    const bool has_kernel = r.get<uint8_t>() != 0;
    o.kernel = has_kernel && desc_.kind == BATON_PLUGIN_OP_PACK ? &forward::kernel : nullptr;
  }
  desc_.ops = ops_.data();
  desc_.op_count = ops_.size();
  const uint32_t option_count = r.get<uint32_t>();
  if (option_count > 10000) return Status::error("declares an implausible number of options");
  options_.assign(option_count, baton_option_decl{});
  for (baton_option_decl& o : options_) {
    o.struct_size = sizeof o;
    strings_.push_back(r.get_string());
    o.name = strings_.back().c_str();
    o.type = static_cast<baton_option_type>(r.get<int32_t>());
    const bool has_default = r.get<uint8_t>() != 0;
    strings_.push_back(r.get_string());
    o.default_value = has_default ? strings_.back().c_str() : nullptr;
    strings_.push_back(r.get_string());
    o.help = strings_.back().c_str();
  }
  desc_.options = options_.data();
  desc_.option_count = options_.size();
  const bool check_node = r.get<uint8_t>() != 0, select_nodes = r.get<uint8_t>() != 0;
  const bool partitions = r.get<uint8_t>() != 0, probe = r.get<uint8_t>() != 0;
  if (r.failed()) return Status::error("isolation: the descriptor from its process is malformed");
  // A loader's descriptor has no loader functions here: an isolated loader wraps each file in a child of
  // that file's own (start() with `wrapped`), never in this process.
  if (desc_.kind == BATON_PLUGIN_DELEGATE) {
    if (partitions && select_nodes) {
      desc_.delegate = &forward::selecting_delegate;
    } else if (partitions && check_node) {
      desc_.delegate = &forward::delegate;
    }
    if (probe) desc_.probe_devices = &forward::probe;
  }
  desc_.create = &forward::create;
  desc_.destroy = &forward::destroy;
  return Status::ok();
}

Expected<IsolatedPlugin::Reply> IsolatedPlugin::call(Writer& request, const std::vector<Block>& blocks, bool invoke,
                                                     const char* stage, bool may_restart) {
  PluginProcess& p = *process_;
  std::lock_guard lock(p.mutex);
  if (Status s = p.ensure(may_restart); !s) return s;
  if (may_restart && created_generation_ != 0 && created_generation_ != p.generation) {
    // A fresh child (this instance's or another Environment's died): create this instance in it again.
    auto again = p.exchange(create_request_, {}, settings_.prepare_timeout_ms, "create", host);
    if (!again) return again.status();
    if (again->status != BATON_OK) {
      return Status::error("isolated plugin " + name + ": create failed in its restarted process: " + again->error);
    }
    created_generation_ = p.generation;
  }
  return p.exchange(request, blocks, invoke ? settings_.invoke_timeout_ms : settings_.prepare_timeout_ms, stage, host);
}

Expected<IsolatedPlugin::Reply> IsolatedPlugin::create(Writer request) {
  auto got = call(request, {}, false, "create", true);
  std::lock_guard lock(process_->mutex);
  if (got && got->status == BATON_OK) {
    create_request_ = std::move(request);
    created_generation_ = got->generation;
  }
  return got;
}

void IsolatedPlugin::destroy() {
  {
    std::lock_guard lock(process_->mutex);
    // An instance of a child that has since died went with it.
    const bool live = created_generation_ != 0 && created_generation_ == process_->generation && process_->alive;
    created_generation_ = 0;
    if (!live) return;
  }
  Writer w;
  w.put(Message::destroy);
  w.put(instance_);
  (void)call(w, {}, false, "destroy", false);
}

}  // namespace baton::isolation
