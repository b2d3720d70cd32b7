// The mediapipe pack's ops, each family in its own file.
#ifndef BATON_OP_PACKS_MEDIAPIPE_OPS_H
#define BATON_OP_PACKS_MEDIAPIPE_OPS_H

#include "common/pack_kit.h"

namespace baton::mediapipe {

extern const packkit::OpDef kConvolution2DTransposeBias;
extern const packkit::OpDef kLandmarks2TransformMatrix;
extern const packkit::OpDef kTransformTensorBilinear;
extern const packkit::OpDef kTransformLandmarks;
extern const packkit::OpDef kMaxPoolingWithArgmax2D;
extern const packkit::OpDef kMaxUnpooling2D;

}  // namespace baton::mediapipe

#endif  // BATON_OP_PACKS_MEDIAPIPE_OPS_H
