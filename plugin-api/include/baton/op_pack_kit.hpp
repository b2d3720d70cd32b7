// baton op-pack kit: what an op pack written in C++20 needs between the plugin ABI and its kernels. The
// project's own packs (builtin, mediapipe, detection) are built with it, as a third party's would be.
//
//  - NodeView: a node seen through the host table: its inputs and outputs, their types, shapes, data
//    and quantization, checked (a missing input, a wrong type or rank, quantization that does not fit
//    the tensor's shape) with messages that name the role, the tensor and the reason;
//  - OpDef<Ctx>: one op (a builtin code, or BATON_OP_CUSTOM and its name), its version range, and the
//    prepare and invoke functions, which take the pack's context Ctx (a NodeView, or a class derived
//    from it with the pack's own helpers);
//  - OpPack<Ctx, PackState> and pack_entry(): the C boundary. The entry point, the descriptor, and the
//    four kernel calls, each catching whatever a prepare or invoke throws and turning it into a status
//    and a message "node N OP: ...". Nothing throws across the ABI.
//
// Prepare checks types, shapes and options, sets output shapes and sizes every buffer invoke needs (in
// the node's OpState); invoke only computes. Everything here is inline or a template and reaches the
// host only through the table it is given: a pack still links against nothing of baton's, and each
// gets its own copy. Calls of a later ABI minor than 1.0 are tested for (BATON_STRUCT_HAS) before use.
#ifndef BATON_OP_PACK_KIT_HPP
#define BATON_OP_PACK_KIT_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"

namespace baton::kit {

// What a prepare or invoke throws to fail: a status and the reason (the boundary adds "node N OP: ").
class OpError {
 public:
  OpError(baton_status status, std::string message) : status_(status), message_(std::move(message)) {}
  baton_status status() const { return status_; }
  const std::string& message() const { return message_; }
  // The host already wrote the message (a host call failed): the boundary keeps it.
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

// What prepare leaves for invoke; each op derives its own.
struct OpState {
  virtual ~OpState() = default;
};

// A tensor's quantization as the model gives it; the arrays are the model's, read in place.
struct TensorQuant {
  int32_t count = 0;  // 0: not quantized; 1: per tensor; else per channel along `dimension`
  const float* scales = nullptr;
  const int64_t* zero_points = nullptr;  // null: all zero
  int32_t dimension = 0;
  // Blockwise quantization (ABI 1.13; count is 0): a scale per block_size elements of the last dimension,
  // block_count of them of block_scale_type (FLOAT16 or FLOAT32), row-major. 0 on an older host.
  int32_t block_size = 0;
  baton_tensor_type block_scale_type = BATON_TYPE_FLOAT32;
  int32_t block_count = 0;
  const void* block_scales = nullptr;
  float scale(int i = 0) const { return scales[i]; }
  int64_t zero_point(int i = 0) const { return zero_points ? zero_points[i] : 0; }
};

// A tensor's quantization checked against its shape (NodeView::channel_quant), borrowed from the model:
// one scale for the whole tensor, or one per entry of dimension `dimension`. Reading it allocates
// nothing, so a prepare checks it before anything is sized by a channel count.
struct ChannelQuant {
  std::span<const float> scales;         // 1, or shape[dimension] entries
  std::span<const int64_t> zero_points;  // empty (all zero), or as many as scales
  int32_t dimension = 0;
  bool per_channel() const { return scales.size() > 1; }
  float scale(int64_t c) const { return scales[per_channel() ? static_cast<size_t>(c) : 0]; }
  int64_t zero_point(int64_t c) const {
    return zero_points.empty() ? 0 : zero_points[per_channel() ? static_cast<size_t>(c) : 0];
  }
};

// The per-tensor parameters of an 8-bit tensor (NodeView::act_quant).
struct ActQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool is_signed = false;  // int8 (else uint8)
};

// A shape as messages show it: [1,224,224,3].
inline std::string shape_text(std::span<const int32_t> s) { return dims_text(s); }

// A node seen through the host table. `pack` names the pack in messages ("... not supported by the
// builtin pack"). Every accessor that can fail throws OpError.
class NodeView {
 public:
  NodeView(const baton_host_api& api, const baton_node* node, baton_error* error, const char* pack)
      : api_(api), node_(node), error_(error), pack_(pack) {}

