// The glue between the plugin ABI and the kernels. Every op is an OpDef: a prepare that checks types,
// shapes and parameters, sets output shapes and stores what invoke needs in the node's OpState; and an
// invoke that only reads inputs, runs a kernel and writes outputs. Both see the node through an
// OpContext, a thin C++ view over the host table. Errors are thrown as OpError inside the pack and
// turned into a status and a "node N OP: ..." message at the C boundary (pack.cc); nothing throws
// across it.
#ifndef BATON_BUILTIN_GLUE_OP_CONTEXT_H
#define BATON_BUILTIN_GLUE_OP_CONTEXT_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "kernels/common.h"
#include "kernels/quant_math.h"
#include "kernels/thread_pool.h"

namespace baton::builtin {

class OpError {
 public:
  OpError(baton_status status, std::string message) : status_(status), message_(std::move(message)) {}
  baton_status status() const { return status_; }
  const std::string& message() const { return message_; }
  // The host has already written the message (a host call failed); keep it.
  static OpError from_host(baton_status status) {
    OpError e(status, {});
    e.host_message_ = true;
    return e;
  }
  bool host_message() const { return host_message_; }

 private:
  baton_status status_;
  std::string message_;
  bool host_message_ = false;
};

// What `create` builds: the host table, and the workers kernels may use.
struct PluginState {
  const baton_host_api* api = nullptr;
  const baton_plugin_host* host = nullptr;
  uint32_t host_abi_minor = 0;
  int threads = 1;
  std::unique_ptr<ThreadPool> pool;  // null when single-threaded
};

// What prepare leaves for invoke. Each op family derives its own.
struct OpState {
  virtual ~OpState() = default;
};

class OpContext;

struct OpDef {
  int32_t code;
  const char* name;
  int32_t min_version, max_version;
  void (*prepare)(OpContext& ctx);
  void (*invoke)(OpContext& ctx);
};

struct NodeState {
  const OpDef* def = nullptr;
  std::unique_ptr<OpState> op;
  // Set by a prepare that picked another implementation than def->invoke (a quantized or int8-weight
  // kernel for the same op); cleared before every prepare.
  void (*invoke)(OpContext& ctx) = nullptr;
  // The packed bytes of a string output, computed by prepare (glue/string_output.h).
  std::vector<uint8_t> strings;
};

// A tensor's quantization as the model gives it (kernels read the arrays in place).
struct TensorQuant {
  int32_t count = 0;  // 0: not quantized; 1: per tensor; else per channel along `dimension`
  const float* scales = nullptr;
  const int64_t* zero_points = nullptr;  // null: all zero
  int32_t dimension = 0;
  float scale(int i = 0) const { return scales[i]; }
  int64_t zero_point(int i = 0) const { return zero_points ? zero_points[i] : 0; }
};

// A tensor's quantization checked against its shape (OpContext::channel_quant), borrowed from the model:
// one scale for the whole tensor, or one per entry of dimension `dimension`. Reading it allocates
// nothing, so a prepare can check it before anything is sized by a channel count.
struct ChannelQuant {
  std::span<const float> scales;          // 1, or shape[dimension] entries
  std::span<const int64_t> zero_points;   // empty (all zero), or as many as scales
  int32_t dimension = 0;
  bool per_channel() const { return scales.size() > 1; }
  float scale(int64_t c) const { return scales[per_channel() ? static_cast<size_t>(c) : 0]; }
  int64_t zero_point(int64_t c) const {
    return zero_points.empty() ? 0 : zero_points[per_channel() ? static_cast<size_t>(c) : 0];
  }
};

// Per-tensor parameters of an 8-bit activation tensor.
struct ActQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool is_signed = false;  // int8 (else uint8)
};

const char* type_name(baton_tensor_type type);

class OpContext {
 public:
  OpContext(PluginState& plugin, NodeState& node_state, const baton_node* node, baton_error* error)
      : plugin_(plugin), node_state_(node_state), node_(node), error_(error), api_(*plugin.api) {}

  const baton_host_api& api() const { return api_; }
  const char* op_name() const { return node_state_.def->name; }
  int32_t op_code() const { return node_state_.def->code; }
  int32_t version() const { return api_.node_version(node_); }
  const baton_builtin_options& options() const { return *api_.node_builtin_options(node_); }
  Parallel* parallel() const { return plugin_.pool.get(); }
  int workers() const { return plugin_.threads; }
  // Fails (naming `what`) when the host's ABI minor is older than `minor`: it would not fill the
  // options that minor added, and the op would silently run with zeros for them.
  void require_host_abi_minor(uint32_t minor, const char* what) const;

  int input_count() const { return api_.node_input_count(node_); }
  int output_count() const { return api_.node_output_count(node_); }
  // Null for an omitted optional input.
  baton_tensor* optional_input(int i) const;
  // Fails when missing.
  baton_tensor* input(int i) const;
  baton_tensor* output(int i) const;
  // The node's intermediate tensors (quantization only; ABI 1.3): 0 on an older host.
  int intermediate_count() const;
  const baton_tensor* intermediate(int i) const;

