#include "subgraph_builder.h"

#include <algorithm>

namespace baton::xnnpack {

namespace {

size_t element_bytes(int32_t type) {
  switch (type) {
    case BATON_TYPE_UINT8:
    case BATON_TYPE_INT8:
    case BATON_TYPE_BOOL:
      return 1;
    case BATON_TYPE_INT16:
    case BATON_TYPE_FLOAT16:
      return 2;
    case BATON_TYPE_INT64:
    case BATON_TYPE_FLOAT64:
      return 8;
    default:
      return 4;
  }
}

}  // namespace

SubgraphBuilder::SubgraphBuilder(const baton_host_api* api, xnn_subgraph_t subgraph, bool checking_one_node,
                                 bool model_shapes_must_match)
    : api_(api),
      subgraph_(subgraph),
      checking_one_node_(checking_one_node),
      model_shapes_must_match_(model_shapes_must_match) {}

SubgraphBuilder::SubgraphBuilder(const baton_host_api* api, std::function<xnn_subgraph_t()> open,
                                 bool checking_one_node, bool model_shapes_must_match)
    : SubgraphBuilder(api, static_cast<xnn_subgraph_t>(nullptr), checking_one_node, model_shapes_must_match) {
  open_ = std::move(open);
}

xnn_subgraph_t SubgraphBuilder::subgraph() {
  if (!subgraph_) subgraph_ = open_();
  return subgraph_;
}

void SubgraphBuilder::check(xnn_status status, const char* what) const {
  if (status == xnn_status_success) return;
  const char* why = status == xnn_status_invalid_parameter   ? "invalid parameter"
                    : status == xnn_status_unsupported_parameter ? "unsupported parameter"
                    : status == xnn_status_out_of_memory       ? "out of memory"
                    : status == xnn_status_unsupported_hardware ? "unsupported hardware"
                    : status == xnn_status_uninitialized       ? "XNNPACK not initialized"
                                                               : "error";
  refuse(std::string("XNNPACK rejected ") + what + " (" + why + ", status " + std::to_string(status) + ")");
}

uint32_t SubgraphBuilder::define(const ValueType& type, const Dims& dims, const void* data, uint32_t external_id,
                                 uint32_t flags, const char* what) {
  uint32_t id = XNN_INVALID_VALUE_ID;
  if (!type.quantized()) {
    check(xnn_define_tensor_value(subgraph(), xnn_datatype_fp32, dims.size(), dims.data(), data, external_id, flags, &id),
          what);
  } else if (type.channel_scales) {
    if (type.channel_dim >= dims.size() || dims[type.channel_dim] != type.channels) {
      refuse(std::string(what) + ": " + std::to_string(type.channels) + " channel scales for shape " + dims_text(dims));
    }
    check(xnn_define_channelwise_quantized_tensor_value(subgraph(), type.datatype, type.channel_scales, dims.size(),
                                                       type.channel_dim, dims.data(), data, external_id, flags, &id),
          what);
  } else {
    check(xnn_define_quantized_tensor_value(subgraph(), type.datatype, type.zero_point, type.scale, dims.size(),
                                            dims.data(), data, external_id, flags, &id),
          what);
  }
  return id;
}

uint32_t SubgraphBuilder::define_tensor(const baton_tensor* t, const Dims& dims, const void* data, uint32_t external_id,
                                        uint32_t flags, const char* what) {
  return define(value_type(api_, t), dims, data, external_id, flags, what);
}

void SubgraphBuilder::place_tensors_in_scratch(uint32_t first_id, uint32_t count, std::unordered_set<int32_t> keep) {
  in_scratch_ = true;
  keep_ = std::move(keep);
  next_scratch_id_ = first_id;
  scratch_id_end_ = first_id + count;
}

void SubgraphBuilder::add_external_input(const baton_tensor* t, const Dims& dims, uint32_t external_id) {
  const uint32_t id = define_tensor(t, dims, nullptr, external_id, XNN_VALUE_FLAG_EXTERNAL_INPUT, "a partition input");
  values_[api_->tensor_index(t)] = {id, dims};
}

void SubgraphBuilder::add_external_output(const baton_tensor* t, uint32_t external_id) {
  output_ids_[api_->tensor_index(t)] = external_id;
}

const Dims& SubgraphBuilder::dims(const NodeView& node, const baton_tensor* t) {
  input(node, t);
  return values_.at(api_->tensor_index(t)).dims;
}

uint32_t SubgraphBuilder::input(const NodeView& node, const baton_tensor* t) {
  const int32_t index = api_->tensor_index(t);
  if (auto it = values_.find(index); it != values_.end()) {
    if (auto s = scratch_of_.find(index); s != scratch_of_.end()) scratch_[s->second].last_read = position_;
    if (auto k = kept_written_.find(index); k != kept_written_.end()) written_at_ = std::min(written_at_, k->second);
    return it->second.id;
  }
  const Dims dims = node.shape(t);
  uint32_t id = XNN_INVALID_VALUE_ID;
  if (api_->tensor_is_constant(t)) {
    id = define_tensor(t, dims, api_->tensor_data(t), XNN_INVALID_VALUE_ID, 0, "a constant tensor");
  } else if (checking_one_node_) {
    id = define_tensor(t, dims, nullptr, XNN_INVALID_VALUE_ID, 0, "an input tensor");
  } else {
    refuse("tensor " + std::to_string(index) + " is read before the partition defines it");
  }
  values_[index] = {id, dims};
  return id;
}

uint32_t SubgraphBuilder::output(const NodeView& node, const baton_tensor* t, const Dims& dims) {
  const int32_t index = api_->tensor_index(t);
  if (model_shapes_must_match_) {
    const Dims model = node.shape(t);
    if (model != dims) {
      refuse("the model gives output shape " + dims_text(model) + ", the op computes " + dims_text(dims));
    }
  }
  if (values_.count(index)) refuse("tensor " + std::to_string(index) + " is written twice");
  uint32_t id = XNN_INVALID_VALUE_ID;
  if (auto it = output_ids_.find(index); it != output_ids_.end()) {
    id = define_tensor(t, dims, nullptr, it->second, XNN_VALUE_FLAG_EXTERNAL_OUTPUT, "a partition output");
  } else if (in_scratch_ && next_scratch_id_ < scratch_id_end_ && !keep_.count(index)) {
    // Flagged as an output so that XNNPACK leaves its memory to the binding (it still reads it in place).
    const uint32_t external_id = next_scratch_id_++;
    id = define_tensor(t, dims, nullptr, external_id, XNN_VALUE_FLAG_EXTERNAL_OUTPUT, "an output tensor");
    size_t bytes = element_bytes(api_->tensor_type(t));
    for (size_t d : dims) bytes *= d;
    scratch_of_[index] = scratch_.size();
    scratch_.push_back({index, external_id, bytes, written_at_, position_});
  } else {
    id = define_tensor(t, dims, nullptr, XNN_INVALID_VALUE_ID, 0, "an output tensor");
    if (keep_.count(index)) kept_written_[index] = written_at_;
  }
  values_[index] = {id, dims};
  return id;
}

uint32_t SubgraphBuilder::static_value(const void* data, const Dims& dims, const ValueType& type) {
  return define(type, dims, data, XNN_INVALID_VALUE_ID, 0, "a constant");
}

uint32_t SubgraphBuilder::owned_static(std::vector<float> data, const Dims& dims, const ValueType& type) {
  owned_.push_back(std::move(data));
  return define(type, dims, owned_.back().data(), XNN_INVALID_VALUE_ID, 0, "a constant");
}

uint32_t SubgraphBuilder::internal(const Dims& dims, const ValueType& type) {
  return define(type, dims, nullptr, XNN_INVALID_VALUE_ID, 0, "an intermediate value");
}

const float* SubgraphBuilder::owned_scales(std::vector<float> scales) {
  owned_.push_back(std::move(scales));
  return owned_.back().data();
}

}  // namespace baton::xnnpack