  const baton_host_api& api() const { return api_; }
  const baton_node* node() const { return node_; }
  int32_t version() const { return api_.node_version(node_); }

  [[noreturn]] void fail(baton_status status, const std::string& message) const { throw OpError(status, message); }
  void require(bool ok, const std::string& message) const {
    if (!ok) fail(BATON_INVALID_ARGUMENT, message);
  }

  // Inputs and outputs. input() and output() fail when missing; optional_input() is null for an
  // omitted optional input.
  int input_count() const { return api_.node_input_count(node_); }
  int output_count() const { return api_.node_output_count(node_); }
  baton_tensor* optional_input(int i) const { return i < input_count() ? api_.node_input(node_, i) : nullptr; }
  baton_tensor* input(int i) const {
    baton_tensor* t = optional_input(i);
    if (!t) fail(BATON_INVALID_ARGUMENT, "input " + std::to_string(i) + " is missing (the node has " +
                                             std::to_string(input_count()) + " inputs)");
    return t;
  }
  baton_tensor* output(int i) const {
    baton_tensor* t = i < output_count() ? api_.node_output(node_, i) : nullptr;
    if (!t) fail(BATON_INVALID_ARGUMENT, "output " + std::to_string(i) + " is missing (the node has " +
                                             std::to_string(output_count()) + " outputs)");
    return t;
  }
  // Exactly this many inputs and outputs, none omitted.
  void require_io(int inputs, int outputs) const {
    require(input_count() == inputs && output_count() == outputs,
            "expects " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) + " outputs, has " +
                std::to_string(input_count()) + " and " + std::to_string(output_count()));
    for (int i = 0; i < inputs; ++i) (void)input(i);
    for (int i = 0; i < outputs; ++i) (void)output(i);
  }
  // The node's intermediate tensors (quantization only; ABI 1.3): none on an older host.
  int intermediate_count() const {
    const bool has = BATON_STRUCT_HAS(&api_, baton_host_api, node_intermediate) && api_.node_intermediate_count &&
                     api_.node_intermediate;
    return has ? api_.node_intermediate_count(node_) : 0;
  }
  const baton_tensor* intermediate(int i) const { return api_.node_intermediate(node_, i); }
  // The custom op's options as the model stores them (empty when none).
  std::span<const uint8_t> custom_options() const {
    size_t size = 0;
    const uint8_t* p = api_.node_custom_options(node_, &size);
    return {p, p ? size : 0};
  }

  // Tensors.
  baton_tensor_type type(const baton_tensor* t) const { return api_.tensor_type(t); }
  std::span<const int32_t> shape(const baton_tensor* t) const {
    const int32_t* dims = nullptr;
    const int32_t rank = api_.tensor_shape(t, &dims);
    return {dims, static_cast<size_t>(rank > 0 && dims ? rank : 0)};
  }
  int rank(const baton_tensor* t) const { return static_cast<int>(shape(t).size()); }
  int64_t element_count(const baton_tensor* t) const {
    int64_t n = 1;
    for (int32_t d : shape(t)) n *= d;
    return n;
  }
  bool is_constant(const baton_tensor* t) const { return api_.tensor_is_constant(t) != 0; }
  template <typename T>
  const T* data(const baton_tensor* t) const {
    return static_cast<const T*>(api_.tensor_data(t));
  }
  template <typename T>
  T* mutable_data(baton_tensor* t) const {
    return static_cast<T*>(api_.tensor_mutable_data(t));
  }
  // "tensor 7 'conv/weights'", for messages.
  std::string tensor_label(const baton_tensor* t) const {
    const char* name = api_.tensor_name(t);
    return "tensor " + std::to_string(api_.tensor_index(t)) + (name && *name ? std::string(" '") + name + "'" : "");
  }
  std::string shape_text(const baton_tensor* t) const { return kit::shape_text(shape(t)); }

