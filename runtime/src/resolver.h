// Resolve: each node that is still to run (not dropped, not folded, not the runtime's own) gets a kernel
// from the first op pack, in configured order, that declares its op and version, skipping op packs the
// crash journal quarantines; a node none declares gets the reason, for check_runnable() to report if no
// delegate takes it either. A STABLEHLO_COMPOSITE an op pack declares by name runs on that kernel instead
// of its decomposition.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "graph.h"
#include "plugin_registry.h"

namespace baton {

// What resolve decided for one node.
struct NodeKernel {
  LoadedPlugin* plugin = nullptr;  // the op pack that runs it (null: none, or not a node op packs run)
  const baton_kernel* kernel = nullptr;
  bool claims_composite = false;   // a composite an op pack runs whole
  std::string unresolved;          // why no op pack runs it; "" when one does or it is not theirs to run
};

// One answer per node, in node order.
std::vector<NodeKernel> resolve_kernels(std::span<const Node> nodes, std::span<LoadedPlugin* const> packs,
                                        const std::map<std::string, std::string>& quarantined);

}  // namespace baton
