// Which Vulkan device the delegate runs on. Kept apart from any Vulkan call so the policy can be tested
// on made-up device lists: the first discrete GPU, else the first integrated GPU, else the first usable
// device of another type (a virtual GPU) but never a CPU implementation such as Mesa's lavapipe, which is
// slower than a CPU delegate; the `device` option, an index or a case-insensitive substring of the name,
// overrides that and may name any usable device, a CPU implementation included.
#ifndef BATON_VULKAN_DEVICE_CHOICE_H
#define BATON_VULKAN_DEVICE_CHOICE_H

#include <cstdint>
#include <string>
#include <vector>

namespace baton::vulkan {

// What the delegate needs to know about one physical device, as enumerated.
struct DeviceSummary {
  std::string name;
  int type = 0;              // VkPhysicalDeviceType
  uint32_t api_version = 0;  // VK_MAKE_API_VERSION
  std::string driver;        // driver name and version, when the device reports them
  std::string unusable;      // why the delegate cannot use it ("Vulkan 1.0 only", "no compute queue"); empty if usable
};

// "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other".
const char* device_type_name(int type);

// One line for `baton plugins`: "0: llvmpipe (LLVM 15.0.6, 256 bits) [CPU, Vulkan 1.3, llvmpipe Mesa 22.3.6]".
std::string describe_device(size_t index, const DeviceSummary& device);

// The index of the device to use, or -1 with `why` set (no device, none usable, nothing matches the option).
int choose_device(const std::vector<DeviceSummary>& devices, const std::string& option, std::string* why);

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_DEVICE_CHOICE_H