  // "input type INT8 not supported by the builtin pack (FLOAT32, INT32)" unless the type is allowed.
  void require_type(const baton_tensor* t, std::string_view role, std::initializer_list<baton_tensor_type> allowed) const {
    const baton_tensor_type actual = type(t);
    std::string names;
    for (baton_tensor_type a : allowed) {
      if (a == actual) return;
      names += std::string(names.empty() ? "" : ", ") + baton_tensor_type_name(a);
    }
    if (allowed.size() == 1 && *allowed.begin() == BATON_TYPE_FLOAT32) names = "float32 only";
    fail(BATON_UNSUPPORTED, std::string(role) + " type " + baton_tensor_type_name(actual) + " not supported by the " +
                                pack_ + " pack (" + names + ")");
  }
  void require_rank(const baton_tensor* t, std::string_view role, int expected) const {
    require(rank(t) == expected, std::string(role) + " must have rank " + std::to_string(expected) + ", has shape " +
                                     shape_text(t));
  }

  // Quantization. quant() reads what the model gives; channel_quant() and act_quant() check it.
  TensorQuant quant(const baton_tensor* t) const {
    baton_quantization q{};
    q.struct_size = sizeof(q);
    api_.tensor_quantization(t, &q);
    TensorQuant out;
    if (q.scale_count > 0 && q.scales) {
      out.count = q.scale_count;
      out.scales = q.scales;
      out.zero_points = q.zero_points;
      out.dimension = q.quantized_dimension;
    }
    if (q.block_size > 0 && q.block_scales) {  // zero from a host before ABI 1.13
      out.block_size = q.block_size;
      out.block_scale_type = q.block_scale_type;
      out.block_count = q.block_scale_count;
      out.block_scales = q.block_scales;
    }
    return out;
  }
  // The quantization of weights `t` whose channels are its dimension `channel_dim`: one scale, or (when
  // `allow_per_channel`) one per entry of that dimension, each positive and finite, with zero points in
  // range for a uint8 or int8 tensor. Fails naming the role, the tensor and the reason. Its loops run
  // over the model's arrays, never over the declared channel count.
  ChannelQuant channel_quant(const baton_tensor* t, std::string_view role, int channel_dim, bool allow_per_channel) const {
    const TensorQuant q = quant(t);
    const std::string who = std::string(role) + " (" + tensor_label(t) + ")";
    if (q.count == 0 && q.block_size > 0) {
      fail(BATON_UNSUPPORTED, who + " has blockwise quantization (blocks of " + std::to_string(q.block_size) +
                                  "), which this op does not take");
    }
    if (q.count == 0) fail(BATON_UNSUPPORTED, who + " has no quantization parameters");
    if (q.count > 1) {
      if (!allow_per_channel) {
        fail(BATON_UNSUPPORTED, who + " has per-channel quantization (" + std::to_string(q.count) +
                                    " scales); this op takes one scale for the whole tensor");
      }
      if (q.dimension != channel_dim) {
        fail(BATON_UNSUPPORTED, who + " is quantized per channel along dimension " + std::to_string(q.dimension) +
                                    "; the output channels are dimension " + std::to_string(channel_dim));
      }
      const auto dims = shape(t);
      const int64_t channels =
          channel_dim >= 0 && static_cast<size_t>(channel_dim) < dims.size() ? dims[channel_dim] : -1;
      if (channels != q.count) {
        fail(BATON_INVALID_ARGUMENT, who + " has " + std::to_string(q.count) + " scales but dimension " +
                                         std::to_string(channel_dim) + " of its shape has " +
                                         std::to_string(channels) + " channels");
      }
    }
    for (int32_t i = 0; i < q.count; ++i) check_scale_and_zero(t, who, q.scale(i), q.zero_point(i));
    ChannelQuant out;
    out.scales = {q.scales, static_cast<size_t>(q.count)};
    if (q.zero_points) out.zero_points = {q.zero_points, static_cast<size_t>(q.count)};
    out.dimension = q.dimension;
    return out;
  }
  // The per-tensor scale and zero point of a uint8 or int8 tensor: fails naming the role and tensor
  // when it has none, has per-channel parameters, a scale that is not a positive finite number, or a
  // zero point outside the type's range.
  ActQuant act_quant(const baton_tensor* t, std::string_view role) const {
    require_type(t, role, {BATON_TYPE_UINT8, BATON_TYPE_INT8});
    const TensorQuant q = quant(t);
    const std::string who = std::string(role) + " (" + tensor_label(t) + ")";
    if (q.count == 0) fail(BATON_UNSUPPORTED, who + " has no quantization parameters");
    if (q.count != 1) {
      fail(BATON_UNSUPPORTED, who + " has per-channel quantization (" + std::to_string(q.count) +
                                  " scales); this op needs one scale and zero point");
    }
    check_scale_and_zero(t, who, q.scale(), q.zero_point());
    ActQuant a;
    a.is_signed = type(t) == BATON_TYPE_INT8;
    a.scale = q.scale();
    a.zero_point = static_cast<int32_t>(q.zero_point());
    return a;
  }

