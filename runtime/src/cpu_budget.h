// How many CPUs this process may run on at once: the CPUs of its affinity mask, bounded by its cgroup's
// CPU quota (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), rounded up. A thread
// pool larger than that makes its workers wait on each other's time slices (spinning workers make it a
// cliff: 0.45 ms at 2 threads, 164 ms at 3 on a 2-core machine), so the Environment caps the thread
// count it hands to plugins at this number.
#ifndef BATON_SRC_CPU_BUDGET_H
#define BATON_SRC_CPU_BUDGET_H

#include <optional>
#include <string>

namespace baton {

// A cgroup quota in CPUs, rounded up: "max 100000" (none) gives nothing, "150000 100000" gives 2.
// `quota_period` is cgroup v2's `cpu.max` line; v1's two files are joined the same way ("-1 100000" = none).
std::optional<int> cgroup_quota_cpus(const std::string& quota_period);

// The CPUs of the affinity mask, bounded by this process's cgroup quota where one is set; at least 1.
int usable_cpus();

}  // namespace baton

#endif  // BATON_SRC_CPU_BUDGET_H
