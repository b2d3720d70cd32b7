#include "partition.h"

#include "fusion.h"
#include "ops.h"

namespace baton::vulkan {
namespace {

std::string node_label(const baton_host_api* api, const baton_node* node) {
  const OpDef* def = find_op(api, node);
  return "node " + std::to_string(api->node_index(node)) + " " + (def ? def->name : "?");
}

std::string kib(int64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

std::string tuning_text(const ExecutableStats& s) {
  if (s.tuned_now == 0 && s.tuned_from_table == 0) return "";
  std::string text = "; workgroups: ";
  if (s.tuned_now > 0) {
    text += std::to_string(s.tuned_now) + " dispatches tuned (" + std::to_string(s.timed) + " shapes timed in " +
            std::to_string(static_cast<int64_t>(s.tuning_ms + 0.5)) + " ms)";
  }
  if (s.tuned_now > 0 && s.tuned_from_table > 0) text += ", ";
  if (s.tuned_from_table > 0) text += std::to_string(s.tuned_from_table) + " from the tuning table";
  return text;
}

}  // namespace

void PluginState::check(const baton_node* node) const {
  const OpDef* def = find_op(api, node);
  if (!def) refuse("not an op this delegate declares");
  GraphBuilder scratch(api, limits, true, f16);
  def->plan(scratch, NodeView(api, node));
}

std::vector<Dims> Partition::input_shapes() const {
  std::vector<Dims> shapes;
  NodeView view(plugin_.api, nullptr);
  for (baton_tensor* t : inputs_) shapes.push_back(view.shape(t));
  return shapes;
}

void Partition::build(const baton_partition* partition) {
  const baton_host_api* api = plugin_.api;
  partition_ = partition;
  inputs_.clear();
  outputs_.clear();
  for (int32_t i = 0; i < api->partition_input_count(partition); ++i) inputs_.push_back(api->partition_input(partition, i));
  for (int32_t i = 0; i < api->partition_output_count(partition); ++i) outputs_.push_back(api->partition_output(partition, i));

  // Shapes inside follow from the inputs' current shapes, so the same code serves a first build and a
  // rebuild after an input was resized.
  GraphBuilder graph(api, plugin_.limits, false, plugin_.f16, plugin_.f16_math);
  for (baton_tensor* t : inputs_) graph.add_input(t);
  const Fusions fusions = find_fusions(api, partition);
  for (const auto& [producer, act] : fusions.activation_of) graph.fuse_activation(producer, act);
  const int32_t nodes = api->partition_node_count(partition);
  for (int32_t n = 0; n < nodes; ++n) {
    const baton_node* node = api->partition_node(partition, n);
    const std::string label = node_label(api, node);
    const OpDef* def = find_op(api, node);
    if (!def) refuse(label + ": not an op this delegate declares");
    graph.set_label(label);
    try {
      if (fusions.folded.count(node)) {
        graph.alias(api->node_output(node, 0), api->node_input(node, 0));  // applied by its producer
        continue;
      }
      def->plan(graph, NodeView(api, node));
    } catch (const Refusal& r) {
      refuse(label + ": " + r.what());
    }
  }
  std::vector<Dims> out_dims;
  for (baton_tensor* t : outputs_) out_dims.push_back(graph.dims(graph.add_output(t)));
  GpuGraph planned = graph.finish();

  const PipelineStats before = plugin_.pipelines->stats();
  auto executable = std::make_unique<Executable>(*plugin_.gpu, *plugin_.pipelines, std::move(planned), plugin_.tuning.get());
  const PipelineStats& after = plugin_.pipelines->stats();
  const ExecutableStats& s = executable->stats();
  plugin_.log(BATON_LOG_INFO,
              "partition " + std::to_string(api->partition_id(partition)) + ": " + std::to_string(nodes) + " nodes in " +
                  std::to_string(s.dispatches) + " dispatches and " + std::to_string(s.copies) + " copies with " +
                  std::to_string(s.barriers) + " barriers; " + (plugin_.f16 ? "float16" : "float32") + " arena " +
                  kib(s.arena_bytes) + " (" + kib(s.unshared_bytes) +
                  " without reuse), weights " + kib(s.weight_bytes) + "; shaders: " +
                  std::to_string(after.compiled - before.compiled) + " compiled, " +
                  std::to_string(after.from_cache - before.from_cache) + " from the disk cache, " +
                  std::to_string(after.pipelines - before.pipelines) + " new pipelines" + tuning_text(s));
  if (after.pipelines != before.pipelines) plugin_.pipelines->save_pipeline_cache();
  if (s.tuned_now > 0) plugin_.tuning->save();
  executable_ = std::move(executable);
  built_shapes_ = input_shapes();
  output_dims_ = std::move(out_dims);
  input_data_.assign(inputs_.size(), nullptr);
  output_data_.assign(outputs_.size(), nullptr);
}

baton_status Partition::prepare(const baton_partition* partition, baton_error* error) {
  const baton_host_api* api = plugin_.api;
  partition_ = partition;
  if (input_shapes() != built_shapes_) {
    try {
      build(partition);
    } catch (const Refusal& r) {
      api->error_set(error, (std::string("rebuilding for the new input shapes: ") + r.what()).c_str());
      return BATON_UNSUPPORTED;
    }
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const Dims& d = output_dims_[i];
    const baton_status st = api->tensor_set_shape(outputs_[i], static_cast<int32_t>(d.size()), d.data(), error);
    if (st != BATON_OK) return st;
  }
  return BATON_OK;
}

baton_status Partition::invoke(baton_error* error) {
  const baton_host_api* api = plugin_.api;
  const GpuGraph& g = executable_->graph();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    input_data_[i] = api->tensor_data(inputs_[i]);
    if (!input_data_[i] || static_cast<int64_t>(api->tensor_byte_size(inputs_[i])) != g.tensors[g.uploads[i]].bytes) {
      api->error_set(error, ("input tensor " + std::to_string(api->tensor_index(inputs_[i])) + " has no memory or another size than prepared").c_str());
      return BATON_ERROR;
    }
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    output_data_[o] = api->tensor_mutable_data(outputs_[o]);
    if (!output_data_[o] || static_cast<int64_t>(api->tensor_byte_size(outputs_[o])) != g.tensors[g.downloads[o]].bytes) {
      api->error_set(error, ("output tensor " + std::to_string(api->tensor_index(outputs_[o])) + " has no memory or another size than prepared").c_str());
      return BATON_ERROR;
    }
  }
  executable_->run(input_data_, output_data_);
  return BATON_OK;
}

}  // namespace baton::vulkan
