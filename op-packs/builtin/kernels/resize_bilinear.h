// RESIZE_BILINEAR over NHWC with TFLite's coordinate mapping:
//   scale = align_corners && out > 1 ? (in - 1) / (out - 1) : in / out
//   source = half_pixel_centers ? (dst + 0.5) * scale - 0.5 : dst * scale
//   low = clamp(floor(source), 0, in - 1), high = min(ceil(source), in - 1), weight of high = source - low
// (TFLite leaves low unclamped, and reads past the image where rounding puts it there)
// Output rows are split across the workers of `parallel` (null: the caller's thread).
#ifndef BATON_BUILTIN_KERNELS_RESIZE_BILINEAR_H
#define BATON_BUILTIN_KERNELS_RESIZE_BILINEAR_H

#include <cstdint>
#include <vector>

#include "kernels/parallel.h"

namespace baton::builtin {

struct ResizeBilinearParams {
  int batch = 1, in_h = 1, in_w = 1, channels = 1;
  int out_h = 1, out_w = 1;
  bool align_corners = false, half_pixel_centers = false;
};

// TFLite's int8 kernel (ResizeBilinearInteger) samples in 10-bit fixed point: scale = round(1024 * in /
// out), each output row and column reads a low and a high source and weighs the high one by its 1/1024ths
// (negative near the top-left edge with half-pixel centers, where low and high are both 0). Made once at
// prepare; `x_low` and `x_high` are element offsets (column * channels).
struct ResizeInt8Taps {
  std::vector<int32_t> y_low, y_high, y_weight;
  std::vector<int32_t> x_low, x_high, x_weight;
};
ResizeInt8Taps resize_int8_taps(const ResizeBilinearParams& p);

void resize_bilinear(const ResizeBilinearParams& p, const float* input, float* output, Parallel* parallel = nullptr);
// uint8 codes, interpolated without rescaling (TFLite's kernels ignore the quantization): the same
// weights in float, the weighted sum plus 0.5 truncated.
void resize_bilinear_uint8(const ResizeBilinearParams& p, const uint8_t* input, uint8_t* output,
                           Parallel* parallel = nullptr);
// int8 codes, as TFLite's integer kernel: the four products with 20 fractional bits (exact in int32: the
// weights' magnitudes sum to at most 2048^2), rounded half away from zero.
void resize_bilinear_int8(const ResizeBilinearParams& p, const ResizeInt8Taps& taps, const int8_t* input,
                          int8_t* output, Parallel* parallel = nullptr);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_RESIZE_BILINEAR_H
