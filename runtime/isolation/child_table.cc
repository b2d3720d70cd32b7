// The host table of baton-plugin-host: the plugin's calls are answered from what the host sent (node and
// tensor facts as messages, tensor data in shared blocks), and the readers of those messages.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/tflite_ops.h"
#include "child.h"
#include "elf_symbols.h"
#include "option_arrays.h"
#include "option_values.h"
#include "protocol.h"

namespace baton::isolation {

Child& child() {
  static Child c;
  return c;
}

void send(Writer& w) {
  std::lock_guard lock(child().send_mutex);
  if (!send_frame(kSocket, w.bytes())) _exit(0);  // the host is gone
}

Writer reply(baton_status status, const std::string& error) {
  Writer w;
  w.put(Message::reply);
  w.put<int32_t>(status);
  w.put_string(error);
  return w;
}

// ---- the host table, answered from what the host sent ----

void error_set(baton_error* error, const char* message) {
  if (error) error->message = message ? message : "";
}
void log_line(const baton_plugin_host*, baton_log_level level, const char* message) {
  Writer w;
  w.put(Message::log);
  w.put<int32_t>(level);
  w.put_string(message ? message : "");
  send(w);
}
const Instance& instance_of(const baton_plugin_host* host) {
  static const Instance none;
  return host ? *reinterpret_cast<const Instance*>(host) : none;
}
const std::string* option_text(const baton_plugin_host* host, const char* name) {
  if (!name) return nullptr;
  const auto& options = instance_of(host).options;
  auto it = options.find(name);
  return it == options.end() ? nullptr : &it->second;
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
int32_t thread_count(const baton_plugin_host* host) { return instance_of(host).threads; }

int32_t node_index(const baton_node* n) { return n ? n->index : -1; }
int32_t node_builtin_code(const baton_node* n) { return n ? n->code : -1; }
const char* node_custom_name(const baton_node* n) {
  return n && (n->code == BATON_OP_CUSTOM || n->code == BATON_OP_STABLEHLO_COMPOSITE) ? n->custom_name.c_str() : nullptr;
}
int32_t node_version(const baton_node* n) { return n ? n->version : 0; }
int32_t node_input_count(const baton_node* n) { return n ? static_cast<int32_t>(n->inputs.size()) : 0; }
baton_tensor* node_input(const baton_node* n, int32_t i) {
  return n && i >= 0 && static_cast<size_t>(i) < n->inputs.size() ? n->inputs[i] : nullptr;
}
int32_t node_output_count(const baton_node* n) { return n ? static_cast<int32_t>(n->outputs.size()) : 0; }
baton_tensor* node_output(const baton_node* n, int32_t i) {
  return n && i >= 0 && static_cast<size_t>(i) < n->outputs.size() ? n->outputs[i] : nullptr;
}
int32_t node_intermediate_count(const baton_node* n) { return n ? static_cast<int32_t>(n->intermediates.size()) : 0; }
baton_tensor* node_intermediate(const baton_node* n, int32_t i) {
  return n && i >= 0 && static_cast<size_t>(i) < n->intermediates.size() ? n->intermediates[i] : nullptr;
}
const baton_builtin_options* node_builtin_options(const baton_node* n) {
  static const baton_builtin_options none{sizeof(baton_builtin_options), 0, {}};
  return n ? &n->options : &none;
}
const uint8_t* node_custom_options(const baton_node* n, size_t* size) {
  if (size) *size = n ? n->custom_options.size() : 0;
  return n && !n->custom_options.empty() ? n->custom_options.data() : nullptr;
}
int32_t tensor_index(const baton_tensor* t) { return t ? t->index : -1; }
const char* tensor_name(const baton_tensor* t) { return t ? t->name.c_str() : ""; }
baton_tensor_type tensor_type(const baton_tensor* t) { return t ? t->type : BATON_TYPE_FLOAT32; }
int32_t tensor_shape(const baton_tensor* t, const int32_t** dims) {
  if (dims) *dims = t ? t->dims.data() : nullptr;
  return t ? static_cast<int32_t>(t->dims.size()) : 0;
}
size_t tensor_byte_size(const baton_tensor* t) { return t ? t->bytes : 0; }
int32_t tensor_is_constant(const baton_tensor* t) { return t && t->constant; }
const void* tensor_data(const baton_tensor* t) {
  if (!t) return nullptr;
  return t->constant ? t->constant_data : t->data;
}
void* tensor_mutable_data(baton_tensor* t) { return t && !t->constant ? t->data : nullptr; }
void tensor_quantization(const baton_tensor* t, baton_quantization* out) {
  if (!out) return;
  const size_t size = out->struct_size ? out->struct_size : sizeof(baton_quantization);
  baton_quantization q{};
  q.struct_size = sizeof q;
  if (t && !t->scales.empty()) {
    q.scale_count = static_cast<int32_t>(t->scales.size());
    q.scales = t->scales.data();
    q.zero_points = t->zero_points.empty() ? nullptr : t->zero_points.data();
    q.quantized_dimension = t->quantized_dimension;
  }
  if (t && t->block_size > 0) {
    q.block_size = t->block_size;
    q.block_scale_type = t->block_scale_type;
    q.block_scale_count = static_cast<int32_t>(t->block_scales.size() / (t->block_scale_type == BATON_TYPE_FLOAT16 ? 2 : 4));
    q.block_scales = t->block_scales.data();
  }
  std::memcpy(out, &q, std::min(size, sizeof q));
  out->struct_size = size;
}

size_t element_size(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_FLOAT64: case BATON_TYPE_INT64: case BATON_TYPE_UINT64: case BATON_TYPE_COMPLEX64: return 8;
    case BATON_TYPE_COMPLEX128: return 16;
    case BATON_TYPE_FLOAT32: case BATON_TYPE_INT32: case BATON_TYPE_UINT32: return 4;
    case BATON_TYPE_FLOAT16: case BATON_TYPE_INT16: case BATON_TYPE_UINT16: case BATON_TYPE_BFLOAT16: return 2;
    default: return 1;
  }
}

baton_status tensor_set_shape(baton_tensor* t, int32_t rank, const int32_t* dims, baton_error* error) {
  if (!t || !t->shape_writable) {
    error_set(error, "tensor_set_shape: only the outputs of the node or partition being prepared");
    return BATON_INVALID_ARGUMENT;
  }
  if (rank < 0 || rank > 16 || (rank > 0 && !dims)) {
    error_set(error, "tensor_set_shape: bad rank");
    return BATON_INVALID_ARGUMENT;
  }
  size_t count = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      error_set(error, "tensor_set_shape: negative dimension");
      return BATON_INVALID_ARGUMENT;
    }
    count *= static_cast<size_t>(dims[i]);
  }
  t->dims.assign(dims, dims + rank);
  t->bytes = count * element_size(t->type);
  t->shape_set = true;
  return BATON_OK;
}
baton_status tensor_set_dynamic(baton_tensor* t, baton_error* error) {
  if (!t || !t->shape_writable) {
    error_set(error, "tensor_set_dynamic: only the outputs of the node being prepared");
    return BATON_INVALID_ARGUMENT;
  }
  t->dynamic = true;
  return BATON_OK;
}

