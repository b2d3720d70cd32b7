// The glue between the plugin ABI and the kernels. Every op is an OpDef: a prepare that checks types,
// shapes and parameters, sets output shapes and stores what invoke needs in the node's OpState; and an
// invoke that only reads inputs, runs a kernel and writes outputs. Both see the node through an
// OpContext, the op-pack kit's NodeView (baton/op_pack_kit.hpp) with this pack's helpers. Errors are
// thrown as OpError inside the pack and turned into a status and a "node N OP: ..." message at the C
// boundary (the kit's OpPackBoundary, pack.cc); nothing throws across it.
#ifndef BATON_BUILTIN_GLUE_OP_CONTEXT_H
#define BATON_BUILTIN_GLUE_OP_CONTEXT_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/op_pack_kit.hpp"
#include "baton/plugin_api.h"
#include "kernels/common.h"
#include "kernels/quant_math.h"
#include "kernels/thread_pool.h"

namespace baton::builtin {

using kit::ActQuant;
using kit::ChannelQuant;
using kit::OpError;
using kit::OpState;
using kit::shape_text;
using kit::TensorQuant;

// What `create` builds: the host table, and the workers kernels may use.
struct PluginState {
  const baton_host_api* api = nullptr;
  const baton_plugin_host* host = nullptr;
  uint32_t host_abi_minor = 0;
  int threads = 1;
  std::unique_ptr<Parallel> pool;  // null when single-threaded (glue/shared_pool.h, else a ThreadPool)
};

class OpContext;
// An op: its TFLite code, name, the version range TFLite registers, prepare and invoke.
using OpDef = kit::OpDef<OpContext>;
// A node's state: its op, what prepare left for invoke (OpState), the invoke a prepare picked when it is
// not the op's default (a quantized or int8-weight kernel for the same op), a string output's bytes.
using NodeState = kit::NodeState<OpContext>;

const char* type_name(baton_tensor_type type);

// A node as the builtin pack's ops see it: the kit's NodeView (inputs, outputs, types, shapes, checked
// quantization, output shapes) and what this pack adds: its options, its workers, values prepare reads
// from integer inputs, activations and padding, the kernel a prepare picks.
class OpContext : public kit::NodeView {
 public:
  OpContext(PluginState& plugin, NodeState& node_state, const baton_host_api& api, const baton_node* node,
            baton_error* error)
      : kit::NodeView(api, node, error, "builtin"), plugin_(plugin), node_state_(node_state) {}

  const char* op_name() const { return node_state_.def->name; }
  int32_t op_code() const { return node_state_.def->code; }
  const baton_builtin_options& options() const { return *api_.node_builtin_options(node_); }
  Parallel* parallel() const { return plugin_.pool.get(); }
  int workers() const { return plugin_.threads; }
  // Fails (naming `what`) when the host's ABI minor is older than `minor`: it would not fill the
  // options that minor added, and the op would silently run with zeros for them.
  void require_host_abi_minor(uint32_t minor, const char* what) const;

  // Constant data readable in prepare; fails naming `what` otherwise.
  template <typename T>
  const T* constant_data(const baton_tensor* t, const char* what) const {
    require_constant(t, what);
    return data<T>(t);
  }
  void require_constant(const baton_tensor* t, const char* what) const;
  // After a prepare has copied what it needs of constant `t` (packed or converted weights) and invoke reads
  // only the copy: the host may give the file pages of its data back (ABI 1.15; nothing on an older host).
  void release_constant(const baton_tensor* t) const { kit::release_constant(&api_, t); }
  // The values of an int32 or int64 input when prepare can read them: a constant, or any input when the
  // host prepares the node at invoke; nothing otherwise (a computed input at load).
  std::optional<std::vector<int64_t>> known_ints(const baton_tensor* t, const char* what) const;
  // The values of an int32 or int64 input that sets the output shapes: read when the tensor is constant,
  // or when the host prepares the node at invoke with the values; otherwise the node's outputs are
  // marked dynamic (set_dynamic) and nothing is returned, so that prepare returns and runs again then.
  // A constant costs nothing at invoke: its node keeps the shapes and memory planned at load.
  std::optional<std::vector<int64_t>> shape_ints(const baton_tensor* t, const char* what) const;
  // Element i of an int32 or int64 tensor whose type prepare has checked, read at invoke (an axis that
  // leaves the output shape alone, so that prepare need not know it).
  int64_t int_value(const baton_tensor* t, int64_t i) const {
    return type(t) == BATON_TYPE_INT64 ? data<int64_t>(t)[i] : data<int32_t>(t)[i];
  }
  // An int32 or int64 input (axis, sizes, paddings), else fails naming it.
  void require_int_type(const baton_tensor* t, const char* what) const;
  void require_float(const baton_tensor* t, const char* role) const { require_type(t, role, {BATON_TYPE_FLOAT32}); }
  ActivationRange activation(int32_t fused) const;
  Padding padding(int32_t value) const;
  // The code range a fused activation (NONE, RELU, RELU_N1_TO_1, RELU6) leaves of an 8-bit output.
  CodeRange quantized_activation(int32_t fused, const ActQuant& out) const;

  // The packed bytes of the node's string output, kept from prepare for invoke (glue/string_output.h).
  std::vector<uint8_t>& kept_strings() const { return node_state_.kept_bytes; }
  // Whether every input has its values now: a constant, or any input when the host prepares at invoke.
  bool inputs_have_values() const;
  // Makes invoke run `fn` for this node instead of the op's default.
  void set_invoke(void (*fn)(OpContext& ctx)) const { node_state_.invoke = fn; }
  // After a prepare: when output 0 has no elements (a window op over an empty side, which TFLite allows),
  // invoke computes nothing.
  void skip_invoke_if_empty() const {
    if (element_count(output(0)) == 0) set_invoke([](OpContext&) {});
  }

