#include "kernels/conv.h"

#include <algorithm>

#include "kernels/gemm.h"

namespace baton::builtin {
namespace {

struct Im2colRows {
  const ConvParams* p;
  const float* input;
};

// Row `row` of the im2col matrix is output pixel (b, oy, ox); column k is (ky, kx, channel).
void fill_im2col(const void* context, int row, int k0, int count, float* dst, int stride) {
  const auto* rows = static_cast<const Im2colRows*>(context);
  const ConvParams& p = *rows->p;
  const int ox = row % p.out_w;
  const int oy = (row / p.out_w) % p.out_h;
  const int b = row / (p.out_w * p.out_h);
  const int taps_row = p.filter_w * p.in_c;
  int ky = k0 / taps_row;
  int kx = (k0 % taps_row) / p.in_c;
  int ci = k0 % p.in_c;
  int done = 0;
  while (done < count) {
    int run = std::min(p.in_c - ci, count - done);
    const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
    const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
    float* out = dst + static_cast<size_t>(done) * stride;
    // Undilated, the rest of the filter row is one contiguous run of the input when it lies inside it:
    // copy it at once (a stem convolution's 3 channels would otherwise be runs of 3).
    const int row_end = ix + (p.filter_w - kx) - 1;
    if (p.dilation_w == 1 && iy >= 0 && iy < p.in_h && ix >= 0 && row_end < p.in_w) {
      run = std::min((p.filter_w - kx) * p.in_c - ci, count - done);
      const float* src =
          rows->input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c + ci;
      for (int i = 0; i < run; ++i) out[static_cast<size_t>(i) * stride] = src[i];
      done += run;
      const int taps = ci + run;  // channels consumed from (kx, 0) on
      kx += taps / p.in_c;
      ci = taps % p.in_c;
      if (kx == p.filter_w) {
        kx = 0;
        ++ky;
      }
      continue;
    }
    if (iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w) {
      const float* src =
          rows->input + ((static_cast<size_t>(b) * p.in_h + iy) * p.in_w + ix) * p.in_c + ci;
      for (int i = 0; i < run; ++i) out[static_cast<size_t>(i) * stride] = src[i];
    } else {
      for (int i = 0; i < run; ++i) out[static_cast<size_t>(i) * stride] = 0.0f;
    }
    done += run;
    ci = 0;
    if (++kx == p.filter_w) {
      kx = 0;
      ++ky;
    }
  }
}

bool is_pointwise(const ConvParams& p) {
  return p.filter_h == 1 && p.filter_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.in_h == p.out_h && p.in_w == p.out_w;
}

}  // namespace

void conv_compute_geometry(Padding padding, ConvParams& p) {
  p.out_h = window_output_size(padding, p.in_h, p.filter_h, p.stride_h, p.dilation_h);
  p.out_w = window_output_size(padding, p.in_w, p.filter_w, p.stride_w, p.dilation_w);
  p.pad_top = window_padding_before(p.in_h, p.out_h, p.filter_h, p.stride_h, p.dilation_h);
  p.pad_left = window_padding_before(p.in_w, p.out_w, p.filter_w, p.stride_w, p.dilation_w);
}

size_t conv_packed_filter_size(const ConvParams& p) {
  return gemm_packed_b_size(p.out_c, p.filter_h * p.filter_w * p.in_c);
}

void conv_pack_filter(const ConvParams& p, const float* filter, float* packed) {
  const int depth = p.filter_h * p.filter_w * p.in_c;
  gemm_pack_b(filter, depth, p.out_c, depth, packed);
}

size_t conv_scratch_size(const ConvParams&, int workers) {
  return static_cast<size_t>(workers) * gemm_scratch_per_worker();
}

void conv2d(const ConvParams& p, const float* input, const float* packed_filter, const float* bias,
            float* output, float* scratch, Parallel* parallel) {
  const int rows = p.batch * p.out_h * p.out_w;
  const int depth = p.filter_h * p.filter_w * p.in_c;
  const GemmEpilogue epilogue{bias, p.range};
  if (is_pointwise(p)) {
    const DenseRows dense{input, p.in_c};
    gemm(dense.source(), rows, p.out_c, depth, packed_filter, output, p.out_c, epilogue, scratch, parallel);
  } else {
    const Im2colRows im2col{&p, input};
    gemm({fill_im2col, &im2col}, rows, p.out_c, depth, packed_filter, output, p.out_c, epilogue, scratch,
         parallel);
  }
}

}  // namespace baton::builtin
