// Load, the checking half (model_loader.h): the flatbuffer verified, then each subgraph, tensor, node and
// signature read into the Model with the checks the schema cannot express.
#include "model_loader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "baton/string_tensor.hpp"
#include "baton/tflite_ops.h"
#include "builtin_options.h"
#include "tflite_generated.h"

namespace baton {

namespace fb = baton::tflite;

// Turns a verified flatbuffer into a Model, checking its meaning on the way. Each check's message says
// where (subgraph, tensor or node) and what is wrong.
class ModelLoader {
 public:
  ModelLoader(std::string source, const uint8_t* bytes, size_t size, const LoadLimits& limits)
      : source_(std::move(source)), bytes_(bytes), size_(size), limits_(limits) {}

  Status load(Model& model) {
    flatbuffers::Verifier::Options vopts;
    vopts.max_tables = 10'000'000;
    flatbuffers::Verifier verifier(bytes_, size_, vopts);
    if (size_ < 8) return fail("file is too small to be a model (" + std::to_string(size_) + " bytes)");
    if (!fb::ModelBufferHasIdentifier(bytes_)) {
      return fail("not a TFLite model: file identifier is not \"TFL3\"");
    }
    if (!fb::VerifyModelBuffer(verifier)) {
      return fail("the flatbuffer failed verification (truncated or corrupt: an offset or size "
                  "points outside the file)");
    }
    root_ = fb::GetModel(bytes_);
    model.schema_version = root_->version();
    if (root_->description()) model.description = root_->description()->str();

    if (Status s = read_buffers(); !s) return s;
    if (Status s = read_operator_codes(); !s) return s;
    if (Status s = read_metadata(model); !s) return s;
    if (!root_->subgraphs() || root_->subgraphs()->size() == 0) return fail("the model has no subgraph");
    for (uint32_t i = 0; i < root_->subgraphs()->size(); ++i) {
      SubgraphInfo sg;
      if (Status s = read_subgraph(i, root_->subgraphs()->Get(i), sg, model); !s) return s;
      model.subgraphs.push_back(std::move(sg));
    }
    return read_signatures(model);
  }

 private:
  struct OpCode {
    int32_t code;
    std::string custom_name;
    int32_t version;
  };

  Status fail(const std::string& what) const { return Status::error(source_ + ": " + what); }

  Status read_buffers() {
    const auto* buffers = root_->buffers();
    if (!buffers) return Status::ok();
    buffers_.resize(buffers->size());
    for (uint32_t i = 0; i < buffers->size(); ++i) {
      const fb::Buffer* b = buffers->Get(i);
      if (!b) continue;
      if (b->data() && b->data()->size() > 0) {
        buffers_[i] = {b->data()->data(), b->data()->size()};
      } else if (b->offset() > 1) {
        // Data stored after the flatbuffer, addressed from the start of the file.
        uint64_t offset = b->offset(), length = b->size();
        if (offset > size_ || length > size_ - offset) {
          return fail("buffer " + std::to_string(i) + " points outside the file (offset " +
                      std::to_string(offset) + ", size " + std::to_string(length) + ", file " +
                      std::to_string(size_) + " bytes)");
        }
        buffers_[i] = {bytes_ + offset, static_cast<size_t>(length)};
      }
    }
    return Status::ok();
  }

  Status read_operator_codes() {
    const auto* codes = root_->operator_codes();
    if (!codes) return Status::ok();
    for (uint32_t i = 0; i < codes->size(); ++i) {
      const fb::OperatorCode* c = codes->Get(i);
      if (!c) return fail("operator code " + std::to_string(i) + " is missing");
      OpCode op;
      op.code = std::max<int32_t>(c->deprecated_builtin_code(), c->builtin_code());
      op.version = c->version();
      if (op.code == BATON_OP_CUSTOM) {
        if (!c->custom_code() || c->custom_code()->size() == 0) {
          return fail("operator code " + std::to_string(i) + " is CUSTOM but has no custom name");
        }
        op.custom_name = c->custom_code()->str();
      } else if (op.code < 0 || op.code > fb::BuiltinOperator_MAX) {
        return fail("operator code " + std::to_string(i) + " has unknown builtin op " +
                    std::to_string(op.code));
      }
      if (op.version < 1) {
        return fail("operator code " + std::to_string(i) + " (" + op_name(op.code) +
                    ") has invalid version " + std::to_string(op.version));
      }
      opcodes_.push_back(std::move(op));
    }
    return Status::ok();
  }

