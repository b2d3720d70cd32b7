#include "kernels/conv3d.h"

#include <cstddef>
#include <vector>

namespace baton::builtin {

void conv3d_compute_geometry(Padding padding, Conv3dParams& p) {
  p.out_d = window_output_size(padding, p.in_d, p.filter_d, p.stride_d, p.dilation_d);
  p.out_h = window_output_size(padding, p.in_h, p.filter_h, p.stride_h, p.dilation_h);
  p.out_w = window_output_size(padding, p.in_w, p.filter_w, p.stride_w, p.dilation_w);
  p.pad_d = window_padding_before(p.in_d, p.out_d, p.filter_d, p.stride_d, p.dilation_d);
  p.pad_h = window_padding_before(p.in_h, p.out_h, p.filter_h, p.stride_h, p.dilation_h);
  p.pad_w = window_padding_before(p.in_w, p.out_w, p.filter_w, p.stride_w, p.dilation_w);
}

void conv3d_transpose_compute_padding(Padding padding, Conv3dParams& p, int* in_d, int* in_h, int* in_w) {
  *in_d = window_output_size(padding, p.out_d, p.filter_d, p.stride_d, p.dilation_d);
  *in_h = window_output_size(padding, p.out_h, p.filter_h, p.stride_h, p.dilation_h);
  *in_w = window_output_size(padding, p.out_w, p.filter_w, p.stride_w, p.dilation_w);
  p.pad_d = window_padding_before(p.out_d, *in_d, p.filter_d, p.stride_d, p.dilation_d);
  p.pad_h = window_padding_before(p.out_h, *in_h, p.filter_h, p.stride_h, p.dilation_h);
  p.pad_w = window_padding_before(p.out_w, *in_w, p.filter_w, p.stride_w, p.dilation_w);
}

// Each output voxel's out_c sums grow together: for every tap inside the input and every input channel,
// the filter row [tap, channel, :] times that input value.
void conv3d(const Conv3dParams& p, const float* input, const float* filter, const float* bias, float* output) {
  std::vector<float> acc(static_cast<size_t>(p.out_c));
  for (int b = 0; b < p.batch; ++b) {
    for (int od = 0; od < p.out_d; ++od) {
      for (int oy = 0; oy < p.out_h; ++oy) {
        for (int ox = 0; ox < p.out_w; ++ox) {
          for (float& a : acc) a = 0.0f;
          // A window of no input channels adds nothing, however wide it is.
          for (int fd = 0; p.in_c > 0 && fd < p.filter_d; ++fd) {
            const int id = od * p.stride_d - p.pad_d + fd * p.dilation_d;
            if (id < 0 || id >= p.in_d) continue;
            for (int fy = 0; fy < p.filter_h; ++fy) {
              const int iy = oy * p.stride_h - p.pad_h + fy * p.dilation_h;
              if (iy < 0 || iy >= p.in_h) continue;
              for (int fx = 0; fx < p.filter_w; ++fx) {
                const int ix = ox * p.stride_w - p.pad_w + fx * p.dilation_w;
                if (ix < 0 || ix >= p.in_w) continue;
                const float* in =
                    input + ((((static_cast<size_t>(b) * p.in_d + id) * p.in_h + iy) * p.in_w + ix) * p.in_c);
                const float* w =
                    filter + (((static_cast<size_t>(fd) * p.filter_h + fy) * p.filter_w + fx) * p.in_c) * p.out_c;
                for (int c = 0; c < p.in_c; ++c) {
                  const float v = in[c];
                  const float* row = w + static_cast<size_t>(c) * p.out_c;
                  for (int o = 0; o < p.out_c; ++o) acc[o] += v * row[o];
                }
              }
            }
          }
          float* out = output + ((((static_cast<size_t>(b) * p.out_d + od) * p.out_h + oy) * p.out_w + ox) * p.out_c);
          for (int o = 0; o < p.out_c; ++o) out[o] = clamp_activation(acc[o] + (bias ? bias[o] : 0.0f), p.range);
        }
      }
    }
  }
}

void conv3d_transpose(const Conv3dParams& p, const float* input, const float* filter, const float* bias,
                      float* output) {
  const size_t out_count = static_cast<size_t>(p.batch) * p.out_d * p.out_h * p.out_w * p.out_c;
  for (size_t i = 0; i < out_count; ++i) output[i] = 0.0f;
  // An input of no channels scatters nothing, however many positions it has.
  for (int b = 0; p.in_c > 0 && b < p.batch; ++b) {
    for (int id = 0; id < p.in_d; ++id) {
      for (int iy = 0; iy < p.in_h; ++iy) {
        for (int ix = 0; ix < p.in_w; ++ix) {
          const float* in = input + ((((static_cast<size_t>(b) * p.in_d + id) * p.in_h + iy) * p.in_w + ix) * p.in_c);
          for (int fd = 0; fd < p.filter_d; ++fd) {
            const int od = id * p.stride_d - p.pad_d + fd * p.dilation_d;
            if (od < 0 || od >= p.out_d) continue;
            for (int fy = 0; fy < p.filter_h; ++fy) {
              const int oy = iy * p.stride_h - p.pad_h + fy * p.dilation_h;
              if (oy < 0 || oy >= p.out_h) continue;
              for (int fx = 0; fx < p.filter_w; ++fx) {
                const int ox = ix * p.stride_w - p.pad_w + fx * p.dilation_w;
                if (ox < 0 || ox >= p.out_w) continue;
                float* out =
                    output + ((((static_cast<size_t>(b) * p.out_d + od) * p.out_h + oy) * p.out_w + ox) * p.out_c);
                const float* w =
                    filter + (((static_cast<size_t>(fd) * p.filter_h + fy) * p.filter_w + fx) * p.out_c) * p.in_c;
                for (int o = 0; o < p.out_c; ++o) {
                  const float* row = w + static_cast<size_t>(o) * p.in_c;
                  float sum = 0.0f;
                  for (int c = 0; c < p.in_c; ++c) sum += in[c] * row[c];
                  out[o] += sum;
                }
              }
            }
          }
        }
      }
    }
  }
  for (size_t i = 0; i < out_count; ++i) {
    const int o = static_cast<int>(i % static_cast<size_t>(p.out_c));
    output[i] = clamp_activation(output[i] + (bias ? bias[o] : 0.0f), p.range);
  }
}

}  // namespace baton::builtin
