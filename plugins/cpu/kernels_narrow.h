// The bodies of the convolutions with few output channels, plain and transposed (see kernels.h), for
// kernels.cc to instantiate per instruction set.
#ifndef BATON_CPU_KERNELS_NARROW_H
#define BATON_CPU_KERNELS_NARROW_H

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels_vector.h"

namespace baton::cpu::detail {

// ---- convolution with few output channels ---------------------------------------------------------

// P output pixels of one row at once (P independent accumulators, so the multiply-adds do not wait on one
// another), every output channel: the taps [ky0, ky1) x [kx0, kx1) of windows that start at input
// elements first + j * step (j < P; indices, as a window's top-left tap may lie outside the input). Within
// one window row the taps kx0..kx1 are contiguous in the input and in the filter, so each row is one dot
// product of (kx1 - kx0) * channels floats.
template <class V, int P>
BATON_INLINE void narrow_conv_pixels(const ConvGeometry& g, const float* in, ptrdiff_t first, ptrdiff_t step,
                                     const float* weights, const float* bias, Clamp clamp_to, int ky0, int ky1,
                                     int kx0, int kx1, float* dst) {
  constexpr int L = lanes<V>;
  const int C = g.channels;
  const int n = (kx1 - kx0) * C, vector_end = n / L * L;
  const ptrdiff_t filter = static_cast<ptrdiff_t>(g.kernel_h) * g.kernel_w * C;
  for (int co = 0; co < g.out_channels; ++co) {
    V acc[P] = {};
    float tail[P] = {};
    for (int ky = ky0; ky < ky1; ++ky) {
      const ptrdiff_t tap = (static_cast<ptrdiff_t>(ky) * g.in_w + kx0) * C;
      const float* p = in + (first + tap);  // inside the input for every pixel
      const float* q = weights + co * filter + (static_cast<ptrdiff_t>(ky) * g.kernel_w + kx0) * C;
      int c = 0;
      for (; c < vector_end; c += L) {
        const V w = load<V>(q + c);
#pragma GCC unroll 4
        for (int j = 0; j < P; ++j) acc[j] += load<V>(p + j * step + c) * w;
      }
      for (; c < n; ++c) {
#pragma GCC unroll 4
        for (int j = 0; j < P; ++j) tail[j] += p[j * step + c] * q[c];
      }
    }
    if constexpr (P == 4) {
      const V4 sums = sum4(fold4(acc[0]), fold4(acc[1]), fold4(acc[2]), fold4(acc[3]));
#pragma GCC unroll 4
      for (int j = 0; j < P; ++j) dst[j * g.out_channels + co] = clamp(bias[co] + tail[j] + sums[j], clamp_to);
    } else {
      for (int j = 0; j < P; ++j) {
        float sum = bias[co] + tail[j];
        for (int l = 0; l < L; ++l) sum += acc[j][l];
        dst[j * g.out_channels + co] = clamp(sum, clamp_to);
      }
    }
  }
}

template <class V>
BATON_INLINE void narrow_conv_rows_impl(const ConvGeometry& g, const float* in, const float* weights,
                                        const float* bias, Clamp clamp_to, int row_begin, int row_end, float* out) {
  constexpr int P = 4;
  const ptrdiff_t step = static_cast<ptrdiff_t>(g.stride_w) * g.channels;
  for (int oy = row_begin; oy < row_end; ++oy) {
    const int iy = oy * g.stride_h - g.pad_top;
    const int ky0 = std::max(0, -iy), ky1 = std::min(g.kernel_h, g.in_h - iy);
    float* row_out = out + static_cast<ptrdiff_t>(oy) * g.out_w * g.out_channels;
    for (int ox = 0; ox < g.out_w;) {
      const int ix = ox * g.stride_w - g.pad_left;
      const ptrdiff_t first = (static_cast<ptrdiff_t>(iy) * g.in_w + ix) * g.channels;
      const int last_ix = ix + (P - 1) * g.stride_w;  // the window start of the group's last pixel
      if (ox + P <= g.out_w && ix >= 0 && last_ix + g.kernel_w <= g.in_w) {  // whole windows in x: P at once
        narrow_conv_pixels<V, P>(g, in, first, step, weights, bias, clamp_to, ky0, ky1, 0, g.kernel_w,
                                 row_out + static_cast<ptrdiff_t>(ox) * g.out_channels);
        ox += P;
      } else {
        const int kx0 = std::max(0, -ix), kx1 = std::min(g.kernel_w, g.in_w - ix);
        narrow_conv_pixels<V, 1>(g, in, first, step, weights, bias, clamp_to, ky0, ky1, kx0, kx1,
                                 row_out + static_cast<ptrdiff_t>(ox) * g.out_channels);
        ox += 1;
      }
    }
  }
}

// Output rows of a transposed convolution. Output (oy, ox) is reached by the taps ky = ty mod stride_h,
// + stride_h, ... below kernel_h from input rows iy = ty div stride_h, - 1, ... (ty = oy + pad_top), and the
// same in x. The row's values (pixel by pixel, channel within) go four at a time, each its own vector
// of products, summed together at the end (sum4); the x pair (tx mod stride_w, tx div stride_w) is
// stepped along the row, so the inner loops divide nothing.
template <class V>
struct TransposeTaps {
  const ConvGeometry& g;
  const float* in;
  const float* weights;
  int ky_first, iy_first;

