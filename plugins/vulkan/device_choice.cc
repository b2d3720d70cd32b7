#include "device_choice.h"

#include <algorithm>
#include <cctype>

namespace baton::vulkan {
namespace {

// VkPhysicalDeviceType values (the enum's, without including Vulkan here).
constexpr int kOther = 0, kIntegrated = 1, kDiscrete = 2, kVirtual = 3, kCpu = 4;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string listing(const std::vector<DeviceSummary>& devices) {
  std::string s;
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? "; " : "") + describe_device(i, devices[i]);
  return s;
}

}  // namespace

const char* device_type_name(int type) {
  switch (type) {
    case kIntegrated: return "integrated GPU";
    case kDiscrete: return "discrete GPU";
    case kVirtual: return "virtual GPU";
    case kCpu: return "CPU";
    case kOther: break;
  }
  return "other";
}

std::string describe_device(size_t index, const DeviceSummary& d) {
  std::string s = std::to_string(index) + ": " + d.name + " [" + device_type_name(d.type) + ", Vulkan " +
                  std::to_string(d.api_version >> 22) + "." + std::to_string((d.api_version >> 12) & 0x3ffu);
  if (!d.driver.empty()) s += ", " + d.driver;
  s += "]";
  if (!d.unusable.empty()) s += " (unusable: " + d.unusable + ")";
  return s;
}

int choose_device(const std::vector<DeviceSummary>& devices, const std::string& option, std::string* why) {
  if (devices.empty()) {
    *why = "no Vulkan device found";
    return -1;
  }
  if (!option.empty()) {
    int match = -1;
    const bool is_index = std::all_of(option.begin(), option.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (is_index) {
      const unsigned long index = option.size() > 6 ? devices.size() : std::stoul(option);
      if (index < devices.size()) match = static_cast<int>(index);
    } else {
      for (size_t i = 0; i < devices.size() && match < 0; ++i) {
        if (lower(devices[i].name).find(lower(option)) != std::string::npos) match = static_cast<int>(i);
      }
    }
    if (match < 0) {
      *why = "no Vulkan device matches device = '" + option + "' (found " + listing(devices) + ")";
      return -1;
    }
    if (!devices[match].unusable.empty()) {
      *why = "device " + describe_device(static_cast<size_t>(match), devices[match]) + " was chosen by the device option";
      return -1;
    }
    return match;
  }
  for (int wanted : {kDiscrete, kIntegrated}) {
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].type == wanted && devices[i].unusable.empty()) return static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].unusable.empty() && devices[i].type != kCpu) return static_cast<int>(i);
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].unusable.empty()) {
      *why = "only a CPU implementation of Vulkan was found (" + listing(devices) +
             "): it is slower than a CPU delegate, so it is used only when the device option names it "
             "(device = " + std::to_string(i) + " or part of its name)";
      return -1;
    }
  }
  *why = "no usable Vulkan device (found " + listing(devices) + ")";
  return -1;
}

}  // namespace baton::vulkan
