#include "common/pack_kit.h"

#include <cstddef>
#include <new>
#include <string_view>
#include <vector>

#include "common/flex_map.h"

namespace baton::packkit {
namespace {

// One pack per module: set once by pack_entry, read by the kernel calls.
const baton_host_api* g_api = nullptr;
const PackInfo* g_info = nullptr;

struct NodeState {
  const OpDef* def = nullptr;
  std::unique_ptr<OpState> op;
};

std::string node_prefix(const baton_node* node, const OpDef* def) {
  const char* name = def ? def->name : g_api->node_custom_name(node);
  return "node " + std::to_string(g_api->node_index(node)) + " " + (name ? name : "?") + ": ";
}

template <typename F>
baton_status guarded(const baton_node* node, const OpDef* def, baton_error* error, F&& body) {
  try {
    body();
    return BATON_OK;
  } catch (const OpError& e) {
    if (!e.from_host()) g_api->error_set(error, (node_prefix(node, def) + e.message()).c_str());
    return e.status();
  } catch (const FlexError& e) {
    g_api->error_set(error, (node_prefix(node, def) + "custom options: " + e.what()).c_str());
    return BATON_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    g_api->error_set(error, (node_prefix(node, def) + "out of memory").c_str());
    return BATON_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    g_api->error_set(error, (node_prefix(node, def) + e.what()).c_str());
    return BATON_ERROR;
  } catch (...) {
    g_api->error_set(error, (node_prefix(node, def) + "unknown error").c_str());
    return BATON_ERROR;
  }
}

baton_status kernel_init(void*, const baton_node* node, void** node_state, baton_error* error) {
  return guarded(node, nullptr, error, [&] {
    const char* name = g_api->node_custom_name(node);
    const OpDef* def = nullptr;
    for (const OpDef& d : g_info->ops) {
      if (name && std::string_view(name) == d.name) def = &d;
    }
    if (!def) {
      throw OpError(BATON_UNSUPPORTED, std::string("the ") + g_info->name + " pack has no op of this name");
    }
    const int32_t v = g_api->node_version(node);
    if (v < def->min_version || v > def->max_version) {
      throw OpError(BATON_UNSUPPORTED, "version " + std::to_string(v) + " not supported (" +
                                           std::to_string(def->min_version) + ".." + std::to_string(def->max_version) + ")");
    }
    auto state = std::make_unique<NodeState>();
    state->def = def;
    *node_state = state.release();
  });
}

void kernel_free(void*, void* node_state) { delete static_cast<NodeState*>(node_state); }

baton_status kernel_prepare(void*, void* node_state, const baton_node* node, baton_error* error) {
  auto* s = static_cast<NodeState*>(node_state);
  return guarded(node, s->def, error, [&] {
    Ctx ctx(*g_api, node, error, s->op);
    s->def->prepare(ctx);
  });
}

baton_status kernel_invoke(void*, void* node_state, const baton_node* node, baton_error* error) {
  auto* s = static_cast<NodeState*>(node_state);
  return guarded(node, s->def, error, [&] {
    Ctx ctx(*g_api, node, error, s->op);
    s->def->invoke(ctx);
  });
}

const baton_kernel kKernel = {sizeof(baton_kernel), kernel_init, kernel_free, kernel_prepare, kernel_invoke};

baton_status plugin_create(const baton_plugin_host*, void** plugin_state, baton_error*) {
  *plugin_state = nullptr;  // the ops keep all their state per node
  return BATON_OK;
}

void plugin_destroy(void*) {}

}  // namespace

baton_tensor* Ctx::input(int i) const {
  baton_tensor* t = i < input_count() ? api_.node_input(node_, i) : nullptr;
  if (!t) fail(BATON_INVALID_ARGUMENT, "input " + std::to_string(i) + " is missing (the node has " +
                                           std::to_string(input_count()) + " inputs)");
  return t;
}

baton_tensor* Ctx::output(int i) const {
  baton_tensor* t = i < output_count() ? api_.node_output(node_, i) : nullptr;
  if (!t) fail(BATON_INVALID_ARGUMENT, "output " + std::to_string(i) + " is missing (the node has " +
                                           std::to_string(output_count()) + " outputs)");
  return t;
}

void Ctx::require_io(int inputs, int outputs) const {
  require(input_count() == inputs && output_count() == outputs,
          "expects " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) + " outputs, has " +
              std::to_string(input_count()) + " and " + std::to_string(output_count()));
  for (int i = 0; i < inputs; ++i) (void)input(i);
  for (int i = 0; i < outputs; ++i) (void)output(i);
}

std::span<const int32_t> Ctx::shape(const baton_tensor* t) const {
  const int32_t* dims = nullptr;
  const int32_t r = api_.tensor_shape(t, &dims);
  return {dims, static_cast<size_t>(r > 0 && dims ? r : 0)};
}

