#include "kernels/resize_bilinear.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/common.h"
#include "kernels/vector_math.h"

namespace baton::builtin {
namespace {

struct Sample {
  float source;
  int low, high;
};

Sample sample(int dst, float scale, int in_size, bool half_pixel_centers) {
  Sample s;
  s.source = half_pixel_centers ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f : static_cast<float>(dst) * scale;
  s.low = std::clamp(static_cast<int>(std::floor(s.source)), 0, in_size - 1);  // past the image: see the int8 taps
  s.high = std::min(static_cast<int>(std::ceil(s.source)), in_size - 1);
  return s;
}

float scale_of(int in, int out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

// Runs rows(first, end) over chunks of the batch * out_h output rows, a few per worker.
template <typename Rows>
void for_row_chunks(const ResizeBilinearParams& p, Parallel* parallel, Rows rows) {
  const int total = p.batch * p.out_h;
  const int chunks = std::min(total, 4 * worker_count(parallel));
  parallel_run(parallel, chunks, [&](int task, int) {
    rows(static_cast<int>(static_cast<int64_t>(total) * task / chunks),
         static_cast<int>(static_cast<int64_t>(total) * (task + 1) / chunks));
  });
}

// One output pixel's channels from its four neighbours, W channels at a time: TFLite's formula and order,
// tl (1 - dy) (1 - dx) + bl dy (1 - dx) + tr (1 - dy) dx + br dy dx, in every lane and in the tail.
template <int W>
BATON_INLINE void blend_pixel_impl(const float* tl, const float* tr, const float* bl, const float* br, float* out,
                                   size_t n, float dy, float dx) {
  using V = typename Lanes<W>::F;
  const float ny = 1 - dy, nx = 1 - dx;
  size_t c = 0;
  for (; c + W <= n; c += W) {
    V a, b, d, e;
    std::memcpy(&a, tl + c, sizeof(a));
    std::memcpy(&b, bl + c, sizeof(b));
    std::memcpy(&d, tr + c, sizeof(d));
    std::memcpy(&e, br + c, sizeof(e));
    const V v = a * ny * nx + b * dy * nx + d * ny * dx + e * dy * dx;
    std::memcpy(out + c, &v, sizeof(v));
  }
  for (; c < n; ++c) out[c] = tl[c] * ny * nx + bl[c] * dy * nx + tr[c] * ny * dx + br[c] * dy * dx;
}

BATON_DISPATCH_WIDTHS(void, blend_pixel,
                      (const float* tl, const float* tr, const float* bl, const float* br, float* out, size_t n,
                       float dy, float dx),
                      (tl, tr, bl, br, out, n, dy, dx))

}  // namespace

void resize_bilinear(const ResizeBilinearParams& p, const float* input, float* output, Parallel* parallel) {
  const float scale_y = scale_of(p.in_h, p.out_h, p.align_corners);
  const float scale_x = scale_of(p.in_w, p.out_w, p.align_corners);
  const size_t c_count = p.channels;
  for_row_chunks(p, parallel, [&](int first, int end) {
    for (int row = first; row < end; ++row) {
      const int b = row / p.out_h, y = row % p.out_h;
      const float* image = input + static_cast<size_t>(b) * p.in_h * p.in_w * c_count;
      float* __restrict out = output + static_cast<size_t>(row) * p.out_w * c_count;
      const Sample sy = sample(y, scale_y, p.in_h, p.half_pixel_centers);
      const float dy = sy.source - static_cast<float>(sy.low);
      const float* row0 = image + static_cast<size_t>(sy.low) * p.in_w * c_count;
      const float* row1 = image + static_cast<size_t>(sy.high) * p.in_w * c_count;
      for (int x = 0; x < p.out_w; ++x) {
        const Sample sx = sample(x, scale_x, p.in_w, p.half_pixel_centers);
        const float dx = sx.source - static_cast<float>(sx.low);
        // Eight channels or more fill a vector; fewer (an RGB image, a one-channel mask) stay in this
        // loop, where a call through the ISA dispatch per pixel would cost more than the blend. Both
        // compute TFLite's formula in its order.
        if (c_count >= 8) {
          blend_pixel(row0 + sx.low * c_count, row0 + sx.high * c_count, row1 + sx.low * c_count,
                      row1 + sx.high * c_count, out, c_count, dy, dx);
        } else {
          const float* __restrict tl = row0 + sx.low * c_count;
          const float* __restrict tr = row0 + sx.high * c_count;
          const float* __restrict bl = row1 + sx.low * c_count;
          const float* __restrict br = row1 + sx.high * c_count;
          for (size_t c = 0; c < c_count; ++c) {
            out[c] = tl[c] * (1 - dy) * (1 - dx) + bl[c] * dy * (1 - dx) + tr[c] * (1 - dy) * dx + br[c] * dy * dx;
          }
        }
        out += c_count;
      }
    }
  });
}

// TFLite's uint8 path interpolates in float with the four weights formed first, adds 0.5 and truncates
// toward zero.
void resize_bilinear_uint8(const ResizeBilinearParams& p, const uint8_t* input, uint8_t* output, Parallel* parallel) {
  const float scale_y = scale_of(p.in_h, p.out_h, p.align_corners);
  const float scale_x = scale_of(p.in_w, p.out_w, p.align_corners);
  const size_t c_count = p.channels;
  for_row_chunks(p, parallel, [&](int first, int end) {
    for (int row = first; row < end; ++row) {
      const int b = row / p.out_h, y = row % p.out_h;
      const uint8_t* image = input + static_cast<size_t>(b) * p.in_h * p.in_w * c_count;
      uint8_t* out = output + static_cast<size_t>(row) * p.out_w * c_count;
      const Sample sy = sample(y, scale_y, p.in_h, p.half_pixel_centers);
      const float dy = sy.source - static_cast<float>(sy.low);
      const uint8_t* row0 = image + static_cast<size_t>(sy.low) * p.in_w * c_count;
      const uint8_t* row1 = image + static_cast<size_t>(sy.high) * p.in_w * c_count;
      for (int x = 0; x < p.out_w; ++x) {
        const Sample sx = sample(x, scale_x, p.in_w, p.half_pixel_centers);
        const float dx = sx.source - static_cast<float>(sx.low);
        const float w00 = (1 - dy) * (1 - dx), w01 = (1 - dy) * dx, w10 = dy * (1 - dx), w11 = dy * dx;
        const uint8_t* tl = row0 + sx.low * c_count;
        const uint8_t* tr = row0 + sx.high * c_count;
        const uint8_t* bl = row1 + sx.low * c_count;
        const uint8_t* br = row1 + sx.high * c_count;
        for (size_t c = 0; c < c_count; ++c) {
          float v = static_cast<float>(tl[c]) * w00;
          v = v + static_cast<float>(tr[c]) * w01;
          v = v + static_cast<float>(bl[c]) * w10;
          v = v + static_cast<float>(br[c]) * w11;
          out[c] = static_cast<uint8_t>(v + 0.5f);
        }
        out += c_count;
      }
    }
  });
}

namespace {

int32_t scale_10(int in, int out, bool align_corners) {
  if (align_corners && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

// One output row of int8 codes: every column's four taps, the channels vectorised.
inline __attribute__((always_inline)) void int8_row_impl(const int8_t* row0, const int8_t* row1,
                                                          const int32_t* x_low, const int32_t* x_high,
                                                          const int32_t* x_weight, int out_w, int channels,
                                                          int32_t wy1, int8_t* out) {
  const int32_t wy0 = (1 << 10) - wy1;
  for (int x = 0; x < out_w; ++x) {
    const int32_t wx1 = x_weight[x], wx0 = (1 << 10) - wx1;
    const int32_t w00 = wy0 * wx0, w10 = wy1 * wx0, w01 = wy0 * wx1, w11 = wy1 * wx1;
    const int8_t* __restrict tl = row0 + x_low[x];
    const int8_t* __restrict tr = row0 + x_high[x];
    const int8_t* __restrict bl = row1 + x_low[x];
    const int8_t* __restrict br = row1 + x_high[x];
    int8_t* __restrict o = out + static_cast<size_t>(x) * channels;
    for (int c = 0; c < channels; ++c) {
      const int32_t v = tl[c] * w00 + bl[c] * w10 + tr[c] * w01 + br[c] * w11;
      const int32_t magnitude = ((v < 0 ? -v : v) + (1 << 19)) >> 20;
      o[c] = static_cast<int8_t>(v < 0 ? -magnitude : magnitude);
    }
  }
}

BATON_DISPATCH_AVX2(void, int8_row,
                    (const int8_t* row0, const int8_t* row1, const int32_t* x_low, const int32_t* x_high,
                     const int32_t* x_weight, int out_w, int channels, int32_t wy1, int8_t* out),
                    (row0, row1, x_low, x_high, x_weight, out_w, channels, wy1, out))

}  // namespace

ResizeInt8Taps resize_int8_taps(const ResizeBilinearParams& p) {
  ResizeInt8Taps t;
  auto fill = [&](int in, int out, int stride, std::vector<int32_t>& low, std::vector<int32_t>& high,
                  std::vector<int32_t>& weight) {
    const int32_t scale = scale_10(in, out, p.align_corners);
    low.resize(static_cast<size_t>(out));
    high.resize(static_cast<size_t>(out));
    weight.resize(static_cast<size_t>(out));
    // TFLite's taps, kept inside the image: its 10-bit scale is rounded, and over a wide output the rounding
    // adds up, so that (1 pixel widened to 55, say) the last columns' lower tap lands past the last pixel, where
    // TFLite reads out of bounds. Both taps are clamped to the image; the weight, clamped to [0, 1024], only
    // moves where both taps are one pixel, and there any split of the weights gives that pixel, bit for bit.
    for (int d = 0; d < out; ++d) {
      const int64_t source = p.half_pixel_centers ? int64_t{d} * scale + scale / 2 - (1 << 9) : int64_t{d} * scale;
      const int64_t lo = std::clamp<int64_t>(source / (1 << 10), 0, in - 1);
      const int64_t hi = std::clamp<int64_t>((source + (1 << 10) - 1) / (1 << 10), 0, in - 1);
      low[static_cast<size_t>(d)] = static_cast<int32_t>(lo * stride);
      high[static_cast<size_t>(d)] = static_cast<int32_t>(hi * stride);
      weight[static_cast<size_t>(d)] = static_cast<int32_t>(std::clamp<int64_t>(source - (1 << 10) * lo, 0, 1 << 10));
    }
  };
  fill(p.in_h, p.out_h, 1, t.y_low, t.y_high, t.y_weight);
  fill(p.in_w, p.out_w, p.channels, t.x_low, t.x_high, t.x_weight);
  return t;
}

void resize_bilinear_int8(const ResizeBilinearParams& p, const ResizeInt8Taps& taps, const int8_t* input,
                          int8_t* output, Parallel* parallel) {
  const size_t row_elements = static_cast<size_t>(p.in_w) * p.channels;
  for_row_chunks(p, parallel, [&](int first, int end) {
    for (int row = first; row < end; ++row) {
      const int b = row / p.out_h, y = row % p.out_h;
      const int8_t* image = input + static_cast<size_t>(b) * p.in_h * row_elements;
      int8_row(image + static_cast<size_t>(taps.y_low[static_cast<size_t>(y)]) * row_elements,
               image + static_cast<size_t>(taps.y_high[static_cast<size_t>(y)]) * row_elements, taps.x_low.data(),
               taps.x_high.data(), taps.x_weight.data(), p.out_w, p.channels, taps.y_weight[static_cast<size_t>(y)],
               output + static_cast<size_t>(row) * p.out_w * p.channels);
    }
  });
}

}  // namespace baton::builtin
