// The host function table: the only way a plugin reads nodes, tensors, partitions and its options.
// Every function tolerates a null handle (it answers "nothing") so a buggy plugin gets a wrong answer,
// not a crash inside the host.
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>

#include "elf_symbols.h"
#include "graph.h"
#include "option_values.h"
#include "plugin_registry.h"

namespace baton {

void quantization_of(const Tensor* t, baton_quantization* out) {
  const size_t size = out->struct_size ? std::min(out->struct_size, sizeof(baton_quantization)) : sizeof(baton_quantization);
  baton_quantization q{};
  q.struct_size = size;
  if (t && t->info && (!t->info->quant.empty() || t->info->quant.blockwise())) {
    const Quantization& src = t->info->quant;
    q.scale_count = static_cast<int32_t>(src.scales.size());
    q.scales = src.scales.data();
    q.zero_points = src.zero_points.empty() ? nullptr : src.zero_points.data();  // NULL: all zero
    q.quantized_dimension = src.quantized_dimension;
    q.block_size = src.block_size;
    q.block_scale_type = src.block_scale_type;
    q.block_scale_count = static_cast<int32_t>(src.block_scales.size() / (src.block_scale_type == BATON_TYPE_FLOAT16 ? 2 : 4));
    q.block_scales = src.block_scales.empty() ? nullptr : src.block_scales.data();
  }
  std::memcpy(out, &q, size);
}

namespace {

const Tensor* T(const baton_tensor* t) { return reinterpret_cast<const Tensor*>(t); }
Tensor* T(baton_tensor* t) { return reinterpret_cast<Tensor*>(t); }
const Node* N(const baton_node* n) { return reinterpret_cast<const Node*>(n); }
const Partition* P(const baton_partition* p) { return reinterpret_cast<const Partition*>(p); }
baton_tensor* H(Tensor* t) { return reinterpret_cast<baton_tensor*>(t); }

void error_set(baton_error* error, const char* message) {
  if (error) error->message = message ? message : "";
}

void log(const baton_plugin_host* host, baton_log_level level, const char* message) {
  const LoadedPlugin* plugin = LoadedPlugin::from(host);
  if (!plugin || !plugin->log) return;
  plugin->log(level, plugin->name + ": " + (message ? message : ""));
}

const std::string* option_text(const baton_plugin_host* host, const char* name) {
  const LoadedPlugin* plugin = LoadedPlugin::from(host);
  if (!plugin || !name) return nullptr;
  auto it = plugin->option_values.find(name);
  return it == plugin->option_values.end() ? nullptr : &it->second;
}

const char* option_string(const baton_plugin_host* host, const char* name, const char* fallback) {
  return option_as_string(option_text(host, name), fallback);
}

int64_t option_int(const baton_plugin_host* host, const char* name, int64_t fallback) {
  return option_as_int(option_text(host, name), fallback);
}

double option_float(const baton_plugin_host* host, const char* name, double fallback) {
  return option_as_float(option_text(host, name), fallback);
}

int32_t option_bool(const baton_plugin_host* host, const char* name, int32_t fallback) {
  return option_as_bool(option_text(host, name), fallback);
}

int32_t thread_count(const baton_plugin_host* host) {
  const LoadedPlugin* plugin = LoadedPlugin::from(host);
  return plugin ? plugin->threads : 1;
}

int32_t node_index(const baton_node* n) { return n ? N(n)->info->index : -1; }
int32_t node_builtin_code(const baton_node* n) { return n ? N(n)->info->op_code : -1; }
const char* node_custom_name(const baton_node* n) {
  if (!n) return nullptr;
  if (N(n)->info->op_code == BATON_OP_STABLEHLO_COMPOSITE) return N(n)->info->composite_name.c_str();
  if (N(n)->info->op_code != BATON_OP_CUSTOM) return nullptr;
  return N(n)->info->custom_name.c_str();
}
int32_t node_version(const baton_node* n) { return n ? N(n)->info->version : 0; }
int32_t node_input_count(const baton_node* n) { return n ? static_cast<int32_t>(N(n)->inputs.size()) : 0; }
baton_tensor* node_input(const baton_node* n, int32_t i) {
  if (!n || i < 0 || static_cast<size_t>(i) >= N(n)->inputs.size()) return nullptr;
  return H(N(n)->inputs[i]);
}
int32_t node_output_count(const baton_node* n) { return n ? static_cast<int32_t>(N(n)->outputs.size()) : 0; }
baton_tensor* node_output(const baton_node* n, int32_t i) {
  if (!n || i < 0 || static_cast<size_t>(i) >= N(n)->outputs.size()) return nullptr;
  return H(N(n)->outputs[i]);
}
int32_t node_intermediate_count(const baton_node* n) {
  return n ? static_cast<int32_t>(N(n)->intermediates.size()) : 0;
}
baton_tensor* node_intermediate(const baton_node* n, int32_t i) {
  if (!n || i < 0 || static_cast<size_t>(i) >= N(n)->intermediates.size()) return nullptr;
  return H(N(n)->intermediates[i]);
}
const baton_builtin_options* node_builtin_options(const baton_node* n) {
  static const baton_builtin_options none = {sizeof(baton_builtin_options), 0, {}};
  return n ? &N(n)->info->options : &none;
}
const uint8_t* node_custom_options(const baton_node* n, size_t* size) {
  // A composite's attributes are its options, as a custom op's options are (both flexbuffer maps).
  const std::span<const uint8_t> options = !n ? std::span<const uint8_t>{}
                                           : N(n)->info->op_code == BATON_OP_STABLEHLO_COMPOSITE
                                               ? N(n)->info->composite_attributes
                                               : N(n)->info->custom_options;
  if (size) *size = options.size();
  return options.empty() ? nullptr : options.data();
}

int32_t tensor_index(const baton_tensor* t) { return t ? T(t)->index : -1; }
const char* tensor_name(const baton_tensor* t) { return t && T(t)->info ? T(t)->info->name.c_str() : ""; }
baton_tensor_type tensor_type(const baton_tensor* t) { return t ? T(t)->type : BATON_TYPE_FLOAT32; }
int32_t tensor_shape(const baton_tensor* t, const int32_t** dims) {
  if (!t) {
    if (dims) *dims = nullptr;
    return 0;
  }
  if (dims) *dims = T(t)->shape.data();
  return static_cast<int32_t>(T(t)->shape.size());
}
size_t tensor_byte_size(const baton_tensor* t) { return t ? T(t)->bytes : 0; }
int32_t tensor_is_constant(const baton_tensor* t) { return t ? T(t)->is_constant : 0; }
const void* tensor_data(const baton_tensor* t) {
  if (!t) return nullptr;
  return T(t)->is_constant ? static_cast<const void*>(T(t)->constant) : static_cast<const void*>(T(t)->data);
}
void* tensor_mutable_data(baton_tensor* t) {
  if (!t || T(t)->is_constant) return nullptr;
  return T(t)->data;
}
void tensor_quantization(const baton_tensor* t, baton_quantization* out) {
  if (out) quantization_of(t ? T(t) : nullptr, out);
}
baton_status tensor_set_shape(baton_tensor* t, int32_t rank, const int32_t* dims, baton_error* error) {
  if (!t) {
    error_set(error, "tensor_set_shape: null tensor");
    return BATON_INVALID_ARGUMENT;
  }
  Tensor* tensor = T(t);
  if (!tensor->shape_writable) {
    error_set(error, ("tensor_set_shape: tensor " + std::to_string(tensor->index) +
                      " is not an output of the node being prepared")
                         .c_str());
    return BATON_INVALID_ARGUMENT;
  }
  if (rank < 0 || rank > 16 || (rank > 0 && !dims)) {
    error_set(error, ("tensor_set_shape: bad rank " + std::to_string(rank)).c_str());
    return BATON_INVALID_ARGUMENT;
  }
  std::vector<int32_t> shape(dims, dims + rank);
  size_t bytes = 0;
  if (!checked_byte_size(shape, tensor->type, &bytes)) {
    error_set(error, ("tensor_set_shape: tensor " + std::to_string(tensor->index) +
                      ": negative dimension or byte size overflow")
                         .c_str());
    return BATON_INVALID_ARGUMENT;
  }
  if (tensor->type != BATON_TYPE_STRING && bytes > tensor->max_bytes) {
    std::string dims_text;
    for (int32_t d : shape) {
      if (!dims_text.empty()) dims_text += ',';
      dims_text += std::to_string(d);  // appended: a "," + to_string() temporary trips a false -Wrestrict in GCC 12
    }
    const std::string name = tensor->info && !tensor->info->name.empty() ? " \"" + tensor->info->name + "\"" : "";
    error_set(error, ("output tensor " + std::to_string(tensor->index) + name + " of shape [" + dims_text + "] needs " +
                      std::to_string(bytes) + " bytes, over the tensor limit of " + std::to_string(tensor->max_bytes))
                         .c_str());
    return BATON_INVALID_ARGUMENT;
  }
  tensor->shape = std::move(shape);
  // A string tensor's byte size comes from its contents: the kernel sets it after the shape (ABI 1.7).
  tensor->bytes = tensor->type == BATON_TYPE_STRING ? 0 : bytes;
  return BATON_OK;
}

baton_status tensor_set_byte_size(baton_tensor* t, size_t bytes, baton_error* error) {
  if (!t || !T(t)->shape_writable) {
    error_set(error, "tensor_set_byte_size: not an output of the node being prepared");
    return BATON_INVALID_ARGUMENT;
  }
  Tensor* tensor = T(t);
  if (tensor->type != BATON_TYPE_STRING) {
    error_set(error, ("tensor_set_byte_size: tensor " + std::to_string(tensor->index) + " is " +
                      type_name(tensor->type) + "; only a string tensor's byte size is set (the others' follow their shape)")
                         .c_str());
    return BATON_INVALID_ARGUMENT;
  }
  tensor->bytes = bytes;
  return BATON_OK;
}

baton_status tensor_set_dynamic(baton_tensor* t, baton_error* error) {
  if (!t || !T(t)->shape_writable) {
    error_set(error, "tensor_set_dynamic: not an output of the node being prepared");
    return BATON_INVALID_ARGUMENT;
  }
  T(t)->dynamic = true;
  return BATON_OK;
}

int32_t partition_id(const baton_partition* p) { return p ? P(p)->id : -1; }
int32_t partition_node_count(const baton_partition* p) { return p ? static_cast<int32_t>(P(p)->nodes.size()) : 0; }
const baton_node* partition_node(const baton_partition* p, int32_t i) {
  if (!p || i < 0 || static_cast<size_t>(i) >= P(p)->nodes.size()) return nullptr;
  return reinterpret_cast<const baton_node*>(P(p)->nodes[i]);
}
int32_t partition_input_count(const baton_partition* p) { return p ? static_cast<int32_t>(P(p)->inputs.size()) : 0; }
baton_tensor* partition_input(const baton_partition* p, int32_t i) {
  if (!p || i < 0 || static_cast<size_t>(i) >= P(p)->inputs.size()) return nullptr;
  return H(P(p)->inputs[i]);
}
int32_t partition_output_count(const baton_partition* p) { return p ? static_cast<int32_t>(P(p)->outputs.size()) : 0; }
baton_tensor* partition_output(const baton_partition* p, int32_t i) {
  if (!p || i < 0 || static_cast<size_t>(i) >= P(p)->outputs.size()) return nullptr;
  return H(P(p)->outputs[i]);
}

const char* plugin_path(const baton_plugin_host* host) {
  const LoadedPlugin* plugin = LoadedPlugin::from(host);
  return plugin ? plugin->path.c_str() : "";
}

int32_t option_entry(const baton_plugin_host* host, int32_t i, const char** name, const char** value) {
  const LoadedPlugin* plugin = LoadedPlugin::from(host);
  if (!plugin || i < 0 || static_cast<size_t>(i) >= plugin->option_values.size()) return 0;
  auto it = std::next(plugin->option_values.begin(), i);
  if (name) *name = it->first.c_str();
  if (value) *value = it->second.c_str();
  return 1;
}

int32_t file_exports_symbol(const char* path, const char* symbol) {
  if (!path || !symbol) return -1;
  const std::optional<bool> has = elf_exports_symbol(path, symbol);
  return has ? (*has ? 1 : 0) : -1;
}

const GraphView* G(const baton_graph* g) { return reinterpret_cast<const GraphView*>(g); }
int32_t graph_node_count(const baton_graph* g) { return g ? static_cast<int32_t>(G(g)->nodes->size()) : 0; }
const baton_node* graph_node(const baton_graph* g, int32_t i) {
  if (!g || i < 0 || static_cast<size_t>(i) >= G(g)->nodes->size() || !(*G(g)->nodes)[i].runs()) return nullptr;
  return reinterpret_cast<const baton_node*>(&(*G(g)->nodes)[i]);
}
int32_t graph_tensor_count(const baton_graph* g) { return g ? static_cast<int32_t>(G(g)->tensors->size()) : 0; }
baton_tensor* graph_tensor(const baton_graph* g, int32_t i) {
  if (!g || i < 0 || static_cast<size_t>(i) >= G(g)->tensors->size()) return nullptr;
  return H(&(*G(g)->tensors)[i]);
}
void* partition_selection(const baton_partition* p) { return p ? P(p)->selection : nullptr; }

baton_status partition_request_scratch(const baton_partition* p, size_t bytes, baton_error* error) {
  if (!p) return BATON_INVALID_ARGUMENT;
  Partition& partition = *const_cast<Partition*>(P(p));
  if (!partition.preparing) {
    error_set(error, "partition_request_scratch is for partition_prepare only");
    return BATON_INVALID_ARGUMENT;
  }
  partition.scratch_bytes = bytes;
  return BATON_OK;
}
void* partition_scratch(const baton_partition* p) { return p ? P(p)->scratch : nullptr; }

baton_status node_request_scratch(const baton_node* n, size_t bytes, baton_error* error) {
  if (!n) return BATON_INVALID_ARGUMENT;
  Node& node = *const_cast<Node*>(N(n));
  if (!node.planning) {
    error_set(error, "no scratch in the arena for a node prepared outside the memory plan (at invoke or at load); "
                     "the kernel keeps memory of its own");
    return BATON_UNSUPPORTED;
  }
  node.kernel_scratch_bytes = bytes;
  return BATON_OK;
}
void* node_scratch(const baton_node* n) { return n ? N(n)->kernel_scratch : nullptr; }

// Only a constant read straight from the model's file: a folded one has data of the host's own.
void graph_refuse_node(const baton_graph* g, int32_t node, const char* reason) {
  if (!g || !reason || !G(g)->refusals) return;
  (*G(g)->refusals)[node] = reason;
}

void tensor_release_constant(const baton_tensor* t) {
  if (!t || !T(t)->is_constant || !T(t)->info || T(t)->constant != T(t)->info->data.data()) return;
  release_constant_pages(*T(t)->info);
}

int32_t partition_input_reusable(const baton_partition* p, int32_t i) {
  if (!p || i < 0 || static_cast<size_t>(i) >= P(p)->inputs.size() ||
      static_cast<size_t>(i) >= P(p)->inputs_read_inside_only.size()) {
    return 0;
  }
  const Tensor& t = *P(p)->inputs[static_cast<size_t>(i)];
  const bool reusable = P(p)->inputs_read_inside_only[static_cast<size_t>(i)] && !t.is_constant && !t.dynamic &&
                        !t.is_model_input && !t.is_model_output && !t.info->is_variable;
  return reusable ? 1 : 0;
}

void* shared_object(const baton_plugin_host* host, const char* key, void* (*create)(void*), void (*destroy)(void*),
                    void* context) {
  LoadedPlugin* plugin = LoadedPlugin::from(host);
  if (!plugin || !plugin->shared || !key) return nullptr;
  plugin->asked_shared = true;  // never parked: the object it made may be its code's
  try {
    return plugin->shared->get(key, create, destroy, context);
  } catch (...) {
    return nullptr;  // out of memory for the key: as if create had failed
  }
}

const baton_host_api kHostApi = {
    sizeof(baton_host_api),
    BATON_ABI_VERSION_MAJOR,
    BATON_ABI_VERSION_MINOR,
    error_set,
    log,
    option_string,
    option_int,
    option_float,
    option_bool,
    thread_count,
    node_index,
    node_builtin_code,
    node_custom_name,
    node_version,
    node_input_count,
    node_input,
    node_output_count,
    node_output,
    node_builtin_options,
    node_custom_options,
    tensor_index,
    tensor_name,
    tensor_type,
    tensor_shape,
    tensor_byte_size,
    tensor_is_constant,
    tensor_data,
    tensor_mutable_data,
    tensor_quantization,
    tensor_set_shape,
    partition_id,
    partition_node_count,
    partition_node,
    partition_input_count,
    partition_input,
    partition_output_count,
    partition_output,
    plugin_path,
    option_entry,
    file_exports_symbol,
    graph_node_count,
    graph_node,
    graph_tensor_count,
    graph_tensor,
    partition_selection,
    tensor_set_dynamic,
    node_intermediate_count,
    node_intermediate,
    shared_object,
    partition_request_scratch,
    partition_scratch,
    tensor_set_byte_size,
    partition_input_reusable,
    node_request_scratch,
    node_scratch,
    tensor_release_constant,
    graph_refuse_node,
};

}  // namespace

const baton_host_api* host_api_table() { return &kHostApi; }

}  // namespace baton
