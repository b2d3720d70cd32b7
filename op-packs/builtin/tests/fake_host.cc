#include "tests/fake_host.h"

#include <dlfcn.h>

namespace baton::builtin::testing {
namespace {

size_t type_size(baton_tensor_type type) {
  switch (type) {
    case BATON_TYPE_FLOAT32: case BATON_TYPE_INT32: return 4;
    case BATON_TYPE_INT64: return 8;
    case BATON_TYPE_FLOAT16: case BATON_TYPE_INT16: return 2;
    default: return 1;
  }
}

size_t byte_size(const FakeTensor& t) {
  size_t n = 1;
  for (int32_t d : t.dims) n *= static_cast<size_t>(d);
  return n * type_size(t.type);
}

FakeTensor* T(const baton_tensor* t) { return reinterpret_cast<FakeTensor*>(const_cast<baton_tensor*>(t)); }
const FakeNode* N(const baton_node* n) { return reinterpret_cast<const FakeNode*>(n); }
baton_tensor* handle(FakeTensor* t) { return reinterpret_cast<baton_tensor*>(t); }

int64_t g_threads = 1;

const baton_host_api kApi = [] {
  baton_host_api api{};
  api.struct_size = sizeof(baton_host_api);
  api.abi_major = BATON_ABI_VERSION_MAJOR;
  api.abi_minor = BATON_ABI_VERSION_MINOR;
  api.error_set = [](baton_error* e, const char* m) {
    if (e) e->message = m;
  };
  api.log = [](const baton_plugin_host*, baton_log_level, const char*) {};
  api.option_string = [](const baton_plugin_host*, const char*, const char* fallback) { return fallback; };
  api.option_int = [](const baton_plugin_host*, const char* name, int64_t fallback) {
    return std::string(name) == "threads" ? g_threads : fallback;
  };
  api.option_float = [](const baton_plugin_host*, const char*, double fallback) { return fallback; };
  api.option_bool = [](const baton_plugin_host*, const char*, int32_t fallback) { return fallback; };
  api.thread_count = [](const baton_plugin_host*) { return static_cast<int32_t>(g_threads); };
  api.node_index = [](const baton_node* n) { return N(n)->index; };
  api.node_builtin_code = [](const baton_node* n) { return N(n)->code; };
  api.node_custom_name = [](const baton_node*) -> const char* { return nullptr; };
  api.node_version = [](const baton_node* n) { return N(n)->version; };
  api.node_input_count = [](const baton_node* n) { return static_cast<int32_t>(N(n)->inputs.size()); };
  api.node_input = [](const baton_node* n, int32_t i) -> baton_tensor* {
    const int32_t t = N(n)->inputs[i];
    return t < 0 ? nullptr : handle(&N(n)->graph->tensors[t]);
  };
  api.node_output_count = [](const baton_node* n) { return static_cast<int32_t>(N(n)->outputs.size()); };
  api.node_output = [](const baton_node* n, int32_t i) { return handle(&N(n)->graph->tensors[N(n)->outputs[i]]); };
  api.node_builtin_options = [](const baton_node* n) { return &N(n)->options; };
  api.node_custom_options = [](const baton_node*, size_t* size) -> const uint8_t* {
    *size = 0;
    return nullptr;
  };
  api.tensor_index = [](const baton_tensor* t) { return T(t)->index; };
  api.tensor_name = [](const baton_tensor*) { return "t"; };
  api.tensor_type = [](const baton_tensor* t) { return T(t)->type; };
  api.tensor_shape = [](const baton_tensor* t, const int32_t** dims) {
    *dims = T(t)->dims.data();
    return static_cast<int32_t>(T(t)->dims.size());
  };
  api.tensor_byte_size = [](const baton_tensor* t) { return byte_size(*T(t)); };
  api.tensor_is_constant = [](const baton_tensor* t) { return T(t)->constant ? 1 : 0; };
  api.tensor_data = [](const baton_tensor* t) -> const void* {
    if (!T(t)->constant && T(t)->graph->preparing) return nullptr;
    return T(t)->data.data();
  };
  api.tensor_mutable_data = [](baton_tensor* t) -> void* {
    if (T(t)->constant || T(t)->graph->preparing) return nullptr;
    return T(t)->data.data();
  };
  api.tensor_quantization = [](const baton_tensor* t, baton_quantization* q) {
    q->scale_count = static_cast<int32_t>(T(t)->scales.size());
    q->scales = T(t)->scales.data();
    q->zero_points = T(t)->zero_points.empty() ? nullptr : T(t)->zero_points.data();
    q->quantized_dimension = T(t)->quantized_dimension;
  };
  api.tensor_set_shape = [](baton_tensor* t, int32_t rank, const int32_t* dims, baton_error* e) {
    if (T(t)->constant) {
      if (e) e->message = "cannot reshape a constant";
      return BATON_INVALID_ARGUMENT;
    }
    T(t)->dims.assign(dims, dims + rank);
    T(t)->data.assign(byte_size(*T(t)), 0xAB);  // garbage, so a kernel that skips an element shows
    return BATON_OK;
  };
  api.tensor_set_dynamic = [](baton_tensor* t, baton_error* e) {
    if (T(t)->constant) {
      if (e) e->message = "cannot make a constant dynamic";
      return BATON_INVALID_ARGUMENT;
    }
    T(t)->dynamic = true;
    return BATON_OK;
  };
  return api;
}();

}  // namespace

int FakeGraph::add_tensor(baton_tensor_type type, std::vector<int32_t> dims, const void* data, bool constant) {
  FakeTensor t;
  t.graph = this;
  t.index = static_cast<int32_t>(tensors.size());
  t.type = type;
  t.dims = std::move(dims);
  t.constant = constant;
  t.data.resize(byte_size(t));
  if (data && !t.data.empty()) std::memcpy(t.data.data(), data, t.data.size());
  tensors.push_back(std::move(t));
  return tensors.back().index;
}

FakeNode& FakeGraph::add_node(int32_t code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                              int32_t version) {
  FakeNode n;
  n.graph = this;
  n.index = static_cast<int32_t>(nodes.size());
  n.code = code;
  n.version = version;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.options.struct_size = sizeof(baton_builtin_options);
  nodes.push_back(n);
  return nodes.back();
}

FakeHost::FakeHost(const char* path, int64_t threads, uint32_t host_abi_minor) {
  g_threads = threads;
  library_ = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    load_error_.message = dlerror();
    return;
  }
  auto entry = reinterpret_cast<baton_plugin_entry_fn>(dlsym(library_, BATON_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    load_error_.message = "no entry point";
    return;
  }
  desc_ = entry(BATON_ABI_VERSION_MAJOR, host_abi_minor, &kApi, &load_error_);
  if (desc_ && desc_->create(nullptr, &plugin_state_, &load_error_) != BATON_OK) desc_ = nullptr;
}

FakeHost::~FakeHost() {
  if (desc_) desc_->destroy(plugin_state_);
  if (library_) dlclose(library_);
}

baton_status FakeHost::run(FakeGraph& graph, std::string* error) {
  struct Bound {
    const baton_kernel* kernel;
    void* state;
    const baton_node* node;
  };
  std::vector<Bound> bound;
  baton_status status = BATON_OK;
  baton_error e;
  for (FakeNode& node : graph.nodes) {
    const baton_node* handle = reinterpret_cast<const baton_node*>(&node);
    const baton_kernel* kernel = nullptr;
    for (size_t i = 0; i < desc_->op_count; ++i) {
      const baton_op_decl& d = desc_->ops[i];
      if (d.builtin_code == node.code && node.version >= d.min_version && node.version <= d.max_version) {
        kernel = d.kernel;
      }
    }
    if (!kernel) {
      e.message = "no kernel for op " + std::to_string(node.code) + " v" + std::to_string(node.version);
      status = BATON_UNSUPPORTED;
      break;
    }
    void* state = nullptr;
    status = kernel->init(plugin_state_, handle, &state, &e);
    if (status != BATON_OK) break;
    bound.push_back({kernel, state, handle});
    graph.preparing = true;
    status = kernel->prepare(plugin_state_, state, handle, &e);
    graph.preparing = false;
    if (status != BATON_OK) break;
    bool dynamic = false;
    for (int32_t out : node.outputs) dynamic = dynamic || graph.tensors[out].dynamic;
    if (dynamic) status = kernel->prepare(plugin_state_, state, handle, &e);  // with the values, as at invoke
    if (status != BATON_OK) break;
    status = kernel->invoke(plugin_state_, state, handle, &e);
    if (status != BATON_OK) break;
  }
  for (const Bound& b : bound) b.kernel->free(plugin_state_, b.state);
  if (error) *error = e.message;
  return status;
}

}  // namespace baton::builtin::testing
