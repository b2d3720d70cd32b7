// The depthwise convolution's body (see kernels.h), for kernels.cc to instantiate per instruction set.
#ifndef BATON_CPU_KERNELS_DEPTHWISE_H
#define BATON_CPU_KERNELS_DEPTHWISE_H

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels_vector.h"

namespace baton::cpu::detail {

// ---- depthwise ----------------------------------------------------------------------------------

// Channels [c, c + width of V) of one output pixel whose window lies inside the input: K*K taps, no checks.
template <int K, class V>
BATON_INLINE void depthwise_inside(const float* in, int row_stride, int channels, const float* weights,
                                   const float* bias, Clamp clamp_to, int c, float* dst) {
  V acc = load<V>(bias + c);
#pragma GCC unroll 5
  for (int ky = 0; ky < K; ++ky) {
#pragma GCC unroll 5
    for (int kx = 0; kx < K; ++kx) {
      acc += load<V>(in + ky * row_stride + kx * channels + c) * load<V>(weights + (ky * K + kx) * channels + c);
    }
  }
  store(dst + c, clamp(acc, clamp_to));
}

// The same for a pixel at the border: only taps [ky0, ky1) x [kx0, kx1) fall inside the input. U
// neighbouring vectors of channels at once (U independent sums, so the multiply-adds of one do not wait
// on the last of another: a border pixel has no neighbours in the same loop to give that overlap, and
// its window is up to 25 taps long).
template <int K, class V, int U = 1>
BATON_INLINE void depthwise_border(const float* in, int row_stride, int channels, const float* weights,
                                   const float* bias, Clamp clamp_to, int c, int ky0, int ky1, int kx0, int kx1,
                                   float* dst) {
  constexpr int L = static_cast<int>(sizeof(V) / sizeof(float));
  V acc[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) acc[u] = load<V>(bias + c + u * L);
  for (int ky = ky0; ky < ky1; ++ky) {
    for (int kx = kx0; kx < kx1; ++kx) {
      const float* x = in + ky * row_stride + kx * channels + c;
      const float* w = weights + (ky * K + kx) * channels + c;
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) acc[u] += load<V>(x + u * L) * load<V>(w + u * L);
    }
  }
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) store(dst + c + u * L, clamp(acc[u], clamp_to));
}

// One output pixel, all channels: vectors V, then narrower ones, then single floats. `in` points at the
// window's top-left tap (which may lie outside the input when `inside` is false; only taps in
// [ky0, ky1) x [kx0, kx1) are read).
template <int K, bool kInside, class V>
BATON_INLINE void depthwise_pixel(const float* in, int row_stride, int channels, const float* weights,
                                  const float* bias, Clamp clamp_to, int ky0, int ky1, int kx0, int kx1, float* dst) {
  int c = 0;
  auto run = [&](auto tag) BATON_LAMBDA_INLINE {
    using W = decltype(tag);
    if constexpr (kInside) {
      depthwise_inside<K, W>(in, row_stride, channels, weights, bias, clamp_to, c, dst);
    } else {
      depthwise_border<K, W>(in, row_stride, channels, weights, bias, clamp_to, c, ky0, ky1, kx0, kx1, dst);
    }
  };
  // Vectors of the widest width this instruction set has (four at a time at the border), then the
  // narrower ones for the rest.
  if constexpr (!kInside) {
    for (; c + 4 * lanes<V> <= channels; c += 4 * lanes<V>) {
      depthwise_border<K, V, 4>(in, row_stride, channels, weights, bias, clamp_to, c, ky0, ky1, kx0, kx1, dst);
    }
  }
  for (; c + lanes<V> <= channels; c += lanes<V>) run(V{});
  if constexpr (lanes<V> > 8) {
    if (c + 8 <= channels) { run(V8{}); c += 8; }
  }
  if constexpr (lanes<V> > 4) {
    if (c + 4 <= channels) { run(V4{}); c += 4; }
  }
  for (; c < channels; ++c) {
    float acc = bias[c];
    for (int ky = ky0; ky < ky1; ++ky) {
      for (int kx = kx0; kx < kx1; ++kx) acc += in[ky * row_stride + kx * channels + c] * weights[(ky * K + kx) * channels + c];
    }
    dst[c] = clamp(acc, clamp_to);
  }
}

