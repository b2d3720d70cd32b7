#include "device_probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "fnv1a.h"

extern char** environ;

namespace baton::vulkan {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHelperName = "baton-vulkan-probe";
// A first, cold run loads Mesa's drivers and LLVM from disk: 8 s for the AddressSanitizer build on the
// 2-core development machine, and past 10 s there under load (the plugin then lists the devices in its
// own process, loading the drivers the helper exists to keep out). The answer is cached, so a helper that
// hangs costs this once per set of drivers.
constexpr int kHelperTimeoutMs = 30000;

std::string clean(std::string s) {
  std::replace_if(s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return s;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

// "PATH SIZE MTIME" of a file, or "PATH -" when it is missing.
std::string stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + " -\n";
  return path + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + "\n";
}

// The folders the Vulkan loader reads driver manifests from (its documented search order on Linux).
std::vector<std::string> manifest_dirs() {
  std::vector<std::string> roots;
  const char* config_home = std::getenv("XDG_CONFIG_HOME");
  const char* data_home = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  if (config_home && *config_home) roots.push_back(config_home);
  else if (home && *home) roots.push_back(std::string(home) + "/.config");
  const char* config_dirs = std::getenv("XDG_CONFIG_DIRS");
  for (const std::string& d : split(config_dirs && *config_dirs ? config_dirs : "/etc/xdg", ':')) roots.push_back(d);
  roots.push_back("/etc");
  if (data_home && *data_home) roots.push_back(data_home);
  else if (home && *home) roots.push_back(std::string(home) + "/.local/share");
  const char* data_dirs = std::getenv("XDG_DATA_DIRS");
  for (const std::string& d : split(data_dirs && *data_dirs ? data_dirs : "/usr/local/share:/usr/share", ':')) {
    roots.push_back(d);
  }
  std::vector<std::string> out;
  for (const std::string& r : roots) {
    if (!r.empty()) out.push_back(r + "/vulkan/icd.d");
  }
  return out;
}

// The library a driver manifest names ("library_path"), read without a JSON parser: the value of that key.
std::string manifest_library(const std::string& manifest) {
  std::ifstream f(manifest);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t key = text.find("\"library_path\"");
  if (key == std::string::npos) return "";
  const size_t open = text.find('"', text.find(':', key) + 1);
  const size_t close = open == std::string::npos ? open : text.find('"', open + 1);
  if (close == std::string::npos) return "";
  return text.substr(open + 1, close - open - 1);
}

std::string manifests_stamp(const std::string& manifest) {
  std::string s = stamp(manifest);
  const std::string lib = manifest_library(manifest);
  if (lib.find('/') != std::string::npos) s += stamp(lib);  // a bare name is found by the dynamic linker
  else if (!lib.empty()) s += "lib " + lib + "\n";
  return s;
}

// Runs the helper with stdout into a pipe; its stdin is /dev/null, its stderr discarded, and it gets
// no other descriptor of ours (pipes are close-on-exec). Killed after kHelperTimeoutMs.
bool run_helper(const std::string& helper, std::string* out, std::string* why) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *why = "pipe failed";
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv = {const_cast<char*>(helper.c_str()), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    *why = "cannot start " + helper + ": " + std::strerror(spawned);
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHelperTimeoutMs);
  bool timed_out = false;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    *why = helper + " did not answer within " + std::to_string(kHelperTimeoutMs / 1000) + " s";
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *why = helper + (WIFSIGNALED(status) ? " died of signal " + std::to_string(WTERMSIG(status))
                                         : " exited with status " + std::to_string(WEXITSTATUS(status)));
    return false;
  }
  return true;
}

}  // namespace

std::string format_listing(const DeviceListing& listing) {
  std::string s;
  if (!listing.error.empty()) return "error\t" + clean(listing.error) + "\n";
  for (const DeviceSummary& d : listing.devices) {
    s += "device\t" + std::to_string(d.type) + "\t" + std::to_string(d.api_version) + "\t" + clean(d.name) + "\t" +
         clean(d.driver) + "\t" + clean(d.unusable) + "\n";
  }
  return s.empty() ? "none\n" : s;
}

