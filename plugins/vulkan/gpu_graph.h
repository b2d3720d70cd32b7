// What a partition computes on the device, before any Vulkan object exists: the device tensors and the
// steps (compute dispatches and buffer copies) in execution order. Ops add to it through GraphBuilder;
// check_node plans one node into a scratch builder (nothing is packed or compiled), the partition build
// plans every node and hands the graph to an Executable.
//
// Device layout of an activation: its shape is read as [N,H,W,C] (a lower rank is padded with leading
// ones) and stored as N*H*W rows of ceil(C/4) vec4s, the lanes past C zero. Every shader keeps those lanes
// zero, so a reader may load whole vec4s. Weights are packed per op into the layout its shader reads.
#ifndef BATON_VULKAN_GPU_GRAPH_H
#define BATON_VULKAN_GPU_GRAPH_H

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "node_view.h"
#include "pipelines.h"

namespace baton::vulkan {

struct Shape4 {
  int32_t n = 1, h = 1, w = 1, c = 1;
  int32_t c4() const { return (c + 3) / 4; }
  int64_t rows() const { return static_cast<int64_t>(n) * h * w; }
  int64_t vec4s() const { return rows() * c4(); }
  // The bytes of the device layout with elements of `element_bytes` (4: float32, 2: float16).
  int64_t padded_bytes(int element_bytes) const { return vec4s() * 4 * element_bytes; }
  int64_t elements() const { return rows() * c; }
};

Shape4 shape4(const Dims& dims);  // rank <= 4, or 5 with a first dimension of 1

enum class TensorKind {
  kActivation,  // lives in the partition's device arena, at an offset planned by lifetime
  kConstant,    // weights and constant operands: uploaded once into the weights buffer
  kUpload,      // a partition input as the host holds it (dense), in the upload staging buffer
  kDownload,    // a partition output as the host wants it (dense), in the download staging buffer
};

struct GpuTensor {
  TensorKind kind = TensorKind::kActivation;
  Dims dims;
  Shape4 shape;
  int64_t bytes = 0;
  // kConstant: the number of floats and the function that writes them (run only when the partition is
  // built, so check_node packs nothing); `half`: stored as float16.
  size_t floats = 0;
  bool half = false;
  // Dense int32 values (indices, CAST's ints), not the vec4 layout of an activation: a partition input, a
  // constant whose `fill` writes the ints' bits, or an activation an op writes as ints (CAST to int32).
  bool int32 = false;
  std::function<void(float*)> fill;
};

struct Step {
  std::string label;   // "node 12 CONV_2D", "upload input 0"
  std::string shader;  // empty: copy `copy_bytes` from bindings[1] to bindings[0]
  Defines defines;
  std::array<int32_t, 32> params{};  // push constants
  std::vector<int> bindings;         // tensor ids; storage buffer binding i is bindings[i]
  int written = 1;                   // bindings[0..written) are written, the rest only read
  std::array<uint32_t, 3> local{1, 1, 1};  // its workgroup (the LX, LY, LZ defines)
  std::array<uint32_t, 3> groups{1, 1, 1};
  // The invocations a grid_3d dispatch covers: its shader takes any workgroup shape, so the tuning
  // (tuning.h) may choose another. All zero: the workgroup is part of the shader's design.
  std::array<int64_t, 3> extent{0, 0, 0};
  int64_t copy_bytes = 0;
};

struct GpuGraph {
  bool f16 = false;       // activations and weights stored as float16 (common.glsl's F16)
  bool f16_math = false;  // and the products (convolutions, FULLY_CONNECTED) computed in float16 (F16_MATH)
  std::vector<GpuTensor> tensors;
  std::vector<Step> steps;
  std::vector<int> uploads;    // kUpload tensors, one per partition input, in partition order
  std::vector<int> downloads;  // kDownload tensors, one per partition output
  std::vector<int> outputs;    // the activations behind the downloads
  // Words a shader sets when it meets input it cannot compute (a GATHER index out of range): two int32s in
  // the download buffer, zeroed before each run; a run that leaves the first non-zero fails with
  // "`what` (the second)".
  struct Check {
    int tensor = -1;
    std::string what;
  };
  std::vector<Check> checks;
};

// What the planner must respect on the chosen device.
struct DeviceLimits {
  int64_t max_storage_range = int64_t{1} << 27;
  std::array<uint32_t, 3> max_groups{65535, 65535, 65535};
  uint32_t max_invocations = 128;
  std::array<uint32_t, 3> max_local{128, 128, 64};
};

// Workgroup size and count of a dispatch.
struct Grid {
  std::array<uint32_t, 3> local{1, 1, 1};
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::array<int64_t, 3> extent{0, 0, 0};  // grid_3d's invocations (Step::extent); zero for grid_1d
};

// The least power of two >= v, but no more than `cap` (a power of two): a workgroup's side over v items.
uint32_t pow2_at_most(int64_t v, uint32_t cap);

// `count` invocations in workgroups of `local`, folded into a second dimension past 65535 groups. The
// shader's flat index is gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * LX
// (common.glsl's flat_id()), and it must ignore indices >= count.
Grid grid_1d(int64_t count, uint32_t local = 64);
// An x*y*z grid of invocations; workgroups of at most `max_local` invocations, shaped to the extents.
// Its shader must compute from gl_GlobalInvocationID alone and ignore invocations past the extents, so
// that any workgroup shape gives the same result: the tuning times others on the device.
Grid grid_3d(int64_t x, int64_t y, int64_t z, uint32_t max_local = 64);
// The grid over `extent` in workgroups of `local`.
Grid grid_of(const std::array<int64_t, 3>& extent, const std::array<uint32_t, 3>& local);

class GraphBuilder {
 public:
  // `auto_inputs`: a non-constant tensor seen for the first time becomes a partition input (check_node
  // plans a node alone); otherwise every input must have been added or defined first. `f16`: activations
  // and weights are stored as float16 (every dispatch gets F16), the host's inputs and outputs stay float32;
  // `f16_math` (with f16): the shaders that can compute in float16 do (every dispatch gets F16_MATH).
  GraphBuilder(const baton_host_api* api, const DeviceLimits& limits, bool auto_inputs, bool f16,
               bool f16_math = false);