int32_t partition_id(const baton_partition* p) { return p ? p->id : -1; }
int32_t partition_node_count(const baton_partition* p) { return p ? static_cast<int32_t>(p->nodes.size()) : 0; }
const baton_node* partition_node(const baton_partition* p, int32_t i) {
  return p && i >= 0 && static_cast<size_t>(i) < p->nodes.size() ? p->nodes[i] : nullptr;
}
int32_t partition_input_count(const baton_partition* p) { return p ? static_cast<int32_t>(p->inputs.size()) : 0; }
baton_tensor* partition_input(const baton_partition* p, int32_t i) {
  return p && i >= 0 && static_cast<size_t>(i) < p->inputs.size() ? p->inputs[i] : nullptr;
}
int32_t partition_output_count(const baton_partition* p) { return p ? static_cast<int32_t>(p->outputs.size()) : 0; }
baton_tensor* partition_output(const baton_partition* p, int32_t i) {
  return p && i >= 0 && static_cast<size_t>(i) < p->outputs.size() ? p->outputs[i] : nullptr;
}
const char* plugin_path(const baton_plugin_host* host) { return instance_of(host).plugin_path.c_str(); }
int32_t option_entry(const baton_plugin_host* host, int32_t i, const char** name, const char** value) {
  const auto& options = instance_of(host).options;
  if (i < 0 || static_cast<size_t>(i) >= options.size()) return 0;
  auto it = std::next(options.begin(), i);
  if (name) *name = it->first.c_str();
  if (value) *value = it->second.c_str();
  return 1;
}
int32_t file_exports_symbol(const char* path, const char* symbol) {
  if (!path || !symbol) return -1;
  const std::optional<bool> has = elf_exports_symbol(path, symbol);
  return has ? (*has ? 1 : 0) : -1;
}
int32_t graph_node_count(const baton_graph* g) { return g ? static_cast<int32_t>(g->nodes.size()) : 0; }
const baton_node* graph_node(const baton_graph* g, int32_t i) {
  return g && i >= 0 && static_cast<size_t>(i) < g->nodes.size() ? g->nodes[i] : nullptr;
}
int32_t graph_tensor_count(const baton_graph* g) { return g ? static_cast<int32_t>(g->tensors.size()) : 0; }
baton_tensor* graph_tensor(const baton_graph* g, int32_t i) {
  return g && i >= 0 && static_cast<size_t>(i) < g->tensors.size() ? g->tensors[i] : nullptr;
}
void* partition_selection(const baton_partition* p) { return p ? p->selection : nullptr; }