  Status read_metadata(Model& model) {
    if (!root_->metadata()) return Status::ok();
    for (uint32_t i = 0; i < root_->metadata()->size(); ++i) {
      const fb::Metadata* m = root_->metadata()->Get(i);
      if (!m) continue;
      MetadataInfo info;
      info.name = m->name() ? m->name()->str() : std::string();
      if (m->buffer() >= buffers_.size()) {
        return fail("metadata \"" + info.name + "\" names buffer " + std::to_string(m->buffer()) +
                    " but the model has " + std::to_string(buffers_.size()));
      }
      info.data = buffers_[m->buffer()];
      if (info.name == "min_runtime_version") {
        std::string v(reinterpret_cast<const char*>(info.data.data()), info.data.size());
        v = v.substr(0, v.find('\0'));
        model.min_runtime_version = v;
      }
      model.metadata.push_back(std::move(info));
    }
    return Status::ok();
  }

  Status read_quantization(const fb::QuantizationParameters* q, TensorInfo& t, const std::string& where) {
    // Per-block scales live in another tensor of the subgraph: read_subgraph checks it once every tensor
    // is read (read_block_scales). What LiteRT runs is taken: INT4 codes, no zero points.
    if (q && q->details_type() == fb::QuantizationDetails_BlockwiseQuantization) {
      const auto* b = q->details_as_BlockwiseQuantization();
      const std::string what = where + ": blockwise quantization (scales in tensor " +
                               std::to_string(b ? b->scales() : -1) + ", blocks of " +
                               std::to_string(b ? b->block_size() : 0) + ")";
      if (!b) return fail(what + " has no details");
      if (t.type != BATON_TYPE_INT4) {
        return fail(what + " of a " + std::string(type_name(t.type)) +
                    " tensor is not supported (LiteRT runs INT4 codes only)");
      }
      if (b->zero_points() != -1) {
        return fail(what + " with zero points (tensor " + std::to_string(b->zero_points()) +
                    ") is not supported (LiteRT reads none)");
      }
      if (b->block_size() <= 0 || t.shape.empty() || t.shape.back() % b->block_size() != 0) {
        return fail(what + ": the block size must be positive and divide the last dimension (" +
                    std::to_string(t.shape.empty() ? 0 : t.shape.back()) + ")");
      }
      t.quant.block_size = b->block_size();
      t.quant.block_scales_tensor = b->scales();
      return Status::ok();
    }
    if (!q || !q->scale() || q->scale()->size() == 0) return Status::ok();
    t.quant.scales.assign(q->scale()->begin(), q->scale()->end());
    if (q->zero_point() && q->zero_point()->size() > 0) {
      if (q->zero_point()->size() != q->scale()->size()) {
        return fail(where + ": " + std::to_string(q->scale()->size()) + " quantization scales but " +
                    std::to_string(q->zero_point()->size()) + " zero points");
      }
      // All zero (symmetric weights, per channel: most of an 8-bit model's quantization data) is kept as
      // none, which the plugin ABI gives as NULL: a copy of it cost MoveNet int8 288 KB.
      if (std::any_of(q->zero_point()->begin(), q->zero_point()->end(), [](int64_t z) { return z != 0; })) {
        t.quant.zero_points.assign(q->zero_point()->begin(), q->zero_point()->end());
      }
    }
    t.quant.quantized_dimension = q->quantized_dimension();
    if (t.quant.scales.size() > 1) {
      int32_t dim = t.quant.quantized_dimension;
      if (dim < 0 || dim >= static_cast<int32_t>(t.shape.size()) ||
          static_cast<size_t>(t.shape[dim]) != t.quant.scales.size()) {
        return fail(where + ": per-channel quantization with " + std::to_string(t.quant.scales.size()) +
                    " scales does not match dimension " + std::to_string(dim) + " of its shape");
      }
    }
    return Status::ok();
  }

  static std::vector<int32_t> index_vector(const fb::DimensionMetadata* d, bool segments) {
    std::vector<int32_t> out;
    auto type = segments ? d->array_segments_type() : d->array_indices_type();
    const void* v = segments ? d->array_segments() : d->array_indices();
    if (!v) return out;
    switch (type) {
      case fb::SparseIndexVector_Int32Vector: {
        auto* values = static_cast<const fb::Int32Vector*>(v)->values();
        if (values) out.assign(values->begin(), values->end());
        break;
      }
      case fb::SparseIndexVector_Uint16Vector: {
        auto* values = static_cast<const fb::Uint16Vector*>(v)->values();
        if (values) out.assign(values->begin(), values->end());
        break;
      }
      case fb::SparseIndexVector_Uint8Vector: {
        auto* values = static_cast<const fb::Uint8Vector*>(v)->values();
        if (values) out.assign(values->begin(), values->end());
        break;
      }
      default: break;
    }
    return out;
  }

