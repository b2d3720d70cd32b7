// baton-vulkan-probe: lists the Vulkan devices a new instance sees, in the text format of
// device_probe.h, and exits. The vulkan delegate runs it in a child process so that finding out which
// devices exist never loads a Vulkan driver (and, for lavapipe, LLVM) into the host.
#include <cstdio>
#include <cstdlib>

#include "device_probe.h"
#include "gpu.h"

int main() {
  const std::string text = baton::vulkan::format_listing(baton::vulkan::list_devices());
  const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  // No exit handlers: what a driver keeps until exit is not this program's to free, and a leak checker
  // (the sanitizer builds) must not turn it into a failed probe.
  std::_Exit(written ? 0 : 1);
}