int64_t Ctx::element_count(const baton_tensor* t) const {
  int64_t n = 1;
  for (int32_t d : shape(t)) n *= d;
  return n;
}

std::string Ctx::shape_text(const baton_tensor* t) const {
  std::string s = "[";
  for (int32_t d : shape(t)) {
    if (s.size() > 1) s += ',';
    s += std::to_string(d);
  }
  return s + "]";
}

Quant Ctx::quantization(const baton_tensor* t, const char* role) const {
  baton_quantization q{};
  q.struct_size = sizeof q;
  api_.tensor_quantization(t, &q);
  Quant out;
  if (q.scale_count == 0 || !q.scales) return out;
  if (q.scale_count != 1) {
    fail(BATON_UNSUPPORTED, std::string(role) + " has per-channel quantization (" + std::to_string(q.scale_count) +
                                " scales); only per-tensor is supported");
  }
  out.scale = q.scales[0];
  const int64_t zp = q.zero_points ? q.zero_points[0] : 0;
  require(zp >= -(1 << 16) && zp <= (1 << 16), std::string(role) + " zero point " + std::to_string(zp) + " out of range");
  out.zero_point = static_cast<int32_t>(zp);
  require(out.scale > 0, std::string(role) + " quantization scale must be positive");
  return out;
}

std::span<const uint8_t> Ctx::custom_options() const {
  size_t size = 0;
  const uint8_t* p = api_.node_custom_options(node_, &size);
  if (!p) size = 0;
  return {p, size};
}

void Ctx::set_output_shape(baton_tensor* t, std::initializer_list<int32_t> dims) const {
  set_output_shape(t, std::span<const int32_t>(dims.begin(), dims.size()));
}

void Ctx::set_output_shape(baton_tensor* t, std::span<const int32_t> dims) const {
  for (int32_t d : dims) require(d >= 0, "computed a negative output dimension");
  const baton_status s = api_.tensor_set_shape(t, static_cast<int32_t>(dims.size()), dims.data(), error_);
  if (s != BATON_OK) throw OpError::from_host(s);
}

void Ctx::require_type(const baton_tensor* t, const std::string& role,
                       std::initializer_list<baton_tensor_type> allowed) const {
  const baton_tensor_type actual = type(t);
  std::string names;
  for (baton_tensor_type a : allowed) {
    if (a == actual) return;
    names += std::string(names.empty() ? "" : ", ") + baton_tensor_type_name(a);
  }
  fail(BATON_UNSUPPORTED, role + " type " + baton_tensor_type_name(actual) + " not supported (" + names + ")");
}

void Ctx::require_rank(const baton_tensor* t, const std::string& role, int expected) const {
  require(rank(t) == expected, role + " must have rank " + std::to_string(expected) + ", has shape " + shape_text(t));
}

const baton_plugin_desc* pack_entry(const PackInfo& info, uint32_t host_abi_major, uint32_t, const baton_host_api* api,
                                    baton_error* error) {
  if (!api) return nullptr;
  if (host_abi_major != BATON_ABI_VERSION_MAJOR) {
    api->error_set(error, (std::string(info.name) + ": built for ABI major " + std::to_string(BATON_ABI_VERSION_MAJOR) +
                           ", the host has " + std::to_string(host_abi_major))
                              .c_str());
    return nullptr;
  }
  // Every host function the kit calls lies before the partition functions: tensor_set_shape is the last.
  if (!BATON_STRUCT_HAS(api, baton_host_api, tensor_set_shape)) {
    api->error_set(error, (std::string(info.name) + ": the host's function table is too small").c_str());
    return nullptr;
  }
  try {
    g_api = api;
    g_info = &info;
    static const std::vector<baton_op_decl> decls = [&] {
      std::vector<baton_op_decl> out;
      for (const OpDef& d : info.ops) {
        out.push_back({sizeof(baton_op_decl), BATON_OP_CUSTOM, d.name, d.min_version, d.max_version, &kKernel});
      }
      return out;
    }();
    static const baton_plugin_desc desc = {
        sizeof(baton_plugin_desc),
        BATON_ABI_VERSION_MAJOR,
        BATON_ABI_VERSION_MINOR,
        info.name,
        info.version,
        BATON_PLUGIN_OP_PACK,
        info.description,
        decls.data(),
        decls.size(),
        nullptr,
        0,
        BATON_PLUGIN_FLAG_REENTRANT,  // no shared mutable state: every op keeps its buffers per node
        plugin_create,
        plugin_destroy,
        nullptr,  // delegate calls: an op pack has none
        nullptr,  // device probe: delegates only
        nullptr,  // loader functions: loaders only
    };
    return &desc;
  } catch (...) {
    api->error_set(error, (std::string(info.name) + ": out of memory while describing the ops").c_str());
    return nullptr;
  }
}

}  // namespace baton::packkit
