#include "kernels/transpose_conv.h"

#include <algorithm>
#include <cstddef>

#include "kernels/gemm.h"

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

void transpose_conv_gemm_prepare(const TransposeConvParams& p, const float* filter, TransposeConvGemm& g) {
  g.n = p.filter_h * p.filter_w * p.out_c;
  const std::vector<float> rows = transpose_conv_rows(p, filter);
  g.packed.assign(gemm_packed_b_size(g.n, p.in_c), 0.0f);
  gemm_pack_b(rows.data(), p.in_c, g.n, p.in_c, g.packed.data());
}

size_t transpose_conv_gemm_scratch_floats(const TransposeConvParams& p, const TransposeConvGemm& g, int workers) {
  const size_t products = (static_cast<size_t>(p.in_h) * p.in_w * g.n + 15) / 16 * 16;
  return products + gemm_scratch_per_worker() * workers;
}

void transpose_conv2d_gemm(const TransposeConvParams& p, const TransposeConvGemm& g, const float* input,
                           const float* bias, float* output, float* scratch, Parallel* parallel) {
  float* products = scratch;
  float* gemm_scratch = scratch + (static_cast<size_t>(p.in_h) * p.in_w * g.n + 15) / 16 * 16;
  const size_t in_image = static_cast<size_t>(p.in_h) * p.in_w * p.in_c;
  const size_t out_image = static_cast<size_t>(p.out_h) * p.out_w * p.out_c;
  const int oc_count = p.out_c;
  for (int b = 0; b < p.batch; ++b) {
    if (p.in_c > 0) {
      const DenseRows rows{input + b * in_image, p.in_c};
      gemm(rows.source(), p.in_h * p.in_w, g.n, p.in_c, g.packed.data(), products, g.n, GemmEpilogue{}, gemm_scratch,
           parallel);
    }
    float* image_out = output + b * out_image;
    const int chunks = std::min(p.out_h, 4 * worker_count(parallel));
    parallel_run(parallel, chunks, [&](int task, int) {
      const int y0 = static_cast<int>(static_cast<int64_t>(p.out_h) * task / chunks);
      const int y1 = static_cast<int>(static_cast<int64_t>(p.out_h) * (task + 1) / chunks);
      for (int oy = y0; oy < y1; ++oy) {
        for (int ox = 0; ox < p.out_w; ++ox) {
          float* out = image_out + (static_cast<size_t>(oy) * p.out_w + ox) * oc_count;
          for (int oc = 0; oc < oc_count; ++oc) out[oc] = bias ? bias[oc] : 0.0f;
          if (p.in_c > 0) {
            for_each_landing(p, oy, ox, [&](size_t pixel, int tap) {
              const float* src = products + pixel * g.n + static_cast<size_t>(tap) * oc_count;
              for (int oc = 0; oc < oc_count; ++oc) out[oc] += src[oc];
            });
          }
          for (int oc = 0; oc < oc_count; ++oc) out[oc] = clamp_activation(out[oc], p.range);
        }
      }
    });
  }
}

}  // namespace baton::builtin
