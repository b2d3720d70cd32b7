#include "executable.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "baton/float16.hpp"
#include "memory_plan.h"
#include "vk_error.h"

namespace baton::vulkan {
namespace {

// How long an invoke may take on the device before it is reported as failed.
constexpr uint64_t kFenceTimeoutNs = 120ull * 1000 * 1000 * 1000;

struct Range {
  int buffer;
  int64_t begin, end;
  bool overlaps(const Range& o) const { return buffer == o.buffer && begin < o.end && o.begin < end; }
};

bool any_overlap(const std::vector<Range>& a, const std::vector<Range>& b) {
  for (const Range& x : a) {
    for (const Range& y : b) {
      if (x.overlaps(y)) return true;
    }
  }
  return false;
}

VkCommandBuffer allocate_commands(VkDevice device, VkCommandPool pool) {
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  BATON_VK(vkAllocateCommandBuffers, device, &alloc, &cb);
  return cb;
}

// A primary command buffer of `pool` for one job at prepare (the weights' upload, a timing), freed when
// it goes out of scope.
class TransientCommands {
 public:
  TransientCommands(VkDevice device, VkCommandPool pool)
      : device_(device), pool_(pool), cb_(allocate_commands(device, pool)) {}
  ~TransientCommands() { vkFreeCommandBuffers(device_, pool_, 1, &cb_); }
  TransientCommands(const TransientCommands&) = delete;
  TransientCommands& operator=(const TransientCommands&) = delete;
  VkCommandBuffer get() const { return cb_; }

