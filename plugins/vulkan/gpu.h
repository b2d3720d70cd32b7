// The Vulkan device the delegate runs on: one instance (with the Khronos validation layer and a
// messenger that counts its warnings and errors, when asked), the chosen physical device, a logical
// device with one compute queue, and the memory types buffers come from. One Gpu per loaded plugin;
// every partition shares it (the plugin is not reentrant, so the queue is never used from two threads).
#ifndef BATON_VULKAN_GPU_H
#define BATON_VULKAN_GPU_H

#include "vk.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "device_choice.h"

namespace baton::vulkan {

// level is a baton_log_level.
using LogFn = std::function<void(int level, const std::string& message)>;

struct GpuOptions {
  std::string device;       // the `device` option: index or name substring; empty = the default policy
  bool validation = false;  // enable VK_LAYER_KHRONOS_validation and report its messages
  bool f16_storage = false;  // enable 16-bit storage buffers where the device has them
  bool f16_math = false;     // with them, float16 arithmetic where the device has it (shaderFloat16)
};

// The devices a fresh instance sees, for the plugin's description. Never throws: `error` says why the
// list is empty when no driver or loader answered.
struct DeviceListing {
  std::vector<DeviceSummary> devices;
  std::string error;
};
DeviceListing list_devices();

class Gpu {
 public:
  // Throws Refusal when there is nothing to run on (no driver, no usable device, validation asked for
  // but the layer is not installed) and VulkanError when a call fails.
  Gpu(const GpuOptions& options, LogFn log);
  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
  const DeviceSummary& summary() const { return summary_; }
  size_t index() const { return index_; }
  // Identifies the device and driver build, for keys of cached compiled shaders.
  std::string driver_key() const;
  // A memory type allowed by `allowed_bits` with every `required` flag, preferring one that also has the
  // `preferred` flags. Throws Refusal when none has the required flags.
  uint32_t memory_type(uint32_t allowed_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const;
  bool memory_type_has(uint32_t type, VkMemoryPropertyFlags flags) const;
  // Whether storage buffers may hold float16 (asked for, and the device has storageBuffer16BitAccess).
  bool f16_storage() const { return f16_storage_; }
  // Whether shaders may compute in float16 too (asked for, float16 storage, and the device has
  // shaderFloat16 through VK_KHR_shader_float16_int8).
  bool f16_math() const { return f16_math_; }
  // Whether the compute queue writes timestamps (vkCmdWriteTimestamp), and nanoseconds per tick.
  bool timestamps() const { return timestamp_bits_ > 0 && properties_.limits.timestampPeriod > 0; }
  uint32_t timestamp_bits() const { return timestamp_bits_; }
  // Validation warnings and errors reported so far (0 without validation).
  uint64_t validation_messages() const { return validation_messages_; }

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* self);
  void release();

  LogFn log_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_{};
  DeviceSummary summary_;
  size_t index_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint32_t timestamp_bits_ = 0;  // the compute queue family's timestampValidBits
  uint64_t validation_messages_ = 0;
  bool f16_storage_ = false;
  bool f16_math_ = false;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_GPU_H