bool parse_listing(const std::string& text, DeviceListing* out) {
  *out = {};
  std::istringstream in(text);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() == 1 && f[0] == "none") {
      any = true;
    } else if (f.size() == 2 && f[0] == "error") {
      out->error = f[1];
      any = true;
    } else if (f.size() == 6 && f[0] == "device") {
      DeviceSummary d;
      char* end = nullptr;
      d.type = static_cast<int>(std::strtol(f[1].c_str(), &end, 10));
      if (*end) return false;
      d.api_version = static_cast<uint32_t>(std::strtoul(f[2].c_str(), &end, 10));
      if (*end) return false;
      d.name = f[3];
      d.driver = f[4];
      d.unusable = f[5];
      out->devices.push_back(std::move(d));
      any = true;
    } else {
      return false;
    }
  }
  return any;
}

std::string device_fingerprint(const std::string& helper) {
  std::string s = "baton vulkan device listing 1\n" + stamp(helper);
  for (const char* var : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES", "VK_LOADER_DRIVERS_SELECT",
                          "VK_LOADER_DRIVERS_DISABLE", "VK_LOADER_DEVICE_SELECT", "MESA_VK_DEVICE_SELECT",
                          "LD_LIBRARY_PATH", "LD_PRELOAD"}) {
    const char* v = std::getenv(var);
    s += std::string(var) + "=" + (v ? v : "") + "\n";
  }
  for (const char* var : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES"}) {
    if (const char* v = std::getenv(var); v && *v) {
      for (const std::string& f : split(v, ':')) s += manifests_stamp(f);
    }
  }
  std::error_code ec;
  for (const std::string& dir : manifest_dirs()) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) s += manifests_stamp(f);
  }
  // GPUs appear as device nodes: Mesa's drivers open /dev/dri/renderD*, NVIDIA's /dev/nvidia*.
  std::vector<std::string> nodes;
  for (const auto& e : fs::directory_iterator("/dev/dri", ec)) nodes.push_back(e.path().string());
  for (const auto& e : fs::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 || name == "kfd") nodes.push_back(e.path().string());
  }
  std::sort(nodes.begin(), nodes.end());
  for (const std::string& n : nodes) s += "node " + n + "\n";
  return s;
}

std::string probe_helper_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&probe_helper_path), &info) == 0 || !info.dli_fname) return "";
  const fs::path helper = fs::path(info.dli_fname).parent_path() / kHelperName;
  std::error_code ec;
  return fs::is_regular_file(helper, ec) ? helper.string() : "";
}

ProbeResult probe_devices_out_of_process(const std::string& cache_dir) {
  ProbeResult r;
  const std::string helper = probe_helper_path();
  if (helper.empty()) {
    r.source = std::string(kHelperName) + " is not beside the plugin";
    return r;
  }
  const std::string fingerprint = device_fingerprint(helper);
  std::string cache_file;
  if (!cache_dir.empty()) {
    char name[48];
    std::snprintf(name, sizeof name, "devices-%016llx.txt", static_cast<unsigned long long>(fnv1a(fingerprint)));
    cache_file = cache_dir + "/" + name;
    std::ifstream f(cache_file);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    // The file holds the fingerprint itself, then the listing: a hash collision cannot mislead.
    if (text.size() > fingerprint.size() + 1 && text.compare(0, fingerprint.size(), fingerprint) == 0 &&
        text[fingerprint.size()] == '\n' && parse_listing(text.substr(fingerprint.size() + 1), &r.listing)) {
      r.ok = true;
      r.source = "cache " + cache_file;
      return r;
    }
  }
  std::string out, why;
  if (!run_helper(helper, &out, &why) || !parse_listing(out, &r.listing)) {
    r.listing = {};
    r.source = why.empty() ? helper + " gave output that is not a device listing" : why;
    return r;
  }
  r.ok = true;
  r.source = "helper " + helper;
  if (!cache_file.empty()) {
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
    const std::string tmp = cache_file + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << fingerprint << "\n" << format_listing(r.listing);
    }
    fs::rename(tmp, cache_file, ec);
    if (ec) fs::remove(tmp, ec);
  }
  return r;
}

}  // namespace baton::vulkan