 private:
  VkDevice device_;
  VkCommandPool pool_;
  VkCommandBuffer cb_ = VK_NULL_HANDLE;
};

}  // namespace

Executable::Executable(const Gpu& gpu, PipelineSet& pipelines, GpuGraph graph, TuningTable* tuning)
    : gpu_(gpu), pipelines_(pipelines), graph_(std::move(graph)) {
  try {
    place_tensors();
    for (int b = 0; b < 4; ++b) {
      const MemoryUse use = b == kStageIn ? MemoryUse::kUpload : b == kStageOut ? MemoryUse::kDownload : MemoryUse::kDevice;
      buffers_[b] = std::make_unique<GpuBuffer>(gpu_, static_cast<VkDeviceSize>(sizes_[b]), use);
    }
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.queueFamilyIndex = gpu_.queue_family();
    BATON_VK(vkCreateCommandPool, gpu_.device(), &pool, nullptr, &command_pool_);
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    BATON_VK(vkCreateFence, gpu_.device(), &fence, nullptr, &fence_);
    upload_weights();
    if (tuning) tune(*tuning);
    record();
  } catch (...) {
    release();
    throw;
  }
}

Executable::~Executable() { release(); }

void Executable::release() {
  VkDevice d = gpu_.device();
  if (in_flight_) {
    // A run that failed while the device still worked on it: its buffers must outlive the work.
    vkQueueWaitIdle(gpu_.queue());
    in_flight_ = false;
  }
  if (fence_) vkDestroyFence(d, fence_, nullptr);
  if (command_pool_) vkDestroyCommandPool(d, command_pool_, nullptr);  // frees the command buffers
  if (descriptor_pool_) vkDestroyDescriptorPool(d, descriptor_pool_, nullptr);
  fence_ = VK_NULL_HANDLE;
  command_pool_ = VK_NULL_HANDLE;
  descriptor_pool_ = VK_NULL_HANDLE;
  for (auto& b : buffers_) b.reset();
}

void Executable::place_tensors() {
  const int64_t alignment = std::max<int64_t>(16, static_cast<int64_t>(gpu_.limits().minStorageBufferOffsetAlignment));
  auto align = [&](int64_t v) { return (v + alignment - 1) / alignment * alignment; };
  places_.assign(graph_.tensors.size(), Place{});
  // Lifetimes of the activations, from the steps that touch them.
  std::vector<int> first(graph_.tensors.size(), -1), last(graph_.tensors.size(), -1);
  for (size_t s = 0; s < graph_.steps.size(); ++s) {
    for (int id : graph_.steps[s].bindings) {
      if (first[id] < 0) first[id] = static_cast<int>(s);
      last[id] = static_cast<int>(s);
    }
  }
  std::vector<Lifetime> lifetimes;
  std::vector<int> activation_ids;
  for (size_t id = 0; id < graph_.tensors.size(); ++id) {
    const GpuTensor& t = graph_.tensors[id];
    Place& p = places_[id];
    p.bytes = t.bytes;
    switch (t.kind) {
      case TensorKind::kActivation:
        if (first[id] < 0) break;  // never touched: no memory
        lifetimes.push_back({t.bytes, first[id], last[id]});
        activation_ids.push_back(static_cast<int>(id));
        stats_.unshared_bytes += align(t.bytes);
        break;
      case TensorKind::kConstant:
        p.buffer = kWeights;
        p.offset = sizes_[kWeights];
        sizes_[kWeights] = align(p.offset + t.bytes);
        break;
      case TensorKind::kUpload:
        p.buffer = kStageIn;
        p.offset = sizes_[kStageIn];
        sizes_[kStageIn] = align(p.offset + t.bytes);
        break;
      case TensorKind::kDownload:
        p.buffer = kStageOut;
        p.offset = sizes_[kStageOut];
        sizes_[kStageOut] = align(p.offset + t.bytes);
        break;
    }
  }
  const MemoryPlan plan = plan_memory(lifetimes, alignment);
  for (size_t i = 0; i < activation_ids.size(); ++i) {
    places_[activation_ids[i]].buffer = kArena;
    places_[activation_ids[i]].offset = plan.offsets[i];
  }
  sizes_[kArena] = plan.total;
  stats_.arena_bytes = plan.total;
  stats_.weight_bytes = sizes_[kWeights];
}

VkBuffer Executable::buffer(int id) const { return buffers_[places_[id].buffer]->handle(); }

void Executable::upload_weights() {
  if (sizes_[kWeights] == 0) return;
  GpuBuffer staging(gpu_, static_cast<VkDeviceSize>(sizes_[kWeights]), MemoryUse::kUpload);
  auto* base = static_cast<unsigned char*>(staging.mapped());
  for (size_t id = 0; id < graph_.tensors.size(); ++id) {
    GpuTensor& t = graph_.tensors[id];
    if (t.kind != TensorKind::kConstant) continue;
    std::vector<float> data(t.floats);
    if (t.fill) t.fill(data.data());
    if (t.half && !t.int32) {
      auto* out = reinterpret_cast<uint16_t*>(base + places_[id].offset);  // aligned: offsets are 16-byte multiples
      for (size_t i = 0; i < data.size(); ++i) out[i] = float_to_half(data[i]);
    } else {
      std::memcpy(base + places_[id].offset, data.data(), data.size() * sizeof(float));
    }
    t.fill = nullptr;  // the host's data may go; the device has its copy
  }
  const TransientCommands commands(gpu_.device(), command_pool_);
  VkCommandBuffer cb = commands.get();
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  BATON_VK(vkBeginCommandBuffer, cb, &begin);
  VkBufferCopy region{0, 0, static_cast<VkDeviceSize>(sizes_[kWeights])};
  vkCmdCopyBuffer(cb, staging.handle(), buffers_[kWeights]->handle(), 1, &region);
  BATON_VK(vkEndCommandBuffer, cb);
  submit_and_wait_for(cb);
}

void Executable::submit_and_wait_for(VkCommandBuffer cb) {
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  BATON_VK(vkQueueSubmit, gpu_.queue(), 1, &submit, fence_);
  in_flight_ = true;
  BATON_VK(vkWaitForFences, gpu_.device(), 1, &fence_, VK_TRUE, kFenceTimeoutNs);
  in_flight_ = false;
  BATON_VK(vkResetFences, gpu_.device(), 1, &fence_);
}

void Executable::tune(TuningTable& table) {
  const DeviceLimits limits = device_limits(gpu_.limits());
  const bool measure = table.measure();  // asked for, on a device that writes timestamps
  if (!measure && table.size() == 0) return;  // nothing to read or time: no keys to build
  VkDevice d = gpu_.device();
  VkQueryPool queries = VK_NULL_HANDLE;
  VkDescriptorPool sets = VK_NULL_HANDLE;
  struct Release {
    VkDevice d;
    VkQueryPool& q;
    VkDescriptorPool& s;
    ~Release() {
      if (q) vkDestroyQueryPool(d, q, nullptr);
      if (s) vkDestroyDescriptorPool(d, s, nullptr);
    }
  } release{d, queries, sets};
  const auto start = std::chrono::steady_clock::now();
  for (Step& step : graph_.steps) {
    if (step.shader.empty() || step.extent == std::array<int64_t, 3>{0, 0, 0}) continue;
    const std::string key = tuning_key(step);
    if (const Local* known = table.find(key); known && workgroup_fits(*known, step.extent, limits)) {
      set_workgroup(step, *known);
      ++stats_.tuned_from_table;
      continue;
    }
    if (!measure) continue;
    const std::vector<Local> candidates = workgroup_candidates(step.extent, step.local, limits);
    if (candidates.size() > 1) {
      if (!queries) {
        VkQueryPoolCreateInfo q{};
        q.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        q.queryType = VK_QUERY_TYPE_TIMESTAMP;
        q.queryCount = 4;
        BATON_VK(vkCreateQueryPool, d, &q, nullptr, &queries);
      }
      if (!sets) {
        size_t most = 1;
        for (const Step& s : graph_.steps) most = std::max(most, s.bindings.size());
        VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(16 * most)};
        VkDescriptorPoolCreateInfo pool{};
        pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
        pool.maxSets = 16;
        pool.poolSizeCount = 1;
        pool.pPoolSizes = &size;
        BATON_VK(vkCreateDescriptorPool, d, &pool, nullptr, &sets);
      }
      // The rule's shape stays unless another is clearly faster: timings this close are noise.
      double rule_ns = std::numeric_limits<double>::infinity(), best_ns = rule_ns;
      Local best = step.local;
      for (const Local& c : candidates) {
        Step trial = step;
        set_workgroup(trial, c);
        const double ns = time_dispatch(trial, queries, sets);
        ++stats_.timed;
        if (c == step.local) rule_ns = ns;
        if (ns < best_ns) {
          best_ns = ns;
          best = c;
        }
      }
      BATON_VK(vkResetDescriptorPool, d, sets, 0);
      if (best_ns < 0.97 * rule_ns) set_workgroup(step, best);
    }
    table.put(key, step.local);
    ++stats_.tuned_now;
  }
  stats_.tuning_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double Executable::time_dispatch(const Step& step, VkQueryPool queries, VkDescriptorPool sets) {
  VkDevice d = gpu_.device();
  const Pipeline& pipeline = pipelines_.get(step.shader, step.defines, static_cast<uint32_t>(step.bindings.size()));
  const VkDescriptorSet set = bind_tensors(step, pipeline, sets);
  const TransientCommands commands(d, command_pool_);
  VkCommandBuffer cb = commands.get();
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  BATON_VK(vkBeginCommandBuffer, cb, &begin);
  vkCmdResetQueryPool(cb, queries, 0, 4);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
  vkCmdPushConstants(cb, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes, step.params.data());
  // Three runs of the dispatch, each waiting for the one before (as in the partition), a timestamp
  // between them. The tensors hold whatever the arena held: these shaders' work does not depend on it.
  vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 0);
  for (uint32_t i = 1; i <= 3; ++i) {
    if (i > 1) {
      VkMemoryBarrier barrier{};
      barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0,
                           nullptr, 0, nullptr);
    }
    vkCmdDispatch(cb, step.groups[0], step.groups[1], step.groups[2]);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, i);
  }
  BATON_VK(vkEndCommandBuffer, cb);
  const uint32_t bits = gpu_.timestamp_bits();
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  double least = std::numeric_limits<double>::infinity();
  for (int round = 0; round < 2; ++round) {  // the first also warms the caches
    submit_and_wait_for(cb);
    uint64_t ticks[4] = {0, 0, 0, 0};
    BATON_VK(vkGetQueryPoolResults, d, queries, 0, 4, sizeof ticks, ticks, sizeof(uint64_t),
             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    for (int i = 0; i < 3; ++i) {
      const uint64_t delta = (ticks[i + 1] - ticks[i]) & mask;
      least = std::min(least, static_cast<double>(delta) * gpu_.limits().timestampPeriod);
    }
  }
  return least;
}