  baton_tensor_type type(const baton_tensor* t) const { return api_.tensor_type(t); }
  std::span<const int32_t> shape(const baton_tensor* t) const;
  int rank(const baton_tensor* t) const { return static_cast<int>(shape(t).size()); }
  int64_t element_count(const baton_tensor* t) const;
  bool is_constant(const baton_tensor* t) const { return api_.tensor_is_constant(t) != 0; }
  template <typename T>
  const T* data(const baton_tensor* t) const {
    return static_cast<const T*>(api_.tensor_data(t));
  }
  template <typename T>
  T* mutable_data(baton_tensor* t) const {
    return static_cast<T*>(api_.tensor_mutable_data(t));
  }
  // Constant data readable in prepare; fails naming `what` otherwise.
  template <typename T>
  const T* constant_data(const baton_tensor* t, const char* what) const {
    require_constant(t, what);
    return data<T>(t);
  }
  void require_constant(const baton_tensor* t, const char* what) const;
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

  // An output whose shape needs input values that prepare does not have yet (data() is null): the host
  // prepares the node again at invoke, with them (tensor_set_dynamic, ABI 1.2). Fails on an older host.
  void set_dynamic(baton_tensor* t) const;
  void set_output_shape(baton_tensor* t, std::span<const int32_t> dims) const;
  // A string output's byte size, after its shape (tensor_set_byte_size, ABI 1.7). Fails on an older host.
  void set_byte_size(baton_tensor* t, size_t bytes) const;
  void set_output_shape(baton_tensor* t, std::initializer_list<int32_t> dims) const {
    set_output_shape(t, std::span<const int32_t>(dims.begin(), dims.size()));
  }

  [[noreturn]] void fail(baton_status status, const std::string& message) const { throw OpError(status, message); }
  void require(bool ok, const std::string& message) const {
    if (!ok) fail(BATON_INVALID_ARGUMENT, message);
  }
  // "input type INT8 not supported by the builtin pack (float32 only)" unless the type is allowed.
  void require_type(const baton_tensor* t, const char* role, std::initializer_list<baton_tensor_type> allowed) const;
  void require_float(const baton_tensor* t, const char* role) const {
    require_type(t, role, {BATON_TYPE_FLOAT32});
  }
  void require_rank(const baton_tensor* t, const char* role, int rank) const;
  ActivationRange activation(int32_t fused) const;
  Padding padding(int32_t value) const;

  // "tensor 7 'conv/weights'" for messages.
  std::string tensor_label(const baton_tensor* t) const;
  TensorQuant quant(const baton_tensor* t) const;
  // The quantization of weights `t` whose channels are its dimension `channel_dim`: one scale, or (when
  // `allow_per_channel`) one per entry of that dimension, each positive and finite, with zero points in
  // range for a uint8 or int8 tensor. Fails naming the role, the tensor and the reason. Its loops run over
  // the model's arrays, never over the declared channel count.
  ChannelQuant channel_quant(const baton_tensor* t, const char* role, int channel_dim, bool allow_per_channel) const;
  // The per-tensor scale and zero point of a uint8 or int8 tensor: fails naming the role and tensor
  // when it has none, has per-channel parameters, a scale that is not a positive finite number, or a
  // zero point outside the type's range.
  ActQuant act_quant(const baton_tensor* t, const char* role) const;
  // The code range a fused activation (NONE, RELU, RELU_N1_TO_1, RELU6) leaves of an 8-bit output.
  CodeRange quantized_activation(int32_t fused, const ActQuant& out) const;
  // The packed bytes of the node's string output, kept from prepare for invoke (glue/string_output.h).
  std::vector<uint8_t>& kept_strings() const { return node_state_.strings; }
  // Whether every input has its values now: a constant, or any input when the host prepares at invoke.
  bool inputs_have_values() const;
  // Makes invoke run `fn` for this node instead of the op's default.
  void set_invoke(void (*fn)(OpContext& ctx)) const { node_state_.invoke = fn; }
  // After a prepare: when output 0 has no elements (a window op over an empty side, which TFLite allows),
  // invoke computes nothing.
  void skip_invoke_if_empty() const {
    if (element_count(output(0)) == 0) set_invoke([](OpContext&) {});
  }

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
  const baton_node* node_;
  baton_error* error_;
  const baton_host_api& api_;
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

// The op families, each in its own file.
std::span<const OpDef> conv_ops();
std::span<const OpDef> fully_connected_ops();
std::span<const OpDef> binary_ops();
std::span<const OpDef> unary_ops();
std::span<const OpDef> pool_ops();
std::span<const OpDef> reshape_ops();
std::span<const OpDef> slice_ops();
std::span<const OpDef> resize_ops();
std::span<const OpDef> dequantize_ops();
std::span<const OpDef> quantize_ops();
std::span<const OpDef> logic_ops();
std::span<const OpDef> shape_ops();
std::span<const OpDef> reduce_ops();
std::span<const OpDef> mirror_pad_ops();
std::span<const OpDef> scan_ops();
std::span<const OpDef> index_ops();
std::span<const OpDef> data_shape_ops();
std::span<const OpDef> spatial_ops();
std::span<const OpDef> fill_ops();
std::span<const OpDef> movement_ops();
std::span<const OpDef> shape_value_ops();
std::span<const OpDef> discretize_ops();
std::span<const OpDef> conv3d_ops();
std::span<const OpDef> recurrent_ops();
std::span<const OpDef> lstm_ops();
std::span<const OpDef> complex_ops();
std::span<const OpDef> random_ops();
std::span<const OpDef> lookup_table_ops();
std::span<const OpDef> string_ops();
std::span<const OpDef> litert_ops();
std::span<const OpDef> stablehlo_ops();
std::span<const OpDef> window_ops();

// A shape as messages show it: [1,224,224,3].
std::string shape_text(std::span<const int32_t> s);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_OP_CONTEXT_H