  // Channel products of value (co, pixel whose x taps start at kx_first / ix_first): the vector part in
  // the return value, the rest added to `tail`.
  BATON_INLINE V dot(int co, int kx_first, int ix_first, float& tail) const {
    constexpr int L = lanes<V>;
    const int C = g.channels, vector_end = C / L * L;
    const float* w = weights + static_cast<ptrdiff_t>(co) * g.kernel_h * g.kernel_w * C;
    V acc{};
    for (int ky = ky_first, iy = iy_first; ky < g.kernel_h && iy >= 0; ky += g.stride_h, --iy) {
      if (iy >= g.in_h) continue;
      for (int kx = kx_first, ix = ix_first; kx < g.kernel_w && ix >= 0; kx += g.stride_w, --ix) {
        if (ix >= g.in_w) continue;
        const float* p = in + (static_cast<ptrdiff_t>(iy) * g.in_w + ix) * C;
        const float* q = w + (static_cast<ptrdiff_t>(ky) * g.kernel_w + kx) * C;
        int c = 0;
        for (; c < vector_end; c += L) acc += load<V>(p + c) * load<V>(q + c);
        for (; c < C; ++c) tail += p[c] * q[c];
      }
    }
    return acc;
  }
};

// The common head (window == stride, as a 2x upsampling with 2x2 windows; no left offset; channels a
// whole number of vectors, at most four): every output takes exactly one tap, output row oy is input row
// iy through filter row ky, and the values come out in memory order: input pixel ix, then kx, then co.
// Four values at a time, each the products of one pixel's channels with one filter, summed together
// (sum4); the four live in registers (an array indexed by a running count put them on the stack, and the
// partial reloads of each stored vector cost more than the products).
template <class V, int NV>
BATON_INLINE void transpose_row_one_tap(const ConvGeometry& g, const float* in_row, const float* weights,
                                        const float* bias, int ky, float* out) {
  constexpr int L = lanes<V>;
  const int C = g.channels;
  const ptrdiff_t filter = static_cast<ptrdiff_t>(g.kernel_h) * g.kernel_w * C;
  const float* x = in_row;
  const float* row_filters = weights + static_cast<ptrdiff_t>(ky) * g.kernel_w * C;
  int kx = 0, co = 0;  // of the next value
  auto next = [&](float& b) BATON_LAMBDA_INLINE {
    const float* w = row_filters + co * filter + static_cast<ptrdiff_t>(kx) * C;
    V a = load<V>(x) * load<V>(w);
#pragma GCC unroll 4
    for (int k = 1; k < NV; ++k) a += load<V>(x + k * L) * load<V>(w + k * L);
    b = bias[co];
    if (++co == g.out_channels) {
      co = 0;
      if (++kx == g.stride_w) {
        kx = 0;
        x += C;
      }
    }
    return a;
  };
  const int values = g.out_w * g.out_channels;
  int v = 0;
  for (; v + 4 <= values; v += 4) {
    float b0, b1, b2, b3;
    const V a0 = next(b0), a1 = next(b1), a2 = next(b2), a3 = next(b3);
    const V4 sums = sum4(fold4(a0), fold4(a1), fold4(a2), fold4(a3));
    out[v] = b0 + sums[0];
    out[v + 1] = b1 + sums[1];
    out[v + 2] = b2 + sums[2];
    out[v + 3] = b3 + sums[3];
  }
  for (; v < values; ++v) {
    float sum;
    const V a = next(sum);
    for (int l = 0; l < L; ++l) sum += a[l];
    out[v] = sum;
  }
}

template <class V>
BATON_INLINE void narrow_transpose_conv_rows_impl(const ConvGeometry& g, const float* in, const float* weights,
                                                  const float* bias, int row_begin, int row_end, float* out) {
  constexpr int L = lanes<V>;
  // The one-tap rows in vectors of at most 8 floats: each value ends in a horizontal sum, and a 16-float
  // one takes two more steps (on Zen 4, of two 256-bit halves each) for one multiply; selfie_segmentation's
  // head (16 channels to one map) ran 394 -> 68 us with them.
  using VT = std::conditional_t<(L > 8), V8, V>;
  const int values = g.out_w * g.out_channels;
  const int vectors = g.channels % lanes<VT> == 0 ? g.channels / lanes<VT> : 0;
  if (g.kernel_h == g.stride_h && g.kernel_w == g.stride_w && g.pad_left == 0 && vectors >= 1 && vectors <= 4) {
    for (int oy = row_begin; oy < row_end; ++oy) {
      const int ty = oy + g.pad_top;
      const float* in_row = in + static_cast<ptrdiff_t>(ty / g.stride_h) * g.in_w * g.channels;
      float* dst = out + static_cast<ptrdiff_t>(oy) * values;
      const int ky = ty % g.stride_h;
      switch (vectors) {
        case 1: transpose_row_one_tap<VT, 1>(g, in_row, weights, bias, ky, dst); break;
        case 2: transpose_row_one_tap<VT, 2>(g, in_row, weights, bias, ky, dst); break;
        case 3: transpose_row_one_tap<VT, 3>(g, in_row, weights, bias, ky, dst); break;
        default: transpose_row_one_tap<VT, 4>(g, in_row, weights, bias, ky, dst); break;
      }
    }
    return;
  }
  for (int oy = row_begin; oy < row_end; ++oy) {
    const int ty = oy + g.pad_top;
    const TransposeTaps<V> taps{g, in, weights, ty % g.stride_h, ty / g.stride_h};
    float* dst = out + static_cast<ptrdiff_t>(oy) * values;
    int co = 0, kx_first = g.pad_left % g.stride_w, ix_first = g.pad_left / g.stride_w;  // of the next value
    auto next = [&]() BATON_LAMBDA_INLINE {
      if (++co < g.out_channels) return;
      co = 0;
      if (++kx_first == g.stride_w) {
        kx_first = 0;
        ++ix_first;
      }
    };
    int v = 0;
    for (; v + 4 <= values; v += 4) {
      V acc[4];
      float tail[4];
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        tail[j] = bias[co];
        acc[j] = taps.dot(co, kx_first, ix_first, tail[j]);
        next();
      }
      const V4 sums = sum4(fold4(acc[0]), fold4(acc[1]), fold4(acc[2]), fold4(acc[3]));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) dst[v + j] = tail[j] + sums[j];
    }
    for (; v < values; ++v) {
      float sum = bias[co];
      const V acc = taps.dot(co, kx_first, ix_first, sum);
      for (int l = 0; l < L; ++l) sum += acc[l];
      dst[v] = sum;
      next();
    }
  }
}

}  // namespace baton::cpu::detail

#endif  // BATON_CPU_KERNELS_NARROW_H