  // Scratch of `bytes` in the host's arena (ABI 1.14), shared with every other node's: asked for in
  // prepare; false when the host cannot give it (an older host, a prepare outside the memory plan, a
  // plugin in a process of its own), and then the node keeps memory of its own (glue/scratch_buffer.h's
  // NodeScratch does both).
  bool request_arena_scratch(size_t bytes) const;
  // Its address at invoke.
  void* arena_scratch() const { return api_.node_scratch(node_); }

  // The node's state as an S, made (or remade, when a prepare switched kernels) on first use.
  template <typename S>
  S& state() const {
    if (auto* existing = dynamic_cast<S*>(node_state_.op.get())) return *existing;
    node_state_.op = std::make_unique<S>();
    return static_cast<S&>(*node_state_.op);
  }

 private:
  PluginState& plugin_;
  NodeState& node_state_;
};

// Element size of the types data-movement ops accept (float32, int32, int64, ...); 0 if none.
size_t element_size(baton_tensor_type type);
// Element size of the types RESHAPE, SQUEEZE and EXPAND_DIMS move as bytes: element_size's, and
// COMPLEX64 and COMPLEX128 (TFLite 2.9 moves any type through these three; its other data-movement ops
// refuse complex tensors).
size_t reshape_element_size(baton_tensor_type type);

// Calls f with a zero of the C++ type of a numeric tensor type: float32, int32, int64, uint8 or int8
// (any other type does nothing; prepare has refused it).
template <typename F>
void with_numeric_type(baton_tensor_type type, F&& f) {
  switch (type) {
    case BATON_TYPE_FLOAT32: return f(float{});
    case BATON_TYPE_INT32: return f(int32_t{});
    case BATON_TYPE_INT64: return f(int64_t{});
    case BATON_TYPE_UINT8: return f(uint8_t{});
    case BATON_TYPE_INT8: return f(int8_t{});
    default: return;
  }
}

// An axis in [-rank, rank) made non-negative; fails naming it otherwise.
int normalize_axis(const OpContext& ctx, int64_t axis, int rank);
// Same type as the input, and for quantized types the same scale and zero point (for ops that move or
// place codes without rescaling them).
void require_like_input(const OpContext& ctx, const baton_tensor* in, const baton_tensor* out);
// Blockwise weights' scales must be FLOAT16: the only kind LiteRT 2.5 reads right (its FULLY_CONNECTED
// refuses FLOAT32 ones, its EMBEDDING_LOOKUP reads their bytes as float16), so no other has a reference.
void require_float16_block_scales(const OpContext& ctx, const TensorQuant& q, const std::string& role);

// The op families, each in its own file. Each is called once, when the pack loads: cold, GCC puts them
// side by side (.text.unlikely), so loading maps one stretch of the pack's code instead of a stretch in
// every file's (the kernel maps the 64 KiB around each page fault in a library's code; MoveNet int8
// mapped 2.1 of the pack's 2.7 MB of code this way).
[[gnu::cold]] std::span<const OpDef> conv_ops();
[[gnu::cold]] std::span<const OpDef> fully_connected_ops();
[[gnu::cold]] std::span<const OpDef> binary_ops();
[[gnu::cold]] std::span<const OpDef> unary_ops();
[[gnu::cold]] std::span<const OpDef> pool_ops();
[[gnu::cold]] std::span<const OpDef> reshape_ops();
[[gnu::cold]] std::span<const OpDef> slice_ops();
[[gnu::cold]] std::span<const OpDef> resize_ops();
[[gnu::cold]] std::span<const OpDef> dequantize_ops();
[[gnu::cold]] std::span<const OpDef> quantize_ops();
[[gnu::cold]] std::span<const OpDef> logic_ops();
[[gnu::cold]] std::span<const OpDef> shape_ops();
[[gnu::cold]] std::span<const OpDef> reduce_ops();
[[gnu::cold]] std::span<const OpDef> mirror_pad_ops();
[[gnu::cold]] std::span<const OpDef> scan_ops();
[[gnu::cold]] std::span<const OpDef> index_ops();
[[gnu::cold]] std::span<const OpDef> data_shape_ops();
[[gnu::cold]] std::span<const OpDef> spatial_ops();
[[gnu::cold]] std::span<const OpDef> fill_ops();
[[gnu::cold]] std::span<const OpDef> movement_ops();
[[gnu::cold]] std::span<const OpDef> shape_value_ops();
[[gnu::cold]] std::span<const OpDef> discretize_ops();
[[gnu::cold]] std::span<const OpDef> conv3d_ops();
[[gnu::cold]] std::span<const OpDef> recurrent_ops();
[[gnu::cold]] std::span<const OpDef> lstm_ops();
[[gnu::cold]] std::span<const OpDef> complex_ops();
[[gnu::cold]] std::span<const OpDef> random_ops();
[[gnu::cold]] std::span<const OpDef> lookup_table_ops();
[[gnu::cold]] std::span<const OpDef> string_ops();
[[gnu::cold]] std::span<const OpDef> litert_ops();
[[gnu::cold]] std::span<const OpDef> stablehlo_ops();
[[gnu::cold]] std::span<const OpDef> stablehlo_index_ops();
[[gnu::cold]] std::span<const OpDef> window_ops();

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_OP_CONTEXT_H
