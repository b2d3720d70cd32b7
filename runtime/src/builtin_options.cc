// A node's builtin options, from the model's flatbuffer union into the plugin ABI's
// baton_builtin_options (plugin_api.h), and the defaults of options a model leaves out.
#include "builtin_options.h"

#include <algorithm>

#include "baton/tflite_ops.h"
#include "tflite_generated.h"

namespace baton {

namespace fb = baton::tflite;

void read_builtin_options(const fb::Operator* op, baton_builtin_options& o) {
  o.struct_size = sizeof(baton_builtin_options);
  // A union type with no table behind it passes the verifier: read it as absent options (defaults).
  if (!op->builtin_options()) return;
  o.kind = op->builtin_options_type();
  switch (op->builtin_options_type()) {
    case fb::BuiltinOptions_Conv2DOptions: {
      auto* p = op->builtin_options_as_Conv2DOptions();
      o.u.conv = {p->padding(), p->stride_w(), p->stride_h(), p->dilation_w_factor(),
                  p->dilation_h_factor(), 1, p->fused_activation_function()};
      break;
    }
    case fb::BuiltinOptions_DepthwiseConv2DOptions: {
      auto* p = op->builtin_options_as_DepthwiseConv2DOptions();
      o.u.conv = {p->padding(), p->stride_w(), p->stride_h(), p->dilation_w_factor(),
                  p->dilation_h_factor(), p->depth_multiplier(), p->fused_activation_function()};
      break;
    }
    case fb::BuiltinOptions_Pool2DOptions: {
      auto* p = op->builtin_options_as_Pool2DOptions();
      o.u.pool = {p->padding(), p->stride_w(), p->stride_h(), p->filter_width(), p->filter_height(),
                  p->fused_activation_function()};
      break;
    }
    case fb::BuiltinOptions_FullyConnectedOptions: {
      auto* p = op->builtin_options_as_FullyConnectedOptions();
      o.u.fully_connected = {p->fused_activation_function(), p->weights_format(), p->keep_num_dims(),
                             p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_AddOptions: {
      auto* p = op->builtin_options_as_AddOptions();
      o.u.elementwise = {p->fused_activation_function(), p->pot_scale_int16()};
      break;
    }
    case fb::BuiltinOptions_SubOptions: {
      auto* p = op->builtin_options_as_SubOptions();
      o.u.elementwise = {p->fused_activation_function(), p->pot_scale_int16()};
      break;
    }
    case fb::BuiltinOptions_MulOptions:
      o.u.elementwise = {op->builtin_options_as_MulOptions()->fused_activation_function(), 0};
      break;
    case fb::BuiltinOptions_DivOptions:
      o.u.elementwise = {op->builtin_options_as_DivOptions()->fused_activation_function(), 0};
      break;
    case fb::BuiltinOptions_ConcatenationOptions: {
      auto* p = op->builtin_options_as_ConcatenationOptions();
      o.u.concat = {p->axis(), p->fused_activation_function()};
      break;
    }
    case fb::BuiltinOptions_SoftmaxOptions:
      o.u.softmax = {op->builtin_options_as_SoftmaxOptions()->beta()};
      break;
    case fb::BuiltinOptions_ReshapeOptions: {
      auto* shape = op->builtin_options_as_ReshapeOptions()->new_shape();
      o.u.reshape = {shape ? static_cast<int32_t>(shape->size()) : -1, shape ? shape->data() : nullptr};
      break;
    }
    case fb::BuiltinOptions_ResizeBilinearOptions: {
      auto* p = op->builtin_options_as_ResizeBilinearOptions();
      o.u.resize = {p->align_corners(), p->half_pixel_centers()};
      break;
    }
    case fb::BuiltinOptions_ResizeNearestNeighborOptions: {
      auto* p = op->builtin_options_as_ResizeNearestNeighborOptions();
      o.u.resize = {p->align_corners(), p->half_pixel_centers()};
      break;
    }
    case fb::BuiltinOptions_ReducerOptions:
      o.u.reducer = {op->builtin_options_as_ReducerOptions()->keep_dims()};
      break;
    case fb::BuiltinOptions_StridedSliceOptions: {
      auto* p = op->builtin_options_as_StridedSliceOptions();
      o.u.strided_slice = {p->begin_mask(), p->end_mask(), p->ellipsis_mask(), p->new_axis_mask(),
                           p->shrink_axis_mask(), p->offset()};
      break;
    }
    case fb::BuiltinOptions_SplitOptions:
      o.u.split = {op->builtin_options_as_SplitOptions()->num_splits()};
      break;
    case fb::BuiltinOptions_SplitVOptions:
      o.u.split = {op->builtin_options_as_SplitVOptions()->num_splits()};
      break;
    case fb::BuiltinOptions_PackOptions: {
      auto* p = op->builtin_options_as_PackOptions();
      o.u.pack = {p->values_count(), p->axis()};
      break;
    }
    case fb::BuiltinOptions_UnpackOptions: {
      auto* p = op->builtin_options_as_UnpackOptions();
      o.u.pack = {p->num(), p->axis()};
      break;
    }
    case fb::BuiltinOptions_DepthToSpaceOptions:
      o.u.block = {op->builtin_options_as_DepthToSpaceOptions()->block_size()};
      break;
    case fb::BuiltinOptions_SpaceToDepthOptions:
      o.u.block = {op->builtin_options_as_SpaceToDepthOptions()->block_size()};
      break;
    case fb::BuiltinOptions_TransposeConvOptions: {
      auto* p = op->builtin_options_as_TransposeConvOptions();
      o.u.transpose_conv = {p->padding(), p->stride_w(), p->stride_h(), p->fused_activation_function()};
      break;
    }
    case fb::BuiltinOptions_BatchMatMulOptions: {
      auto* p = op->builtin_options_as_BatchMatMulOptions();
      o.u.batch_matmul = {p->adj_x(), p->adj_y(), p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_GatherOptions: {
      auto* p = op->builtin_options_as_GatherOptions();
      o.u.gather = {p->axis(), p->batch_dims()};
      break;
    }
    case fb::BuiltinOptions_L2NormOptions:  // its one field is the fused activation
      o.u.elementwise = {op->builtin_options_as_L2NormOptions()->fused_activation_function(), 0};
      break;
    case fb::BuiltinOptions_LeakyReluOptions:
      o.u.leaky_relu = {op->builtin_options_as_LeakyReluOptions()->alpha()};
      break;
    case fb::BuiltinOptions_MirrorPadOptions:
      o.u.mirror_pad = {op->builtin_options_as_MirrorPadOptions()->mode()};
      break;
    case fb::BuiltinOptions_CumsumOptions: {
      auto* p = op->builtin_options_as_CumsumOptions();
      o.u.cumsum = {p->exclusive(), p->reverse()};
      break;
    }
    case fb::BuiltinOptions_OneHotOptions:
      o.u.one_hot = {op->builtin_options_as_OneHotOptions()->axis()};
      break;
    case fb::BuiltinOptions_LocalResponseNormalizationOptions: {
      auto* p = op->builtin_options_as_LocalResponseNormalizationOptions();
      o.u.lrn = {p->radius(), p->bias(), p->alpha(), p->beta()};
      break;
    }
    case fb::BuiltinOptions_RNNOptions: {
      auto* p = op->builtin_options_as_RNNOptions();
      o.u.recurrent = {p->fused_activation_function(), 0, 0, 0, 0.0f, 0.0f, 0, p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_SequenceRNNOptions: {
      auto* p = op->builtin_options_as_SequenceRNNOptions();
      o.u.recurrent = {p->fused_activation_function(), p->time_major(), 0, 0, 0.0f, 0.0f, 0,
                       p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_BidirectionalSequenceRNNOptions: {
      auto* p = op->builtin_options_as_BidirectionalSequenceRNNOptions();
      o.u.recurrent = {p->fused_activation_function(), p->time_major(), p->merge_outputs(), 0, 0.0f, 0.0f, 0,
                       p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_SVDFOptions: {
      auto* p = op->builtin_options_as_SVDFOptions();
      o.u.recurrent = {p->fused_activation_function(), 0, 0, p->rank(), 0.0f, 0.0f, 0, p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_LSTMOptions: {
      auto* p = op->builtin_options_as_LSTMOptions();
      o.u.recurrent = {p->fused_activation_function(), 0, 0, 0, p->cell_clip(), p->proj_clip(), p->kernel_type(),
                       p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_UnidirectionalSequenceLSTMOptions: {
      auto* p = op->builtin_options_as_UnidirectionalSequenceLSTMOptions();
      o.u.recurrent = {p->fused_activation_function(), p->time_major(), 0, 0, p->cell_clip(), p->proj_clip(), 0,
                       p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_BidirectionalSequenceLSTMOptions: {
      auto* p = op->builtin_options_as_BidirectionalSequenceLSTMOptions();
      o.u.recurrent = {p->fused_activation_function(), p->time_major(), p->merge_outputs(), 0, p->cell_clip(),
                       p->proj_clip(), 0, p->asymmetric_quantize_inputs()};
      break;
    }
    case fb::BuiltinOptions_GeluOptions:
      o.u.gelu = {op->builtin_options_as_GeluOptions()->approximate()};
      break;
    case fb::BuiltinOptions_Conv3DOptions: {  // CONV_3D and CONV_3D_TRANSPOSE
      auto* p = op->builtin_options_as_Conv3DOptions();
      o.u.conv3d = {p->padding(), p->stride_d(), p->stride_w(), p->stride_h(), p->dilation_d_factor(),
                    p->dilation_w_factor(), p->dilation_h_factor(), p->fused_activation_function()};
      break;
    }
    case fb::BuiltinOptions_BucketizeOptions: {
      auto* b = op->builtin_options_as_BucketizeOptions()->boundaries();
      o.u.bucketize = {b ? static_cast<int32_t>(b->size()) : 0, b ? b->data() : nullptr};
      break;
    }
    case fb::BuiltinOptions_ReverseSequenceOptions: {
      auto* p = op->builtin_options_as_ReverseSequenceOptions();
      o.u.reverse_sequence = {p->seq_dim(), p->batch_dim()};
      break;
    }
    case fb::BuiltinOptions_FakeQuantOptions: {
      auto* p = op->builtin_options_as_FakeQuantOptions();
      o.u.fake_quant = {p->min(), p->max(), p->num_bits(), p->narrow_range()};
      break;
    }
    case fb::BuiltinOptions_SparseToDenseOptions:
      o.u.sparse_to_dense = {op->builtin_options_as_SparseToDenseOptions()->validate_indices()};
      break;
    case fb::BuiltinOptions_RandomOptions: {  // RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL
      auto* p = op->builtin_options_as_RandomOptions();
      o.u.random = {p->seed(), p->seed2()};
      break;
    }
    case fb::BuiltinOptions_EmbeddingLookupSparseOptions:
      o.u.embedding_lookup_sparse = {op->builtin_options_as_EmbeddingLookupSparseOptions()->combiner()};
      break;
    case fb::BuiltinOptions_LSHProjectionOptions:
      o.u.lsh_projection = {op->builtin_options_as_LSHProjectionOptions()->type()};
      break;
    case fb::BuiltinOptions_SkipGramOptions: {
      auto* p = op->builtin_options_as_SkipGramOptions();
      o.u.skip_gram = {p->ngram_size(), p->max_skip_size(), p->include_all_ngrams() ? 1 : 0};
      break;
    }
    case fb::BuiltinOptions_WhileOptions:
    case fb::BuiltinOptions_IfOptions:
    case fb::BuiltinOptions_CallOnceOptions:
    case fb::BuiltinOptions_VarHandleOptions:
    case fb::BuiltinOptions_HashtableOptions:
      break;  // read_control_options()
    case fb::BuiltinOptions_SqueezeOptions: {
      auto* dims = op->builtin_options_as_SqueezeOptions()->squeeze_dims();
      o.u.squeeze = {dims ? static_cast<int32_t>(dims->size()) : 0, dims ? dims->data() : nullptr};
      break;
    }
    default: break;
  }
}

namespace {

// An int64 array of the model as the ABI borrows it: its count and its first element (NULL when absent).
template <typename V>
void borrow(const V* v, int32_t& count, const int64_t*& data) {
  count = v ? static_cast<int32_t>(v->size()) : 0;
  data = v && v->size() > 0 ? v->data() : nullptr;
}

// The reduction a STABLEHLO_REDUCE_WINDOW body computes: its subgraph holds exactly one op, a binary op
// TFLite's runtime recognises (ADD or STABLEHLO_ADD, ...). Anything else reads as UNSUPPORTED; the kernel
// refuses it.
int32_t body_reduction(const fb::Model* model, int32_t index, bool empty_replaces = false) {
  if (!model->subgraphs() || index < 0 || static_cast<uint32_t>(index) >= model->subgraphs()->size()) {
    return BATON_WINDOW_REDUCTION_UNSUPPORTED;
  }
  const auto* ops = model->subgraphs()->Get(static_cast<uint32_t>(index))->operators();
  if (empty_replaces && (!ops || ops->size() == 0)) return BATON_WINDOW_REDUCTION_REPLACE;
  if (!ops || ops->size() != 1 || !model->operator_codes()) return BATON_WINDOW_REDUCTION_UNSUPPORTED;
  const uint32_t code_index = ops->Get(0)->opcode_index();
  if (code_index >= model->operator_codes()->size()) return BATON_WINDOW_REDUCTION_UNSUPPORTED;
  const auto* code = model->operator_codes()->Get(code_index);
  const int32_t op = std::max<int32_t>(code->deprecated_builtin_code(), code->builtin_code());
  switch (op) {
    case BATON_OP_ADD: case BATON_OP_STABLEHLO_ADD: return BATON_WINDOW_REDUCTION_ADD;
    case BATON_OP_MUL: case BATON_OP_STABLEHLO_MULTIPLY: return BATON_WINDOW_REDUCTION_MUL;
    case BATON_OP_MAXIMUM: case BATON_OP_STABLEHLO_MAXIMUM: return BATON_WINDOW_REDUCTION_MAXIMUM;
    case BATON_OP_MINIMUM: case BATON_OP_STABLEHLO_MINIMUM: return BATON_WINDOW_REDUCTION_MINIMUM;
    case BATON_OP_LOGICAL_AND: case BATON_OP_STABLEHLO_AND: return BATON_WINDOW_REDUCTION_ALL;
    case BATON_OP_LOGICAL_OR: case BATON_OP_STABLEHLO_OR: return BATON_WINDOW_REDUCTION_ANY;
    default: return BATON_WINDOW_REDUCTION_UNSUPPORTED;
  }
}

}  // namespace

void read_builtin_options_2(const fb::Model* model, const fb::Operator* op, baton_builtin_options& o) {
  o.struct_size = sizeof(baton_builtin_options);
  if (!op->builtin_options_2()) return;
  switch (op->builtin_options_2_type()) {
    case fb::BuiltinOptions2_ReduceWindowOptions:
      o.u.reduce_window = {static_cast<int32_t>(op->builtin_options_2_as_ReduceWindowOptions()->reduce_function())};
      break;
    case fb::BuiltinOptions2_StablehloPadOptions: {
      auto* p = op->builtin_options_2_as_StablehloPadOptions();
      auto& u = o.u.stablehlo_pad;
      borrow(p->edge_padding_low(), u.edge_padding_low_count, u.edge_padding_low);
      borrow(p->edge_padding_high(), u.edge_padding_high_count, u.edge_padding_high);
      borrow(p->interior_padding(), u.interior_padding_count, u.interior_padding);
      break;
    }
    case fb::BuiltinOptions2_StablehloReduceWindowOptions: {
      auto* p = op->builtin_options_2_as_StablehloReduceWindowOptions();
      auto& u = o.u.stablehlo_reduce_window;
      borrow(p->window_dimensions(), u.window_dimensions_count, u.window_dimensions);
      borrow(p->window_strides(), u.window_strides_count, u.window_strides);
      borrow(p->base_dilations(), u.base_dilations_count, u.base_dilations);
      borrow(p->window_dilations(), u.window_dilations_count, u.window_dilations);
      borrow(p->padding(), u.padding_count, u.padding);
      u.body_subgraph_index = p->body_subgraph_index();
      u.body = body_reduction(model, u.body_subgraph_index);
      break;
    }
    case fb::BuiltinOptions2_StablehloScatterOptions: {
      auto* p = op->builtin_options_2_as_StablehloScatterOptions();
      auto& u = o.u.stablehlo_scatter;
      borrow(p->update_window_dims(), u.update_window_dims_count, u.update_window_dims);
      borrow(p->inserted_window_dims(), u.inserted_window_dims_count, u.inserted_window_dims);
      borrow(p->scatter_dims_to_operand_dims(), u.scatter_dims_to_operand_dims_count, u.scatter_dims_to_operand_dims);
      u.index_vector_dim = p->index_vector_dim();
      u.indices_are_sorted = p->indices_are_sorted() ? 1 : 0;
      u.unique_indices = p->unique_indices() ? 1 : 0;
      u.update_computation_subgraph_index = p->update_computation_subgraph_index();
      u.body = body_reduction(model, u.update_computation_subgraph_index, true);
      break;
    }
    case fb::BuiltinOptions2_StablehloRngBitGeneratorOptions:
      o.u.rng_bit_generator = {static_cast<int32_t>(op->builtin_options_2_as_StablehloRngBitGeneratorOptions()->algorithm())};
      break;
    case fb::BuiltinOptions2_StablehloGatherOptions: {
      auto* p = op->builtin_options_2_as_StablehloGatherOptions();
      auto& u = o.u.stablehlo_gather;
      borrow(p->offset_dims(), u.offset_dims_count, u.offset_dims);
      borrow(p->collapsed_slice_dims(), u.collapsed_slice_dims_count, u.collapsed_slice_dims);
      borrow(p->start_index_map(), u.start_index_map_count, u.start_index_map);
      borrow(p->slice_sizes(), u.slice_sizes_count, u.slice_sizes);
      u.index_vector_dim = p->index_vector_dim();
      u.indices_are_sorted = p->indices_are_sorted() ? 1 : 0;
      break;
    }
    default: return;
  }
  o.kind = BATON_OPTIONS_2_KIND + op->builtin_options_2_type();
}

// Options that the model leaves out read as TFLite's schema defaults, except where a kernel would
// divide by them: those get the value TFLite's own parser substitutes.
void default_builtin_options(int32_t op_code, baton_builtin_options& o) {
  o.struct_size = sizeof(baton_builtin_options);
  // The ops whose options carry an array take only options of their own type: a model may write any type,
  // and another's union member would hand plugins a pointer made of its fields. TFLite's parser reads
  // such options as absent (builtin_options_as_X() is null), and so does the host.
  const int32_t own = op_code == BATON_OP_RESHAPE     ? fb::BuiltinOptions_ReshapeOptions
                      : op_code == BATON_OP_SQUEEZE   ? fb::BuiltinOptions_SqueezeOptions
                      : op_code == BATON_OP_BUCKETIZE ? fb::BuiltinOptions_BucketizeOptions
                                                      : -1;
  if (own >= 0 && o.kind != own) {
    o.kind = 0;
    o.u = {};
  }
  if (o.kind != 0) return;
  switch (op_code) {
    case BATON_OP_CONV_2D: case BATON_OP_DEPTHWISE_CONV_2D:
      o.u.conv.dilation_w = o.u.conv.dilation_h = 1;
      o.u.conv.depth_multiplier = 1;
      break;
    case BATON_OP_SOFTMAX:
      o.u.softmax.beta = 1.0f;
      break;
    case BATON_OP_RESHAPE:
      o.u.reshape.new_shape_count = -1;
      break;
    case BATON_OP_CONV_3D: case BATON_OP_CONV_3D_TRANSPOSE:  // the schema's dilation defaults
      o.u.conv3d.dilation_d = o.u.conv3d.dilation_w = o.u.conv3d.dilation_h = 1;
      break;
    default: break;
  }
}

}  // namespace baton