VkDescriptorSet Executable::bind_tensors(const Step& step, const Pipeline& pipeline, VkDescriptorPool pool) {
  VkDescriptorSetAllocateInfo set_info{};
  set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  set_info.descriptorPool = pool;
  set_info.descriptorSetCount = 1;
  set_info.pSetLayouts = &pipeline.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  BATON_VK(vkAllocateDescriptorSets, gpu_.device(), &set_info, &set);
  std::vector<VkDescriptorBufferInfo> infos(step.bindings.size());
  std::vector<VkWriteDescriptorSet> descriptor_writes(step.bindings.size());
  for (size_t b = 0; b < step.bindings.size(); ++b) {
    const Place& p = places_[step.bindings[b]];
    infos[b] = {buffer(step.bindings[b]), static_cast<VkDeviceSize>(p.offset), static_cast<VkDeviceSize>(std::max<int64_t>(p.bytes, 4))};
    VkWriteDescriptorSet& w = descriptor_writes[b];
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstSet = set;
    w.dstBinding = static_cast<uint32_t>(b);
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &infos[b];
  }
  vkUpdateDescriptorSets(gpu_.device(), static_cast<uint32_t>(descriptor_writes.size()), descriptor_writes.data(), 0, nullptr);
  return set;
}

void Executable::record() {
  VkDevice d = gpu_.device();
  size_t sets = 0, descriptors = 0;
  for (const Step& s : graph_.steps) {
    if (s.shader.empty()) continue;
    ++sets;
    descriptors += s.bindings.size();
  }
  if (sets > 0) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, static_cast<uint32_t>(descriptors)};
    VkDescriptorPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool.maxSets = static_cast<uint32_t>(sets);
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    BATON_VK(vkCreateDescriptorPool, d, &pool, nullptr, &descriptor_pool_);
  }
  commands_ = allocate_commands(d, command_pool_);  // freed with the pool
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  BATON_VK(vkBeginCommandBuffer, commands_, &begin);

  std::vector<Range> pending_reads, pending_writes;  // since the last barrier
  auto range_of = [&](int id) {
    const Place& p = places_[id];
    return Range{p.buffer, p.offset, p.offset + p.bytes};
  };
  for (const Step& step : graph_.steps) {
    std::vector<Range> reads, writes;
    for (size_t b = 0; b < step.bindings.size(); ++b) {
      (static_cast<int>(b) < step.written ? writes : reads).push_back(range_of(step.bindings[b]));
    }
    if (any_overlap(reads, pending_writes) || any_overlap(writes, pending_writes) || any_overlap(writes, pending_reads)) {
      VkMemoryBarrier barrier{};
      barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                              VK_ACCESS_TRANSFER_WRITE_BIT;
      const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
      vkCmdPipelineBarrier(commands_, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
      ++stats_.barriers;
      pending_reads.clear();
      pending_writes.clear();
    }
    pending_reads.insert(pending_reads.end(), reads.begin(), reads.end());
    pending_writes.insert(pending_writes.end(), writes.begin(), writes.end());

    if (step.shader.empty()) {
      const Place& dst = places_[step.bindings[0]];
      const Place& src = places_[step.bindings[1]];
      VkBufferCopy region{static_cast<VkDeviceSize>(src.offset), static_cast<VkDeviceSize>(dst.offset),
                          static_cast<VkDeviceSize>(step.copy_bytes)};
      vkCmdCopyBuffer(commands_, buffer(step.bindings[1]), buffer(step.bindings[0]), 1, &region);
      ++stats_.copies;
      continue;
    }
    const Pipeline& pipeline = pipelines_.get(step.shader, step.defines, static_cast<uint32_t>(step.bindings.size()));
    const VkDescriptorSet set = bind_tensors(step, pipeline, descriptor_pool_);
    vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
    vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(commands_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes, step.params.data());
    vkCmdDispatch(commands_, step.groups[0], step.groups[1], step.groups[2]);
    ++stats_.dispatches;
  }
  // The downloads become visible to the host once the fence has signalled.
  VkMemoryBarrier to_host{};
  to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  to_host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
  BATON_VK(vkEndCommandBuffer, commands_);
}

