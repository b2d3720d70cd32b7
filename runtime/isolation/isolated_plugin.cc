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

Expected<std::shared_ptr<IsolatedPlugin>> IsolatedPlugin::start(const std::string& path,
                                                                const IsolationSettings& settings) {
  std::shared_ptr<IsolatedPlugin> p(new IsolatedPlugin);
  p->path_ = path;
  p->settings_ = settings;
  p->name = path;  // until the plugin declares its name
  std::lock_guard lock(p->mutex_);
  Status s = p->spawn();
  if (s) s = p->load_descriptor(true);
  take_child_deaths();  // a child that died while loading is this call's failure, no interpreter's
  if (!s) return s;
  return p;
}

IsolatedPlugin::~IsolatedPlugin() {
  if (socket_ >= 0) ::close(socket_);  // the child reads the end of its input and exits
  if (pid_ > 0) {
    // A child that does not leave within a second (a plugin stuck in a destructor) is killed.
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

pid_t IsolatedPlugin::pid() const {
  std::lock_guard lock(mutex_);
  return alive_ ? pid_ : -1;
}

Status IsolatedPlugin::spawn() {
  const std::string exe = plugin_host_executable();
  if (::access(exe.c_str(), X_OK) != 0) {
    return Status::error("isolation: cannot run " + exe + " (" + std::strerror(errno) +
                         "); set BATON_PLUGIN_HOST to the baton-plugin-host program");
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::error(std::string("isolation: socketpair: ") + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return Status::error(std::string("isolation: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
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
    char* const argv[] = {const_cast<char*>("baton-plugin-host"), const_cast<char*>(path_.c_str()), nullptr};
    ::execv(exe.c_str(), argv);
    _exit(127);
  }
  ::close(sv[1]);
  if (socket_ >= 0) ::close(socket_);
  socket_ = sv[0];
  pid_ = pid;
  alive_ = true;
  ++generation_;
  mapped_.clear();
  blocks_generation_ = blocks_generation();
  return Status::ok();
}

void IsolatedPlugin::kill_child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
  }
  alive_ = false;
}

std::string IsolatedPlugin::death_reason(bool timed_out, int timeout_ms) {
  if (timed_out) {
    kill_child();
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return "its process " + std::string("did not answer within ") + std::to_string(timeout_ms) + " ms; killed";
  }
  int status = 0;
  // The socket closed: the child is gone or going; wait for it (killing it if it lingers).
  pid_t got = 0;
  for (int i = 0; i < 200 && (got = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (got == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  alive_ = false;
  pid_ = -1;
  if (WIFSIGNALED(status)) return "its process was killed by " + signal_name(WTERMSIG(status));
  if (WIFEXITED(status)) return "its process exited with status " + std::to_string(WEXITSTATUS(status));
  return "its process went away";
}

Expected<IsolatedPlugin::Reply> IsolatedPlugin::exchange(Writer& request, const std::vector<Block>& blocks,
                                                         int timeout_ms, const char* stage) {
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
      if (host) host_api_table()->log(host, level, message.c_str());
      continue;
    }
    if (type != Message::reply) {
      kill_child();
      return died(false);
    }
    reply.status = static_cast<baton_status>(r.get<int32_t>());
    reply.error = r.get_string();
    reply.body = sizeof(Message) + sizeof(int32_t) + sizeof(uint64_t) + reply.error.size();
    if (r.failed()) {
      kill_child();
      return died(false);
    }
    return reply;
  }
}

Status IsolatedPlugin::load_descriptor(bool first) {
  Writer request;
  request.put(Message::load);
  // Starting a process and opening a library may take long on a loaded machine (or under a sanitizer):
  // loading gets at least kLoadTimeoutMs whatever the prepare timeout.
  auto got = exchange(request, {}, std::max(settings_.prepare_timeout_ms, kLoadTimeoutMs), "loading");
  if (!got) return got.status();
  const Reply& reply = *got;
  if (reply.status != BATON_OK) {
    kill_child();
    return Status::error(reply.error);
  }
  Reader r = reply.reader();
  desc_ = baton_plugin_desc{};
  desc_.struct_size = sizeof desc_;
  desc_.abi_major = r.get<uint32_t>();
  desc_.abi_minor = r.get<uint32_t>();
  const std::string declared = r.get_string();
  if (!first && declared != name) {
    kill_child();
    return Status::error("isolated plugin " + name + ": its restarted process declares the name '" + declared + "'");
  }
  name = declared;
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
  if (desc_.kind == BATON_PLUGIN_LOADER) return Status::error("loader plugins cannot be isolated (yet): it runs in process only");
  if (desc_.kind == BATON_PLUGIN_DELEGATE) {
    if (select_nodes && !check_node) {
      return Status::error("isolation does not support delegates that select nodes from the whole graph (select_nodes) yet");
    }
    if (check_node && partitions) desc_.delegate = &forward::delegate;
    if (probe) desc_.probe_devices = &forward::probe;
  }
  desc_.create = &forward::create;
  desc_.destroy = &forward::destroy;
  if (!first && created) {
    Writer create;
    create.put(Message::create);
    create.put_string(path_);
    create.put(created_threads);
    create.put<uint32_t>(static_cast<uint32_t>(created_options.size()));
    for (const auto& [key, value] : created_options) {
      create.put_string(key);
      create.put_string(value);
    }
    auto again = exchange(create, {}, settings_.prepare_timeout_ms, "create");
    if (!again) return again.status();
    if (again->status != BATON_OK) {
      kill_child();
      return Status::error("isolated plugin " + name + ": create failed in its restarted process: " + again->error);
    }
  }
  return Status::ok();
}

Expected<IsolatedPlugin::Reply> IsolatedPlugin::call(Writer& request, const std::vector<Block>& blocks, bool invoke,
                                                     const char* stage, bool may_restart) {
  std::lock_guard lock(mutex_);
  if (alive_ && may_restart) {
    // A child that went away between calls (killed from outside, or a plugin thread crashed) is noticed
    // before new work is given to it, not by that work failing.
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      alive_ = false;
      pid_ = -1;
    }
  }
  if (!alive_) {
    if (!may_restart) {
      return Status::error("isolated plugin " + name + ": its process is gone (work made in it was lost)");
    }
    if (Status s = spawn(); !s) return s;
    if (Status s = load_descriptor(false); !s) return s;
  }
  return exchange(request, blocks, invoke ? settings_.invoke_timeout_ms : settings_.prepare_timeout_ms, stage);
}

}  // namespace baton::isolation
