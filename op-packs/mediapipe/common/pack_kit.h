// A little kit for writing an op pack in C++ against baton's plugin ABI alone (plugin_api.h): it owns the
// C boundary (entry point, descriptor, the four kernel calls), catches every exception and turns it into
// a status plus a message "node N OP: ...", and gives kernels a thin view of their node (Ctx). Shared by
// the mediapipe and detection packs; each pack compiles its own copy into its module, so nothing is
// shared at run time and nothing but `baton_plugin_entry` leaves a module.
//
// A pack lists its ops as OpDefs (custom name, version range, prepare, invoke) and forwards its entry
// point to pack_entry(). Prepare checks types, shapes and options, sets output shapes and sizes every
// buffer invoke needs (in the node's OpState); invoke only computes and must not allocate.
#ifndef BATON_OP_PACKS_COMMON_PACK_KIT_H
#define BATON_OP_PACKS_COMMON_PACK_KIT_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "baton/plugin_api.h"

namespace baton::packkit {

class OpError {
 public:
  OpError(baton_status status, std::string message) : status_(status), message_(std::move(message)) {}
  baton_status status() const { return status_; }
  const std::string& message() const { return message_; }
  // The host already wrote the message (a host call failed).
  static OpError from_host(baton_status status) {
    OpError e(status, {});
    e.host_ = true;
    return e;
  }
  bool from_host() const { return host_; }

 private:
  baton_status status_;
  std::string message_;
  bool host_ = false;
};

// What prepare leaves for invoke; each op derives its own.
struct OpState {
  virtual ~OpState() = default;
};

class Ctx;

struct OpDef {
  const char* name;  // custom op name
  int32_t min_version, max_version;
  void (*prepare)(Ctx& ctx);
  void (*invoke)(Ctx& ctx);
};

struct PackInfo {
  const char* name;
  const char* version;
  const char* description;
  std::span<const OpDef> ops;
};

// Per-tensor quantization (scale 1, zero point 0 for a tensor without any).
struct Quant {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

class Ctx {
 public:
  Ctx(const baton_host_api& api, const baton_node* node, baton_error* error, std::unique_ptr<OpState>& state)
      : api_(api), node_(node), error_(error), state_(state) {}

  const baton_host_api& api() const { return api_; }
  int32_t version() const { return api_.node_version(node_); }
  int input_count() const { return api_.node_input_count(node_); }
  int output_count() const { return api_.node_output_count(node_); }
  baton_tensor* input(int i) const;   // fails when missing
  baton_tensor* output(int i) const;  // fails when missing
  void require_io(int inputs, int outputs) const;

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
  // Per-tensor quantization; fails naming `role` for per-channel quantization.
  Quant quantization(const baton_tensor* t, const char* role) const;
  std::span<const uint8_t> custom_options() const;

  void set_output_shape(baton_tensor* t, std::initializer_list<int32_t> dims) const;
  void set_output_shape(baton_tensor* t, std::span<const int32_t> dims) const;

  [[noreturn]] void fail(baton_status status, const std::string& message) const { throw OpError(status, message); }
  void require(bool ok, const std::string& message) const {
    if (!ok) fail(BATON_INVALID_ARGUMENT, message);
  }
  void require_type(const baton_tensor* t, const std::string& role,
                    std::initializer_list<baton_tensor_type> allowed) const;
  void require_rank(const baton_tensor* t, const std::string& role, int rank) const;
  std::string shape_text(const baton_tensor* t) const;

  template <typename S>
  S& state() const {
    if (!state_) state_ = std::make_unique<S>();
    return static_cast<S&>(*state_);
  }

 private:
  const baton_host_api& api_;
  const baton_node* node_;
  baton_error* error_;
  std::unique_ptr<OpState>& state_;
};

// The entry point's work: checks the host's ABI and returns the pack's descriptor.
const baton_plugin_desc* pack_entry(const PackInfo& info, uint32_t host_abi_major, uint32_t host_abi_minor,
                                    const baton_host_api* api, baton_error* error);

}  // namespace baton::packkit

#endif  // BATON_OP_PACKS_COMMON_PACK_KIT_H
