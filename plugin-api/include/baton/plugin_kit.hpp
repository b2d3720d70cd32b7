// baton plugin kit: a header-only C++17 helper for plugins written in C++, over baton/plugin_api.h.
//
// The ABI is C: nothing may throw across it, and every failure is a status plus a message. This header
// gives C++ plugins the pieces every one of them otherwise writes again:
//  - Refusal / refuse(): "this plugin does not take this", with the reason `baton plan` shows;
//  - guarded(): runs a body and turns every exception into a status and a message;
//  - constant_ints(): the values of a constant integer operand (axes, paddings, shapes);
//  - host_is_usable(): the checks an entry point makes on the host before returning its descriptor;
//  - cpu_model_name(): the CPU's name, for a CPU delegate's device probe;
//  - DelegateNode, dims_text(): a node as a delegate reads it, each missing piece a Refusal;
//  - DelegateCalls<State, Partition>: the five delegate calls of baton_delegate_api for a delegate made
//    of a plugin state and a partition class (see there for what they must provide).
// It uses only the host table it is given: a plugin still links against nothing of baton's. Everything
// here is inline or a template, so each plugin gets its own copy.
#ifndef BATON_PLUGIN_KIT_HPP
#define BATON_PLUGIN_KIT_HPP

#include <cstddef>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/plugin_api.h"

namespace baton::kit {

// Why a plugin does not take a node (or cannot build a partition): its what() is the reason.
class Refusal : public std::runtime_error {
 public:
  explicit Refusal(const std::string& reason) : std::runtime_error(reason) {}
};

[[noreturn]] inline void refuse(const std::string& reason) { throw Refusal(reason); }

// Runs `body` (which returns a baton_status) and turns what it throws into a status with a message:
// a Refusal into BATON_UNSUPPORTED with its reason, std::bad_alloc into BATON_OUT_OF_MEMORY, any other
// exception into BATON_ERROR with its what() (or, for one that is not a std::exception, "unknown error
// in `where`"). `where` names the call for those messages.
template <typename F>
baton_status guarded(const baton_host_api* api, baton_error* error, const char* where, F&& body) {
  try {
    return body();
  } catch (const Refusal& r) {
    api->error_set(error, r.what());
    return BATON_UNSUPPORTED;
  } catch (const std::bad_alloc&) {
    api->error_set(error, (std::string("out of memory in ") + where).c_str());
    return BATON_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    api->error_set(error, e.what());
    return BATON_ERROR;
  } catch (...) {
    api->error_set(error, (std::string("unknown error in ") + where).c_str());
    return BATON_ERROR;
  }
}

// The values of a constant INT32 or INT64 tensor (axes, paddings, sizes, new shapes), widened to int64.
// Throws Refusal naming `what` when the tensor is not constant, has no data or has another type.
inline std::vector<int64_t> constant_ints(const baton_host_api* api, const baton_tensor* t, const char* what) {
  if (!api->tensor_is_constant(t)) refuse(std::string("non-constant ") + what);
  const void* data = api->tensor_data(t);
  if (!data) refuse(std::string(what) + " has no data");
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(t, &dims);
  size_t count = 1;
  for (int32_t d = 0; d < rank; ++d) count *= dims[d] < 0 ? 0 : static_cast<size_t>(dims[d]);
  std::vector<int64_t> out(count);
  const baton_tensor_type type = api->tensor_type(t);
  if (type == BATON_TYPE_INT32) {
    for (size_t k = 0; k < count; ++k) out[k] = static_cast<const int32_t*>(data)[k];
  } else if (type == BATON_TYPE_INT64) {
    for (size_t k = 0; k < count; ++k) out[k] = static_cast<const int64_t*>(data)[k];
  } else {
    refuse(std::string(what) + " of type " + baton_tensor_type_name(type) + " (INT32 or INT64 only)");
  }
  return out;
}

// A shape or any list of dimensions as reasons show it: [1,224,224,3].
template <typename Dims>
std::string dims_text(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

// A node as a delegate reads it while it checks a node and builds a partition: its inputs, outputs and
// options through the host table, each missing piece a Refusal with the reason `baton plan` shows. A
// delegate derives its own view from it with the checks of its device (types, ranks, layouts), so a
// node is refused for the same reasons its partition would fail to build.
class DelegateNode {
 public:
  DelegateNode(const baton_host_api* api, const baton_node* node) : api_(api), node_(node) {}

  const baton_host_api* api() const { return api_; }
  const baton_node* node() const { return node_; }
  int32_t code() const { return api_->node_builtin_code(node_); }
  int32_t index() const { return api_->node_index(node_); }
  int32_t input_count() const { return api_->node_input_count(node_); }
  int32_t output_count() const { return api_->node_output_count(node_); }
  const baton_builtin_options& options() const { return *api_->node_builtin_options(node_); }

  // NULL for an omitted optional input.
  const baton_tensor* optional_input(int32_t i) const { return i < input_count() ? api_->node_input(node_, i) : nullptr; }
  // Input i, which must be present.
  const baton_tensor* input(int32_t i) const {
    const baton_tensor* t = optional_input(i);
    if (!t) refuse("input " + std::to_string(i) + " is missing");
    return t;
  }
  const baton_tensor* output(int32_t i) const {
    if (i >= output_count()) refuse("output " + std::to_string(i) + " is missing");
    return api_->node_output(node_, i);
  }
  // A constant with data (weights a delegate packs once), named `what` in the reason otherwise.
  void require_constant(const baton_tensor* t, const char* what) const {
    if (!api_->tensor_is_constant(t)) refuse(std::string("non-constant ") + what);
    if (!api_->tensor_data(t)) refuse(std::string(what) + " has no data");
  }
  // The values of constant INT32 or INT64 input i (axes, paddings, sizes).
  std::vector<int64_t> constant_ints(int32_t i, const char* what) const {
    return kit::constant_ints(api_, input(i), what);
  }
  // The dimensions of `t` as the host gives them.
  std::vector<int32_t> dims(const baton_tensor* t) const {
    const int32_t* d = nullptr;
    const int32_t rank = api_->tensor_shape(t, &d);
    return rank > 0 && d ? std::vector<int32_t>(d, d + rank) : std::vector<int32_t>();
  }

 protected:
  const baton_host_api* api_;
  const baton_node* node_;
};

// For an entry point: the host speaks this plugin's ABI major and (for a delegate) its table has the
// partition functions. Otherwise writes the reason, prefixed with the plugin's name, and returns false.
// The CPU's model name as Linux's /proc/cpuinfo gives it ("Intel(R) Xeon(R) ..."), else "CPU".
inline std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return "CPU";
}

// Tells the host that the plugin has copied what it needs of constant `t` (packed weights) and will not
// read its data again before its next prepare, so the host may give the file pages it occupies back (ABI
// 1.15, tensor_release_constant in plugin_api.h); nothing on an older host.
inline void release_constant(const baton_host_api* api, const baton_tensor* t) {
  if (t && BATON_STRUCT_HAS(api, baton_host_api, tensor_release_constant) && api->tensor_release_constant) {
    api->tensor_release_constant(t);
  }
}

inline bool host_is_usable(uint32_t host_abi_major, const baton_host_api* api, baton_error* error, const char* plugin,
                           bool delegate) {
  if (!api) return false;
  if (host_abi_major != BATON_ABI_VERSION_MAJOR) {
    api->error_set(error, (std::string(plugin) + ": built for ABI major " + std::to_string(BATON_ABI_VERSION_MAJOR) +
                           ", the host has " + std::to_string(host_abi_major))
                              .c_str());
    return false;
  }
  if (delegate && !BATON_STRUCT_HAS(api, baton_host_api, partition_output)) {
    api->error_set(error, (std::string(plugin) + ": the host's function table has no partition functions").c_str());
    return false;
  }
  return true;
}

// The calls of baton_delegate_api for a delegate made of two types:
//  - State, the plugin state `create` stores: members `const baton_host_api* api` and
//    `std::string unavailable` (non-empty: every node is refused and every partition fails with it), and
//    `void check(const baton_node*)`, which returns if the delegate takes the node and throws Refusal
//    with the reason if not;
//  - Partition, built from `State&`: `void build(const baton_partition*)` (throws on failure),
//    `baton_status prepare(const baton_partition*, baton_error*)` and `baton_status invoke(baton_error*)`.
// `table` is the baton_delegate_api to put in the descriptor.
template <class State, class Partition>
struct DelegateCalls {
  static int32_t check_node(void* plugin_state, const baton_node* node, baton_error* reason) {
    auto& state = *static_cast<State*>(plugin_state);
    int32_t yes = 0;
    guarded(state.api, reason, "check_node", [&] {
      if (!state.unavailable.empty()) refuse(state.unavailable);
      state.check(node);
      yes = 1;
      return BATON_OK;
    });
    return yes;
  }

