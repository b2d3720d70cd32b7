// The mediapipe op pack: the custom ops MediaPipe's models need beyond TFLite's builtins, built against
// the plugin ABI only (as a third party would build it). Semantics and custom-options formats follow
// MediaPipe's mediapipe/util/tflite/operations/ and ../shared/models/SURVEY.md section 3:
//  - Convolution2DTransposeBias v1 (selfie segmentation): transposed convolution plus bias; options are
//    12 raw bytes (padding, stride_w, stride_h as little-endian int32), not a FlexBuffer.
//  - Landmarks2TransformMatrix v2, TransformTensorBilinear v2, TransformLandmarks v2 (face landmarks
//    with attention): the crop matrix from landmarks, an affine bilinear warp, and points through it.
//  - MaxPoolingWithArgmax2D v1, MaxUnpooling2D v1 (the older hair segmentation model): max pooling that
//    also outputs each maximum's position in its window, and the unpooling that scatters values back
//    there; options are TfLitePoolParams as raw bytes (pool_argmax.cc).
#include "ops.h"

namespace {

const baton::packkit::OpDef kOps[] = {
    baton::mediapipe::kConvolution2DTransposeBias,
    baton::mediapipe::kLandmarks2TransformMatrix,
    baton::mediapipe::kTransformTensorBilinear,
    baton::mediapipe::kTransformLandmarks,
    baton::mediapipe::kMaxPoolingWithArgmax2D,
    baton::mediapipe::kMaxUnpooling2D,
};

const baton::packkit::PackInfo kInfo = {
    "mediapipe",
    "0.1.0",
    "MediaPipe custom ops: Convolution2DTransposeBias, Landmarks2TransformMatrix, TransformTensorBilinear, "
    "TransformLandmarks, MaxPoolingWithArgmax2D, MaxUnpooling2D (float32)",
    kOps,
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  return baton::packkit::pack_entry(kInfo, host_abi_major, host_abi_minor, api, error);
}