  // Outputs' shapes. set_dynamic: an output whose shape needs input values that prepare does not have
  // yet; the host prepares the node again at invoke, with them (ABI 1.2). set_byte_size: a string
  // output's size, after its shape (ABI 1.7). Both fail on an older host.
  void set_output_shape(baton_tensor* t, std::span<const int32_t> dims) const {
    for (int32_t d : dims) require(d >= 0, "computed a negative output dimension");
    const baton_status status = api_.tensor_set_shape(t, static_cast<int32_t>(dims.size()), dims.data(), error_);
    if (status != BATON_OK) throw OpError::from_host(status);
  }
  void set_output_shape(baton_tensor* t, std::initializer_list<int32_t> dims) const {
    set_output_shape(t, std::span<const int32_t>(dims.begin(), dims.size()));
  }
  void set_dynamic(baton_tensor* t) const {
    if (!BATON_STRUCT_HAS(&api_, baton_host_api, tensor_set_dynamic) || !api_.tensor_set_dynamic) {
      fail(BATON_UNSUPPORTED, "an output shape computed from data needs a host with ABI 1.2");
    }
    const baton_status status = api_.tensor_set_dynamic(t, error_);
    if (status != BATON_OK) throw OpError::from_host(status);
  }
  void set_byte_size(baton_tensor* t, size_t bytes) const {
    if (!BATON_STRUCT_HAS(&api_, baton_host_api, tensor_set_byte_size) || !api_.tensor_set_byte_size) {
      fail(BATON_UNSUPPORTED, "string tensors need a host with ABI 1.7");
    }
    const baton_status status = api_.tensor_set_byte_size(t, bytes, error_);
    if (status != BATON_OK) throw OpError::from_host(status);
  }

 protected:
  const baton_host_api& api_;
  const baton_node* node_;
  baton_error* error_;
  const char* pack_;

 private:
  void check_scale_and_zero(const baton_tensor* t, const std::string& who, float scale, int64_t zero) const {
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      fail(BATON_INVALID_ARGUMENT, who + " has scale " + std::to_string(scale) + " (must be positive and finite)");
    }
    const baton_tensor_type ty = type(t);
    const bool out_of_range = (ty == BATON_TYPE_INT8 && (zero < -128 || zero > 127)) ||
                              (ty == BATON_TYPE_UINT8 && (zero < 0 || zero > 255));
    if (out_of_range) {
      fail(BATON_INVALID_ARGUMENT, who + " has zero point " + std::to_string(zero) + ", outside " +
                                       baton_tensor_type_name(ty) + "'s range");
    }
  }
};

// One op of a pack. `code` is TFLite's builtin code (baton/tflite_ops.h), or BATON_OP_CUSTOM with `name`
// the custom op's name; for a builtin op `name` is what messages call it.
template <typename Ctx>
struct OpDef {
  int32_t code;
  const char* name;
  int32_t min_version, max_version;
  void (*prepare)(Ctx& ctx);
  void (*invoke)(Ctx& ctx);
};

// What the pack keeps for one node between the kernel calls.
template <typename Ctx>
struct NodeState {
  const OpDef<Ctx>* def = nullptr;
  std::unique_ptr<OpState> op;
  // Set by a prepare that picked another implementation than def->invoke; cleared before each prepare.
  void (*invoke)(Ctx& ctx) = nullptr;
  // Bytes a prepare computed for invoke to write (a string output's packed form).
  std::vector<uint8_t> kept_bytes;
};

