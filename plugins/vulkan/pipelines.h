// Shader variants and their compute pipelines. A variant is a shader of plugins/vulkan/shaders/ with a
// set of #defines (its specialisation: kernel size, strides, activation, tile and workgroup sizes). Its
// source is assembled as `#version 450`, the defines, common.glsl, then the shader; the SPIR-V comes
// from the disk cache or from glslang, and a pipeline is made once per variant and shared by every node
// and partition that needs it. All pipelines take their tensors as storage buffers 0..n-1 of set 0 and
// 128 bytes of push constants (32 ints, see common.glsl). They are made through the driver's pipeline
// cache, kept on disk beside the SPIR-V (one file per device and driver): a driver that compiles SPIR-V to
// its GPU's code at pipeline creation does that once per shader variant, not once per process.
#ifndef BATON_VULKAN_PIPELINES_H
#define BATON_VULKAN_PIPELINES_H

#include "vk.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpu.h"
#include "shader_cache.h"

namespace baton::vulkan {

using Defines = std::vector<std::pair<std::string, std::string>>;

constexpr uint32_t kPushConstantBytes = 128;

// The GLSL of the shaders: the copies built into the plugin, or NAME.comp from `override_dir` when that
// folder is set and has it (the `shader-dir` option, for working on shaders without rebuilding).
class ShaderSources {
 public:
  explicit ShaderSources(std::string override_dir) : override_dir_(std::move(override_dir)) {}
  // Throws ShaderError when the shader does not exist.
  std::string text(const std::string& file) const;
  // The complete source of a variant.
  std::string assemble(const std::string& shader, const Defines& defines) const;

 private:
  std::string override_dir_;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
};

struct PipelineStats {
  size_t compiled = 0;    // variants glslang compiled
  size_t from_cache = 0;  // variants read from the disk cache
  size_t pipelines = 0;   // pipelines created
  size_t cache_bytes_loaded = 0;  // the pipeline cache read from disk at start
};

class PipelineSet {
 public:
  PipelineSet(const Gpu& gpu, ShaderSources sources, ShaderCache cache, LogFn log);
  ~PipelineSet();
  PipelineSet(const PipelineSet&) = delete;
  PipelineSet& operator=(const PipelineSet&) = delete;

  // The pipeline of a variant with `bindings` storage buffers. Throws ShaderError or VulkanError.
  const Pipeline& get(const std::string& shader, const Defines& defines, uint32_t bindings);
  const PipelineStats& stats() const { return stats_; }
  const ShaderCache& cache() const { return cache_; }
  // Writes the driver's pipeline cache to disk when it holds more than was read or last written (after a
  // partition's pipelines are made). A failure to write is logged as a warning; nothing else depends on it.
  void save_pipeline_cache();

 private:
  std::vector<uint32_t> spirv(const std::string& shader, const std::string& source);
  VkDescriptorSetLayout set_layout(uint32_t bindings);
  VkPipelineLayout layout(uint32_t bindings);

  const Gpu& gpu_;
  ShaderSources sources_;
  ShaderCache cache_;
  LogFn log_;
  std::string driver_key_;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;  // null where the driver could not make one
  size_t saved_bytes_ = 0;
  std::map<std::string, Pipeline> pipelines_;  // by assembled source and binding count
  std::map<uint32_t, VkDescriptorSetLayout> set_layouts_;
  std::map<uint32_t, VkPipelineLayout> layouts_;
  PipelineStats stats_;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_PIPELINES_H