// Channels [c, c + lanes of W) of P neighbouring output pixels (x stride `step` floats apart in the
// input) whose windows lie across the input's width, rows [ky0, ky1) of the window: P independent
// accumulators, each weight loaded once for all of them.
// S > 0: the stride S (step == S * channels), where pixel p's tap kx is input column S * p + kx: each
// window row's (P - 1) * S + K columns are loaded once and shared by the taps, not loaded P * K times.
// kMasked (with S == 1): only the columns j whose bit is set in `columns` lie inside the input, the
// others count as zeros (the padding), so the pixels at the left and right edges run this loop too
// instead of a tap-by-tap one.
template <int K, int P, class W, int S = 0, bool kMasked = false>
BATON_INLINE void depthwise_run(const float* in, int row_stride, int step, int channels, const float* weights,
                                const float* bias, Clamp clamp_to, int c, int ky0, int ky1, float* dst,
                                uint32_t columns = ~0u) {
  W acc[P];
  const W b = load<W>(bias + c);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = b;
  for (int ky = ky0; ky < ky1; ++ky) {
    const float* row = in + ky * row_stride + c;
    if constexpr (S > 0) {
      // The columns and taps through pointers that step by `channels`, each step hidden from the compiler:
      // else it keeps every multiple of `channels` in a register of its own, far more than x86 has, and
      // reloads them from the stack in the loop (56x56x96 3x3: 48 -> 68 GFLOP/s).
      constexpr int kColumns = (P - 1) * S + K;
      W x[kColumns];
      const float* at = row;
#pragma GCC unroll 16
      for (int j = 0; j < kColumns; ++j) {
        x[j] = !kMasked || (columns >> j & 1u) ? load<W>(at) : W{};
        at += channels;
        opaque(at);
      }
      const float* tap = weights + ky * K * channels + c;
#pragma GCC unroll 5
      for (int kx = 0; kx < K; ++kx) {
        const W w = load<W>(tap);
        tap += channels;
        opaque(tap);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) acc[p] += x[p * S + kx] * w;
      }
      continue;
    }
#pragma GCC unroll 5
    for (int kx = 0; kx < K; ++kx) {
      const W w = load<W>(weights + (ky * K + kx) * channels + c);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) acc[p] += load<W>(row + p * step + kx * channels) * w;
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) store(dst + p * channels + c, clamp(acc[p], clamp_to));
}

// P pixels, all channels: vectors V, then narrower ones, then single floats.
template <int K, int P, class V, int S = 0, bool kMasked = false>
BATON_INLINE void depthwise_pixels(const float* in, int row_stride, int step, int channels, const float* weights,
                                   const float* bias, Clamp clamp_to, int ky0, int ky1, float* dst,
                                   uint32_t columns = ~0u) {
  int c = 0;
  for (; c + lanes<V> <= channels; c += lanes<V>) {
    depthwise_run<K, P, V, S, kMasked>(in, row_stride, step, channels, weights, bias, clamp_to, c, ky0, ky1, dst,
                                           columns);
  }
  if constexpr (lanes<V> > 8) {
    if (c + 8 <= channels) {
      depthwise_run<K, P, V8, S, kMasked>(in, row_stride, step, channels, weights, bias, clamp_to, c, ky0, ky1,
                                              dst, columns);
      c += 8;
    }
  }
  if constexpr (lanes<V> > 4) {
    if (c + 4 <= channels) {
      depthwise_run<K, P, V4, S, kMasked>(in, row_stride, step, channels, weights, bias, clamp_to, c, ky0, ky1,
                                              dst, columns);
      c += 4;
    }
  }
  for (; c < channels; ++c) {
    for (int p = 0; p < P; ++p) {
      float acc = bias[c];
      for (int ky = ky0; ky < ky1; ++ky) {
        for (int kx = 0; kx < K; ++kx) {
          if (kMasked && !(columns >> (p + kx) & 1u)) continue;
          acc += in[ky * row_stride + p * step + kx * channels + c] * weights[(ky * K + kx) * channels + c];
        }
      }
      dst[p * channels + c] = clamp(acc, clamp_to);
    }
  }
}