// A pack: Ctx is NodeView or derived from it, constructible as
//   Ctx(PackState& pack, NodeState<Ctx>& node_state, const baton_host_api& api, const baton_node* node,
//       baton_error* error);
// PackState is what `create` builds once per plugin instance (an empty struct when the ops keep all
// their state per node).
template <typename Ctx, typename PackState>
struct OpPack {
  const char* name;
  const char* version;
  const char* description;
  std::span<const OpDef<Ctx>> (*ops)();  // every op, looked up by code (and name for custom ops)
  std::span<const baton_option_decl> options;
  uint32_t flags;  // BATON_PLUGIN_FLAG_*
  // Builds the state from the host's options; throws (OpError or std::exception) to fail.
  std::unique_ptr<PackState> (*create)(const baton_host_api& api, const baton_plugin_host* host,
                                       uint32_t host_abi_minor);
  // Optional: the status of an exception of the pack's own (not OpError), writing its message; return
  // BATON_OK to leave it to the kit (BATON_ERROR with its what()).
  baton_status (*classify)(const std::exception& e, std::string& message);
};

// The C boundary of a pack: one instantiation per module.
template <typename Ctx, typename PackState>
class OpPackBoundary {
 public:
  // The entry point's work: checks the host and returns the descriptor (null, with the reason, if the
  // host cannot serve the pack).
  static const baton_plugin_desc* entry(const OpPack<Ctx, PackState>& pack, uint32_t host_abi_major,
                                        uint32_t host_abi_minor, const baton_host_api* api, baton_error* error) {
    if (!api) return nullptr;
    if (host_abi_major != BATON_ABI_VERSION_MAJOR) {
      api->error_set(error, (std::string(pack.name) + ": built for ABI major " + std::to_string(BATON_ABI_VERSION_MAJOR) +
                             ", the host has " + std::to_string(host_abi_major))
                                .c_str());
      return nullptr;
    }
    // Every host function the kit calls unconditionally is ABI 1.0's; tensor_set_shape is the last.
    if (!BATON_STRUCT_HAS(api, baton_host_api, tensor_set_shape)) {
      api->error_set(error, (std::string(pack.name) + ": the host's function table is too small").c_str());
      return nullptr;
    }
    try {
      api_ = api;
      pack_ = &pack;
      host_abi_minor_ = host_abi_minor;
      static const std::vector<baton_op_decl> decls = [&] {
        std::vector<baton_op_decl> out;
        for (const OpDef<Ctx>& d : pack.ops()) {
          const char* custom = d.code == BATON_OP_CUSTOM ? d.name : nullptr;
          out.push_back({sizeof(baton_op_decl), d.code, custom, d.min_version, d.max_version, &kKernel});
        }
        return out;
      }();
      static const baton_plugin_desc desc = {
          sizeof(baton_plugin_desc),
          BATON_ABI_VERSION_MAJOR,
          BATON_ABI_VERSION_MINOR,
          pack.name,
          pack.version,
          BATON_PLUGIN_OP_PACK,
          pack.description,
          decls.data(),
          decls.size(),
          pack.options.data(),
          pack.options.size(),
          pack.flags,
          create,
          destroy,
          nullptr,  // delegate calls: an op pack has none
          nullptr,  // device probe: delegates only
          nullptr,  // loader functions: loaders only
      };
      return &desc;
    } catch (...) {
      api->error_set(error, (std::string(pack.name) + ": out of memory while describing the ops").c_str());
      return nullptr;
    }
  }

 private:
  static inline const baton_host_api* api_ = nullptr;
  static inline const OpPack<Ctx, PackState>* pack_ = nullptr;
  static inline uint32_t host_abi_minor_ = 0;

  static std::string node_prefix(const baton_node* node, const OpDef<Ctx>* def) {
    const char* name = def ? def->name : api_->node_custom_name(node);
    return "node " + std::to_string(api_->node_index(node)) + " " + (name ? name : "?") + ": ";
  }