  Status read_sparsity(const fb::SparsityParameters* sp, TensorInfo& t, const std::string& where) {
    auto s = std::make_shared<Sparsity>();
    if (sp->traversal_order()) s->traversal_order.assign(sp->traversal_order()->begin(), sp->traversal_order()->end());
    if (sp->block_map()) s->block_map.assign(sp->block_map()->begin(), sp->block_map()->end());
    if (sp->dim_metadata()) {
      for (const fb::DimensionMetadata* d : *sp->dim_metadata()) {
        if (!d) return fail(where + ": sparsity dimension metadata is missing");
        Sparsity::Dimension dim;
        dim.sparse = d->format() == fb::DimensionType_SPARSE_CSR;
        dim.dense_size = d->dense_size();
        if (dim.sparse) {
          dim.segments = index_vector(d, true);
          dim.indices = index_vector(d, false);
        }
        s->dims.push_back(std::move(dim));
      }
    }
    const size_t rank = t.shape.size();
    if (s->traversal_order.size() != rank + s->block_map.size() || s->dims.size() != s->traversal_order.size()) {
      return fail(where + ": sparsity metadata does not match the tensor's rank " + std::to_string(rank));
    }
    t.sparsity = std::move(s);
    return Status::ok();
  }

  Status read_tensor(uint32_t sg, uint32_t i, const fb::Tensor* ft, TensorInfo& t, Model& model) {
    std::string where = "subgraph " + std::to_string(sg) + " tensor " + std::to_string(i);
    if (!ft) return fail(where + " is missing");
    t.index = static_cast<int32_t>(i);
    if (ft->name()) {
      t.name = ft->name()->str();
      where += " \"" + t.name + "\"";
    }
    if (static_cast<int>(ft->type()) < 0 || static_cast<int>(ft->type()) > BATON_TYPE_BFLOAT16) {
      return fail(where + ": unknown tensor type " + std::to_string(ft->type()));
    }
    t.type = static_cast<baton_tensor_type>(ft->type());
    if (ft->shape()) t.shape.assign(ft->shape()->begin(), ft->shape()->end());
    if (ft->shape_signature()) t.shape_signature.assign(ft->shape_signature()->begin(), ft->shape_signature()->end());
    if (t.shape.size() > 16) return fail(where + ": rank " + std::to_string(t.shape.size()) + " is too large");
    size_t bytes = 0;
    if (!checked_byte_size(t.shape, t.type, &bytes)) {
      return fail(where + ": shape has a negative dimension or its byte size overflows");
    }
    if (bytes > limits_.max_tensor_bytes) {
      return fail(where + ": " + std::to_string(bytes) + " bytes, over the tensor limit of " +
                  std::to_string(limits_.max_tensor_bytes));
    }
    t.is_variable = ft->is_variable();
    if (Status s = read_quantization(ft->quantization(), t, where); !s) return s;
    if (ft->sparsity()) {
      if (Status s = read_sparsity(ft->sparsity(), t, where); !s) return s;
    }
    if (ft->buffer() >= buffers_.size() && !(ft->buffer() == 0 && buffers_.empty())) {
      return fail(where + ": buffer index " + std::to_string(ft->buffer()) + " is out of range (" +
                  std::to_string(buffers_.size()) + " buffers)");
    }
    std::span<const uint8_t> data = buffers_.empty() ? std::span<const uint8_t>() : buffers_[ft->buffer()];
    if (!data.empty()) {
      if (!t.sparsity && t.type != BATON_TYPE_STRING && data.size() < bytes) {
        return fail(where + ": buffer " + std::to_string(ft->buffer()) + " holds " +
                    std::to_string(data.size()) + " bytes but shape and type need " + std::to_string(bytes));
      }
      if (!t.sparsity && t.type != BATON_TYPE_STRING) data = data.first(bytes);
      const size_t align = std::max<size_t>(1, element_size(t.type));
      if (reinterpret_cast<uintptr_t>(data.data()) % align != 0) {
        auto copy = std::make_unique<uint8_t[]>(data.size());
        std::memcpy(copy.get(), data.data(), data.size());
        data = {copy.get(), data.size()};
        model.realigned_.push_back(std::move(copy));
      }
      if (t.type == BATON_TYPE_STRING && !t.sparsity) {
        // Kernels read its offsets as they are: they must stay inside the buffer. (For a string tensor,
        // `bytes` above is its element count: checked_byte_size counts a size-less type as one byte.)
        const std::string why = strings::check_packed(data.data(), data.size(), static_cast<int64_t>(bytes));
        if (!why.empty()) return fail(where + ": buffer " + std::to_string(ft->buffer()) + " is not a string buffer: " + why);
      }
      t.data = data;
      t.data_in_mapped_file = model.mapping_ && data.data() >= static_cast<const uint8_t*>(model.mapping_) &&
                              data.data() + data.size() <= static_cast<const uint8_t*>(model.mapping_) + model.mapping_size_;
      t.is_constant = true;
      model.constant_bytes += data.size();
    }
    return Status::ok();
  }

