#include "vk.h"

#include <dlfcn.h>

#include <mutex>

namespace baton::vulkan {

#define BATON_VK_DEFINE(name) PFN_##name name = nullptr;
BATON_VK_FUNCTIONS(BATON_VK_DEFINE)
#undef BATON_VK_DEFINE

namespace {

// The loader's SONAME: what linking -lvulkan would have recorded.
constexpr const char* kLoader = "libvulkan.so.1";

std::string open_loader() {
  // Never closed: the drivers it loads are pinned for the life of the process too (gpu.cc).
  void* loader = dlopen(kLoader, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!loader) {
    const char* why = dlerror();
    return std::string("cannot load the Vulkan loader ") + kLoader + ": " + (why ? why : "not found") +
           " (Debian: libvulkan1)";
  }
  // Every core function is exported by the loader (a trampoline into the instance's or device's driver).
  std::string missing;
#define BATON_VK_LOAD(name)                                                  \
  name = reinterpret_cast<PFN_##name>(dlsym(loader, #name));                 \
  if (!name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  BATON_VK_FUNCTIONS(BATON_VK_LOAD)
#undef BATON_VK_LOAD
  if (!missing.empty()) return std::string("the Vulkan loader ") + kLoader + " lacks " + missing + " (Vulkan 1.1 needed)";
  return "";
}

}  // namespace

const std::string& load_vulkan() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] { error = open_loader(); });
  return error;
}

}  // namespace baton::vulkan
