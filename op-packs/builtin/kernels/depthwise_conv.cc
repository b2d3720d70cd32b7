#include "kernels/depthwise_conv.h"

#include <algorithm>
#include <cstddef>

#include "kernels/simd.h"

namespace baton::builtin {
namespace {

// Depth multiplier 1, channels in blocks of kBlock: the block's sums stay in registers across all the
// filter taps and are written once, instead of being loaded and stored at every tap.
constexpr int kBlock = 8;

BATON_INLINE void depthwise_row_blocked(const DepthwiseParams& p, const float* __restrict input,
                                        const float* __restrict filter, const float* __restrict bias,
                                        float* __restrict output, int b, int oy) {
  const int channels = p.in_c;
  const int blocked = channels / kBlock * kBlock;
  const int ky_begin = std::max(0, (p.pad_top - oy * p.stride_h + p.dilation_h - 1) / p.dilation_h);
  const int ky_end = std::min(p.filter_h, (p.in_h + p.pad_top - oy * p.stride_h + p.dilation_h - 1) / p.dilation_h);
  for (int ox = 0; ox < p.out_w; ++ox) {
    float* __restrict out = output + ((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * channels;
    const int kx_begin = std::max(0, (p.pad_left - ox * p.stride_w + p.dilation_w - 1) / p.dilation_w);
    const int kx_end =
        std::min(p.filter_w, (p.in_w + p.pad_left - ox * p.stride_w + p.dilation_w - 1) / p.dilation_w);
    for (int c0 = 0; c0 < blocked; c0 += kBlock) {
      float acc[kBlock];
      for (int j = 0; j < kBlock; ++j) acc[j] = bias ? bias[c0 + j] : 0.0f;
      for (int ky = ky_begin; ky < ky_end; ++ky) {
        const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        const float* __restrict row = input + (static_cast<size_t>(b) * p.in_h + iy) * p.in_w * channels + c0;
        const float* __restrict wrow = filter + static_cast<size_t>(ky) * p.filter_w * channels + c0;
        for (int kx = kx_begin; kx < kx_end; ++kx) {
          const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
          const float* __restrict in = row + static_cast<size_t>(ix) * channels;
          const float* __restrict w = wrow + static_cast<size_t>(kx) * channels;
          for (int j = 0; j < kBlock; ++j) acc[j] += in[j] * w[j];
        }
      }
      for (int j = 0; j < kBlock; ++j) out[c0 + j] = clamp_activation(acc[j], p.range);
    }
    for (int c = blocked; c < channels; ++c) {
      float acc = bias ? bias[c] : 0.0f;
      for (int ky = ky_begin; ky < ky_end; ++ky) {
        const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        for (int kx = kx_begin; kx < kx_end; ++kx) {
          const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
          acc += input[((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * channels + c] *
                 filter[(static_cast<size_t>(ky) * p.filter_w + kx) * channels + c];
        }
      }
      out[c] = clamp_activation(acc, p.range);
    }
  }
}

BATON_INLINE void depthwise_row_impl(const DepthwiseParams& p, const float* __restrict input,
                                     const float* __restrict filter, const float* __restrict bias,
                                     float* __restrict output, int b, int oy) {
  if (p.depth_multiplier == 1) return depthwise_row_blocked(p, input, filter, bias, output, b, oy);
  const int out_c = p.in_c * p.depth_multiplier;
  for (int ox = 0; ox < p.out_w; ++ox) {
    float* __restrict out = output + ((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * out_c;
    if (bias) {
      for (int c = 0; c < out_c; ++c) out[c] = bias[c];
    } else {
      for (int c = 0; c < out_c; ++c) out[c] = 0.0f;
    }
    for (int ky = 0; ky < p.filter_h; ++ky) {
      const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
      if (iy < 0 || iy >= p.in_h) continue;
      for (int kx = 0; kx < p.filter_w; ++kx) {
        const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
        if (ix < 0 || ix >= p.in_w) continue;
        const float* __restrict in = input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c;
        const float* __restrict w = filter + (static_cast<size_t>(ky) * p.filter_w + kx) * out_c;
        if (p.depth_multiplier == 1) {
          for (int c = 0; c < out_c; ++c) out[c] += in[c] * w[c];
        } else {
          for (int c = 0; c < p.in_c; ++c) {
            const float v = in[c];
            float* __restrict o = out + c * p.depth_multiplier;
            const float* __restrict wc = w + c * p.depth_multiplier;
            for (int m = 0; m < p.depth_multiplier; ++m) o[m] += v * wc[m];
          }
        }
      }
    }
    for (int c = 0; c < out_c; ++c) out[c] = clamp_activation(out[c], p.range);
  }
}

BATON_DISPATCH_AVX2(void, depthwise_row,
                    (const DepthwiseParams& p, const float* input, const float* filter, const float* bias,
                     float* output, int b, int oy),
                    (p, input, filter, bias, output, b, oy))

}  // namespace

void depthwise_compute_geometry(Padding padding, DepthwiseParams& p) {
  p.out_h = window_output_size(padding, p.in_h, p.filter_h, p.stride_h, p.dilation_h);
  p.out_w = window_output_size(padding, p.in_w, p.filter_w, p.stride_w, p.dilation_w);
  p.pad_top = window_padding_before(p.in_h, p.out_h, p.filter_h, p.stride_h, p.dilation_h);
  p.pad_left = window_padding_before(p.in_w, p.out_w, p.filter_w, p.stride_w, p.dilation_w);
}

void depthwise_conv2d(const DepthwiseParams& p, const float* input, const float* filter, const float* bias,
                      float* output, Parallel* parallel) {
  parallel_run(parallel, p.batch * p.out_h, [&](int task, int) {
    depthwise_row(p, input, filter, bias, output, task / p.out_h, task % p.out_h);
  });
}

}  // namespace baton::builtin
