// One VkBuffer with its own memory, released together. Device buffers hold weights and the tensors of
// a partition; staging buffers are host-visible and stay mapped for the partition's life, so an invoke
// is a memcpy in, one submit, a memcpy out.
#ifndef BATON_VULKAN_GPU_BUFFER_H
#define BATON_VULKAN_GPU_BUFFER_H

#include "vk.h"

#include <cstddef>

#include "gpu.h"

namespace baton::vulkan {

enum class MemoryUse {
  kDevice,    // device-local: read and written by shaders, filled by copies
  kUpload,    // host-visible and coherent: written by the host, read by the device
  kDownload,  // host-visible and coherent (cached where there is such memory): written by the device
};

class GpuBuffer {
 public:
  // Throws VulkanError (or Refusal when the device has no suitable memory type).
  GpuBuffer(const Gpu& gpu, VkDeviceSize size, MemoryUse use);
  ~GpuBuffer();
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // The mapping of a staging buffer; NULL for device buffers.
  void* mapped() const { return mapped_; }

 private:
  VkDevice device_;
  VkDeviceSize size_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_GPU_BUFFER_H
