#include "gpu.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <set>

#include "baton/plugin_api.h"
#include "vk_error.h"

namespace baton::vulkan {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::set<std::string> loaded_objects() {
  std::set<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name && info->dlpi_name[0]) static_cast<std::set<std::string>*>(out)->insert(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// The loader loads the drivers (and what they link, LLVM for Mesa's) when an instance is made and
// unloads them when it is destroyed. Keep them for the life of the process instead: loading LLVM again
// costs every later instance, and memory such drivers allocate once would be reported as leaks that no
// stack can be attributed to once the library is gone.
void pin_new_objects(const std::set<std::string>& before) {
  for (const std::string& name : loaded_objects()) {
    if (!before.count(name)) (void)dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  }
}

// The loader, opened on the first instance (vk.h); refused with the reason when it cannot be.
void require_loader() {
  if (const std::string& why = load_vulkan(); !why.empty()) refuse(why);
}

VkInstance create_instance(const VkDebugUtilsMessengerCreateInfoEXT* messenger, bool validation) {
  require_loader();
  const std::set<std::string> before = loaded_objects();
  uint32_t loader_version = VK_API_VERSION_1_0;
  // vkEnumerateInstanceVersion is absent from a 1.0 loader; asking for it through the loader is safe.
  auto enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  if (enumerate_version) enumerate_version(&loader_version);
  if (loader_version < VK_API_VERSION_1_1) refuse("the Vulkan loader supports only Vulkan 1.0 (1.1 needed)");

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "baton";
  app.pEngineName = "baton vulkan delegate";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  const char* layers[] = {kValidationLayer};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  // Besides the default checks, synchronisation validation: a missing or wrong barrier between two
  // dispatches is reported even where the driver (lavapipe runs dispatches in order) would not show it.
  const VkValidationFeatureEnableEXT enable[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enable;
  features.pNext = messenger;  // also reports what happens in vkCreateInstance and vkDestroyInstance
  if (validation) {
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = layers;
    info.enabledExtensionCount = 2;
    info.ppEnabledExtensionNames = extensions;
    info.pNext = &features;
  }
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = vkCreateInstance(&info, nullptr, &instance);
  pin_new_objects(before);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) refuse("no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)");
  vk_check(r, "vkCreateInstance");
  return instance;
}

std::vector<VkQueueFamilyProperties> queue_families(VkPhysicalDevice device) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  families.resize(count);
  return families;
}

int compute_queue_family(const std::vector<VkQueueFamilyProperties>& families) {
  for (size_t i = 0; i < families.size(); ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[i].queueCount > 0) return static_cast<int>(i);
  }
  return -1;
}

DeviceSummary summarize(VkPhysicalDevice device) {
  VkPhysicalDeviceProperties p{};
  vkGetPhysicalDeviceProperties(device, &p);
  DeviceSummary s;
  s.name = p.deviceName;
  s.type = static_cast<int>(p.deviceType);
  s.api_version = p.apiVersion;
  if (p.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceDriverProperties driver{};
    driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &driver;
    vkGetPhysicalDeviceProperties2(device, &p2);
    s.driver = std::string(driver.driverName) + (driver.driverInfo[0] ? std::string(" ") + driver.driverInfo : "");
  }
  if (p.apiVersion < VK_API_VERSION_1_1) {
    s.unusable = "Vulkan 1.0 only (1.1 needed)";
  } else if (compute_queue_family(queue_families(device)) < 0) {
    s.unusable = "no compute queue";
  }
  return s;
}

