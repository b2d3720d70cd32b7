#include "kernels.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace baton::cpu {
namespace {

// GCC vector types: one body, instantiated with the vector width of each instruction set (16 floats in a
// zmm, 8 in a ymm, 4 in an xmm). Loads and stores go through memcpy (unaligned, no aliasing trouble).
typedef float V16 __attribute__((vector_size(64)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V4 __attribute__((vector_size(16)));

#define BATON_INLINE inline __attribute__((always_inline))
// A lambda is a function of its own, which does not take the target attribute of the function it is
// written in: unless inlined it is compiled for the baseline ISA, each 16-float vector operation emulated
// in SSE (the depthwise border pixels ran so until this was added to every lambda here).
#define BATON_LAMBDA_INLINE __attribute__((always_inline))

template <class V>
BATON_INLINE V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
BATON_INLINE void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
template <class V>
BATON_INLINE V clamp(V v, Clamp c) {
  const V lo = V{} + c.min, hi = V{} + c.max;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
BATON_INLINE float clamp(float v, Clamp c) { return std::min(std::max(v, c.min), c.max); }

// Horizontal sums. fold4 adds a vector's halves down to four lanes; sum4 turns four such vectors into
// the vector of their four sums (a transpose and two adds), so four dot products end in a handful of
// shuffles instead of a chain of scalar additions each.
BATON_INLINE V4 fold4(V4 v) { return v; }
BATON_INLINE V4 fold4(V8 v) {
  V4 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return lo + hi;
}
BATON_INLINE V4 fold4(V16 v) {
  V8 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return fold4(lo + hi);
}
BATON_INLINE V4 sum4(V4 a, V4 b, V4 c, V4 d) {
  typedef int I4 __attribute__((vector_size(16)));
  const V4 ab = __builtin_shuffle(a, b, I4{0, 4, 1, 5}) + __builtin_shuffle(a, b, I4{2, 6, 3, 7});
  const V4 cd = __builtin_shuffle(c, d, I4{0, 4, 1, 5}) + __builtin_shuffle(c, d, I4{2, 6, 3, 7});
  return __builtin_shuffle(ab, cd, I4{0, 1, 4, 5}) + __builtin_shuffle(ab, cd, I4{2, 3, 6, 7});
}

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
template <class V>
constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(float));

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
// kUnit: stride 1 (step == channels), where pixel p's tap kx is input column p + kx: each window row's
// P + K - 1 columns are loaded once and shared by the taps, not loaded P * K times. kMasked (with kUnit):
// only the columns j whose bit is set in `columns` lie inside the input, the others count as zeros (the
// padding), so the pixels at the left and right edges run this loop too instead of a tap-by-tap one.
template <int K, int P, class W, bool kUnit = false, bool kMasked = false>
BATON_INLINE void depthwise_run(const float* in, int row_stride, int step, int channels, const float* weights,
                                const float* bias, Clamp clamp_to, int c, int ky0, int ky1, float* dst,
                                uint32_t columns = ~0u) {
  W acc[P];
  const W b = load<W>(bias + c);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) acc[p] = b;
  for (int ky = ky0; ky < ky1; ++ky) {
    const float* row = in + ky * row_stride + c;
    if constexpr (kUnit) {
      W x[P + K - 1];
#pragma GCC unroll 12
      for (int j = 0; j < P + K - 1; ++j) x[j] = !kMasked || (columns >> j & 1u) ? load<W>(row + j * channels) : W{};
#pragma GCC unroll 5
      for (int kx = 0; kx < K; ++kx) {
        const W w = load<W>(weights + (ky * K + kx) * channels + c);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) acc[p] += x[p + kx] * w;
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
template <int K, int P, class V, bool kUnit = false, bool kMasked = false>
BATON_INLINE void depthwise_pixels(const float* in, int row_stride, int step, int channels, const float* weights,
                                   const float* bias, Clamp clamp_to, int ky0, int ky1, float* dst,
                                   uint32_t columns = ~0u) {
  int c = 0;
  for (; c + lanes<V> <= channels; c += lanes<V>) {
    depthwise_run<K, P, V, kUnit, kMasked>(in, row_stride, step, channels, weights, bias, clamp_to, c, ky0, ky1, dst,
                                           columns);
  }
  if constexpr (lanes<V> > 8) {
    if (c + 8 <= channels) {
      depthwise_run<K, P, V8, kUnit, kMasked>(in, row_stride, step, channels, weights, bias, clamp_to, c, ky0, ky1,
                                              dst, columns);
      c += 8;
    }
  }
  if constexpr (lanes<V> > 4) {
    if (c + 4 <= channels) {
      depthwise_run<K, P, V4, kUnit, kMasked>(in, row_stride, step, channels, weights, bias, clamp_to, c, ky0, ky1,
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
          depthwise_pixels<K, P, V, true>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1,
                                          out + ox * C);
          return;
        }
        const int lo = std::max(0, -first), hi = std::min(span, g.in_w - first);
        const uint32_t columns = hi > lo ? ((1u << hi) - 1u) & ~((1u << lo) - 1u) : 0u;
        depthwise_pixels<K, P, V, true, true>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1,
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
      depthwise_pixels<K, 4, V>(window(ox), row_stride, step, C, weights, bias, clamp_to, ky0, ky1, out + ox * C);
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

// ---- matrix product -------------------------------------------------------------------------------

// One MR x (NV vectors) tile of C over the whole depth k; `rows` and `cols` say how much of it is real (the
// rest is computed from repeated rows and zero columns, and not stored).
// The panel's rows are `panel_stride` floats apart (its packed width, which may be wider than the tile:
// a narrow tile runs the first columns of a panel whose others are zero).
template <class V, int MR, int NV>
BATON_INLINE void gemm_tile(int k, const float* a, int lda, const float* panel, int panel_stride, const float* bias,
                            Clamp clamp_to, float* c, int ldc, int rows, int cols) {
  constexpr int L = lanes<V>, NR = L * NV;
  V acc[MR][NV];
  const float* ap[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    ap[i] = a + static_cast<ptrdiff_t>(std::min(i, rows - 1)) * lda;
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[i][j] = load<V>(bias + L * j);
  }
  for (int p = 0; p < k; ++p) {
    V b[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) b[j] = load<V>(panel + static_cast<ptrdiff_t>(p) * panel_stride + L * j);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const float x = ap[i][p];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[i][j] += x * b[j];
    }
  }
  if (rows == MR && cols == NR) {
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) store(c + static_cast<ptrdiff_t>(i) * ldc + L * j, clamp(acc[i][j], clamp_to));
    }
    return;
  }
  for (int i = 0; i < rows; ++i) {
    float tile[NR];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) store(tile + L * j, clamp(acc[i][j], clamp_to));
    std::memcpy(c + static_cast<ptrdiff_t>(i) * ldc, tile, static_cast<size_t>(cols) * sizeof(float));
  }
}

// Panel by panel (a panel of B, k x NR, stays in L1 while every row tile of A passes it). A last panel
// of at most NR / 2 real columns (24, 40 or 56 output channels; 8) runs a tile of half the width, VH x
// MRH: the full tile would spend half its multiply-adds on zero columns there.
template <class V, int MR, int NV, class VH, int MRH>
BATON_INLINE void gemm_impl(int m, int n, int k, const float* a, int lda, const float* packed_b, const float* bias,
                            Clamp clamp_to, float* c, int ldc) {
  constexpr int L = lanes<V>, NR = L * NV;
  static_assert((NR / 2) % lanes<VH> == 0, "the half tile's columns are whole vectors");
  for (int n0 = 0; n0 < n; n0 += NR) {
    const float* panel = packed_b + static_cast<ptrdiff_t>(n0 / NR) * k * NR;
    const int cols = std::min(NR, n - n0);
    if (cols <= NR / 2) {
      constexpr int NVH = NR / 2 / lanes<VH>;
      for (int m0 = 0; m0 < m; m0 += MRH) {
        gemm_tile<VH, MRH, NVH>(k, a + static_cast<ptrdiff_t>(m0) * lda, lda, panel, NR, bias + n0, clamp_to,
                                c + static_cast<ptrdiff_t>(m0) * ldc + n0, ldc, std::min(MRH, m - m0), cols);
      }
      continue;
    }
    for (int m0 = 0; m0 < m; m0 += MR) {
      gemm_tile<V, MR, NV>(k, a + static_cast<ptrdiff_t>(m0) * lda, lda, panel, NR, bias + n0, clamp_to,
                           c + static_cast<ptrdiff_t>(m0) * ldc + n0, ldc, std::min(MR, m - m0), cols);
    }
  }
}

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

// ---- HARD_SWISH in place ----------------------------------------------------------------------------

// x * min(max(x + 3, 0), 6) / 6, as TFLite's float kernel computes it.
template <class V>
BATON_INLINE void hard_swish_impl(float* data, long n) {
  constexpr int L = lanes<V>;
  const Clamp relu6{0.0f, 6.0f};
  long i = 0;
  for (; i + L <= n; i += L) {
    const V x = load<V>(data + i);
    store(data + i, x * clamp(x + 3.0f, relu6) / 6.0f);
  }
  for (; i < n; ++i) data[i] = data[i] * clamp(data[i] + 3.0f, relu6) / 6.0f;
}

template <class V>
BATON_INLINE void add_clamp_impl(float* data, const float* other, long n, Clamp c) {
  constexpr int L = lanes<V>;
  long i = 0;
  for (; i + L <= n; i += L) store(data + i, clamp(load<V>(data + i) + load<V>(other + i), c));
  for (; i < n; ++i) data[i] = clamp(data[i] + other[i], c);
}

// One copy of the kernels per instruction set, in its own vector width and with the tile that fits its
// registers: 8 x 16 in 8 of AVX-512's 32 zmm, 6 x 16 in 12 of AVX2's 16 ymm, 4 x 8 in 8 of 16 xmm. The
// AVX-512 tile was 12 x 32 until it met an AVX-512 machine (an AMD EPYC, Zen 4, which runs each zmm
// multiply-add as two 256-bit halves): there its twelve row pointers and the columns it wastes on 16 or 24
// output channels cost more than they gave, and 8 x 16 ran hand_landmark_lite 4.8 -> 4.2 ms and
// pose_landmark_lite 11.6 -> 9.4 ms at one thread (4, 6 and 7 x 16 were level with it within the noise,
// 12 x 16 and 4, 6 and 8 x 32 slower). The half tile of a last panel is 12 x 8 (12 ymm accumulators),
// or 8 x 4 in xmm; AVX-512's needs AVX512VL, without which a ymm instruction reaches only ymm0-15 and
// GCC spilled an accumulator of it to the stack.
#define BATON_CPU_KERNELS(SUFFIX, ATTRIBUTES, V, MR, NV, VH, MRH)                                                   \
  ATTRIBUTES void depthwise_rows_##SUFFIX(const DepthwiseGeometry& g, const float* in, const float* w,     \
                                          const float* bias, Clamp cl, int r0, int r1, float* dst) {      \
    depthwise_rows_impl<V>(g, in, w, bias, cl, r0, r1, dst);                                                  \
  }                                                                                                        \
  ATTRIBUTES void gemm_##SUFFIX(int m, int n, int k, const float* a, int lda, const float* b,             \
                                const float* bias, Clamp cl, float* c, int ldc) {                         \
    gemm_impl<V, MR, NV, VH, MRH>(m, n, k, a, lda, b, bias, cl, c, ldc);                                           \
  }                                                                                                        \
  ATTRIBUTES void narrow_conv_rows_##SUFFIX(const ConvGeometry& g, const float* in, const float* w,       \
                                            const float* bias, Clamp cl, int r0, int r1, float* out) {    \
    narrow_conv_rows_impl<V>(g, in, w, bias, cl, r0, r1, out);                                                \
  }                                                                                                        \
  ATTRIBUTES void narrow_transpose_conv_rows_##SUFFIX(const ConvGeometry& g, const float* in, const float* w, \
                                                      const float* bias, int r0, int r1, float* out) {     \
    narrow_transpose_conv_rows_impl<V>(g, in, w, bias, r0, r1, out);                                          \
  }                                                                                                        \
  ATTRIBUTES void hard_swish_##SUFFIX(float* data, long n) { hard_swish_impl<V>(data, n); }                 \
  ATTRIBUTES void add_clamp_##SUFFIX(float* data, const float* other, long n, Clamp cl) {                  \
    add_clamp_impl<V>(data, other, n, cl);                                                                    \
  }                                                                                                        \
  const Kernels kKernels_##SUFFIX = {#SUFFIX, MR, lanes<V> * NV, depthwise_rows_##SUFFIX, gemm_##SUFFIX,     \
                                     narrow_conv_rows_##SUFFIX, narrow_transpose_conv_rows_##SUFFIX, hard_swish_##SUFFIX, \
                                     add_clamp_##SUFFIX};

