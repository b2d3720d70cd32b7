#include "kernels/resize_bilinear.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace baton::builtin {
namespace {

struct Sample {
  float source;
  int low, high;
};

Sample sample(int dst, float scale, int in_size, bool half_pixel_centers) {
  Sample s;
  s.source = half_pixel_centers ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : static_cast<float>(dst) * scale;
  s.low = std::max(static_cast<int>(std::floor(s.source)), 0);
  s.high = std::min(static_cast<int>(std::ceil(s.source)), in_size - 1);
  return s;
}

float scale_of(int in, int out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

}  // namespace

void resize_bilinear(const ResizeBilinearParams& p, const float* input, float* output) {
  const float scale_y = scale_of(p.in_h, p.out_h, p.align_corners);
  const float scale_x = scale_of(p.in_w, p.out_w, p.align_corners);
  const size_t c_count = p.channels;
  float* __restrict out = output;
  for (int b = 0; b < p.batch; ++b) {
    const float* image = input + static_cast<size_t>(b) * p.in_h * p.in_w * c_count;
    for (int y = 0; y < p.out_h; ++y) {
      const Sample sy = sample(y, scale_y, p.in_h, p.half_pixel_centers);
      const float dy = sy.source - static_cast<float>(sy.low);
      const float* row0 = image + static_cast<size_t>(sy.low) * p.in_w * c_count;
      const float* row1 = image + static_cast<size_t>(sy.high) * p.in_w * c_count;
      for (int x = 0; x < p.out_w; ++x) {
        const Sample sx = sample(x, scale_x, p.in_w, p.half_pixel_centers);
        const float dx = sx.source - static_cast<float>(sx.low);
        const float* __restrict tl = row0 + sx.low * c_count;
        const float* __restrict tr = row0 + sx.high * c_count;
        const float* __restrict bl = row1 + sx.low * c_count;
        const float* __restrict br = row1 + sx.high * c_count;
        for (size_t c = 0; c < c_count; ++c) {
          out[c] = tl[c] * (1 - dy) * (1 - dx) + bl[c] * dy * (1 - dx) + tr[c] * (1 - dy) * dx + br[c] * dy * dx;
        }
        out += c_count;
      }
    }
  }
}

namespace {

// TFLite's uint8 path interpolates in float with the four weights formed first, adds 0.5 and truncates
// toward zero.
template <typename T>
void resize_bilinear_codes(const ResizeBilinearParams& p, const T* input, T* output) {
  const float scale_y = scale_of(p.in_h, p.out_h, p.align_corners);
  const float scale_x = scale_of(p.in_w, p.out_w, p.align_corners);
  const size_t c_count = p.channels;
  T* out = output;
  for (int b = 0; b < p.batch; ++b) {
    const T* image = input + static_cast<size_t>(b) * p.in_h * p.in_w * c_count;
    for (int y = 0; y < p.out_h; ++y) {
      const Sample sy = sample(y, scale_y, p.in_h, p.half_pixel_centers);
      const float dy = sy.source - static_cast<float>(sy.low);
      const T* row0 = image + static_cast<size_t>(sy.low) * p.in_w * c_count;
      const T* row1 = image + static_cast<size_t>(sy.high) * p.in_w * c_count;
      for (int x = 0; x < p.out_w; ++x) {
        const Sample sx = sample(x, scale_x, p.in_w, p.half_pixel_centers);
        const float dx = sx.source - static_cast<float>(sx.low);
        const float w00 = (1 - dy) * (1 - dx), w01 = (1 - dy) * dx, w10 = dy * (1 - dx), w11 = dy * dx;
        const T* tl = row0 + sx.low * c_count;
        const T* tr = row0 + sx.high * c_count;
        const T* bl = row1 + sx.low * c_count;
        const T* br = row1 + sx.high * c_count;
        for (size_t c = 0; c < c_count; ++c) {
          float v = static_cast<float>(tl[c]) * w00;
          v = v + static_cast<float>(tr[c]) * w01;
          v = v + static_cast<float>(bl[c]) * w10;
          v = v + static_cast<float>(br[c]) * w11;
          out[c] = static_cast<T>(v + 0.5f);
        }
        out += c_count;
      }
    }
  }
}

// TFLite's int8 kernel (ResizeBilinearInteger): coordinates in 10-bit fixed point, the four products in
// int64 (20 fractional bits), rounded half away from zero.
int32_t scale_10(int in, int out, bool align_corners) {
  if (align_corners && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

struct Sample10 {
  int32_t source;
  int low, high;
};

Sample10 sample_10(int dst, int32_t scale, int in_size, bool half_pixel_centers) {
  Sample10 s;
  s.source = half_pixel_centers ? dst * scale + scale / 2 - (1 << 9) : dst * scale;
  s.low = std::max(s.source / (1 << 10), 0);
  s.high = std::min((s.source + (1 << 10) - 1) / (1 << 10), in_size - 1);
  return s;
}

void resize_bilinear_int8(const ResizeBilinearParams& p, const int8_t* input, int8_t* output) {
  const int32_t sy_10 = scale_10(p.in_h, p.out_h, p.align_corners);
  const int32_t sx_10 = scale_10(p.in_w, p.out_w, p.align_corners);
  const size_t c_count = p.channels;
  int8_t* out = output;
  for (int b = 0; b < p.batch; ++b) {
    const int8_t* image = input + static_cast<size_t>(b) * p.in_h * p.in_w * c_count;
    for (int y = 0; y < p.out_h; ++y) {
      const Sample10 sy = sample_10(y, sy_10, p.in_h, p.half_pixel_centers);
      const int64_t wy1 = sy.source - (1 << 10) * sy.low, wy0 = (1 << 10) - wy1;
      const int8_t* row0 = image + static_cast<size_t>(sy.low) * p.in_w * c_count;
      const int8_t* row1 = image + static_cast<size_t>(sy.high) * p.in_w * c_count;
      for (int x = 0; x < p.out_w; ++x) {
        const Sample10 sx = sample_10(x, sx_10, p.in_w, p.half_pixel_centers);
        const int64_t wx1 = sx.source - (1 << 10) * sx.low, wx0 = (1 << 10) - wx1;
        const int8_t* tl = row0 + sx.low * c_count;
        const int8_t* tr = row0 + sx.high * c_count;
        const int8_t* bl = row1 + sx.low * c_count;
        const int8_t* br = row1 + sx.high * c_count;
        for (size_t c = 0; c < c_count; ++c) {
          const int64_t v = tl[c] * wy0 * wx0 + bl[c] * wy1 * wx0 + tr[c] * wy0 * wx1 + br[c] * wy1 * wx1;
          const int64_t round = v > 0 ? (1 << 19) : -(1 << 19);
          out[c] = static_cast<int8_t>((v + round) / (1 << 20));
        }
        out += c_count;
      }
    }
  }
}

}  // namespace

void resize_bilinear_8bit(const ResizeBilinearParams& p, bool is_signed, const uint8_t* input, uint8_t* output) {
  if (is_signed) {
    resize_bilinear_int8(p, reinterpret_cast<const int8_t*>(input), reinterpret_cast<int8_t*>(output));
  } else {
    resize_bilinear_codes(p, input, output);
  }
}

}  // namespace baton::builtin