std::vector<VkPhysicalDevice> physical_devices(VkInstance instance) {
  uint32_t count = 0;
  BATON_VK(vkEnumeratePhysicalDevices, instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  VkResult r = vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (r == VK_INCOMPLETE) r = VK_SUCCESS;  // a device appeared in between: the first `count` will do
  vk_check(r, "vkEnumeratePhysicalDevices");
  devices.resize(count);
  return devices;
}

// Whether a Vulkan enumeration (called as enumerate(&count, items), the two-call pattern) lists an item
// whose `name_of` is `name`; false when the enumeration fails.
template <typename Item, typename Enumerate, typename NameOf>
bool lists(Enumerate enumerate, NameOf name_of, const char* name) {
  uint32_t count = 0;
  if (enumerate(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<Item> items(count);
  if (enumerate(&count, items.data()) != VK_SUCCESS) return false;
  for (const Item& item : items) {
    if (std::strcmp(name_of(item), name) == 0) return true;
  }
  return false;
}

bool device_has_extension(VkPhysicalDevice device, const char* name) {
  return lists<VkExtensionProperties>(
      [&](uint32_t* count, VkExtensionProperties* items) {
        return vkEnumerateDeviceExtensionProperties(device, nullptr, count, items);
      },
      [](const VkExtensionProperties& e) { return e.extensionName; }, name);
}

bool has_validation_layer() {
  return lists<VkLayerProperties>(vkEnumerateInstanceLayerProperties,
                                  [](const VkLayerProperties& l) { return l.layerName; }, kValidationLayer);
}

}  // namespace

DeviceListing list_devices() {
  DeviceListing out;
  VkInstance instance = VK_NULL_HANDLE;
  try {
    instance = create_instance(nullptr, false);
    for (VkPhysicalDevice d : physical_devices(instance)) out.devices.push_back(summarize(d));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  if (instance) vkDestroyInstance(instance, nullptr);
  return out;
}

Gpu::Gpu(const GpuOptions& options, LogFn log) : log_(std::move(log)) {
  const std::set<std::string> before = loaded_objects();
  try {
    VkDebugUtilsMessengerCreateInfoEXT messenger{};
    messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                            VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger.pfnUserCallback = &Gpu::on_message;
    messenger.pUserData = this;
    require_loader();
    if (options.validation && !has_validation_layer()) {
      refuse(std::string("validation was asked for but ") + kValidationLayer +
             " is not installed (Debian: vulkan-validationlayers)");
    }
    instance_ = create_instance(&messenger, options.validation);
    if (options.validation) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
      if (!create) refuse("validation: vkCreateDebugUtilsMessengerEXT is missing");
      vk_check(create(instance_, &messenger, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
    }
    const std::vector<VkPhysicalDevice> devices = physical_devices(instance_);
    std::vector<DeviceSummary> summaries;
    for (VkPhysicalDevice d : devices) summaries.push_back(summarize(d));
    std::string why;
    const int chosen = choose_device(summaries, options.device, &why);
    if (chosen < 0) refuse(why);
    index_ = static_cast<size_t>(chosen);
    physical_ = devices[index_];
    summary_ = summaries[index_];
    vkGetPhysicalDeviceProperties(physical_, &properties_);
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    const std::vector<VkQueueFamilyProperties> families = queue_families(physical_);
    queue_family_ = static_cast<uint32_t>(compute_queue_family(families));
    if (queue_family_ < families.size()) timestamp_bits_ = families[queue_family_].timestampValidBits;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = queue_family_;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    // 16-bit storage is core in Vulkan 1.1 (the instance's version) but optional: asked for only when
    // the device has it.
    // Float16 arithmetic is VK_KHR_shader_float16_int8's shaderFloat16 (core only from Vulkan 1.2; the
    // instance asks for 1.1): its features are read only where the device lists the extension.
    const bool has_float16_extension = device_has_extension(physical_, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    VkPhysicalDeviceShaderFloat16Int8Features float16{};
    float16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    VkPhysicalDevice16BitStorageFeatures storage16{};
    storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    storage16.pNext = has_float16_extension ? &float16 : nullptr;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &storage16;
    vkGetPhysicalDeviceFeatures2(physical_, &features);
    f16_storage_ = options.f16_storage && storage16.storageBuffer16BitAccess == VK_TRUE;
    f16_math_ = f16_storage_ && options.f16_math && float16.shaderFloat16 == VK_TRUE;
    VkPhysicalDeviceShaderFloat16Int8Features enable_math{};
    enable_math.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    enable_math.shaderFloat16 = VK_TRUE;
    VkPhysicalDevice16BitStorageFeatures enable16{};
    enable16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    enable16.storageBuffer16BitAccess = VK_TRUE;
    enable16.pNext = f16_math_ ? &enable_math : nullptr;
    const char* float16_extension = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    VkDeviceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.pNext = f16_storage_ ? &enable16 : nullptr;
    info.enabledExtensionCount = f16_math_ ? 1 : 0;
    info.ppEnabledExtensionNames = f16_math_ ? &float16_extension : nullptr;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    BATON_VK(vkCreateDevice, physical_, &info, nullptr, &device_);
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
    pin_new_objects(before);  // anything the driver loaded for the device too
  } catch (...) {
    release();
    throw;
  }
}

Gpu::~Gpu() { release(); }

void Gpu::release() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
    messenger_ = VK_NULL_HANDLE;
  }
  if (instance_) {
    vkDestroyInstance(instance_, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
}

VKAPI_ATTR VkBool32 VKAPI_CALL Gpu::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                               VkDebugUtilsMessageTypeFlagsEXT types,
                                               const VkDebugUtilsMessengerCallbackDataEXT* data, void* self) {
  (void)types;
  auto* gpu = static_cast<Gpu*>(self);
  const bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  ++gpu->validation_messages_;
  if (gpu->log_) {
    try {
      gpu->log_(error ? BATON_LOG_ERROR : BATON_LOG_WARNING,
                std::string("validation ") + (error ? "error" : "warning") + ": " +
                    (data && data->pMessage ? data->pMessage : "(no message)"));
    } catch (...) {
      // A message that cannot be logged is still counted.
    }
  }
  return VK_FALSE;  // never abort the call that was reported
}

std::string Gpu::driver_key() const {
  char uuid[2 * VK_UUID_SIZE + 1] = {};
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) std::snprintf(uuid + 2 * i, 3, "%02x", properties_.pipelineCacheUUID[i]);
  return std::string(properties_.deviceName) + " vendor " + std::to_string(properties_.vendorID) + " device " +
         std::to_string(properties_.deviceID) + " driver " + std::to_string(properties_.driverVersion) + " api " +
         std::to_string(properties_.apiVersion) + " cache " + uuid;
}

uint32_t Gpu::memory_type(uint32_t allowed_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(allowed_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  if (fallback < 0) refuse("the device has no memory type with flags " + std::to_string(required));
  return static_cast<uint32_t>(fallback);
}

bool Gpu::memory_type_has(uint32_t type, VkMemoryPropertyFlags flags) const {
  return type < memory_.memoryTypeCount && (memory_.memoryTypes[type].propertyFlags & flags) == flags;
}

}  // namespace baton::vulkan
