// The Atan pack of atan.c again, written in C++20 with the op-pack kit (baton/op_pack_kit.hpp), the
// kit baton's own builtin, mediapipe and detection packs are built with. The kit owns the C boundary
// (entry point, descriptor, kernel calls, turning exceptions into a status and a "node N Atan: ..."
// message); the pack gives its ops, each a prepare that checks and an invoke that computes.
//
//   c++ -std=c++20 -O2 -shared -fPIC $(pkg-config --cflags baton-plugin) atan_kit.cc -o atan_kit.so
#include <baton/op_pack_kit.hpp>
#include <cmath>
#include <memory>
#include <span>

namespace {

using baton::kit::NodeView;
using baton::kit::NodeState;
using baton::kit::OpDef;

struct Pack {};  // the pack keeps nothing across nodes

// The kit constructs a context per call; a pack with helpers of its own derives them here.
struct Context : NodeView {
  Context(Pack&, NodeState<Context>&, const baton_host_api& api, const baton_node* node, baton_error* error)
      : NodeView(api, node, error, "atan") {}
};

void atan_prepare(Context& ctx) {
  ctx.require_io(1, 1);
  ctx.require_type(ctx.input(0), "x (input 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "y (output 0)", {BATON_TYPE_FLOAT32});
  ctx.set_output_shape(ctx.output(0), ctx.shape(ctx.input(0)));
}

void atan_invoke(Context& ctx) {
  const float* x = ctx.data<float>(ctx.input(0));
  float* y = ctx.mutable_data<float>(ctx.output(0));
  const int64_t count = ctx.element_count(ctx.output(0));
  for (int64_t i = 0; i < count; ++i) y[i] = std::atan(x[i]);
}

const OpDef<Context> kOps[] = {
    {BATON_OP_CUSTOM, "Atan", 1, 1, atan_prepare, atan_invoke},
};

const baton::kit::OpPack<Context, Pack> kPack = {
    "atan-kit",
    "1.0",
    "example: the custom op Atan (y = atan(x), float32), written with the op-pack kit",
    [] { return std::span<const OpDef<Context>>(kOps); },
    {},  // options
    BATON_PLUGIN_FLAG_REENTRANT,
    [](const baton_host_api&, const baton_plugin_host*, uint32_t) { return std::make_unique<Pack>(); },
    nullptr,  // no exceptions of its own
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  return baton::kit::OpPackBoundary<Context, Pack>::entry(kPack, host_abi_major, host_abi_minor, api, error);
}
