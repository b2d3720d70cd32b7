// RESIZE_BILINEAR over NHWC with TFLite's coordinate mapping:
//   scale = align_corners && out > 1 ? (in - 1) / (out - 1) : in / out
//   source = half_pixel_centers ? (dst + 0.5) * scale - 0.5 : dst * scale
//   low = max(floor(source), 0), high = min(ceil(source), in - 1), weight of high = source - low
#ifndef BATON_BUILTIN_KERNELS_RESIZE_BILINEAR_H
#define BATON_BUILTIN_KERNELS_RESIZE_BILINEAR_H

#include <cstdint>

namespace baton::builtin {

struct ResizeBilinearParams {
  int batch = 1, in_h = 1, in_w = 1, channels = 1;
  int out_h = 1, out_w = 1;
  bool align_corners = false, half_pixel_centers = false;
};

void resize_bilinear(const ResizeBilinearParams& p, const float* input, float* output);
// uint8 / int8 codes, interpolated without rescaling (TFLite's kernels ignore the quantization). uint8:
// the same weights in float, the weighted sum plus 0.5 truncated; int8: TFLite's integer kernel, the
// coordinates in 10-bit fixed point (scale = round(1024 * in / out)), the weighted sum in int64 with
// 20 fractional bits, rounded half away from zero.
void resize_bilinear_8bit(const ResizeBilinearParams& p, bool is_signed, const uint8_t* input, uint8_t* output);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_RESIZE_BILINEAR_H
