#include "gpu_buffer.h"

#include <algorithm>

#include "vk_error.h"

namespace baton::vulkan {

GpuBuffer::GpuBuffer(const Gpu& gpu, VkDeviceSize size, MemoryUse use) : device_(gpu.device()), size_(size) {
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = std::max<VkDeviceSize>(size, 16);  // Vulkan has no empty buffers
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  BATON_VK(vkCreateBuffer, device_, &info, nullptr, &buffer_);
  try {
    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    VkMemoryPropertyFlags required = 0, preferred = 0;
    switch (use) {
      case MemoryUse::kDevice: preferred = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT; break;
      case MemoryUse::kUpload:
        required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        break;
      case MemoryUse::kDownload:
        required = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        preferred = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
        break;
    }
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = gpu.memory_type(req.memoryTypeBits, required, preferred);
    BATON_VK(vkAllocateMemory, device_, &alloc, nullptr, &memory_);
    BATON_VK(vkBindBufferMemory, device_, buffer_, memory_, 0);
    if (use != MemoryUse::kDevice) BATON_VK(vkMapMemory, device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_);
  } catch (...) {
    if (memory_) vkFreeMemory(device_, memory_, nullptr);
    vkDestroyBuffer(device_, buffer_, nullptr);
    throw;
  }
}

GpuBuffer::~GpuBuffer() {
  // Unmapped implicitly by vkFreeMemory.
  vkDestroyBuffer(device_, buffer_, nullptr);
  vkFreeMemory(device_, memory_, nullptr);
}

}  // namespace baton::vulkan
