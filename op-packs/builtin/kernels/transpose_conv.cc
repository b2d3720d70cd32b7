#include "kernels/transpose_conv.h"

#include <cstddef>

namespace baton::builtin {

void transpose_conv_compute_padding(Padding padding, TransposeConvParams& p) {
  const int conv_out_h = window_output_size(padding, p.out_h, p.filter_h, p.stride_h, 1);
  const int conv_out_w = window_output_size(padding, p.out_w, p.filter_w, p.stride_w, 1);
  p.pad_top = window_padding_before(p.out_h, conv_out_h, p.filter_h, p.stride_h, 1);
  p.pad_left = window_padding_before(p.out_w, conv_out_w, p.filter_w, p.stride_w, 1);
}

void transpose_conv2d(const TransposeConvParams& p, const float* input, const float* filter, const float* bias,
                      float* output) {
  const size_t out_count = static_cast<size_t>(p.batch) * p.out_h * p.out_w * p.out_c;
  for (size_t i = 0; i < out_count; ++i) output[i] = 0.0f;
  // An input of no channels scatters nothing, however many positions it has.
  for (int b = 0; p.in_c > 0 && b < p.batch; ++b) {
    for (int iy = 0; iy < p.in_h; ++iy) {
      for (int ix = 0; ix < p.in_w; ++ix) {
        const float* in = input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c;
        for (int ky = 0; ky < p.filter_h; ++ky) {
          const int oy = iy * p.stride_h - p.pad_top + ky;
          if (oy < 0 || oy >= p.out_h) continue;
          for (int kx = 0; kx < p.filter_w; ++kx) {
            const int ox = ix * p.stride_w - p.pad_left + kx;
            if (ox < 0 || ox >= p.out_w) continue;
            float* out = output + ((static_cast<size_t>(b) * p.out_h + oy) * p.out_w + ox) * p.out_c;
            for (int o = 0; o < p.out_c; ++o) {
              const float* w = filter + ((static_cast<size_t>(o) * p.filter_h + ky) * p.filter_w + kx) * p.in_c;
              float sum = 0.0f;
              for (int c = 0; c < p.in_c; ++c) sum += in[c] * w[c];
              out[o] += sum;
            }
          }
        }
      }
    }
  }
  const size_t pixels = out_count / static_cast<size_t>(p.out_c);
  for (size_t px = 0; px < pixels; ++px) {
    float* out = output + px * p.out_c;
    for (int o = 0; o < p.out_c; ++o) {
      out[o] = clamp_activation(out[o] + (bias ? bias[o] : 0.0f), p.range);
    }
  }
}

}  // namespace baton::builtin