// The arena the host shares with this process holds its tensors; scratch placed there is not sent over
// in this version, so an isolated delegate keeps scratch of its own.
baton_status partition_request_scratch(const baton_partition*, size_t, baton_error* error) {
  error_set(error, "an isolated plugin gets no scratch in the host's arena; it keeps memory of its own");
  return BATON_UNSUPPORTED;
}
void* partition_scratch(const baton_partition*) { return nullptr; }
baton_status node_request_scratch(const baton_node*, size_t, baton_error* error) {
  error_set(error, "an isolated plugin gets no scratch in the host's arena; it keeps memory of its own");
  return BATON_UNSUPPORTED;
}
void* node_scratch(const baton_node*) { return nullptr; }
// Advice only; this process's constants are the host's mapping or copies, left as they are in this version.
void tensor_release_constant(const baton_tensor*) {}
// The node-by-node reasons of a selection stay in this process in this version: the call's message counts.
void graph_refuse_node(const baton_graph*, int32_t, const char*) {}
// Whether a node outside the partition reads an input is not sent over: the plugin computes beside it.
int32_t partition_input_reusable(const baton_partition*, int32_t) { return 0; }

// A string tensor's contents (and so its byte size) are not sent over in this version.
baton_status tensor_set_byte_size(baton_tensor*, size_t, baton_error* error) {
  error_set(error, "string tensors are not supported for a plugin in a process of its own");
  return BATON_UNSUPPORTED;
}

// The child runs one plugin (and what it wraps), so it shares only with itself; the objects live until the
// process ends (it leaves with _exit once the host closes the socket), so they are never destroyed here.
void* shared_object(const baton_plugin_host*, const char* key, void* (*create)(void*), void (*)(void*), void* context) {
  static std::mutex mutex;
  static auto* objects = new std::map<std::string, void*>;
  if (!key) return nullptr;
  std::lock_guard<std::mutex> hold(mutex);
  if (auto it = objects->find(key); it != objects->end()) return it->second;
  void* object = create ? create(context) : nullptr;
  if (object) (*objects)[key] = object;
  return object;
}