  static baton_status partition_init(void* plugin_state, const baton_partition* partition, void** partition_state,
                                     baton_error* error) {
    auto& state = *static_cast<State*>(plugin_state);
    return guarded(state.api, error, "partition init", [&] {
      if (!state.unavailable.empty()) refuse(state.unavailable);
      auto p = std::make_unique<Partition>(state);
      p->build(partition);
      *partition_state = p.release();
      return BATON_OK;
    });
  }

  static baton_status partition_prepare(void* plugin_state, void* partition_state, const baton_partition* partition,
                                        baton_error* error) {
    return guarded(static_cast<State*>(plugin_state)->api, error, "partition prepare",
                   [&] { return static_cast<Partition*>(partition_state)->prepare(partition, error); });
  }

  static baton_status partition_invoke(void* plugin_state, void* partition_state, const baton_partition*,
                                       baton_error* error) {
    return guarded(static_cast<State*>(plugin_state)->api, error, "partition invoke",
                   [&] { return static_cast<Partition*>(partition_state)->invoke(error); });
  }

  static void partition_free(void*, void* partition_state) { delete static_cast<Partition*>(partition_state); }

  static constexpr baton_delegate_api table = {sizeof(baton_delegate_api), check_node,     partition_init,
                                               partition_prepare,          partition_invoke, partition_free,
                                               nullptr /* select_nodes: nodes by check_node */, nullptr};
};

}  // namespace baton::kit

#endif  // BATON_PLUGIN_KIT_HPP
