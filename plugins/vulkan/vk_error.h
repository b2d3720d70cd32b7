// How the Vulkan delegate reports failure inside the plugin: three exception types that the C boundary
// (plugin.cc, through the plugin kit's guarded calls) turns into statuses and messages. A Refusal (the
// kit's) is "this delegate does not run that" (a parameter, a type, no device); a VulkanError names the
// Vulkan call and the VkResult it returned; a ShaderError names the shader and carries glslang's log.
// Nothing here aborts the process.
#ifndef BATON_VULKAN_VK_ERROR_H
#define BATON_VULKAN_VK_ERROR_H

#include "vk.h"

#include <stdexcept>
#include <string>

#include "baton/plugin_kit.hpp"

namespace baton::vulkan {

using kit::Refusal;
using kit::refuse;

class VulkanError : public std::runtime_error {
 public:
  VulkanError(const std::string& call, VkResult result);
  VkResult result() const { return result_; }

 private:
  VkResult result_;
};

class ShaderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for the codes of the Vulkan 1.3 core and the common extensions;
// "VkResult <number>" for anything else.
std::string vk_result_name(VkResult result);

// Throws VulkanError unless `result` is VK_SUCCESS. `call` is the Vulkan function's name, so the message
// reads "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY".
void vk_check(VkResult result, const char* call);

// Test hook: true when the environment variable BATON_VULKAN_FAIL names `call`. The call is then not
// made and fails with VK_ERROR_OUT_OF_DEVICE_MEMORY, as if the driver had refused it: the only way to
// show on a healthy driver that a failing call becomes a status and the partition falls back.
bool vk_fault(const char* call);

// Makes Vulkan call `fn` with the arguments that follow, and throws VulkanError naming it unless it
// returned VK_SUCCESS (or the test hook fails it).
#define BATON_VK(fn, ...)                                                                                    \
  ::baton::vulkan::vk_check(::baton::vulkan::vk_fault(#fn) ? VK_ERROR_OUT_OF_DEVICE_MEMORY : fn(__VA_ARGS__), \
                            #fn)

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_VK_ERROR_H
