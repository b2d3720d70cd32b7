// The delegate's state: one per loaded plugin (the device, the pipelines shared by all partitions, or
// the reason there is no device), and one Partition per claimed subgraph. A partition is planned from
// its inputs' current shapes and built into an Executable at init; prepare rebuilds it only when an input
// shape changed, and sets the outputs' shapes; invoke runs it.
#ifndef BATON_VULKAN_PARTITION_H
#define BATON_VULKAN_PARTITION_H

#include <memory>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "executable.h"
#include "gpu.h"
#include "gpu_graph.h"
#include "pipelines.h"
#include "shader_compiler.h"
#include "tuning.h"

namespace baton::vulkan {

struct PluginState {
  const baton_host_api* api = nullptr;
  const baton_plugin_host* host = nullptr;
  std::string unavailable;  // non-empty when there is nothing to run on: every node is refused with it
  std::unique_ptr<GlslangProcess> glslang;
  std::unique_ptr<Gpu> gpu;
  std::unique_ptr<PipelineSet> pipelines;  // declared after the device it belongs to: destroyed first
  std::unique_ptr<TuningTable> tuning;     // reads and writes through the pipelines' cache
  DeviceLimits limits;
  bool f16 = false;       // activations and weights stored as float16 (the `fp16` option, where the device can)
  bool f16_math = false;  // and computed in float16 where the device can (shaderFloat16)

  void log(baton_log_level level, const std::string& message) const { api->log(host, level, message.c_str()); }
  // Returns if the delegate takes `node`, else throws Refusal with the reason: the node is planned alone
  // into a scratch graph, meeting the checks the partition build will, without touching the device.
  void check(const baton_node* node) const;
};

class Partition {
 public:
  explicit Partition(PluginState& plugin) : plugin_(plugin) {}

  // Plans every node and builds the executable. Throws Refusal, VulkanError or ShaderError.
  void build(const baton_partition* partition);
  baton_status prepare(const baton_partition* partition, baton_error* error);
  baton_status invoke(baton_error* error);

 private:
  std::vector<Dims> input_shapes() const;

  PluginState& plugin_;
  const baton_partition* partition_ = nullptr;  // the host's handle, valid until partition_free
  std::vector<baton_tensor*> inputs_, outputs_;
  std::vector<Dims> built_shapes_;
  std::vector<Dims> output_dims_;
  std::unique_ptr<Executable> executable_;
  std::vector<const void*> input_data_;  // reused by every invoke: the hot path allocates nothing
  std::vector<void*> output_data_;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_PARTITION_H
