// The mediapipe and detection packs' context over the op-pack kit (baton/op_pack_kit.hpp): the kit's
// NodeView with per-tensor quantization and per-node state, and the entry point that turns a pack's list
// of custom ops into its descriptor. Each pack compiles its own copy into its module, so nothing is
// shared at run time and nothing but `baton_plugin_entry` leaves a module.
//
// A pack lists its ops as OpDefs (BATON_OP_CUSTOM, custom name, version range, prepare, invoke) and
// forwards its entry point to pack_entry(). Prepare checks types, shapes and options, sets output shapes
// and sizes every buffer invoke needs (in the node's OpState); invoke only computes and must not
// allocate. A FlexError (custom options that do not parse) fails the node with BATON_INVALID_ARGUMENT.
#ifndef BATON_OP_PACKS_COMMON_PACK_KIT_H
#define BATON_OP_PACKS_COMMON_PACK_KIT_H

#include <cstdint>
#include <memory>
#include <span>

#include "baton/op_pack_kit.hpp"
#include "baton/plugin_api.h"

namespace baton::packkit {

using kit::OpError;
using kit::OpState;

// Per-tensor quantization (scale 1, zero point 0 for a tensor without any).
struct Quant {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// The pack as its nodes see it: its name, for messages.
struct PackState {
  const char* name;
};

class Ctx : public kit::NodeView {
 public:
  Ctx(PackState& pack, kit::NodeState<Ctx>& node_state, const baton_host_api& api, const baton_node* node,
      baton_error* error)
      : kit::NodeView(api, node, error, pack.name), state_(node_state.op) {}

  // Per-tensor quantization; fails naming `role` for per-channel quantization.
  Quant quantization(const baton_tensor* t, const char* role) const;

  template <typename S>
  S& state() const {
    if (!state_) state_ = std::make_unique<S>();
    return static_cast<S&>(*state_);
  }

 private:
  std::unique_ptr<OpState>& state_;
};

using OpDef = kit::OpDef<Ctx>;

struct PackInfo {
  const char* name;
  const char* version;
  const char* description;
  std::span<const OpDef> ops;
};

// The entry point's work: checks the host's ABI and returns the pack's descriptor.
const baton_plugin_desc* pack_entry(const PackInfo& info, uint32_t host_abi_major, uint32_t host_abi_minor,
                                    const baton_host_api* api, baton_error* error);

}  // namespace baton::packkit

#endif  // BATON_OP_PACKS_COMMON_PACK_KIT_H
