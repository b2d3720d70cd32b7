#include "vk_error.h"

#include <cstdlib>
#include <cstring>

namespace baton::vulkan {

VulkanError::VulkanError(const std::string& call, VkResult result)
    : std::runtime_error(call + " failed: " + vk_result_name(result)), result_(result) {}

std::string vk_result_name(VkResult result) {
  switch (result) {
#define BATON_VK_NAME(x) \
  case x: return #x;
    BATON_VK_NAME(VK_SUCCESS)
    BATON_VK_NAME(VK_NOT_READY)
    BATON_VK_NAME(VK_TIMEOUT)
    BATON_VK_NAME(VK_EVENT_SET)
    BATON_VK_NAME(VK_EVENT_RESET)
    BATON_VK_NAME(VK_INCOMPLETE)
    BATON_VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    BATON_VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    BATON_VK_NAME(VK_ERROR_INITIALIZATION_FAILED)
    BATON_VK_NAME(VK_ERROR_DEVICE_LOST)
    BATON_VK_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    BATON_VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    BATON_VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    BATON_VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    BATON_VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    BATON_VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    BATON_VK_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    BATON_VK_NAME(VK_ERROR_FRAGMENTED_POOL)
    BATON_VK_NAME(VK_ERROR_UNKNOWN)
    BATON_VK_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    BATON_VK_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    BATON_VK_NAME(VK_ERROR_FRAGMENTATION)
    BATON_VK_NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    BATON_VK_NAME(VK_PIPELINE_COMPILE_REQUIRED)
    BATON_VK_NAME(VK_ERROR_SURFACE_LOST_KHR)
    BATON_VK_NAME(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    BATON_VK_NAME(VK_SUBOPTIMAL_KHR)
    BATON_VK_NAME(VK_ERROR_OUT_OF_DATE_KHR)
    BATON_VK_NAME(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    BATON_VK_NAME(VK_ERROR_VALIDATION_FAILED_EXT)
    BATON_VK_NAME(VK_ERROR_INVALID_SHADER_NV)
    BATON_VK_NAME(VK_ERROR_NOT_PERMITTED_KHR)
#undef BATON_VK_NAME
    default: break;
  }
  return "VkResult " + std::to_string(static_cast<int>(result));
}

void vk_check(VkResult result, const char* call) {
  if (result != VK_SUCCESS) throw VulkanError(call, result);
}

bool vk_fault(const char* call) {
  const char* inject = std::getenv("BATON_VULKAN_FAIL");
  return inject && std::strcmp(inject, call) == 0;
}

}  // namespace baton::vulkan
