// Which standalone activations of a partition fold into the node before them. A RELU, RELU6 or
// RELU_N1_TO_1 whose input is produced inside the partition by a node with a fused activation of NONE
// (convolutions, fully connected, ADD/SUB/MUL, pooling, concatenation), and read by nothing else,
// becomes that node's fused activation: one dispatch and one pass over memory fewer. (MediaPipe's
// models put a RELU after every residual ADD.)
#ifndef BATON_VULKAN_FUSION_H
#define BATON_VULKAN_FUSION_H

#include <map>
#include <set>

#include "baton/plugin_api.h"

namespace baton::vulkan {

struct Fusions {
  std::map<const baton_node*, int> activation_of;  // producer -> the ACT it applies instead
  std::set<const baton_node*> folded;              // the activation nodes that run inside their producer
};

Fusions find_fusions(const baton_host_api* api, const baton_partition* partition);

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_FUSION_H
