// A delegate for the delegate-chain tests that computes with the builtin pack's kernels (the static
// library op-packs/builtin/kernels, linked in) through its own code: it takes the ops its `ops` option
// names, of CONV_2D, DEPTHWISE_CONV_2D, ADD, SUB, MUL, MINIMUM, MAXIMUM, RELU, RELU6, LOGISTIC, TANH,
// HARD_SWISH and RESHAPE, float32 with static shapes. Each partition owns its intermediate tensors (the
// host gives memory only to the boundary), packs convolution filters once at init and runs its nodes in
// order at invoke. Its outputs must equal the builtin pack's, which runs the same kernels.
//
// It is a test plugin, built against plugin_api.h like any third party's: it links no baton library.
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/tflite_ops.h"
#include "kernels/binary.h"
#include "kernels/common.h"
#include "kernels/conv.h"
#include "kernels/depthwise_conv.h"
#include "kernels/unary.h"

namespace {

namespace bk = baton::builtin;

const baton_host_api* api = nullptr;

struct OpName {
  int32_t code;
  const char* name;
};
constexpr OpName kOps[] = {{BATON_OP_CONV_2D, "CONV_2D"},   {BATON_OP_DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D"},
                           {BATON_OP_ADD, "ADD"},          {BATON_OP_SUB, "SUB"},
                           {BATON_OP_MUL, "MUL"},          {BATON_OP_MINIMUM, "MINIMUM"},
                           {BATON_OP_MAXIMUM, "MAXIMUM"},  {BATON_OP_RELU, "RELU"},
                           {BATON_OP_RELU6, "RELU6"},      {BATON_OP_LOGISTIC, "LOGISTIC"},
                           {BATON_OP_TANH, "TANH"},        {BATON_OP_HARD_SWISH, "HARD_SWISH"},
                           {BATON_OP_RESHAPE, "RESHAPE"}};

const char* name_of(int32_t code) {
  for (const OpName& o : kOps) {
    if (o.code == code) return o.name;
  }
  return "?";
}

struct PluginState {
  std::string ops;  // comma-separated op names
  bool takes(int32_t code) const {
    const std::string name = name_of(code);
    size_t at = 0;
    while ((at = ops.find(name, at)) != std::string::npos) {
      const bool starts = at == 0 || ops[at - 1] == ',' || ops[at - 1] == ' ';
      const size_t end = at + name.size();
      if (starts && (end == ops.size() || ops[end] == ',' || ops[end] == ' ')) return true;
      at = end;
    }
    return false;
  }
};

std::vector<int32_t> shape_of(const baton_tensor* t) {
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(t, &dims);
  return std::vector<int32_t>(dims, dims + rank);
}

size_t count_of(const std::vector<int32_t>& shape) {
  size_t n = 1;
  for (int32_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

bk::ActivationRange range_of(int32_t activation) {
  bk::ActivationRange r;
  if (activation == BATON_ACT_RELU) r.lo = 0;
  if (activation == BATON_ACT_RELU6) r = {0, 6};
  if (activation == BATON_ACT_RELU_N1_TO_1) r = {-1, 1};
  return r;
}

// Why the delegate will not take `node`, or "" when it takes it.
std::string refusal(const PluginState& s, const baton_node* node) {
  const int32_t code = api->node_builtin_code(node);
  if (!s.takes(code)) return "not in this delegate's ops option";
  for (int32_t i = 0; i < api->node_input_count(node); ++i) {
    const baton_tensor* t = api->node_input(node, i);
    if (!t) continue;
    if (code == BATON_OP_RESHAPE && i == 1) continue;  // the new shape
    if (api->tensor_type(t) != BATON_TYPE_FLOAT32) return std::string(baton_tensor_type_name(api->tensor_type(t))) + " input";
  }
  if (api->node_output_count(node) != 1 || api->tensor_type(api->node_output(node, 0)) != BATON_TYPE_FLOAT32) {
    return "not one float32 output";
  }
  const baton_builtin_options& o = *api->node_builtin_options(node);
  if (code == BATON_OP_CONV_2D || code == BATON_OP_DEPTHWISE_CONV_2D) {
    if (api->node_input_count(node) < 2 || !api->tensor_is_constant(api->node_input(node, 1))) return "non-constant filter";
    if (shape_of(api->node_input(node, 0)).size() != 4) return "input is not NHWC";
    if (o.u.conv.activation == BATON_ACT_TANH || o.u.conv.activation == BATON_ACT_SIGN_BIT) return "fused activation";
  }
  if ((code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL) &&
      (o.u.elementwise.activation == BATON_ACT_TANH || o.u.elementwise.activation == BATON_ACT_SIGN_BIT)) {
    return "fused activation";
  }
  return "";
}

int32_t check_node(void* plugin_state, const baton_node* node, baton_error* reason) {
  try {
    const std::string why = refusal(*static_cast<PluginState*>(plugin_state), node);
    if (why.empty()) return 1;
    api->error_set(reason, why.c_str());
  } catch (const std::exception& e) {
    api->error_set(reason, e.what());
  }
  return 0;
}

// One node of a partition, ready to run: where its operands live and what the kernel needs.
struct Step {
  int32_t code = 0;
  std::vector<int32_t> inputs;  // tensor indices (-1 for an omitted bias)
  int32_t output = -1;
  bk::ConvParams conv;
  bk::DepthwiseParams depthwise;
  std::vector<float> packed_filter, scratch;
  bk::BroadcastPlan broadcast;
  bk::ActivationRange range;
  size_t count = 0;  // output elements
};

struct PartitionState {
  std::vector<Step> steps;
  std::map<int32_t, std::vector<float>> owned;         // intermediate tensors, by index
  std::map<int32_t, baton_tensor*> boundary;           // partition inputs and outputs, by index
  std::map<int32_t, const baton_tensor*> constants;    // constants the nodes read
  std::map<int32_t, std::vector<int32_t>> out_shapes;  // partition outputs' shapes

  const float* read(int32_t index) {
    if (index < 0) return nullptr;
    if (auto it = owned.find(index); it != owned.end()) return it->second.data();
    if (auto it = constants.find(index); it != constants.end()) return static_cast<const float*>(api->tensor_data(it->second));
    return static_cast<const float*>(api->tensor_data(boundary.at(index)));
  }
  float* write(int32_t index) {
    if (auto it = owned.find(index); it != owned.end()) return it->second.data();
    return static_cast<float*>(api->tensor_mutable_data(boundary.at(index)));
  }
};

Step make_step(const baton_node* node) {
  Step s;
  s.code = api->node_builtin_code(node);
  for (int32_t i = 0; i < api->node_input_count(node); ++i) {
    const baton_tensor* t = api->node_input(node, i);
    s.inputs.push_back(t ? api->tensor_index(t) : -1);
  }
  const baton_tensor* out = api->node_output(node, 0);
  s.output = api->tensor_index(out);
  const std::vector<int32_t> out_shape = shape_of(out);
  s.count = count_of(out_shape);
  const baton_builtin_options& o = *api->node_builtin_options(node);
  if (s.code == BATON_OP_CONV_2D || s.code == BATON_OP_DEPTHWISE_CONV_2D) {
    const std::vector<int32_t> in = shape_of(api->node_input(node, 0));
    const std::vector<int32_t> f = shape_of(api->node_input(node, 1));
    const bk::Padding padding = o.u.conv.padding == BATON_PADDING_SAME ? bk::Padding::kSame : bk::Padding::kValid;
    if (s.code == BATON_OP_CONV_2D) {
      bk::ConvParams& p = s.conv;
      p.batch = in[0], p.in_h = in[1], p.in_w = in[2], p.in_c = in[3];
      p.out_c = f[0], p.filter_h = f[1], p.filter_w = f[2];
      p.stride_h = o.u.conv.stride_h, p.stride_w = o.u.conv.stride_w;
      p.dilation_h = o.u.conv.dilation_h, p.dilation_w = o.u.conv.dilation_w;
      p.range = range_of(o.u.conv.activation);
      bk::conv_compute_geometry(padding, p);
      s.packed_filter.resize(bk::conv_packed_filter_size(p));
      bk::conv_pack_filter(p, static_cast<const float*>(api->tensor_data(api->node_input(node, 1))), s.packed_filter.data());
      s.scratch.resize(bk::conv_scratch_size(p, 1));
    } else {
      bk::DepthwiseParams& p = s.depthwise;
      p.batch = in[0], p.in_h = in[1], p.in_w = in[2], p.in_c = in[3];
      p.depth_multiplier = f[3] / in[3];
      p.filter_h = f[1], p.filter_w = f[2];
      p.stride_h = o.u.conv.stride_h, p.stride_w = o.u.conv.stride_w;
      p.dilation_h = o.u.conv.dilation_h, p.dilation_w = o.u.conv.dilation_w;
      p.range = range_of(o.u.conv.activation);
      bk::depthwise_compute_geometry(padding, p);
    }
  } else if (s.code == BATON_OP_ADD || s.code == BATON_OP_SUB || s.code == BATON_OP_MUL || s.code == BATON_OP_MINIMUM || s.code == BATON_OP_MAXIMUM) {
    const std::vector<int32_t> a = shape_of(api->node_input(node, 0));
    const std::vector<int32_t> b = shape_of(api->node_input(node, 1));
    s.broadcast = bk::plan_broadcast(a.data(), static_cast<int>(a.size()), b.data(), static_cast<int>(b.size()));
    if (s.code == BATON_OP_ADD || s.code == BATON_OP_SUB || s.code == BATON_OP_MUL) s.range = range_of(o.u.elementwise.activation);
  }
  return s;
}

baton_status partition_init(void* plugin_state, const baton_partition* partition, void** state, baton_error* error) {
  (void)plugin_state;
  try {
    auto p = std::make_unique<PartitionState>();
    for (int32_t i = 0; i < api->partition_input_count(partition); ++i) {
      baton_tensor* t = api->partition_input(partition, i);
      p->boundary[api->tensor_index(t)] = t;
    }
    for (int32_t i = 0; i < api->partition_output_count(partition); ++i) {
      baton_tensor* t = api->partition_output(partition, i);
      p->boundary[api->tensor_index(t)] = t;
      p->out_shapes[api->tensor_index(t)] = shape_of(t);
    }
    for (int32_t n = 0; n < api->partition_node_count(partition); ++n) {
      const baton_node* node = api->partition_node(partition, n);
      for (int32_t i = 0; i < api->node_input_count(node); ++i) {
        const baton_tensor* t = api->node_input(node, i);
        if (t && api->tensor_is_constant(t)) p->constants[api->tensor_index(t)] = t;
      }
      Step s = make_step(node);
      // The partition owns every tensor it produces that does not cross its boundary.
      if (!p->boundary.count(s.output)) p->owned[s.output].assign(s.count, 0.0f);
      p->steps.push_back(std::move(s));
    }
    *state = p.release();
    return BATON_OK;
  } catch (const std::exception& e) {
    api->error_set(error, e.what());
    return BATON_ERROR;
  }
}

baton_status partition_prepare(void* plugin_state, void* state, const baton_partition* partition, baton_error* error) {
  (void)plugin_state;
  (void)partition;
  // Static shapes only: the partition was built for the model's shapes, so the outputs keep theirs.
  auto* p = static_cast<PartitionState*>(state);
  for (auto& [index, shape] : p->out_shapes) {
    if (baton_status st = api->tensor_set_shape(p->boundary.at(index), static_cast<int32_t>(shape.size()), shape.data(), error);
        st != BATON_OK) {
      return st;
    }
  }
  return BATON_OK;
}

baton_status partition_invoke(void* plugin_state, void* state, const baton_partition* partition, baton_error* error) {
  (void)plugin_state;
  (void)partition;
  auto* p = static_cast<PartitionState*>(state);
  for (Step& s : p->steps) {
    float* out = p->write(s.output);
    const float* a = p->read(s.inputs[0]);
    if (!out || !a) {
      api->error_set(error, "a tensor has no memory");
      return BATON_ERROR;
    }
    switch (s.code) {
      case BATON_OP_CONV_2D:
        bk::conv2d(s.conv, a, s.packed_filter.data(), s.inputs.size() > 2 ? p->read(s.inputs[2]) : nullptr, out,
                   s.scratch.data(), nullptr);
        break;
      case BATON_OP_DEPTHWISE_CONV_2D:
        bk::depthwise_conv2d(s.depthwise, a, p->read(s.inputs[1]), s.inputs.size() > 2 ? p->read(s.inputs[2]) : nullptr,
                             out, nullptr);
        break;
      case BATON_OP_ADD: bk::binary(bk::BinaryOp::kAdd, s.broadcast, a, p->read(s.inputs[1]), out, s.range); break;
      case BATON_OP_SUB: bk::binary(bk::BinaryOp::kSub, s.broadcast, a, p->read(s.inputs[1]), out, s.range); break;
      case BATON_OP_MUL: bk::binary(bk::BinaryOp::kMul, s.broadcast, a, p->read(s.inputs[1]), out, s.range); break;
      case BATON_OP_MINIMUM: bk::binary(bk::BinaryOp::kMinimum, s.broadcast, a, p->read(s.inputs[1]), out, s.range); break;
      case BATON_OP_MAXIMUM: bk::binary(bk::BinaryOp::kMaximum, s.broadcast, a, p->read(s.inputs[1]), out, s.range); break;
      case BATON_OP_RELU: bk::unary(bk::UnaryOp::kRelu, a, out, static_cast<int64_t>(s.count)); break;
      case BATON_OP_RELU6: bk::unary(bk::UnaryOp::kRelu6, a, out, static_cast<int64_t>(s.count)); break;
      case BATON_OP_LOGISTIC: bk::unary(bk::UnaryOp::kLogistic, a, out, static_cast<int64_t>(s.count)); break;
      case BATON_OP_TANH: bk::unary(bk::UnaryOp::kTanh, a, out, static_cast<int64_t>(s.count)); break;
      case BATON_OP_HARD_SWISH: bk::unary(bk::UnaryOp::kHardSwish, a, out, static_cast<int64_t>(s.count)); break;
      case BATON_OP_RESHAPE: std::memcpy(out, a, s.count * sizeof(float)); break;
      default: api->error_set(error, "unknown step"); return BATON_ERROR;
    }
  }
  return BATON_OK;
}

void partition_free(void* plugin_state, void* state) {
  (void)plugin_state;
  delete static_cast<PartitionState*>(state);
}

const baton_delegate_api kDelegate = {sizeof(baton_delegate_api), check_node, partition_init, partition_prepare,
                                      partition_invoke, partition_free};

// Version ranges as the builtin pack declares them for float32.
const baton_op_decl kDecls[] = {
    {sizeof(baton_op_decl), BATON_OP_CONV_2D, nullptr, 1, 8, nullptr},    {sizeof(baton_op_decl), BATON_OP_DEPTHWISE_CONV_2D, nullptr, 1, 7, nullptr},
    {sizeof(baton_op_decl), BATON_OP_ADD, nullptr, 1, 5, nullptr},       {sizeof(baton_op_decl), BATON_OP_SUB, nullptr, 1, 5, nullptr},
    {sizeof(baton_op_decl), BATON_OP_MUL, nullptr, 1, 7, nullptr},       {sizeof(baton_op_decl), BATON_OP_MINIMUM, nullptr, 1, 4, nullptr},
    {sizeof(baton_op_decl), BATON_OP_MAXIMUM, nullptr, 1, 4, nullptr},   {sizeof(baton_op_decl), BATON_OP_RELU, nullptr, 1, 3, nullptr},
    {sizeof(baton_op_decl), BATON_OP_RELU6, nullptr, 1, 3, nullptr},     {sizeof(baton_op_decl), BATON_OP_LOGISTIC, nullptr, 1, 3, nullptr},
    {sizeof(baton_op_decl), BATON_OP_TANH, nullptr, 1, 3, nullptr},      {sizeof(baton_op_decl), BATON_OP_HARD_SWISH, nullptr, 1, 1, nullptr},
    {sizeof(baton_op_decl), BATON_OP_RESHAPE, nullptr, 1, 1, nullptr},
};

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "ops", BATON_OPTION_STRING, "CONV_2D,DEPTHWISE_CONV_2D,ADD",
     "ops to take, comma-separated (of CONV_2D, DEPTHWISE_CONV_2D, ADD, SUB, MUL, MINIMUM, MAXIMUM, RELU, RELU6, "
     "LOGISTIC, TANH, HARD_SWISH, RESHAPE)"},
};

baton_status create(const baton_plugin_host* host, void** state, baton_error* error) {
  try {
    auto s = std::make_unique<PluginState>();
    s->ops = api->option_string(host, "ops", "");
    *state = s.release();
    return BATON_OK;
  } catch (const std::exception& e) {
    api->error_set(error, e.what());
    return BATON_ERROR;
  }
}

void destroy(void* state) { delete static_cast<PluginState*>(state); }

const baton_plugin_desc kDesc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, "kernel-deleg", "1.0",
    BATON_PLUGIN_DELEGATE, "test delegate running the builtin kernels through its own code", kDecls,
    sizeof kDecls / sizeof kDecls[0], kOptions, sizeof kOptions / sizeof kOptions[0], 0, create, destroy, &kDelegate,
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t major, uint32_t minor,
                                                                         const baton_host_api* host_api, baton_error* error) {
  (void)major;
  (void)minor;
  (void)error;
  api = host_api;
  return &kDesc;
}
