// The ops the XNNPACK delegate declares, each with the TFLite version range it takes and the function
// that checks one node and defines it in an XNNPACK subgraph. One function does both, so check_node
// (which defines the node into a scratch subgraph) refuses exactly what the partition build would fail on.
#ifndef BATON_XNNPACK_OPS_H
#define BATON_XNNPACK_OPS_H

#include <cstdint>
#include <vector>

#include "subgraph_builder.h"

namespace baton::xnnpack {

struct OpDef {
  int32_t code;  // TFLite BuiltinOperator; BATON_OP_CUSTOM for a custom op named `name`
  const char* name;
  int32_t min_version, max_version;
  // Defines `node` in `builder`'s subgraph, or throws Refusal saying why XNNPACK cannot run it.
  void (*define)(SubgraphBuilder& builder, const NodeView& node);
  bool custom() const { return code == BATON_OP_CUSTOM; }
};

const std::vector<OpDef>& op_defs();
// The definition for a node's op (builtin code, or custom name), or NULL.
const OpDef* find_op(const baton_host_api* api, const baton_node* node);

// RELU, RELU6 or RELU_N1_TO_1: the clamps XNNPACK fuses into the node that writes their input.
bool is_clamp(int32_t builtin_code);

}  // namespace baton::xnnpack

#endif  // BATON_XNNPACK_OPS_H
