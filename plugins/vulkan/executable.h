// A planned partition made real on the device, the Vulkan side of "the state to compute it with":
// the arena of activations (offsets by lifetime), the weights uploaded once to device-local memory, the
// staging buffers, one pipeline and descriptor set per dispatch, and one command buffer recorded here,
// once, with a pipeline barrier only where a step touches memory an earlier unbarriered step wrote (or
// writes memory one read). Running it is a copy into the upload buffer, one submit, a wait on the fence
// and a copy out of the download buffer.
#ifndef BATON_VULKAN_EXECUTABLE_H
#define BATON_VULKAN_EXECUTABLE_H

#include "vk.h"

#include <memory>
#include <string>
#include <vector>

#include "gpu.h"
#include "gpu_buffer.h"
#include "gpu_graph.h"
#include "pipelines.h"
#include "tuning.h"

namespace baton::vulkan {

struct ExecutableStats {
  size_t dispatches = 0, copies = 0, barriers = 0;
  int64_t arena_bytes = 0;     // the planned arena
  int64_t unshared_bytes = 0;  // what the activations would take without reuse
  int64_t weight_bytes = 0;
  // Dispatches whose workgroup came from the tuning table, or was timed now (`timed` shapes in all,
  // `tuning_ms` of wall time).
  size_t tuned_from_table = 0, tuned_now = 0, timed = 0;
  double tuning_ms = 0;
};

class Executable {
 public:
  // Throws VulkanError, ShaderError or Refusal; everything made so far is released. With `tuning`, the
  // workgroups of the dispatches that take any (Step::extent) come from its table, or are timed on the
  // device and added to it when it measures (before the command buffer is recorded).
  Executable(const Gpu& gpu, PipelineSet& pipelines, GpuGraph graph, TuningTable* tuning = nullptr);
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // `inputs[i]` holds the dense bytes of upload i, `outputs[o]` receives download o. Throws VulkanError,
  // or std::runtime_error naming the check (GpuGraph::checks) a shader set.
  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);

  const GpuGraph& graph() const { return graph_; }
  const ExecutableStats& stats() const { return stats_; }

 private:
  enum BufferId { kArena = 0, kWeights = 1, kStageIn = 2, kStageOut = 3 };
  struct Place {
    int buffer = kArena;
    int64_t offset = 0;
    int64_t bytes = 0;
  };

  void place_tensors();
  void upload_weights();
  void tune(TuningTable& table);
  // The least time of a few dispatches of `step` alone, in nanoseconds (GPU timestamps).
  double time_dispatch(const Step& step, VkQueryPool queries, VkDescriptorPool sets);
  // A descriptor set from `pool` that binds `step`'s tensors for `pipeline`.
  VkDescriptorSet bind_tensors(const Step& step, const Pipeline& pipeline, VkDescriptorPool pool);
  void record();
  void submit_and_wait(const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  // One submit of `cb` on the device's queue and a wait for it (fence_, reset after).
  void submit_and_wait_for(VkCommandBuffer cb);
  VkBuffer buffer(int id) const;
  void release();

  const Gpu& gpu_;
  PipelineSet& pipelines_;
  GpuGraph graph_;
  std::vector<Place> places_;
  int64_t sizes_[4] = {0, 0, 0, 0};
  std::unique_ptr<GpuBuffer> buffers_[4];
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool in_flight_ = false;  // a submit whose fence was not seen signalled
  std::string broken_;      // why an earlier run failed: the fence's state is unknown, no run again
  ExecutableStats stats_;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_EXECUTABLE_H