BATON_CPU_KERNELS(baseline, , V4, 4, 2, V4, 8)
#if defined(__x86_64__) && defined(__GNUC__)
BATON_CPU_KERNELS(avx2, __attribute__((target("avx2,fma"))), V8, 6, 2, V8, 12)
BATON_CPU_KERNELS(avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))), V16, 8, 1, V8, 12)
#endif

}  // namespace

std::vector<const Kernels*> available_kernels() {
  std::vector<const Kernels*> out;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("fma")) out.push_back(&kKernels_avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(&kKernels_avx2);
#endif
  out.push_back(&kKernels_baseline);
  return out;
}

const Kernels& best_kernels() {
  static const Kernels* best = available_kernels().front();
  return *best;
}

size_t packed_b_size(int n, int k, int nr) {
  const size_t panels = static_cast<size_t>((n + nr - 1) / nr);
  return panels * static_cast<size_t>(k) * static_cast<size_t>(nr);
}

void pack_b(const float* b, int n, int k, int nr, float* packed) {
  for (int n0 = 0; n0 < n; n0 += nr) {
    float* panel = packed + static_cast<ptrdiff_t>(n0 / nr) * k * nr;
    for (int kk = 0; kk < k; ++kk) {
      for (int j = 0; j < nr; ++j) {
        panel[kk * nr + j] = n0 + j < n ? b[static_cast<ptrdiff_t>(n0 + j) * k + kk] : 0.0f;
      }
    }
  }
}

}  // namespace baton::cpu