  template <typename F>
  static baton_status guarded(const baton_node* node, const OpDef<Ctx>* def, baton_error* error, F&& body) {
    try {
      body();
      return BATON_OK;
    } catch (const OpError& e) {
      if (!e.host_message()) api_->error_set(error, (node_prefix(node, def) + e.message()).c_str());
      return e.status();
    } catch (const std::bad_alloc&) {
      api_->error_set(error, (node_prefix(node, def) + "out of memory").c_str());
      return BATON_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
      std::string message = e.what();
      baton_status status = pack_->classify ? pack_->classify(e, message) : BATON_OK;
      if (status == BATON_OK) status = BATON_ERROR;
      api_->error_set(error, (node_prefix(node, def) + message).c_str());
      return status;
    } catch (...) {
      api_->error_set(error, (node_prefix(node, def) + "unknown error").c_str());
      return BATON_ERROR;
    }
  }

  static const OpDef<Ctx>* find(const baton_node* node) {
    const int32_t code = api_->node_builtin_code(node);
    const char* custom = code == BATON_OP_CUSTOM ? api_->node_custom_name(node) : nullptr;
    for (const OpDef<Ctx>& d : pack_->ops()) {
      if (d.code == code && (code != BATON_OP_CUSTOM || (custom && std::string_view(custom) == d.name))) return &d;
    }
    return nullptr;
  }

  static baton_status create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
    try {
      *plugin_state = pack_->create(*api_, host, host_abi_minor_).release();
      return BATON_OK;
    } catch (const OpError& e) {
      api_->error_set(error, (std::string(pack_->name) + ": cannot start: " + e.message()).c_str());
      return e.status();
    } catch (const std::exception& e) {
      api_->error_set(error, (std::string(pack_->name) + ": cannot start: " + e.what()).c_str());
      return BATON_ERROR;
    }
  }
  static void destroy(void* plugin_state) { delete static_cast<PackState*>(plugin_state); }

  static baton_status init(void*, const baton_node* node, void** node_state, baton_error* error) {
    const OpDef<Ctx>* def = find(node);
    return guarded(node, def, error, [&] {
      if (!def) {
        const int32_t code = api_->node_builtin_code(node);
        const char* custom = api_->node_custom_name(node);
        throw OpError(BATON_UNSUPPORTED, (code == BATON_OP_CUSTOM ? std::string("custom op '") + (custom ? custom : "") + "'"
                                                                  : "op code " + std::to_string(code)) +
                                             " is not in the " + pack_->name + " pack");
      }
      const int32_t v = api_->node_version(node);
      if (v < def->min_version || v > def->max_version) {
        throw OpError(BATON_UNSUPPORTED, "version " + std::to_string(v) + " not supported (" +
                                             std::to_string(def->min_version) + ".." +
                                             std::to_string(def->max_version) + ")");
      }
      auto state = std::make_unique<NodeState<Ctx>>();
      state->def = def;
      *node_state = state.release();
    });
  }
  static void release(void*, void* node_state) { delete static_cast<NodeState<Ctx>*>(node_state); }
  static baton_status prepare(void* plugin_state, void* node_state, const baton_node* node, baton_error* error) {
    auto* s = static_cast<NodeState<Ctx>*>(node_state);
    return guarded(node, s->def, error, [&] {
      Ctx ctx(*static_cast<PackState*>(plugin_state), *s, *api_, node, error);
      s->invoke = nullptr;
      s->def->prepare(ctx);
    });
  }
  static baton_status invoke(void* plugin_state, void* node_state, const baton_node* node, baton_error* error) {
    auto* s = static_cast<NodeState<Ctx>*>(node_state);
    return guarded(node, s->def, error, [&] {
      Ctx ctx(*static_cast<PackState*>(plugin_state), *s, *api_, node, error);
      (s->invoke ? s->invoke : s->def->invoke)(ctx);
    });
  }

  static constexpr baton_kernel kKernel = {sizeof(baton_kernel), init, release, prepare, invoke};
};

}  // namespace baton::kit

#endif  // BATON_OP_PACK_KIT_HPP
