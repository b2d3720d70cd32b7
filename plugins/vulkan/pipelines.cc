#include "pipelines.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "baton/plugin_api.h"
#include "embedded_shaders.h"
#include "shader_compiler.h"
#include "vk_error.h"

namespace baton::vulkan {

std::string ShaderSources::text(const std::string& file) const {
  if (!override_dir_.empty()) {
    std::ifstream f(override_dir_ + "/" + file, std::ios::binary);
    if (f) return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  for (const embedded::Source& s : embedded::kSources) {
    if (file == s.name) return s.text;
  }
  throw ShaderError("shader " + file + " does not exist");
}

std::string ShaderSources::assemble(const std::string& shader, const Defines& defines) const {
  std::string s = "#version 450\n";
  for (const auto& [name, value] : defines) s += "#define " + name + " " + value + "\n";
  s += text("common.glsl");
  s += "\n#line 1\n";
  s += text(shader + ".comp");
  return s;
}

namespace {

std::string pipeline_cache_key(const std::string& driver_key) { return "baton vulkan pipeline cache 1\n" + driver_key; }

}  // namespace

PipelineSet::PipelineSet(const Gpu& gpu, ShaderSources sources, ShaderCache cache, LogFn log)
    : gpu_(gpu), sources_(std::move(sources)), cache_(std::move(cache)), log_(std::move(log)),
      driver_key_(gpu.driver_key()) {
  std::optional<std::string> initial;
  if (cache_.enabled()) initial = cache_.load_pipelines(pipeline_cache_key(driver_key_));
  VkPipelineCacheCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  if (initial) {
    info.initialDataSize = initial->size();
    info.pInitialData = initial->data();
  }
  VkResult r = vkCreatePipelineCache(gpu_.device(), &info, nullptr, &pipeline_cache_);
  if (r != VK_SUCCESS && initial) {
    // The file's key matched this driver, yet the driver refused its data: start empty.
    if (log_) log_(BATON_LOG_WARNING, "pipeline cache: the driver refused the saved cache (" + vk_result_name(r) + "); starting empty");
    initial.reset();
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    r = vkCreatePipelineCache(gpu_.device(), &info, nullptr, &pipeline_cache_);
  }
  if (r != VK_SUCCESS) {
    pipeline_cache_ = VK_NULL_HANDLE;
    if (log_) log_(BATON_LOG_WARNING, "pipeline cache: vkCreatePipelineCache failed (" + vk_result_name(r) + "); pipelines are made without one");
  }
  saved_bytes_ = stats_.cache_bytes_loaded = initial ? initial->size() : 0;
}

void PipelineSet::save_pipeline_cache() {
  if (pipeline_cache_ == VK_NULL_HANDLE || !cache_.enabled()) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(gpu_.device(), pipeline_cache_, &size, nullptr) != VK_SUCCESS || size == saved_bytes_) return;
  std::string data(size, '\0');
  const VkResult r = vkGetPipelineCacheData(gpu_.device(), pipeline_cache_, &size, data.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
  data.resize(size);
  std::string why;
  if (!cache_.store_pipelines(pipeline_cache_key(driver_key_), data, &why)) {
    if (log_) log_(BATON_LOG_WARNING, "pipeline cache: " + why);
    return;
  }
  saved_bytes_ = size;
}

PipelineSet::~PipelineSet() {
  VkDevice d = gpu_.device();
  if (pipeline_cache_ != VK_NULL_HANDLE) vkDestroyPipelineCache(d, pipeline_cache_, nullptr);
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(d, p.pipeline, nullptr);
  for (auto& [n, l] : layouts_) vkDestroyPipelineLayout(d, l, nullptr);
  for (auto& [n, l] : set_layouts_) vkDestroyDescriptorSetLayout(d, l, nullptr);
}

std::vector<uint32_t> PipelineSet::spirv(const std::string& shader, const std::string& source) {
  const std::string key = "baton vulkan shader 1\n" + compiler_key() + "\n" + driver_key_ + "\n" + source;
  if (auto cached = cache_.load(key)) {
    ++stats_.from_cache;
    return *cached;
  }
  std::vector<uint32_t> words = compile_compute_shader(shader, source);
  ++stats_.compiled;
  std::string why;
  if (!cache_.store(key, words, &why) && log_) log_(BATON_LOG_WARNING, "shader cache: " + why);
  return words;
}

VkDescriptorSetLayout PipelineSet::set_layout(uint32_t bindings) {
  if (auto it = set_layouts_.find(bindings); it != set_layouts_.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  info.bindingCount = bindings;
  info.pBindings = b.data();
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  BATON_VK(vkCreateDescriptorSetLayout, gpu_.device(), &info, nullptr, &layout);
  set_layouts_[bindings] = layout;
  return layout;
}

VkPipelineLayout PipelineSet::layout(uint32_t bindings) {
  if (auto it = layouts_.find(bindings); it != layouts_.end()) return it->second;
  VkDescriptorSetLayout set = set_layout(bindings);
  VkPushConstantRange push{};
  push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  push.size = kPushConstantBytes;
  VkPipelineLayoutCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  info.setLayoutCount = 1;
  info.pSetLayouts = &set;
  info.pushConstantRangeCount = 1;
  info.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  BATON_VK(vkCreatePipelineLayout, gpu_.device(), &info, nullptr, &layout);
  layouts_[bindings] = layout;
  return layout;
}

const Pipeline& PipelineSet::get(const std::string& shader, const Defines& defines, uint32_t bindings) {
  const std::string source = sources_.assemble(shader, defines);
  const std::string key = std::to_string(bindings) + "\n" + source;
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  const std::vector<uint32_t> words = spirv(shader, source);
  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = words.size() * sizeof(uint32_t);
  module_info.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  BATON_VK(vkCreateShaderModule, gpu_.device(), &module_info, nullptr, &module);
  Pipeline p;
  p.set_layout = set_layout(bindings);
  p.layout = layout(bindings);
  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.layout = p.layout;
  const VkResult r = vk_fault("vkCreateComputePipelines")
                         ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                         : vkCreateComputePipelines(gpu_.device(), pipeline_cache_, 1, &info, nullptr, &p.pipeline);
  vkDestroyShaderModule(gpu_.device(), module, nullptr);
  try {
    vk_check(r, "vkCreateComputePipelines");
  } catch (const VulkanError& e) {
    throw VulkanError("vkCreateComputePipelines (shader " + shader + ")", e.result());
  }
  ++stats_.pipelines;
  return pipelines_.emplace(key, p).first->second;
}

}  // namespace baton::vulkan
