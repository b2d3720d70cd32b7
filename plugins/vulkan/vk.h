// The Vulkan API as the plugin calls it: the types of <vulkan/vulkan.h>, and the functions as pointers of
// the same names in baton::vulkan, filled from the Vulkan loader (libvulkan.so.1) when the plugin first
// needs Vulkan (load_vulkan, from Gpu and list_devices). The plugin does not link the loader: a process
// that loads it and never runs on it (its devices come from baton-vulkan-probe) maps neither the loader
// nor what it brings (0.3 MB of resident memory, and the relocations of 50 symbols at every load). Every
// file of the plugin includes this instead of <vulkan/vulkan.h>.
#ifndef BATON_VULKAN_VK_H
#define BATON_VULKAN_VK_H

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <string>

// Every Vulkan function the plugin (and its tests) call by name. Extension functions
// (vkCreateDebugUtilsMessengerEXT) come from vkGetInstanceProcAddr where they are used.
#define BATON_VK_FUNCTIONS(X)                                                                                    \
  X(vkAllocateCommandBuffers) X(vkAllocateDescriptorSets) X(vkAllocateMemory) X(vkBeginCommandBuffer)            \
  X(vkBindBufferMemory) X(vkCmdBindDescriptorSets) X(vkCmdBindPipeline) X(vkCmdCopyBuffer) X(vkCmdDispatch)      \
  X(vkCmdFillBuffer) X(vkCmdPipelineBarrier) X(vkCmdPushConstants) X(vkCmdResetQueryPool) X(vkCmdWriteTimestamp) X(vkCreateBuffer) X(vkCreateCommandPool)      \
  X(vkCreateComputePipelines) X(vkCreateDescriptorPool) X(vkCreateDescriptorSetLayout) X(vkCreateDevice)         \
  X(vkCreateFence) X(vkCreateInstance) X(vkCreatePipelineCache) X(vkCreateQueryPool) X(vkCreatePipelineLayout) X(vkCreateShaderModule)   \
  X(vkDestroyBuffer)                                                                                             \
  X(vkDestroyCommandPool) X(vkDestroyDescriptorPool) X(vkDestroyDescriptorSetLayout) X(vkDestroyDevice)          \
  X(vkDestroyFence) X(vkDestroyInstance) X(vkDestroyPipeline) X(vkDestroyPipelineCache) X(vkDestroyPipelineLayout)  \
  X(vkDestroyQueryPool) X(vkGetQueryPoolResults) X(vkResetDescriptorPool)                                          \
  X(vkDestroyShaderModule) X(vkDeviceWaitIdle) X(vkEndCommandBuffer) X(vkEnumerateDeviceExtensionProperties)    \
  X(vkEnumerateInstanceLayerProperties)                                                                          \
  X(vkEnumeratePhysicalDevices) X(vkFreeCommandBuffers) X(vkFreeMemory) X(vkGetBufferMemoryRequirements)         \
  X(vkGetDeviceQueue) X(vkGetInstanceProcAddr) X(vkGetPhysicalDeviceFeatures2) X(vkGetPipelineCacheData)           \
  X(vkGetPhysicalDeviceMemoryProperties) X(vkGetPhysicalDeviceProperties) X(vkGetPhysicalDeviceProperties2)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkMapMemory) X(vkQueueSubmit) X(vkQueueWaitIdle)                 \
  X(vkResetFences) X(vkUpdateDescriptorSets) X(vkWaitForFences)

namespace baton::vulkan {

#define BATON_VK_DECLARE(name) extern PFN_##name name;
BATON_VK_FUNCTIONS(BATON_VK_DECLARE)
#undef BATON_VK_DECLARE

// Opens the Vulkan loader and fills the functions above, once per process (thread-safe); "" when they
// are ready, else why not (the loader is not installed, or lacks one of them), the same every call.
const std::string& load_vulkan();

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_VK_H