const baton_host_api* host_table() {
  static const baton_host_api api = [] {
    baton_host_api a{};
    a.struct_size = sizeof a;
    a.abi_major = BATON_ABI_VERSION_MAJOR;
    a.abi_minor = BATON_ABI_VERSION_MINOR;
    a.error_set = error_set;
    a.log = log_line;
    a.option_string = option_string;
    a.option_int = option_int;
    a.option_float = option_float;
    a.option_bool = option_bool;
    a.thread_count = thread_count;
    a.node_index = node_index;
    a.node_builtin_code = node_builtin_code;
    a.node_custom_name = node_custom_name;
    a.node_version = node_version;
    a.node_input_count = node_input_count;
    a.node_input = node_input;
    a.node_output_count = node_output_count;
    a.node_output = node_output;
    a.node_builtin_options = node_builtin_options;
    a.node_custom_options = node_custom_options;
    a.tensor_index = tensor_index;
    a.tensor_name = tensor_name;
    a.tensor_type = tensor_type;
    a.tensor_shape = tensor_shape;
    a.tensor_byte_size = tensor_byte_size;
    a.tensor_is_constant = tensor_is_constant;
    a.tensor_data = tensor_data;
    a.tensor_mutable_data = tensor_mutable_data;
    a.tensor_quantization = tensor_quantization;
    a.tensor_set_shape = tensor_set_shape;
    a.partition_id = partition_id;
    a.partition_node_count = partition_node_count;
    a.partition_node = partition_node;
    a.partition_input_count = partition_input_count;
    a.partition_input = partition_input;
    a.partition_output_count = partition_output_count;
    a.partition_output = partition_output;
    a.plugin_path = plugin_path;
    a.option_entry = option_entry;
    a.file_exports_symbol = file_exports_symbol;
    a.graph_node_count = graph_node_count;
    a.graph_node = graph_node;
    a.graph_tensor_count = graph_tensor_count;
    a.graph_tensor = graph_tensor;
    a.partition_selection = partition_selection;
    a.tensor_set_dynamic = tensor_set_dynamic;
    a.node_intermediate_count = node_intermediate_count;
    a.node_intermediate = node_intermediate;
    a.shared_object = shared_object;
    a.partition_request_scratch = partition_request_scratch;
    a.partition_scratch = partition_scratch;
    a.tensor_set_byte_size = tensor_set_byte_size;
    a.partition_input_reusable = partition_input_reusable;
    a.node_request_scratch = node_request_scratch;
    a.node_scratch = node_scratch;
    a.tensor_release_constant = tensor_release_constant;
    a.graph_refuse_node = graph_refuse_node;
    return a;
  }();
  return &api;
}

const baton_plugin_host* handle_of(Instance& instance) { return reinterpret_cast<const baton_plugin_host*>(&instance); }

// ---- reading what the host sent ----

// Reads a group; false (with the reason) when the message is malformed.
bool read_group(Reader& r, Group& g, std::string& why) {
  const uint32_t tensor_count = r.get<uint32_t>();
  if (tensor_count > 10000000) return why = "implausible tensor count", false;
  for (uint32_t i = 0; i < tensor_count && !r.failed(); ++i) {
    auto t = std::make_unique<baton_tensor>();
    t->index = r.get<int32_t>();
    t->name = r.get_string();
    t->type = static_cast<baton_tensor_type>(r.get<int32_t>());
    t->dims = r.get_vector<int32_t>();
    t->bytes = r.get<uint64_t>();
    t->constant = r.get<int32_t>() != 0;
    t->scales = r.get_vector<float>();
    t->zero_points = r.get_vector<int64_t>();
    t->quantized_dimension = r.get<int32_t>();
    t->block_size = r.get<int32_t>();
    t->block_scale_type = static_cast<baton_tensor_type>(r.get<int32_t>());
    t->block_scales = r.get_vector<uint8_t>();
    const uint8_t kind = r.get<uint8_t>();
    if (kind == 1) {
      const uint64_t id = r.get<uint64_t>(), offset = r.get<uint64_t>();
      auto b = child().blocks.find(id);
      if (b == child().blocks.end() || offset + t->bytes > b->second.size) return why = "constant outside its block", false;
      t->constant_data = b->second.base + offset;
    } else if (kind == 2) {
      size_t n = 0;
      const uint8_t* bytes = r.get_bytes(&n);
      // Kernels may read constants with vector loads: 64-byte aligned, like the host's.
      t->inline_data.resize(n + 64);
      auto* at = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(t->inline_data.data()) + 63) & ~uintptr_t{63});
      if (n) std::memcpy(at, bytes, n);
      t->constant_data = at;
    }
    g.tensors.push_back(t.get());
    g.owned_tensors.push_back(std::move(t));
  }
  auto slot = [&](int32_t s) -> baton_tensor* {
    return s >= 0 && static_cast<size_t>(s) < g.tensors.size() ? g.tensors[s] : nullptr;
  };
  const uint32_t node_count = r.get<uint32_t>();
  if (node_count > 10000000) return why = "implausible node count", false;
  for (uint32_t i = 0; i < node_count && !r.failed(); ++i) {
    auto n = std::make_unique<baton_node>();
    n->index = r.get<int32_t>();
    n->code = r.get<int32_t>();
    n->custom_name = r.get_string();
    n->version = r.get<int32_t>();
    for (int32_t s : r.get_vector<int32_t>()) n->inputs.push_back(slot(s));
    for (int32_t s : r.get_vector<int32_t>()) n->outputs.push_back(slot(s));
    size_t size = 0;
    const uint8_t* options = r.get_bytes(&size);
    if (options) std::memcpy(&n->options, options, std::min(size, sizeof n->options));
    n->options.struct_size = sizeof n->options;
    n->option_array = r.get_vector<int32_t>();
    if (n->code == BATON_OP_RESHAPE && n->options.u.reshape.new_shape_count > 0) {
      n->options.u.reshape.new_shape = n->option_array.data();
      n->options.u.reshape.new_shape_count = static_cast<int32_t>(n->option_array.size());
    } else if (n->code == BATON_OP_SQUEEZE) {
      n->options.u.squeeze.squeeze_dims = n->option_array.data();
      n->options.u.squeeze.squeeze_dims_count = static_cast<int32_t>(n->option_array.size());
    } else if (n->code == BATON_OP_BUCKETIZE) {  // float bit patterns
      static_assert(sizeof(float) == sizeof(int32_t));
      n->options.u.bucketize.boundaries = reinterpret_cast<const float*>(n->option_array.data());
      n->options.u.bucketize.boundaries_count = static_cast<int32_t>(n->option_array.size());
    } else {
      isolation::unpack_int64_option_arrays(n->options, n->option_array);
    }
    n->custom_options = r.get_vector<uint8_t>();
    for (int32_t s : r.get_vector<int32_t>()) n->intermediates.push_back(slot(s));
    g.nodes.push_back(n.get());
    g.owned_nodes.push_back(std::move(n));
  }
  if (r.failed()) return why = "truncated group", false;
  return true;
}

