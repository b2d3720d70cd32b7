#include "delegate_order.h"

#include <algorithm>
#include <tuple>

namespace baton {

namespace {

// Lower ranks go first.
int kind_rank(baton_device_kind kind) {
  switch (kind) {
    case BATON_DEVICE_NPU: return 0;
    case BATON_DEVICE_GPU: return 1;
    case BATON_DEVICE_CPU: return 2;
    case BATON_DEVICE_EMULATED: return 3;
  }
  return 4;
}

}  // namespace

std::vector<ChainPlacement> default_delegate_order(const std::vector<DelegateCandidate>& candidates) {
  struct Ranked {
    int rank;
    int32_t preference;
    std::string name;
    std::string reason;
  };
  std::vector<Ranked> in;
  std::vector<ChainPlacement> out_of_chain;
  for (const DelegateCandidate& c : candidates) {
    if (!c.devices) {
      out_of_chain.push_back({c.name, -1, "left out: " + c.devices.error()});
      continue;
    }
    const std::vector<DeviceInfo>& devices = c.devices.value();
    if (devices.empty()) {
      out_of_chain.push_back({c.name, -1, "left out: it found no device to run on"});
      continue;
    }
    // The best device: lowest kind rank, then highest preference; the first of equals.
    const DeviceInfo* best = &devices[0];
    for (const DeviceInfo& d : devices) {
      if (std::make_tuple(kind_rank(d.kind), -d.preference) < std::make_tuple(kind_rank(best->kind), -best->preference)) {
        best = &d;
      }
    }
    if (best->kind == BATON_DEVICE_EMULATED) {
      std::string names;
      for (const DeviceInfo& d : devices) names += (names.empty() ? "" : ", ") + d.name;
      out_of_chain.push_back({c.name, -1,
                              "left out: its only devices are emulated (" + names +
                                  "), slower than a CPU delegate; name it in `delegates` or --delegate to use it"});
      continue;
    }
    std::string why = c.declares_devices
                          ? std::string("best device ") + device_kind_name(best->kind) + " (" + best->name + ")"
                          : std::string("declares no devices (ABI 1.0 plugin): counted as cpu");
    why += ", preference " + std::to_string(best->preference);
    in.push_back({kind_rank(best->kind), best->preference, c.name, why});
  }
  std::stable_sort(in.begin(), in.end(), [](const Ranked& a, const Ranked& b) {
    return std::tie(a.rank, b.preference, a.name) < std::tie(b.rank, a.preference, b.name);
  });
  std::sort(out_of_chain.begin(), out_of_chain.end(),
            [](const ChainPlacement& a, const ChainPlacement& b) { return a.name < b.name; });
  std::vector<ChainPlacement> out;
  for (size_t i = 0; i < in.size(); ++i) out.push_back({in[i].name, static_cast<int>(i), in[i].reason});
  out.insert(out.end(), out_of_chain.begin(), out_of_chain.end());
  return out;
}

}  // namespace baton
