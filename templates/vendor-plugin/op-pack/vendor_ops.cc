// A vendor's op pack, built out of tree against baton's installed plugin SDK (libbaton-dev): one
// builtin op, LEAKY_RELU on float32 (y = x > 0 ? x : alpha * x), with the op-pack kit
// (baton/op_pack_kit.hpp). The kit writes the entry point, the descriptor and the kernel calls, and turns
// what a prepare or invoke throws into a status and a message "node N LEAKY_RELU: ...". The pack gives,
// per op, a prepare that checks and sizes and an invoke that only computes.
//
// Copy this folder and rename the pack (kPack's name, the file name in meson.build, the Debian package).
// A pack in a folder given with --plugin-dir, or earlier in the config's op-pack-precedence, wins over
// the builtin pack for the ops and versions it declares; a node it cannot take fails with its reason.
#include <baton/op_pack_kit.hpp>
#include <baton/tflite_ops.h>

#include <memory>
#include <span>

// The Debian package depends on baton-abi-1: building against another ABI major must fail here, not
// produce a package that claims the wrong one (debian/control and this line change together).
static_assert(BATON_ABI_VERSION_MAJOR == 1, "this pack is packaged for plugin ABI 1 (debian/control: baton-abi-1)");

namespace {

using baton::kit::NodeState;
using baton::kit::NodeView;
using baton::kit::OpDef;
using baton::kit::OpState;

struct Pack {};  // nothing kept across nodes

// The kit builds a context per call; a pack with helpers of its own adds them here.
struct Context : NodeView {
  Context(Pack&, NodeState<Context>& node_state, const baton_host_api& api, const baton_node* node, baton_error* error)
      : NodeView(api, node, error, "vendor-ops"), state(node_state) {}
  NodeState<Context>& state;
};

// What prepare leaves for invoke.
struct LeakyReluState : OpState {
  float alpha = 0.2f;
};

void leaky_relu_prepare(Context& ctx) {
  ctx.require_io(1, 1);
  ctx.require_type(ctx.input(0), "input", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_FLOAT32});
  auto state = std::make_unique<LeakyReluState>();
  state->alpha = ctx.api().node_builtin_options(ctx.node())->u.leaky_relu.alpha;
  ctx.state.op = std::move(state);
  ctx.set_output_shape(ctx.output(0), ctx.shape(ctx.input(0)));
}

void leaky_relu_invoke(Context& ctx) {
  const float alpha = static_cast<const LeakyReluState&>(*ctx.state.op).alpha;
  const float* x = ctx.data<float>(ctx.input(0));
  float* y = ctx.mutable_data<float>(ctx.output(0));
  const int64_t count = ctx.element_count(ctx.output(0));
  for (int64_t i = 0; i < count; ++i) y[i] = x[i] > 0.0f ? x[i] : x[i] * alpha;
}

// Version 2 of LEAKY_RELU added int16; float32 is the same in both.
const OpDef<Context> kOps[] = {
    {BATON_OP_LEAKY_RELU, "LEAKY_RELU", 1, 2, leaky_relu_prepare, leaky_relu_invoke},
};

const baton::kit::OpPack<Context, Pack> kPack = {
    "vendor-ops",  // unique among loaded plugins: [a-z0-9_-]+
    "1.0.0",
    "a vendor's op pack: LEAKY_RELU on float32",
    [] { return std::span<const OpDef<Context>>(kOps); },
    {},  // options
    BATON_PLUGIN_FLAG_REENTRANT,  // no shared state: nodes may run on several threads at once
    [](const baton_host_api&, const baton_plugin_host*, uint32_t) { return std::make_unique<Pack>(); },
    nullptr,  // no exceptions of its own to classify
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  return baton::kit::OpPackBoundary<Context, Pack>::entry(kPack, host_abi_major, host_abi_minor, api, error);
}