void Executable::run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  if (!broken_.empty()) throw std::runtime_error("an earlier run failed (" + broken_ + ")");
  try {
    submit_and_wait(inputs, outputs);
  } catch (const std::exception& e) {
    broken_ = e.what();
    throw;
  }
  // Input the shaders could not compute with fails this run only.
  const auto* out_base = static_cast<const unsigned char*>(buffers_[kStageOut]->mapped());
  for (const GpuGraph::Check& c : graph_.checks) {
    int32_t word[2];
    std::memcpy(word, out_base + places_[c.tensor].offset, sizeof word);
    if (word[0] != 0) throw std::runtime_error(c.what + " (" + std::to_string(word[1]) + ")");
  }
}

void Executable::submit_and_wait(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
  auto* in_base = static_cast<unsigned char*>(buffers_[kStageIn]->mapped());
  for (size_t i = 0; i < graph_.uploads.size() && i < inputs.size(); ++i) {
    const Place& p = places_[graph_.uploads[i]];
    std::memcpy(in_base + p.offset, inputs[i], static_cast<size_t>(p.bytes));
  }
  auto* out_words = static_cast<unsigned char*>(buffers_[kStageOut]->mapped());
  for (const GpuGraph::Check& c : graph_.checks) std::memset(out_words + places_[c.tensor].offset, 0, 8);
  submit_and_wait_for(commands_);
  const auto* out_base = static_cast<const unsigned char*>(buffers_[kStageOut]->mapped());
  for (size_t o = 0; o < graph_.downloads.size() && o < outputs.size(); ++o) {
    const Place& p = places_[graph_.downloads[o]];
    std::memcpy(outputs[o], out_base + p.offset, static_cast<size_t>(p.bytes));
  }
}

}  // namespace baton::vulkan
