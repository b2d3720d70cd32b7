// TFLite's builtin parameter structs, as a TFLite delegate reads them through TfLiteNode::builtin_data.
// The pinned TFLite 2.9 C headers do not include builtin_op_data.h, so the layouts are declared here,
// from TFLite 2.9's public definitions (later versions only append fields, so a delegate built against a
// later TFLite reads these prefixes the same way). Only the structs of options baton's model loader
// parses are filled; see builtin_data_for.
#pragma once

#include <cstddef>
#include <cstdint>

#include "baton/plugin_api.h"

namespace tflite_delegates {

// TfLitePadding and TfLiteFusedActivation are C enums: int-sized.
struct TflConvParams {
  int padding, stride_width, stride_height, activation, dilation_width_factor, dilation_height_factor;
};
struct TflPaddingValues {
  int width, height, width_offset, height_offset;
};
struct TflPoolParams {
  int padding, stride_width, stride_height, filter_width, filter_height, activation;
  TflPaddingValues computed;
};
struct TflDepthwiseConvParams {
  int padding, stride_width, stride_height, depth_multiplier, activation, dilation_width_factor,
      dilation_height_factor;
};
struct TflFullyConnectedParams {
  int activation, weights_format;
  bool keep_num_dims, asymmetric_quantize_inputs;
};
struct TflSoftmaxParams {
  float beta;
};
struct TflConcatenationParams {
  int axis, activation;
};
struct TflAddSubParams {  // TfLiteAddParams and TfLiteSubParams
  int activation;
  bool pot_scale_int16;
};
struct TflActivationParams {  // TfLiteMulParams, TfLiteDivParams, TfLiteL2NormParams
  int activation;
};
struct TflResizeParams {  // TfLiteResizeBilinearParams, TfLiteResizeNearestNeighborParams
  bool align_corners, half_pixel_centers;
};
struct TflReshapeParams {
  int shape[8];
  int num_dimensions;
};
struct TflReducerParams {
  bool keep_dims;
};
struct TflStridedSliceParams {
  int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
};
struct TflSplitParams {  // SPLIT and SPLIT_V
  int num_splits;
};
struct TflPackParams {  // TfLitePackParams {values_count, axis}, TfLiteUnpackParams {num, axis}
  int count, axis;
};
struct TflBlockParams {  // SPACE_TO_DEPTH, DEPTH_TO_SPACE
  int block_size;
};
struct TflTransposeConvParams {
  int padding, stride_width, stride_height;
};
struct TflBatchMatMulParams {
  bool adj_x, adj_y, asymmetric_quantize_inputs;
};
struct TflGatherParams {
  int axis, batch_dims;
};
struct TflLeakyReluParams {
  float alpha;
};
struct TflSqueezeParams {
  int squeeze_dims[8];
  int num_squeeze_dims;
};

// Room for any of the structs above; zeroed for ops whose TFLite struct has no fields.
struct BuiltinData {
  alignas(8) unsigned char bytes[64];
};

// Fills `out` with the TFLite struct of a node's op from its parsed options (zeroed for an op whose
// TFLite struct has no fields). Returns false when TFLite's struct for the op has fields baton's model
// loader does not parse (LSTM, ARG_MAX, ...): such nodes are not shown to the delegate.
bool builtin_data_for(int32_t op_code, const baton_builtin_options& options, BuiltinData* out);

}  // namespace tflite_delegates