  // The subgraphs a control-flow node runs (each must exist), a variable's name and a hash table's id.
  Status read_control_options(const fb::Operator* op, NodeInfo& node, const std::string& where) {
    if (!is_runtime_op(node.op_code)) return Status::ok();
    if (auto* w = op->builtin_options_as_WhileOptions()) {
      node.callees = {w->cond_subgraph_index(), w->body_subgraph_index()};
    } else if (auto* i = op->builtin_options_as_IfOptions()) {
      node.callees = {i->then_subgraph_index(), i->else_subgraph_index()};
    } else if (auto* c = op->builtin_options_as_CallOnceOptions()) {
      node.callees = {c->init_subgraph_index()};
    } else if (auto* v = op->builtin_options_as_VarHandleOptions()) {
      if (v->container()) node.var_container = v->container()->str();
      if (v->shared_name()) node.var_shared_name = v->shared_name()->str();
    } else if (auto* h = op->builtin_options_as_HashtableOptions()) {
      node.table_id = h->table_id();
      node.table_key_type = static_cast<baton_tensor_type>(h->key_dtype());
      node.table_value_type = static_cast<baton_tensor_type>(h->value_dtype());
    } else if (auto* c = op->builtin_options_2_as_StableHLOCompositeOptions()) {
      node.callees = {c->decomposition_subgraph_index()};
      if (c->name()) node.composite_name = c->name()->str();
      if (c->composite_attributes()) {
        node.composite_attributes = {c->composite_attributes()->data(), c->composite_attributes()->size()};
      }
      node.composite_version = c->version();
    } else if (node.op_code == BATON_OP_STABLEHLO_COMPOSITE) {
      return fail(where + " has no StableHLOCompositeOptions");
    } else if (auto* k = op->builtin_options_2_as_StablehloCaseOptions()) {
      if (k->branch_subgraph_indices()) node.callees.assign(k->branch_subgraph_indices()->begin(), k->branch_subgraph_indices()->end());
    }
    if (node.op_code == BATON_OP_STABLEHLO_CASE && node.callees.empty()) {
      return fail(where + " names no branch subgraphs (StablehloCaseOptions.branch_subgraph_indices)");
    }
    const size_t count = root_->subgraphs()->size();
    const size_t wanted = (node.op_code == BATON_OP_CALL_ONCE || node.op_code == BATON_OP_STABLEHLO_COMPOSITE) ? 1
                          : (node.op_code == BATON_OP_IF || node.op_code == BATON_OP_WHILE)                  ? 2
                          : node.op_code == BATON_OP_STABLEHLO_CASE ? node.callees.size()
                                                                    : 0;
    // Options of another op's type may name other subgraphs than this op runs (a CALL_ONCE with
    // WhileOptions): only the ones it runs count, and only those are checked.
    if (node.callees.size() < wanted) {
      return fail(where + " names " + std::to_string(node.callees.size()) + " subgraphs in its options; " +
                  node_op_name(node) + " runs " + std::to_string(wanted));
    }
    node.callees.resize(wanted);
    for (int32_t c : node.callees) {
      if (c < 0 || static_cast<size_t>(c) >= count) {
        return fail(where + " names subgraph " + std::to_string(c) + ", out of range (" + std::to_string(count) +
                    " subgraphs)");
      }
    }
    return Status::ok();
  }

