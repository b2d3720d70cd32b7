#include "tflite_params.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace tflite_delegates {

namespace {

// TfLitePadding: 0 unknown, 1 SAME, 2 VALID; baton's (the model's): 0 SAME, 1 VALID.
int padding(int32_t baton_padding) { return baton_padding + 1; }

// TFLite keeps RESHAPE's new_shape and SQUEEZE's squeeze_dims in 8 ints; longer lists cannot be expressed.
bool copy_dims(int32_t count, const int32_t* dims, int (&to)[8], int* to_count) {
  if (count > 8) return false;
  *to_count = 0;
  if (count > 0 && dims) {
    std::copy_n(dims, count, to);
    *to_count = count;
  }
  return true;
}

template <typename T>
bool put(BuiltinData* out, const T& value) {
  static_assert(sizeof(T) <= sizeof(out->bytes));
  std::memcpy(out->bytes, &value, sizeof(T));
  return true;
}

// Options tables of the schema that have no fields (Pad, Transpose, Slice, ...): TFLite's struct is
// empty too, so a zeroed block is what it reads.
bool fieldless_kind(int32_t kind) {
  static constexpr int32_t kinds[] = {22, 24, 25, 26, 33, 34, 36, 38, 39, 41, 42, 43, 44, 45, 46, 47,
                                      48, 51, 52, 53, 54, 56, 60, 62, 63, 65, 66, 67, 68, 72, 73, 76,
                                             78, 82, 83, 84, 85, 86, 88, 89, 90, 91, 95, 96, 97, 98, 99, 100};
  return std::find(std::begin(kinds), std::end(kinds), kind) != std::end(kinds);
}

}  // namespace

bool builtin_data_for(int32_t op_code, const baton_builtin_options& o, BuiltinData* out) {
  std::memset(out->bytes, 0, sizeof(out->bytes));
  const auto& u = o.u;
  switch (op_code) {
    case 3:  // CONV_2D
      return put(out, TflConvParams{padding(u.conv.padding), u.conv.stride_w, u.conv.stride_h, u.conv.activation,
                                    u.conv.dilation_w, u.conv.dilation_h});
    case 4:  // DEPTHWISE_CONV_2D
      return put(out, TflDepthwiseConvParams{padding(u.conv.padding), u.conv.stride_w, u.conv.stride_h,
                                             u.conv.depth_multiplier, u.conv.activation, u.conv.dilation_w,
                                             u.conv.dilation_h});
    case 1: case 12: case 17:  // AVERAGE_POOL_2D, L2_POOL_2D, MAX_POOL_2D
      return put(out, TflPoolParams{padding(u.pool.padding), u.pool.stride_w, u.pool.stride_h, u.pool.filter_w,
                                    u.pool.filter_h, u.pool.activation, {}});
    case 9:  // FULLY_CONNECTED
      return put(out, TflFullyConnectedParams{u.fully_connected.activation, u.fully_connected.weights_format,
                                              u.fully_connected.keep_num_dims != 0,
                                              u.fully_connected.asymmetric_quantize_inputs != 0});
    case 0: case 41:  // ADD, SUB
      return put(out, TflAddSubParams{u.elementwise.activation, u.elementwise.pot_scale_int16 != 0});
    case 18: case 42: case 11:  // MUL, DIV, L2_NORMALIZATION
      return put(out, TflActivationParams{u.elementwise.activation});
    case 2:  // CONCATENATION
      return put(out, TflConcatenationParams{u.concat.axis, u.concat.activation});
    case 25:  // SOFTMAX
      return put(out, TflSoftmaxParams{u.softmax.beta});
    case 22: {  // RESHAPE
      TflReshapeParams p{};
      if (!copy_dims(u.reshape.new_shape_count, u.reshape.new_shape, p.shape, &p.num_dimensions)) return false;
      return put(out, p);
    }
    case 43: {  // SQUEEZE
      TflSqueezeParams p{};
      if (!copy_dims(u.squeeze.squeeze_dims_count, u.squeeze.squeeze_dims, p.squeeze_dims, &p.num_squeeze_dims)) {
        return false;
      }
      return put(out, p);
    }
    case 23: case 97:  // RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR
      return put(out, TflResizeParams{u.resize.align_corners != 0, u.resize.half_pixel_centers != 0});
    case 40: case 74: case 81: case 82: case 89: case 91: case 140:  // MEAN, SUM, REDUCE_*
      return put(out, TflReducerParams{u.reducer.keep_dims != 0});
    case 45:  // STRIDED_SLICE
      return put(out, TflStridedSliceParams{u.strided_slice.begin_mask, u.strided_slice.end_mask,
                                            u.strided_slice.ellipsis_mask, u.strided_slice.new_axis_mask,
                                            u.strided_slice.shrink_axis_mask});
    case 49: case 102:  // SPLIT, SPLIT_V
      return put(out, TflSplitParams{u.split.num_splits});
    case 83: case 88:  // PACK, UNPACK
      return put(out, TflPackParams{u.pack.count, u.pack.axis});
    case 5: case 26:  // DEPTH_TO_SPACE, SPACE_TO_DEPTH
      return put(out, TflBlockParams{u.block.block_size});
    case 67:  // TRANSPOSE_CONV (TFLite 2.9's struct has no activation)
      return put(out, TflTransposeConvParams{padding(u.transpose_conv.padding), u.transpose_conv.stride_w,
                                             u.transpose_conv.stride_h});
    case 126:  // BATCH_MATMUL
      return put(out, TflBatchMatMulParams{u.batch_matmul.adj_x != 0, u.batch_matmul.adj_y != 0,
                                           u.batch_matmul.asymmetric_quantize_inputs != 0});
    case 36:  // GATHER
      return put(out, TflGatherParams{u.gather.axis, u.gather.batch_dims});
    case 98:  // LEAKY_RELU
      return put(out, TflLeakyReluParams{u.leaky_relu.alpha});
    default:
      return o.kind == 0 || fieldless_kind(o.kind);
  }
}

}  // namespace tflite_delegates