  // Bytes per element of a device tensor: 2 with float16 storage, else 4.
  int element_bytes() const { return graph_.f16 ? 2 : 4; }

  void set_label(std::string label) { label_ = std::move(label); }
  const std::string& label() const { return label_; }

  // A partition input, with its current host shape.
  int add_input(const baton_tensor* t);
  // The device tensor of `t`: defined by an earlier node, a partition input, or for a constant its
  // values in the device layout.
  int value(const NodeView& node, const baton_tensor* t);
  // Defines `t` (a node's output) with the shape the op computed.
  int define(const baton_tensor* t, Dims dims);
  // A device tensor only the op itself uses (a reshaped copy of an input).
  int scratch(Dims dims);
  // An int32 tensor as dense ints (GATHER's and GATHER_ND's indices, CAST's input): a partition input (the
  // host's values uploaded as they are), a constant, or the output of an earlier node that writes ints.
  int indices(const NodeView& node, const baton_tensor* t);
  // For a partition input's device tensor, its staged copy: the host's dense float32 (or int32) values in
  // the upload buffer, which a shader may read as they are (exact where the device tensor is float16);
  // -1 for any other tensor.
  int host_copy(int id) const;
  // Defines `t` (a node's int32 output) as dense ints.
  int define_int32(const baton_tensor* t, Dims dims);
  // A check word (GpuGraph::checks) that a dispatch of this node sets; `what` begins the run's error.
  int check_word(const std::string& what);
  // Op-packed constant data of `floats` floats, written by `fill` when the partition is built; stored as
  // the tensors are (float16 or float32), or with `exact` always as float32 (index tables).
  int constant(size_t floats, std::function<void(float*)> fill, bool exact = false);
  // Marks a defined tensor as a partition output.
  int add_output(const baton_tensor* t);

  // A standalone RELU, RELU6 or RELU_N1_TO_1 folded into the node that produces its input (fusion.h):
  // the producer applies `act` (common.glsl's ACT) instead of its fused NONE, and the activation's output
  // is the producer's output tensor.
  void fuse_activation(const baton_node* producer, int act) { fused_[producer] = act; }
  void alias(const baton_tensor* t, const baton_tensor* same_as);
  // The ACT a node's shader applies: its own fused activation, or the one folded into it.
  int activation(const NodeView& node, int32_t declared) const;

  const GpuTensor& tensor(int id) const { return graph_.tensors.at(static_cast<size_t>(id)); }
  const Dims& dims(int id) const { return tensor(id).dims; }
  const Shape4& shape(int id) const { return tensor(id).shape; }

  // Appends a dispatch of `shader` over `grid` (LX/LY/LZ are added to the defines). Refuses what the
  // device cannot run (too many workgroups).
  // `written`: bindings[0..written) are written by the shader, the rest only read.
  void dispatch(const std::string& shader, Defines defines, const Grid& grid, std::vector<int> bindings,
                const std::array<int32_t, 32>& params, int written = 1);
  // Appends a copy of `bytes` from `src` to `dst`.
  void copy(int dst, int src, int64_t bytes);

  // Adds the steps that move partition inputs in and outputs out (staging buffers, with a pack or unpack
  // shader where the host's dense layout differs from the device's) and returns the finished graph.
  GpuGraph finish();

 private:
  int add_tensor(GpuTensor t, const char* what);

  const baton_host_api* api_;
  DeviceLimits limits_;
  bool auto_inputs_;
  std::string label_;
  GpuGraph graph_;
  std::map<const baton_tensor*, int> ids_;
  std::map<const baton_node*, int> fused_;
  struct Input {
    int id;      // the device tensor
    int staged;  // the host's dense float32 or int32 values, in the upload buffer
    std::string name;
  };
  std::vector<Input> inputs_;  // the partition inputs
};

inline int32_t float_bits(float f) {
  int32_t i;
  static_assert(sizeof i == sizeof f);
  __builtin_memcpy(&i, &f, sizeof f);
  return i;
}

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_GPU_GRAPH_H