template <int K, class V>
BATON_INLINE void depthwise_rows_k(const DepthwiseGeometry& g, const float* in, const float* weights,
                                   const float* bias, Clamp clamp_to, int row_begin, int row_end, float* dst) {
  const int C = g.channels, row_stride = g.in_w * C, step = g.stride_w * C;
  // Output columns whose window lies across the input's width: [inner_begin, inner_end).
  const int inner_begin = std::min(g.out_w, (g.pad_left + g.stride_w - 1) / g.stride_w);
  const int inner_end = std::max(inner_begin, std::min(g.out_w, (g.in_w - K + g.pad_left) / g.stride_w + 1));
  for (int oy = row_begin; oy < row_end; ++oy) {
    const int iy = oy * g.stride_h - g.pad_top;
    const int ky0 = std::max(0, -iy), ky1 = std::min(K, g.in_h - iy);
    float* out = dst + static_cast<ptrdiff_t>(oy - row_begin) * g.out_w * C;
    // The window's top-left tap, possibly outside the input: only offsets inside it are added to it.
    auto window = [&](int ox) BATON_LAMBDA_INLINE {
      return in + static_cast<ptrdiff_t>(iy) * row_stride + static_cast<ptrdiff_t>(ox * g.stride_w - g.pad_left) * C;
    };
    auto border = [&](int ox) BATON_LAMBDA_INLINE {
      const int ix = ox * g.stride_w - g.pad_left;
      const int kx0 = std::max(0, -ix), kx1 = std::min(K, g.in_w - ix);
      depthwise_pixel<K, false, V>(window(ox), row_stride, C, weights, bias, clamp_to, ky0, ky1, kx0, kx1, out + ox * C);
    };
    if (g.stride_w == 1) {
      // Eight pixels at a time across the whole row, then four, two, one; those whose windows reach past
      // an edge with the columns outside masked.
      auto run = [&](auto pixels, int ox) BATON_LAMBDA_INLINE {
        constexpr int P = decltype(pixels)::value, span = P + K - 1;
        const int first = ox - g.pad_left;  // the input column of the window's column 0
        if (first >= 0 && first + span <= g.in_w) {
          depthwise_pixels<K, P, V, 1>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1,
                                          out + ox * C);
          return;
        }
        const int lo = std::max(0, -first), hi = std::min(span, g.in_w - first);
        const uint32_t columns = hi > lo ? ((1u << hi) - 1u) & ~((1u << lo) - 1u) : 0u;
        depthwise_pixels<K, P, V, 1, true>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1,
                                              out + ox * C, columns);
      };
      int ox = 0;
      for (; ox + 8 <= g.out_w; ox += 8) run(std::integral_constant<int, 8>{}, ox);
      if (ox + 4 <= g.out_w) {
        run(std::integral_constant<int, 4>{}, ox);
        ox += 4;
      }
      if (ox + 2 <= g.out_w) {
        run(std::integral_constant<int, 2>{}, ox);
        ox += 2;
      }
      if (ox < g.out_w) run(std::integral_constant<int, 1>{}, ox);
      continue;
    }
    for (int ox = 0; ox < inner_begin; ++ox) border(ox);
    int ox = inner_begin;
    for (; ox + 4 <= inner_end; ox += 4) {
      if (g.stride_w == 2) {  // the columns two neighbouring windows share loaded once
        depthwise_pixels<K, 4, V, 2>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1, out + ox * C);
      } else {
        depthwise_pixels<K, 4, V>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1, out + ox * C);
      }
    }
    for (; ox < inner_end; ++ox) {
      depthwise_pixels<K, 1, V>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1, out + ox * C);
    }
    for (ox = inner_end; ox < g.out_w; ++ox) border(ox);
  }
}

template <class V>
BATON_INLINE void depthwise_rows_impl(const DepthwiseGeometry& g, const float* in, const float* weights,
                                      const float* bias, Clamp clamp_to, int row_begin, int row_end, float* dst) {
  if (g.kernel == 3) {
    depthwise_rows_k<3, V>(g, in, weights, bias, clamp_to, row_begin, row_end, dst);
  } else {
    depthwise_rows_k<5, V>(g, in, weights, bias, clamp_to, row_begin, row_end, dst);
  }
}

}  // namespace baton::cpu::detail

#endif  // BATON_CPU_KERNELS_DEPTHWISE_H
