// The default delegate chain: what baton runs on when neither the config's `delegates` key nor
// --delegate says. Delegates are ordered by the best device each declares (npu, then gpu, then cpu);
// a delegate whose only devices are emulated (a CPU implementation of a GPU API), that finds no device,
// or whose probe fails is left out; ties go to the higher preference of that best device, then to the
// name. Kept apart from plugin loading so the rule can be tested on made-up declarations.
#pragma once

#include <string>
#include <vector>

#include "plugin_registry.h"
#include "status.h"

namespace baton {

struct DelegateCandidate {
  std::string name;
  Expected<std::vector<DeviceInfo>> devices = std::vector<DeviceInfo>{};
  bool declares_devices = true;  // false: an ABI 1.0 plugin without a probe
};

// Where one delegate went and why, for `baton plugins`.
struct ChainPlacement {
  std::string name;
  int position = -1;   // 0-based place in the chain; -1 when left out
  std::string reason;  // "best device gpu (NVIDIA ...), preference 0" or why it is left out
};

// Every candidate once, the chain's members first in chain order, then those left out (by name).
std::vector<ChainPlacement> default_delegate_order(const std::vector<DelegateCandidate>& candidates);

}  // namespace baton
