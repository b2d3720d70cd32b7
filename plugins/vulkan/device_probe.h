// Which Vulkan devices this machine has, found without loading a Vulkan driver into the host process.
// Creating a Vulkan instance loads every installed driver, and Mesa's lavapipe brings LLVM (tens of MB
// and tens of milliseconds); on a machine whose only device is lavapipe the delegate is left out of the
// default chain, so it must learn that without paying for it. The listing is made by a small helper
// program (baton-vulkan-probe, installed beside the plugin) in its own process, and cached on disk under
// a fingerprint of everything that decides it: the driver manifests and the libraries they name, the
// GPU device nodes, the loader's environment variables, the helper itself. A later start with the same
// fingerprint reads the file and costs well under a millisecond.
#ifndef BATON_VULKAN_DEVICE_PROBE_H
#define BATON_VULKAN_DEVICE_PROBE_H

#include <string>

#include "gpu.h"

namespace baton::vulkan {

// The listing as lines of text: "device\tTYPE\tAPI\tNAME\tDRIVER\tUNUSABLE" per device, or one
// "error\tMESSAGE"; and back. parse_listing returns false on text it does not recognise.
std::string format_listing(const DeviceListing& listing);
bool parse_listing(const std::string& text, DeviceListing* out);

// Everything that decides what a new instance would list, as one string (its hash names the cache file).
std::string device_fingerprint(const std::string& helper);

// The path of the helper program beside the plugin's own file, or "" when it is not there.
std::string probe_helper_path();

struct ProbeResult {
  DeviceListing listing;
  std::string source;  // "cache FILE", "helper", or why neither worked (the caller then decides)
  bool ok = false;     // false: neither the cache nor the helper answered
};

// The devices, from the cache in `cache_dir` (empty: no cache) or else from the helper, which then
// refreshes the cache. Never loads a Vulkan driver into this process.
ProbeResult probe_devices_out_of_process(const std::string& cache_dir);

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_DEVICE_PROBE_H