  // A blockwise-quantized tensor's scales: a constant FLOAT16 or FLOAT32 tensor of the same subgraph, one
  // scale per block (the tensor's shape with its last dimension divided by the block size).
  Status read_block_scales(TensorInfo& t, const std::vector<TensorInfo>& tensors, const std::string& where) {
    Quantization& q = t.quant;
    if (q.block_size == 0) return Status::ok();
    const std::string what = where + " tensor " + std::to_string(t.index) + ": its block scales, tensor " +
                             std::to_string(q.block_scales_tensor);
    if (q.block_scales_tensor < 0 || static_cast<size_t>(q.block_scales_tensor) >= tensors.size()) {
      return fail(what + ", are out of range (" + std::to_string(tensors.size()) + " tensors)");
    }
    const TensorInfo& s = tensors[q.block_scales_tensor];
    if (!s.is_constant) return fail(what + ", are not a constant");
    if (s.type != BATON_TYPE_FLOAT16 && s.type != BATON_TYPE_FLOAT32) {
      return fail(what + ", are " + std::string(type_name(s.type)) + ", not FLOAT16 or FLOAT32");
    }
    std::vector<int32_t> want = t.shape;
    want.back() /= q.block_size;
    if (s.shape != want) {
      return fail(what + ", have shape " + shape_text(s.shape) + ", not " + shape_text(want) + " (one per block of " +
                  std::to_string(q.block_size) + ")");
    }
    q.block_scale_type = s.type;
    q.block_scales = s.data;
    return Status::ok();
  }

  Status read_subgraph(uint32_t index, const fb::SubGraph* fsg, SubgraphInfo& sg, Model& model) {
    const std::string where = "subgraph " + std::to_string(index);
    if (!fsg) return fail(where + " is missing");
    if (fsg->name()) sg.name = fsg->name()->str();
    const uint32_t tensor_count = fsg->tensors() ? fsg->tensors()->size() : 0;
    sg.tensors.resize(tensor_count);
    for (uint32_t i = 0; i < tensor_count; ++i) {
      if (Status s = read_tensor(index, i, fsg->tensors()->Get(i), sg.tensors[i], model); !s) return s;
    }
    for (TensorInfo& t : sg.tensors) {
      if (Status s = read_block_scales(t, sg.tensors, where); !s) return s;
    }
    auto check_index = [&](int32_t t, const std::string& what, bool optional) -> Status {
      if (optional && t == -1) return Status::ok();
      if (t < 0 || static_cast<uint32_t>(t) >= tensor_count) {
        return fail(where + ": " + what + " names tensor " + std::to_string(t) + ", out of range (" +
                    std::to_string(tensor_count) + " tensors)");
      }
      return Status::ok();
    };
    if (fsg->inputs()) {
      for (int32_t t : *fsg->inputs()) {
        if (Status s = check_index(t, "an input", false); !s) return s;
        sg.inputs.push_back(t);
      }
    }
    if (fsg->outputs()) {
      for (int32_t t : *fsg->outputs()) {
        if (Status s = check_index(t, "an output", false); !s) return s;
        sg.outputs.push_back(t);
      }
    }
    // Execution order is node order. A tensor is available once it is a subgraph input, a constant, a
    // variable, or the output of an earlier node; reading anything else is a cycle or an order error.
    std::vector<int32_t> producer(tensor_count, -2);  // -2 none, -1 graph input/constant, else node
    for (int32_t t : sg.inputs) producer[t] = -1;
    for (uint32_t t = 0; t < tensor_count; ++t) {
      if (sg.tensors[t].is_constant || sg.tensors[t].is_variable) producer[t] = -1;
    }
    const uint32_t node_count = fsg->operators() ? fsg->operators()->size() : 0;
    std::vector<int32_t> later_producer(tensor_count, -1);
    for (uint32_t n = 0; n < node_count; ++n) {
      const fb::Operator* op = fsg->operators()->Get(n);
      if (op && op->outputs()) {
        for (int32_t t : *op->outputs()) {
          if (t >= 0 && static_cast<uint32_t>(t) < tensor_count && later_producer[t] < 0) later_producer[t] = n;
        }
      }
    }
    sg.nodes.reserve(node_count);  // each read below is kept: no growth by doubling (a third unused)
    for (uint32_t n = 0; n < node_count; ++n) {
      const fb::Operator* op = fsg->operators()->Get(n);
      const std::string nwhere = "node " + std::to_string(n);
      if (!op) return fail(where + ": " + nwhere + " is missing");
      NodeInfo node;
      node.index = static_cast<int32_t>(n);
      if (op->opcode_index() >= opcodes_.size()) {
        return fail(where + ": " + nwhere + " uses operator code " + std::to_string(op->opcode_index()) +
                    ", out of range (" + std::to_string(opcodes_.size()) + " codes)");
      }
      const OpCode& code = opcodes_[op->opcode_index()];
      node.op_code = code.code;
      node.custom_name = code.custom_name;
      node.version = code.version;
      const std::string nname = nwhere + " (" + node_op_name(node) + ")";
      if (op->inputs()) {
        for (int32_t t : *op->inputs()) {
          if (Status s = check_index(t, nname + " input", true); !s) return s;
          if (t >= 0 && producer[t] == -2) {
            if (later_producer[t] >= 0) {
              return fail(where + ": " + nname + " reads tensor " + std::to_string(t) +
                          " which node " + std::to_string(later_producer[t]) +
                          " produces later (a cycle or nodes out of execution order)");
            }
            size_t bytes = 0;
            checked_byte_size(sg.tensors[t].shape, sg.tensors[t].type, &bytes);
            if (bytes != 0) {
              return fail(where + ": " + nname + " reads tensor " + std::to_string(t) +
                          " that no node produces, is not an input and holds no data");
            }
          }
          node.inputs.push_back(t);
        }
      }
      if (op->outputs()) {
        for (int32_t t : *op->outputs()) {
          if (Status s = check_index(t, nname + " output", false); !s) return s;
          if (producer[t] != -2) {
            return fail(where + ": " + nname + " writes tensor " + std::to_string(t) +
                        (producer[t] == -1 ? ", which is an input or a constant"
                                           : ", which node " + std::to_string(producer[t]) + " already writes"));
          }
          producer[t] = static_cast<int32_t>(n);
          node.outputs.push_back(t);
        }
      }
      if (op->intermediates()) {
        for (int32_t t : *op->intermediates()) {
          if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size()) {
            return fail(where + ": " + nname + " intermediate tensor " + std::to_string(t) + " is out of range");
          }
          node.intermediates.push_back(t);
        }
      }
      read_builtin_options(op, node.options);
      read_builtin_options_2(root_, op, node.options);
      default_builtin_options(node.op_code, node.options);
      if (Status s = read_control_options(op, node, where + ": " + nname); !s) return s;
      if (op->custom_options()) node.custom_options = {op->custom_options()->data(), op->custom_options()->size()};
      sg.nodes.push_back(std::move(node));
    }
    for (int32_t t : sg.outputs) {
      if (producer[t] == -2) {
        return fail(where + ": output tensor " + std::to_string(t) + " is never produced");
      }
    }
    return Status::ok();
  }

