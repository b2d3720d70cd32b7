// Workgroup sizes measured per device. A grid_3d dispatch (gpu_graph.h) computes the same result with
// any workgroup shape, and which shape is fastest depends on the GPU: its wave width, its caches, how
// many groups it keeps in flight. With the `tune` option, a partition's build times a few shapes of
// each such dispatch on the device (Executable, GPU timestamps) and keeps the fastest; the table of
// choices is kept beside the pipeline cache, one file per device and driver, so the next start of the
// same model measures nothing. A dispatch the table does not hold, without tuning, keeps grid_3d's rule.
#ifndef BATON_VULKAN_TUNING_H
#define BATON_VULKAN_TUNING_H

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu.h"
#include "gpu_graph.h"
#include "shader_cache.h"

namespace baton::vulkan {

using Local = std::array<uint32_t, 3>;

// What the planner and the tuning must respect on a device of these limits.
DeviceLimits device_limits(const VkPhysicalDeviceLimits& limits);
// Whether workgroups of `local` over `extent` are within them.
bool workgroup_fits(const Local& local, const std::array<int64_t, 3>& extent, const DeviceLimits& limits);

// The shapes worth timing for a dispatch over `extent`, the rule's own (`rule`) first; each within the
// device's limits, none twice.
std::vector<Local> workgroup_candidates(const std::array<int64_t, 3>& extent, const Local& rule, const DeviceLimits& limits);

// What a tuned shape depends on: the shader, its defines but the workgroup's, and the extent.
std::string tuning_key(const Step& step);

// `step` run in workgroups of `local` (its LX/LY/LZ defines and its group counts).
void set_workgroup(Step& step, const Local& local);

class TuningTable {
 public:
  // Reads the table kept for the device (`driver_key`: Gpu::driver_key) from `cache`: none when the
  // cache is off or holds no table for it; a damaged file or line is said through `log` and ignored.
  // `measure`: shapes missing from the table are timed (the `tune` option, on a device with timestamps).
  TuningTable(const ShaderCache& cache, const std::string& driver_key, bool measure, LogFn log);

  bool measure() const { return measure_; }
  const Local* find(const std::string& key) const;
  void put(const std::string& key, const Local& local);
  size_t size() const { return choices_.size(); }
  size_t loaded() const { return loaded_; }
  // Writes the table when anything was added since it was read or written; a failure is a warning.
  void save();

 private:
  const ShaderCache& cache_;
  std::string file_key_;
  bool measure_;
  LogFn log_;
  std::map<std::string, Local> choices_;
  size_t loaded_ = 0;
  bool changed_ = false;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_TUNING_H
