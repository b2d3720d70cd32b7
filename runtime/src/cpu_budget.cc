#include "cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace baton {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// This process's cgroup v2 folder (the "0::/path" line of /proc/self/cgroup), or "" when there is none.
std::string cgroup_v2_dir() {
  std::ifstream f("/proc/self/cgroup");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "";
}

std::optional<int> own_cgroup_quota() {
  // v2: the process's own folder, then the root's (a container sees its cgroup as the root).
  const std::string dir = cgroup_v2_dir();
  for (const std::string& d : {dir, std::string("/sys/fs/cgroup")}) {
    if (d.empty()) continue;
    const std::string line = read_first_line(d + "/cpu.max");
    if (!line.empty()) return cgroup_quota_cpus(line);
  }
  const std::string quota = read_first_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  const std::string period = read_first_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (!quota.empty() && !period.empty()) return cgroup_quota_cpus(quota + " " + period);
  return std::nullopt;
}

}  // namespace

std::optional<int> cgroup_quota_cpus(const std::string& quota_period) {
  std::istringstream in(quota_period);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || period <= 0 || quota == "max") return std::nullopt;
  long long q = 0;
  try {
    q = std::stoll(quota);
  } catch (...) {
    return std::nullopt;
  }
  if (q <= 0) return std::nullopt;  // v1 writes -1 for no quota
  return static_cast<int>(std::max<long long>(1, (q + period - 1) / period));
}

int usable_cpus() {
  int cpus = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (const std::optional<int> quota = own_cgroup_quota()) cpus = std::min(cpus, *quota);
  return std::max(1, cpus);
}

}  // namespace baton