std::vector<baton_tensor*> read_slots(Reader& r, Group& g) {
  std::vector<baton_tensor*> out;
  for (int32_t s : r.get_vector<int32_t>()) {
    if (s >= 0 && static_cast<size_t>(s) < g.tensors.size()) out.push_back(g.tensors[s]);
  }
  return out;
}

// Shapes sent before a prepare; the outputs of the group become writable for it.
void read_shapes(Reader& r, Group& g, bool partition) {
  const uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n && !r.failed(); ++i) {
    const int32_t s = r.get<int32_t>();
    std::vector<int32_t> dims = r.get_vector<int32_t>();
    const uint64_t bytes = r.get<uint64_t>();
    if (s < 0 || static_cast<size_t>(s) >= g.tensors.size()) continue;
    g.tensors[s]->dims = std::move(dims);
    g.tensors[s]->bytes = bytes;
  }
  for (auto& t : g.tensors) {
    t->shape_writable = false;
    t->shape_set = false;
    t->dynamic = false;
    t->data = nullptr;
  }
  if (partition) {
    for (baton_tensor* t : g.partition.outputs) t->shape_writable = true;
  } else {
    for (baton_tensor* t : g.nodes[0]->outputs) if (t) t->shape_writable = true;
  }
}

void write_shapes(Writer& w, Group& g) {
  uint32_t n = 0;
  for (auto& t : g.tensors) n += t->shape_set;
  w.put(n);
  for (size_t s = 0; s < g.tensors.size(); ++s) {
    if (!g.tensors[s]->shape_set) continue;
    w.put<int32_t>(static_cast<int32_t>(s));
    w.put_vector(g.tensors[s]->dims);
  }
  std::vector<int32_t> dynamic;
  for (size_t s = 0; s < g.tensors.size(); ++s) {
    if (g.tensors[s]->dynamic) dynamic.push_back(static_cast<int32_t>(s));
    g.tensors[s]->shape_writable = false;
  }
  w.put_vector(dynamic);
}

bool read_places(Reader& r, Group& g, std::string& why) {
  const uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n && !r.failed(); ++i) {
    const int32_t s = r.get<int32_t>();
    const uint64_t id = r.get<uint64_t>(), offset = r.get<uint64_t>();
    if (s < 0 || static_cast<size_t>(s) >= g.tensors.size()) return why = "bad tensor slot", false;
    auto b = child().blocks.find(id);
    baton_tensor* t = g.tensors[s];
    if (b == child().blocks.end() || offset + t->bytes > b->second.size) {
      return why = "tensor " + std::to_string(t->index) + " outside its shared block", false;
    }
    t->data = b->second.base + offset;
  }
  return !r.failed() || (why = "truncated places", false);
}

Group* find_group(uint64_t handle) {
  auto it = child().groups.find(handle);
  return it == child().groups.end() ? nullptr : it->second.get();
}

}  // namespace baton::isolation
