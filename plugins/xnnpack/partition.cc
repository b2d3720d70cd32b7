#include "partition.h"

#include <dlfcn.h>

#include <unordered_map>
#include <unordered_set>

#include "baton/tflite_ops.h"
#include "ops.h"
#include "subgraph_builder.h"

namespace baton::xnnpack {

PluginState::~PluginState() {
  if (initialized) xnn_deinitialize();
}

namespace {

struct SubgraphDeleter {
  void operator()(xnn_subgraph_t s) const { xnn_delete_subgraph(s); }
};
using SubgraphPtr = std::unique_ptr<xnn_subgraph, SubgraphDeleter>;

std::string node_label(const baton_host_api* api, const baton_node* node) {
  const OpDef* def = find_op(api, node);
  return "node " + std::to_string(api->node_index(node)) + " " + (def ? def->name : "?");
}

// Tensors that stay XNNPACK's own values instead of going to the scratch in the host's arena, because
// XNNPACK removes them when they are its own (its subgraph optimisation skips external values):
//  - a tensor that only a RELU, RELU6 or RELU_N1_TO_1 of the partition reads: the clamp is fused into the
//    node that writes it;
//  - a PAD or PADV2 output that only a CONV_2D or DEPTHWISE_CONV_2D reads: a zero spatial pad becomes
//    the convolution's own padding (MediaPipe's models pad before their stride-2 convolutions).
// A kept tensor XNNPACK does not remove costs nothing more than before: it lives in XNNPACK's memory.
std::unordered_set<int32_t> kept_internal(const baton_host_api* api, const baton_partition* partition) {
  std::unordered_map<int32_t, int> readers;
  std::unordered_map<int32_t, int32_t> reader_op;  // the op of a tensor's (last) reader
  std::unordered_set<int32_t> kept, padded;
  for (int32_t n = 0; n < api->partition_node_count(partition); ++n) {
    const baton_node* node = api->partition_node(partition, n);
    const int32_t code = api->node_builtin_code(node);
    for (int32_t i = 0; i < api->node_input_count(node); ++i) {
      if (const baton_tensor* t = api->node_input(node, i)) {
        ++readers[api->tensor_index(t)];
        reader_op[api->tensor_index(t)] = code;
      }
    }
    if (is_clamp(code) && api->node_input_count(node) == 1) kept.insert(api->tensor_index(api->node_input(node, 0)));
    if ((code == BATON_OP_PAD || code == BATON_OP_PADV2) && api->node_output_count(node) == 1) {
      padded.insert(api->tensor_index(api->node_output(node, 0)));
    }
  }
  std::erase_if(kept, [&](int32_t t) { return readers[t] != 1; });
  for (int32_t t : padded) {
    const auto op = reader_op.find(t);
    if (readers[t] == 1 && op != reader_op.end() &&
        (op->second == BATON_OP_CONV_2D || op->second == BATON_OP_DEPTHWISE_CONV_2D)) {
      kept.insert(t);
    }
  }
  return kept;
}

}  // namespace

// XNNPACK (through cpuinfo) keeps what it learnt about the CPU in memory it never frees, and initialises
// once per load. Unloading it with this plugin would leak that memory at every reload (and leave LSan
// complaining), so once XNNPACK has started the two libraries stay loaded for the life of the process. A
// plugin parked before it started XNNPACK (it took no node) unloads them with itself.
static void pin_xnnpack() {
  for (const char* lib : {"libXNNPACK.so.0", "libcpuinfo.so.0"}) {
    (void)dlopen(lib, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // already loaded: only marks it
  }
}

void PluginState::start() {
  if (initialized) return;
  if (!unavailable.empty()) refuse(unavailable);
  pin_xnnpack();
  const xnn_status st = xnn_initialize(nullptr);
  if (st != xnn_status_success) {
    unavailable = "XNNPACK did not initialise (status " + std::to_string(st) +
                  (st == xnn_status_unsupported_hardware ? ": unsupported hardware)" : ")");
  } else if (!pool.start(api, host, threads)) {
    xnn_deinitialize();
    unavailable = "cannot start a pool of " + std::to_string(threads) + " threads";
  } else {
    initialized = true;
    api->log(host, BATON_LOG_DEBUG, ("XNNPACK started on " + std::to_string(threads) + " thread(s)").c_str());
    return;
  }
  api->log(host, BATON_LOG_WARNING, ("xnnpack: " + unavailable).c_str());
  refuse(unavailable);
}

std::string PluginState::quick_refusal(const baton_node* node) const {
  if (!find_op(api, node)) return "not an op this delegate declares";
  // A value (a non-constant input, or an output) of a type no op here takes, or 8-bit without the
  // `quantized` option. 8-bit constant weights of a float node are left to the op's check, which says that
  // XNNPACK has no dynamic-range quantization; other constants (shapes, axes, int32 biases) to theirs.
  auto refusal = [&](const baton_tensor* t, const std::string& role, bool value) -> std::string {
    const baton_tensor_type type = t ? api->tensor_type(t) : BATON_TYPE_FLOAT32;
    const bool eight_bit = type == BATON_TYPE_UINT8 || type == BATON_TYPE_INT8;
    if (type == BATON_TYPE_FLOAT32 || (eight_bit && quantized)) return "";
    const std::string what = std::string(baton_tensor_type_name(type)) + " " + role;
    if (eight_bit && value) return what + " (quantized nodes are taken only with the option quantized = true)";
    if (!eight_bit && value && !api->tensor_is_constant(t)) return what + " (float32, uint8 or int8 only)";
    return "";
  };
  for (int32_t i = 0; i < api->node_input_count(node); ++i) {
    const baton_tensor* t = api->node_input(node, i);
    const bool value = t && (i == 0 || !api->tensor_is_constant(t));
    if (std::string why = refusal(t, "input " + std::to_string(i), value); !why.empty()) return why;
  }
  for (int32_t i = 0; i < api->node_output_count(node); ++i) {
    if (std::string why = refusal(api->node_output(node, i), "output", true); !why.empty()) return why;
  }
  return "";
}

void PluginState::check(const baton_node* node) {
  const OpDef* def = find_op(api, node);
  if (!def) refuse("not an op this delegate declares");
  SubgraphPtr scratch;
  // The scratch subgraph (and XNNPACK) only once the op's checks ask for a value or a node.
  SubgraphBuilder builder(api, [&] {
    start();
    xnn_subgraph_t raw = nullptr;
    if (xnn_create_subgraph(0, 0, &raw) != xnn_status_success) refuse("cannot create an XNNPACK subgraph");
    scratch.reset(raw);
    return raw;
  }, true, true);
  def->define(builder, NodeView(api, node, quantized));
}

void Partition::plan_scratch(const std::vector<SubgraphBuilder::ScratchTensor>& tensors) {
  std::vector<kit::Lifetime> lives;
  scratch_ids_.clear();
  for (const SubgraphBuilder::ScratchTensor& t : tensors) {
    // XNNPACK's kernels may read a little past a tensor's end.
    lives.push_back({t.bytes + XNN_EXTRA_BYTES, t.written, std::max(t.written, t.last_read)});
    scratch_ids_.push_back(t.external_id);
  }
  scratch_offsets_ = kit::plan_offsets(lives, 64, &scratch_bytes_);
}

std::vector<Dims> Partition::input_shapes() const {
  const baton_host_api* api = plugin_.api;
  std::vector<Dims> shapes;
  for (int32_t i = 0; i < api->partition_input_count(partition_); ++i) {
    const int32_t* dims = nullptr;
    const int32_t rank = api->tensor_shape(api->partition_input(partition_, i), &dims);
    Dims d;
    for (int32_t k = 0; k < rank; ++k) d.push_back(dims[k] < 0 ? 0 : static_cast<size_t>(dims[k]));
    shapes.push_back(std::move(d));
  }
  return shapes;
}

void Partition::build(const baton_partition* partition) {
  partition_ = partition;
  const baton_host_api* api = plugin_.api;
  const int32_t inputs = api->partition_input_count(partition_);
  const int32_t outputs = api->partition_output_count(partition_);
  externals_.clear();
  for (int32_t i = 0; i < inputs; ++i) externals_.push_back(api->partition_input(partition_, i));
  for (int32_t i = 0; i < outputs; ++i) externals_.push_back(api->partition_output(partition_, i));

  // Every output of a node that is not a partition output may pass to a later node: ids for those.
  uint32_t inner = 0;
  for (int32_t n = 0; n < api->partition_node_count(partition_); ++n) {
    inner += static_cast<uint32_t>(api->node_output_count(api->partition_node(partition_, n)));
  }
  plugin_.start();
  xnn_subgraph_t raw = nullptr;
  if (xnn_create_subgraph(static_cast<uint32_t>(externals_.size()) + inner, 0, &raw) != xnn_status_success) {
    refuse("cannot create an XNNPACK subgraph");
  }
  SubgraphPtr subgraph(raw);
  // Shapes inside follow from the partition's current input shapes (check_node already made sure the ops
  // reproduce the model's shapes from the model's input shapes), so the same code serves a rebuild after
  // an input resize, or a first build after one.
  SubgraphBuilder builder(api, raw, false, false);
  builder.place_tensors_in_scratch(static_cast<uint32_t>(externals_.size()), inner, kept_internal(api, partition_));
  const std::vector<Dims> shapes = input_shapes();
  for (int32_t i = 0; i < inputs; ++i) {
    builder.add_external_input(externals_[i], shapes[i], static_cast<uint32_t>(i));
  }
  for (int32_t i = 0; i < outputs; ++i) {
    builder.add_external_output(externals_[inputs + i], static_cast<uint32_t>(inputs + i));
  }
  for (int32_t n = 0; n < api->partition_node_count(partition_); ++n) {
    const baton_node* node = api->partition_node(partition_, n);
    const OpDef* def = find_op(api, node);
    if (!def) refuse(node_label(api, node) + ": not an op this delegate declares");
    builder.begin_node(n);
    try {
      def->define(builder, NodeView(api, node, plugin_.quantized));
    } catch (const Refusal& r) {
      refuse(node_label(api, node) + ": " + r.what());
    }
  }
  std::vector<Dims> out_shapes;
  for (int32_t i = 0; i < outputs; ++i) {
    out_shapes.push_back(builder.dims(NodeView(api, api->partition_node(partition_, 0), plugin_.quantized), externals_[inputs + i]));
  }
  xnn_runtime_t runtime = nullptr;
  const xnn_status st = xnn_create_runtime_v2(raw, plugin_.pool.get(), plugin_.runtime_flags, &runtime);
  if (st != xnn_status_success) {
    refuse("XNNPACK could not create the runtime (status " + std::to_string(st) + ")");
  }
  runtime_.reset(runtime);
  // XNNPACK packed the weights of these ops into memory of its own when it created their operators.
  for (int32_t n = 0; n < api->partition_node_count(partition_); ++n) {
    const baton_node* node = api->partition_node(partition_, n);
    switch (api->node_builtin_code(node)) {
      case BATON_OP_CONV_2D:
      case BATON_OP_DEPTHWISE_CONV_2D:
      case BATON_OP_FULLY_CONNECTED:
      case BATON_OP_TRANSPOSE_CONV:
        if (api->node_input_count(node) > 1) kit::release_constant(api, api->node_input(node, 1));
        break;
    }
  }
  owned_data_ = builder.take_owned_data();
  plan_scratch(builder.scratch_tensors());
  built_input_shapes_ = shapes;
  output_shapes_ = std::move(out_shapes);
  bound_.clear();
  set_up_ = false;
}

baton_status Partition::prepare(const baton_partition* partition, baton_error* error) {
  const baton_host_api* api = plugin_.api;
  partition_ = partition;
  if (input_shapes() != built_input_shapes_) {
    try {
      build(partition);
    } catch (const Refusal& r) {
      api->error_set(error, (std::string("rebuilding for the new input shapes: ") + r.what()).c_str());
      return BATON_UNSUPPORTED;
    }
  }
  const size_t inputs = built_input_shapes_.size();
  for (size_t i = 0; i < output_shapes_.size(); ++i) {
    std::vector<int32_t> dims(output_shapes_[i].begin(), output_shapes_[i].end());
    const baton_status st =
        api->tensor_set_shape(externals_[inputs + i], static_cast<int32_t>(dims.size()), dims.data(), error);
    if (st != BATON_OK) return st;
  }
  scratch_.request(api, partition, scratch_bytes_);
  set_up_ = false;  // the host plans memory again after a prepare
  return BATON_OK;
}

baton_status Partition::invoke(baton_error* error) {
  const baton_host_api* api = plugin_.api;
  const size_t inputs = built_input_shapes_.size();
  bool moved = !set_up_;
  const size_t count = externals_.size() + scratch_ids_.size();
  if (bound_.size() != count) bound_.assign(count, {0, nullptr});
  for (size_t i = 0; i < externals_.size(); ++i) {
    void* data = i < inputs ? const_cast<void*>(api->tensor_data(externals_[i])) : api->tensor_mutable_data(externals_[i]);
    if (!data) {
      api->error_set(error, ("boundary tensor " + std::to_string(api->tensor_index(externals_[i])) + " has no memory").c_str());
      return BATON_ERROR;
    }
    if (bound_[i].data != data) moved = true;
    bound_[i] = {static_cast<uint32_t>(i), data};
  }
  if (!scratch_ids_.empty()) {
    uint8_t* base = scratch_.data(api, partition_);
    if (!base) {
      api->error_set(error, "the partition's scratch has no memory");
      return BATON_ERROR;
    }
    for (size_t k = 0; k < scratch_ids_.size(); ++k) {
      void* data = base + scratch_offsets_[k];
      xnn_external_value& b = bound_[externals_.size() + k];
      if (b.data != data) moved = true;
      b = {scratch_ids_[k], data};
    }
  }
  if (moved) {
    const xnn_status st = xnn_setup_runtime(runtime_.get(), bound_.size(), bound_.data());
    if (st != xnn_status_success) {
      set_up_ = false;
      api->error_set(error, ("xnn_setup_runtime failed (status " + std::to_string(st) + ")").c_str());
      return BATON_ERROR;
    }
    set_up_ = true;
  }
  const xnn_status st = xnn_invoke_runtime(runtime_.get());
  if (st != xnn_status_success) {
    api->error_set(error, ("xnn_invoke_runtime failed (status " + std::to_string(st) + ")").c_str());
    return BATON_ERROR;
  }
  return BATON_OK;
}

}  // namespace baton::xnnpack
