#include "gpu_graph.h"

#include <algorithm>
#include <cstring>

#include "op_common.h"

namespace baton::vulkan {
uint32_t pow2_at_most(int64_t v, uint32_t cap) {
  uint32_t p = 1;
  while (p * 2 <= cap && static_cast<int64_t>(p) < v) p *= 2;
  return p;
}

Shape4 shape4(const Dims& dims) {
  // A rank-5 shape whose first dimension is 1 (a detector head's [1, anchors, H, W, outputs]) is its last four.
  if (dims.size() > 5 || (dims.size() == 5 && dims[0] != 1)) {
    refuse("a tensor of shape " + dims_text(dims) + " (rank 5 only with a first dimension of 1)");
  }
  int32_t d[4] = {1, 1, 1, 1};
  const size_t skip = dims.size() == 5 ? 1 : 0;
  const size_t offset = 4 - (dims.size() - skip);
  for (size_t i = skip; i < dims.size(); ++i) d[offset + i - skip] = dims[i];
  return {d[0], d[1], d[2], d[3]};
}

Grid grid_1d(int64_t count, uint32_t local) {
  Grid g;
  g.local = {local, 1, 1};
  const int64_t groups = std::max<int64_t>(1, ceil_div(count, local));
  const int64_t x = std::min<int64_t>(groups, 65535);
  g.groups = {static_cast<uint32_t>(x), static_cast<uint32_t>(std::min<int64_t>(ceil_div(groups, x), UINT32_MAX)), 1};
  return g;
}

Grid grid_3d(int64_t x, int64_t y, int64_t z, uint32_t max_local) {
  Grid g;
  // Fill x first (consecutive invocations read consecutive memory), then y, then z.
  const uint32_t lx = pow2_at_most(x, max_local);
  const uint32_t ly = pow2_at_most(y, max_local / lx);
  const uint32_t lz = pow2_at_most(z, max_local / (lx * ly));
  return grid_of({x, y, z}, {lx, ly, lz});
}

Grid grid_of(const std::array<int64_t, 3>& extent, const std::array<uint32_t, 3>& local) {
  Grid g;
  g.local = local;
  g.extent = extent;
  for (int d = 0; d < 3; ++d) {
    g.groups[d] = static_cast<uint32_t>(std::min<int64_t>(std::max<int64_t>(ceil_div(extent[d], local[d]), 1), UINT32_MAX));
  }
  return g;
}

GraphBuilder::GraphBuilder(const baton_host_api* api, const DeviceLimits& limits, bool auto_inputs, bool f16,
                           bool f16_math)
    : api_(api), limits_(limits), auto_inputs_(auto_inputs) {
  graph_.f16 = f16;
  graph_.f16_math = f16 && f16_math;
}

int GraphBuilder::add_tensor(GpuTensor t, const char* what) {
  if (t.bytes > limits_.max_storage_range) {
    refuse(std::string(what) + " of " + std::to_string(t.bytes) + " bytes on the device is larger than its storage buffer range (" +
           std::to_string(limits_.max_storage_range) + ")");
  }
  graph_.tensors.push_back(std::move(t));
  return static_cast<int>(graph_.tensors.size() - 1);
}

int GraphBuilder::add_input(const baton_tensor* t) {
  NodeView view(api_, nullptr);
  const baton_tensor_type type = api_->tensor_type(t);
  if (type != BATON_TYPE_FLOAT32 && type != BATON_TYPE_INT32) refuse("a partition input is not float32 or int32");
  GpuTensor g;
  g.dims = view.shape(t);
  if (g.dims.size() > 5) refuse("a partition input of rank " + std::to_string(g.dims.size()));
  for (int32_t d : g.dims) {
    if (d <= 0) refuse("a partition input of shape " + dims_text(g.dims));
  }
  g.shape = shape4(g.dims);
  g.int32 = type == BATON_TYPE_INT32;
  g.bytes = g.int32 ? g.shape.elements() * 4 : g.shape.padded_bytes(element_bytes());
  GpuTensor up;
  up.kind = TensorKind::kUpload;
  up.dims = g.dims;
  up.shape = g.shape;
  up.bytes = g.shape.elements() * 4;
  const int id = add_tensor(std::move(g), "an input");
  const int staged = add_tensor(std::move(up), "an input");
  graph_.uploads.push_back(staged);
  ids_[t] = id;
  inputs_.push_back({id, staged, std::to_string(api_->tensor_index(t))});
  return id;
}

int GraphBuilder::host_copy(int id) const {
  for (const Input& in : inputs_) {
    if (in.id == id) return in.staged;
  }
  return -1;
}

int GraphBuilder::value(const NodeView& node, const baton_tensor* t) {
  if (auto it = ids_.find(t); it != ids_.end()) return it->second;
  if (api_->tensor_is_constant(t)) {
    const Dims dims = node.shape(t);
    const Shape4 s = shape4(dims);
    const float* data = node.floats(t);
    GpuTensor g;
    g.kind = TensorKind::kConstant;
    g.dims = dims;
    g.shape = s;
    g.bytes = s.padded_bytes(element_bytes());
    g.floats = static_cast<size_t>(s.vec4s() * 4);
    g.half = graph_.f16;
    g.fill = [s, data](float* out) {
      const int32_t c4 = s.c4();
      for (int64_t r = 0; r < s.rows(); ++r) {
        for (int32_t c = 0; c < c4 * 4; ++c) out[r * c4 * 4 + c] = c < s.c ? data[r * s.c + c] : 0.0f;
      }
    };
    const int id = add_tensor(std::move(g), "a constant");
    ids_[t] = id;
    return id;
  }
  if (!auto_inputs_) refuse("tensor " + std::to_string(api_->tensor_index(t)) + " is read before it is written");
  return add_input(t);
}

int GraphBuilder::indices(const NodeView& node, const baton_tensor* t) {
  if (api_->tensor_type(t) != BATON_TYPE_INT32) {
    refuse(std::string(baton_tensor_type_name(api_->tensor_type(t))) + " indices (int32 only)");
  }
  if (auto it = ids_.find(t); it != ids_.end()) return it->second;
  if (!api_->tensor_is_constant(t)) {
    if (!auto_inputs_) refuse("tensor " + std::to_string(api_->tensor_index(t)) + " is read before it is written");
    return add_input(t);
  }
  GpuTensor g;
  g.kind = TensorKind::kConstant;
  g.dims = node.shape(t);
  g.shape = shape4(g.dims.size() <= 4 ? g.dims : Dims{});
  g.int32 = true;
  g.floats = static_cast<size_t>(element_count(g.dims));
  g.bytes = static_cast<int64_t>(g.floats) * 4;
  const auto* data = static_cast<const int32_t*>(api_->tensor_data(t));
  const size_t n = g.floats;
  g.fill = [data, n](float* out) { std::memcpy(out, data, n * 4); };  // the ints' bits
  const int id = add_tensor(std::move(g), "constant indices");
  ids_[t] = id;
  return id;
}

int GraphBuilder::check_word(const std::string& what) {
  GpuTensor g;
  g.kind = TensorKind::kDownload;
  g.int32 = true;
  g.bytes = 8;
  const int id = add_tensor(std::move(g), "a check word");
  graph_.checks.push_back({id, what});
  return id;
}

int GraphBuilder::define(const baton_tensor* t, Dims dims) {
  GpuTensor g;
  g.shape = shape4(dims);
  g.dims = std::move(dims);
  g.bytes = g.shape.padded_bytes(element_bytes());
  const int id = add_tensor(std::move(g), "the output");
  ids_[t] = id;
  return id;
}

int GraphBuilder::define_int32(const baton_tensor* t, Dims dims) {
  GpuTensor g;
  g.shape = shape4(dims);
  g.dims = std::move(dims);
  g.int32 = true;
  g.bytes = element_count(g.dims) * 4;
  const int id = add_tensor(std::move(g), "the output");
  ids_[t] = id;
  return id;
}

int GraphBuilder::scratch(Dims dims) {
  GpuTensor g;
  g.shape = shape4(dims);
  g.dims = std::move(dims);
  g.bytes = g.shape.padded_bytes(element_bytes());
  return add_tensor(std::move(g), "a scratch tensor");
}

int GraphBuilder::constant(size_t floats, std::function<void(float*)> fill, bool exact) {
  GpuTensor g;
  g.kind = TensorKind::kConstant;
  g.floats = floats;
  g.half = graph_.f16 && !exact;
  g.bytes = static_cast<int64_t>(floats) * (g.half ? 2 : 4);
  g.fill = std::move(fill);
  return add_tensor(std::move(g), "packed weights");
}

void GraphBuilder::alias(const baton_tensor* t, const baton_tensor* same_as) {
  auto it = ids_.find(same_as);
  if (it == ids_.end()) refuse("tensor " + std::to_string(api_->tensor_index(same_as)) + " is read before it is written");
  ids_[t] = it->second;
}

int GraphBuilder::activation(const NodeView& node, int32_t declared) const {
  const int own = activation_code(declared);
  auto it = fused_.find(node.node());
  return it == fused_.end() ? own : it->second;
}

int GraphBuilder::add_output(const baton_tensor* t) {
  auto it = ids_.find(t);
  if (it == ids_.end()) refuse("partition output " + std::to_string(api_->tensor_index(t)) + " is not computed inside");
  graph_.outputs.push_back(it->second);
  return it->second;
}

void GraphBuilder::dispatch(const std::string& shader, Defines defines, const Grid& grid, std::vector<int> bindings,
                            const std::array<int32_t, 32>& params, int written) {
  for (int d = 0; d < 3; ++d) {
    if (grid.groups[d] > limits_.max_groups[d]) {
      refuse("a dispatch of " + std::to_string(grid.groups[d]) + " workgroups along " + "xyz"[d] +
             " is more than the device's limit of " + std::to_string(limits_.max_groups[d]));
    }
    if (grid.local[d] > limits_.max_local[d]) refuse("workgroup too large for the device");
  }
  if (grid.local[0] * grid.local[1] * grid.local[2] > limits_.max_invocations) refuse("workgroup too large for the device");
  defines.emplace_back("LX", std::to_string(grid.local[0]));
  defines.emplace_back("LY", std::to_string(grid.local[1]));
  defines.emplace_back("LZ", std::to_string(grid.local[2]));
  if (graph_.f16) defines.emplace_back("F16", "1");
  if (graph_.f16_math) defines.emplace_back("F16_MATH", "1");
  Step s;
  s.label = label_;
  s.shader = shader;
  s.defines = std::move(defines);
  s.params = params;
  s.bindings = std::move(bindings);
  s.written = written;
  s.local = grid.local;
  s.groups = grid.groups;
  s.extent = grid.extent;
  graph_.steps.push_back(std::move(s));
}

void GraphBuilder::copy(int dst, int src, int64_t bytes) {
  Step s;
  s.label = label_;
  s.bindings = {dst, src};
  s.copy_bytes = bytes;
  graph_.steps.push_back(std::move(s));
}

GpuGraph GraphBuilder::finish() {
  std::vector<Step> node_steps = std::move(graph_.steps);
  graph_.steps.clear();
  // Inputs: the host's dense bytes go to the upload buffer; a copy when the layouts agree (channels a
  // multiple of 4, float32 storage), else the pack shader spreads the rows to whole vec4s (and converts
  // to float16).
  for (const auto& [id, staged, name] : inputs_) {
    const Shape4 s = shape(id);
    set_label("upload of tensor " + name);
    if (tensor(id).int32) {
      copy(id, staged, s.elements() * 4);  // int32 indices: dense, as the host holds them
    } else if (s.c % 4 == 0 && !graph_.f16) {
      copy(id, staged, s.elements() * 4);
    } else {
      std::array<int32_t, 32> p{};
      p[0] = static_cast<int32_t>(s.vec4s());
      p[1] = s.c;
      p[2] = s.c4();
      dispatch("pack", {}, grid_1d(s.vec4s()), {id, staged}, p);
    }
  }
  for (Step& s : node_steps) graph_.steps.push_back(std::move(s));
  for (int id : graph_.outputs) {
    const Shape4 s = shape(id);
    GpuTensor down;
    down.kind = TensorKind::kDownload;
    down.dims = dims(id);
    down.shape = s;
    down.bytes = s.elements() * 4;
    const int staged = add_tensor(std::move(down), "an output");
    graph_.downloads.push_back(staged);
    set_label("download of an output");
    if (tensor(id).int32 || (s.c % 4 == 0 && !graph_.f16)) {  // ints are dense already
      copy(staged, id, s.elements() * 4);
    } else {
      std::array<int32_t, 32> p{};
      p[0] = static_cast<int32_t>(s.elements());
      p[1] = s.c;
      p[2] = s.c4();
      dispatch("unpack", {}, grid_1d((s.elements() + 3) / 4), {staged, id}, p);
    }
  }
  return std::move(graph_);
}

}  // namespace baton::vulkan