  Status read_signatures(Model& model) {
    if (!root_->signature_defs()) return Status::ok();
    for (const fb::SignatureDef* def : *root_->signature_defs()) {
      if (!def) continue;
      SignatureInfo sig;
      sig.key = def->signature_key() ? def->signature_key()->str() : std::string();
      sig.subgraph = static_cast<int32_t>(def->subgraph_index());
      if (sig.subgraph < 0 || static_cast<size_t>(sig.subgraph) >= model.subgraphs.size()) {
        return fail("signature \"" + sig.key + "\" names subgraph " + std::to_string(sig.subgraph) +
                    ", out of range");
      }
      const size_t tensors = model.subgraphs[sig.subgraph].tensors.size();
      auto read_maps = [&](const auto* maps, auto& out) -> Status {
        if (!maps) return Status::ok();
        for (const fb::TensorMap* m : *maps) {
          if (!m) continue;
          if (m->tensor_index() >= tensors) {
            return fail("signature \"" + sig.key + "\" names tensor " + std::to_string(m->tensor_index()) +
                        ", out of range");
          }
          out.emplace_back(m->name() ? m->name()->str() : std::string(), static_cast<int32_t>(m->tensor_index()));
        }
        return Status::ok();
      };
      if (Status s = read_maps(def->inputs(), sig.inputs); !s) return s;
      if (Status s = read_maps(def->outputs(), sig.outputs); !s) return s;
      model.signatures.push_back(std::move(sig));
    }
    return Status::ok();
  }

  std::string source_;
  const uint8_t* bytes_;
  size_t size_;
  LoadLimits limits_;
  const fb::Model* root_ = nullptr;
  std::vector<std::span<const uint8_t>> buffers_;
  std::vector<OpCode> opcodes_;
};

Status read_model(Model& model, const uint8_t* bytes, size_t size, const LoadLimits& limits) {
  ModelLoader loader(model.source(), bytes, size, limits);
  return loader.load(model);
}

}  // namespace baton
