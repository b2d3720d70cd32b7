#include "tuning.h"

#include <algorithm>
#include <cstdio>

#include "baton/plugin_api.h"

namespace baton::vulkan {
namespace {

// Bumped when the key's or the line's meaning changes: an older table then reads as none.
constexpr const char* kTableVersion = "baton vulkan workgroup tuning 1\n";

}  // namespace

DeviceLimits device_limits(const VkPhysicalDeviceLimits& l) {
  DeviceLimits limits;
  limits.max_storage_range = l.maxStorageBufferRange;
  for (int d = 0; d < 3; ++d) {
    limits.max_groups[d] = l.maxComputeWorkGroupCount[d];
    limits.max_local[d] = l.maxComputeWorkGroupSize[d];
  }
  limits.max_invocations = l.maxComputeWorkGroupInvocations;
  return limits;
}

bool workgroup_fits(const Local& l, const std::array<int64_t, 3>& extent, const DeviceLimits& limits) {
  for (int d = 0; d < 3; ++d) {
    if (l[d] == 0 || l[d] > limits.max_local[d]) return false;
  }
  if (static_cast<uint64_t>(l[0]) * l[1] * l[2] > limits.max_invocations) return false;
  const Grid g = grid_of(extent, l);
  for (int d = 0; d < 3; ++d) {
    if (g.groups[d] > limits.max_groups[d]) return false;
  }
  return true;
}

std::vector<Local> workgroup_candidates(const std::array<int64_t, 3>& extent, const Local& rule, const DeviceLimits& limits) {
  std::vector<Local> out{rule};
  for (uint32_t total : {32u, 64u, 128u, 256u}) {
    // Consecutive invocations along x read consecutive memory; a narrower x gives each group more rows.
    for (uint32_t x_cap : {total, 8u}) {
      const uint32_t lx = pow2_at_most(extent[0], std::min(total, x_cap));
      const uint32_t ly = pow2_at_most(extent[1], total / lx);
      const uint32_t lz = pow2_at_most(extent[2], total / (lx * ly));
      const Local l{lx, ly, lz};
      if (workgroup_fits(l, extent, limits) && std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    }
  }
  return out;
}

std::string tuning_key(const Step& step) {
  std::string key = step.shader;
  for (const auto& [name, value] : step.defines) {
    if (name != "LX" && name != "LY" && name != "LZ") key += " " + name + "=" + value;
  }
  key += " " + std::to_string(step.extent[0]) + "x" + std::to_string(step.extent[1]) + "x" + std::to_string(step.extent[2]);
  key += " b" + std::to_string(step.bindings.size());
  return key;
}

void set_workgroup(Step& step, const Local& local) {
  for (auto& [name, value] : step.defines) {
    if (name == "LX") value = std::to_string(local[0]);
    if (name == "LY") value = std::to_string(local[1]);
    if (name == "LZ") value = std::to_string(local[2]);
  }
  step.local = local;
  step.groups = grid_of(step.extent, local).groups;
}

TuningTable::TuningTable(const ShaderCache& cache, const std::string& driver_key, bool measure, LogFn log)
    : cache_(cache), file_key_(kTableVersion + driver_key), measure_(measure), log_(std::move(log)) {
  if (!cache_.enabled()) return;
  const std::optional<std::string> text = cache_.load_tuning(file_key_);
  if (!text) return;
  // One choice a line: "LX LY LZ<tab>key".
  size_t at = 0, line = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    const std::string row = text->substr(at, end - at);
    at = end + 1;
    ++line;
    unsigned x = 0, y = 0, z = 0;
    int used = 0;
    const size_t tab = row.find('\t');
    if (tab == std::string::npos || std::sscanf(row.c_str(), "%u %u %u%n", &x, &y, &z, &used) != 3 ||
        static_cast<size_t>(used) != tab || x == 0 || y == 0 || z == 0 || tab + 1 == row.size()) {
      if (log_) {
        log_(BATON_LOG_WARNING, "workgroup tuning: line " + std::to_string(line) + " of " + cache_.tuning_path(file_key_) +
                                    " is not \"LX LY LZ<tab>dispatch\"; ignored (the dispatch is timed again)");
      }
      changed_ = true;  // written again without it
      continue;
    }
    choices_[row.substr(tab + 1)] = Local{x, y, z};
  }
  loaded_ = choices_.size();
}

const Local* TuningTable::find(const std::string& key) const {
  auto it = choices_.find(key);
  return it == choices_.end() ? nullptr : &it->second;
}

void TuningTable::put(const std::string& key, const Local& local) {
  choices_[key] = local;
  changed_ = true;
}

void TuningTable::save() {
  if (!changed_ || !cache_.enabled() || choices_.empty()) return;
  std::string text;
  for (const auto& [key, l] : choices_) {
    text += std::to_string(l[0]) + " " + std::to_string(l[1]) + " " + std::to_string(l[2]) + "\t" + key + "\n";
  }
  std::string why;
  if (!cache_.store_tuning(file_key_, text, &why)) {
    if (log_) log_(BATON_LOG_WARNING, "workgroup tuning: " + why);
    return;
  }
  changed_ = false;
}

}  // namespace baton::vulkan
