// A vendor's delegate, built out of tree against baton's installed plugin SDK (libbaton-dev) with the
// plugin kit (baton/plugin_kit.hpp). It stands in for a device's own executor: it takes float32 ADD and
// MUL nodes whose operands have the same shape (or one of them a single value), groups of which the
// host hands it as partitions, and runs each partition's nodes in order on the CPU. It says which device
// it runs on (probe_devices) and why it refuses a node (`baton plan` shows the reason).
//
// Copy this folder and rename the delegate (kName, the file name in meson.build, the Debian package).
// A real delegate keeps this shape: State::check decides per node, Partition::build compiles for the
// device once, prepare sizes for the current input shapes, invoke only computes.
#include <baton/plugin_kit.hpp>
#include <baton/tflite_ops.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

// The Debian package depends on baton-abi-1: building against another ABI major must fail here, not
// produce a package that claims the wrong one (debian/control and this line change together).
static_assert(BATON_ABI_VERSION_MAJOR == 1, "this delegate is packaged for plugin ABI 1 (debian/control: baton-abi-1)");

namespace {

namespace kit = baton::kit;

constexpr const char* kName = "vendor-delegate";  // unique among loaded plugins: [a-z0-9_-]+

const baton_host_api* host = nullptr;  // the host's table, from the entry point; valid until unload

int64_t element_count(const std::vector<int32_t>& dims) {
  int64_t n = 1;
  for (int32_t d : dims) n *= d;
  return n;
}

// A shape as reasons show it: [1,8,8,3].
std::string shape_text(const std::vector<int32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

// The output shape of an elementwise node whose operands have shapes `a` and `b`: the same shape, or one
// of them a single value. Throws the reason otherwise.
std::vector<int32_t> result_shape(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  if (a == b) return a;
  if (element_count(b) == 1) return a;
  if (element_count(a) == 1) return b;
  kit::refuse("operands of shapes " + shape_text(a) + " and " + shape_text(b) +
              " (same shapes or one single value only)");
}

// An ADD or MUL node as this delegate reads it: every check that refuses a node is here, so a node it
// takes never fails to build.
struct ElementwiseNode : kit::DelegateNode {
  using DelegateNode::DelegateNode;

  void check() const {
    if (code() != BATON_OP_ADD && code() != BATON_OP_MUL) kit::refuse("only ADD and MUL");
    if (input_count() != 2 || output_count() != 1) kit::refuse("needs 2 inputs and 1 output");
    for (const baton_tensor* t : {input(0), input(1), output(0)}) {
      const baton_tensor_type type = api_->tensor_type(t);
      if (type != BATON_TYPE_FLOAT32) kit::refuse(std::string(baton_tensor_type_name(type)) + " tensor (float32 only)");
    }
    const int32_t act = activation();
    if (act != BATON_ACT_NONE && act != BATON_ACT_RELU && act != BATON_ACT_RELU6 && act != BATON_ACT_RELU_N1_TO_1) {
      kit::refuse("fused activation " + std::to_string(act) + " (none, RELU, RELU6 or RELU_N1_TO_1 only)");
    }
    (void)result_shape(dims(input(0)), dims(input(1)));
  }
  int32_t activation() const { return options().u.elementwise.activation; }
};

// The plugin state, one per host that creates the delegate.
struct State {
  const baton_host_api* api = host;
  std::string unavailable;  // non-empty: the device is missing, every node is refused with this
  void check(const baton_node* node) const { ElementwiseNode(api, node).check(); }
};

// One partition: its nodes as steps over values, built once; shapes and buffers sized at prepare.
class Partition {
 public:
  explicit Partition(State& state) : api_(state.api) {}

  void build(const baton_partition* partition) {
    for (int32_t i = 0; i < api_->partition_input_count(partition); ++i) {
      baton_tensor* t = api_->partition_input(partition, i);
      values_[api_->tensor_index(t)].boundary = t;
    }
    for (int32_t i = 0; i < api_->partition_output_count(partition); ++i) {
      baton_tensor* t = api_->partition_output(partition, i);
      values_[api_->tensor_index(t)].boundary = t;
      outputs_.push_back(t);
    }
    for (int32_t n = 0; n < api_->partition_node_count(partition); ++n) {
      const ElementwiseNode node(api_, api_->partition_node(partition, n));
      node.check();
      Step step;
      step.multiply = node.code() == BATON_OP_MUL;
      step.a = operand(node.input(0));
      step.b = operand(node.input(1));
      step.out = api_->tensor_index(node.output(0));
      set_range(step, node.activation());
      values_[step.out];  // an intermediate unless it crosses the boundary: owned here
      steps_.push_back(step);
    }
  }

  // The inputs' shapes are known: size every intermediate, give the outputs their shapes.
  baton_status prepare(const baton_partition*, baton_error* error) {
    for (Step& step : steps_) {
      const std::vector<int32_t> a = shape(step.a), b = shape(step.b);
      Value& out = values_.at(step.out);
      out.dims = result_shape(a, b);
      step.count = element_count(out.dims);
      step.a_single = element_count(a) == 1;
      step.b_single = element_count(b) == 1;
      if (!out.boundary) {
        out.owned.assign(static_cast<size_t>(element_count(out.dims)), 0.0f);
      } else if (const baton_status s = api_->tensor_set_shape(out.boundary, static_cast<int32_t>(out.dims.size()),
                                                               out.dims.data(), error);
                 s != BATON_OK) {
        return s;
      }
    }
    return BATON_OK;
  }

  // Computes only: every buffer was sized at prepare.
  baton_status invoke(baton_error* error) {
    for (const Step& step : steps_) {
      const float* a = read(step.a);
      const float* b = read(step.b);
      float* out = write(step.out);
      if (!a || !b || !out) {
        api_->error_set(error, "vendor-delegate: a tensor of the partition has no memory");
        return BATON_ERROR;
      }
      for (int64_t i = 0; i < step.count; ++i) {
        const float x = a[step.a_single ? 0 : i], y = b[step.b_single ? 0 : i];
        const float v = step.multiply ? x * y : x + y;
        out[i] = step.clamp ? std::min(std::max(v, step.lo), step.hi) : v;
      }
    }
    return BATON_OK;
  }

 private:
  // A tensor the partition reads or writes: a partition input or output (the host's memory), a constant
  // (the model's), or an intermediate (owned here).
  struct Value {
    baton_tensor* boundary = nullptr;
    const baton_tensor* constant = nullptr;
    std::vector<int32_t> dims;  // an intermediate's or an output's current shape
    std::vector<float> owned;
  };
  struct Step {
    bool multiply = false;
    int32_t a = -1, b = -1, out = -1;  // tensor indices into values_
    bool clamp = false;
    float lo = 0, hi = 0;
    // Sized at prepare for the current shapes: the output's elements, and which operand is one value.
    int64_t count = 0;
    bool a_single = false, b_single = false;
  };

  int32_t operand(const baton_tensor* t) {
    const int32_t index = api_->tensor_index(t);
    if (!values_.count(index)) {
      if (!api_->tensor_is_constant(t)) kit::refuse("an operand the partition neither receives nor computes");
      values_[index].constant = t;
    }
    return index;
  }
  static void set_range(Step& step, int32_t activation) {
    step.clamp = activation != BATON_ACT_NONE;
    step.lo = activation == BATON_ACT_RELU_N1_TO_1 ? -1.0f : 0.0f;
    step.hi = activation == BATON_ACT_RELU6            ? 6.0f
              : activation == BATON_ACT_RELU_N1_TO_1 ? 1.0f
                                                      : std::numeric_limits<float>::infinity();
  }
  std::vector<int32_t> shape(int32_t index) const {
    const Value& v = values_.at(index);
    const baton_tensor* t = v.boundary ? v.boundary : v.constant;
    if (!t) return v.dims;
    const int32_t* d = nullptr;
    const int32_t rank = api_->tensor_shape(t, &d);
    return rank > 0 && d ? std::vector<int32_t>(d, d + rank) : std::vector<int32_t>();
  }
  const float* read(int32_t index) const {
    const Value& v = values_.at(index);
    if (v.boundary) return static_cast<const float*>(api_->tensor_data(v.boundary));
    if (v.constant) return static_cast<const float*>(api_->tensor_data(v.constant));
    return v.owned.data();
  }
  float* write(int32_t index) {
    Value& v = values_.at(index);
    return v.boundary ? static_cast<float*>(api_->tensor_mutable_data(v.boundary)) : v.owned.data();
  }

  const baton_host_api* api_;
  std::map<int32_t, Value> values_;
  std::vector<Step> steps_;
  std::vector<baton_tensor*> outputs_;
};

using Calls = kit::DelegateCalls<State, Partition>;

// The devices: this CPU. A delegate whose device is found by loading a driver caches the answer (the
// host may ask before create, and for `baton plugins`). Preference 0: a general delegate for its kind
// of device; a vendor's delegate tuned for its device says 10 to 100 to go before general ones.
baton_status probe_devices(const baton_plugin_host*, const baton_device** devices, size_t* count, baton_error* error) {
  return kit::guarded(host, error, "probe_devices", [&] {
    static const std::string name = kit::cpu_model_name();
    static const baton_device device = {sizeof(baton_device), name.c_str(), BATON_DEVICE_CPU,
                                        BATON_DEVICE_PREFERENCE_DEFAULT};
    *devices = &device;
    *count = 1;
    return BATON_OK;
  });
}

baton_status create(const baton_plugin_host*, void** plugin_state, baton_error* error) {
  return kit::guarded(host, error, "create", [&] {
    *plugin_state = new State();  // released by destroy
    return BATON_OK;
  });
}

void destroy(void* plugin_state) { delete static_cast<State*>(plugin_state); }

// Float32 is the same in every version of the two ops (later versions added integer types).
const baton_op_decl kOps[] = {
    {sizeof(baton_op_decl), BATON_OP_ADD, nullptr, 1, 5, nullptr},
    {sizeof(baton_op_decl), BATON_OP_MUL, nullptr, 1, 7, nullptr},
};

const baton_plugin_desc kDescriptor = {
    sizeof(baton_plugin_desc),
    BATON_ABI_VERSION_MAJOR,
    BATON_ABI_VERSION_MINOR,
    kName,
    "1.0.0",
    BATON_PLUGIN_DELEGATE,
    "a vendor's delegate: float32 ADD and MUL on the CPU",
    kOps,
    sizeof kOps / sizeof kOps[0],
    nullptr,  // options
    0,
    BATON_PLUGIN_FLAG_REENTRANT,  // partitions keep their own state
    create,
    destroy,
    &Calls::table,
    probe_devices,
    nullptr,  // loader functions: loaders only
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major, uint32_t,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  if (!kit::host_is_usable(host_abi_major, api, error, kName, /*delegate=*/true)) return nullptr;
  host = api;
  return &kDescriptor;
}
