// The cpu delegate's compute kernels: a depthwise convolution (square 3x3 or 5x5 window, stride 1 or 2)
// that writes a block of output rows into a small buffer, a matrix product with packed weights that
// turns such a block into the 1x1 convolution's output, and a convolution with few output channels. Each is compiled for AVX-512, for AVX2+FMA and
// for the baseline x86-64 (or whatever the target is) from one body written with GCC vector types, and
// the best one this CPU runs is chosen at run time. Nothing here allocates.
#ifndef BATON_CPU_KERNELS_H
#define BATON_CPU_KERNELS_H

#include <cstddef>
#include <vector>

namespace baton::cpu {

struct Clamp {
  float min, max;  // the fused activation: -inf/+inf for none
};

// One image of a depthwise convolution with depth multiplier 1 and a square window of `kernel` (3 or 5).
struct DepthwiseGeometry {
  int in_h = 0, in_w = 0, channels = 0;
  int kernel = 3, stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;
  int out_h = 0, out_w = 0;
};

// Output rows [row_begin, row_end) of one image: in is [in_h][in_w][channels], weights
// [kernel][kernel][channels] (TFLite's [1, k, k, channels]), bias [channels]; dst receives
// [(row - row_begin) * out_w + x][channels].
using DepthwiseRowsFn = void (*)(const DepthwiseGeometry& g, const float* in, const float* weights, const float* bias,
                                 Clamp clamp, int row_begin, int row_end, float* dst);

// C[m][n] = clamp(bias[n] + sum_k A[m][k] * B[n][k]) with A row-major (leading dimension lda) and B packed
// by pack_b for this kernel's nr; bias has n rounded up to nr entries.
using GemmFn = void (*)(int m, int n, int k, const float* a, int lda, const float* packed_b, const float* bias,
                        Clamp clamp, float* c, int ldc);

// One image of a convolution with few output channels (a detection or segmentation head: one to four
// maps from a handful of channels), which general GEMM tiles waste most of their width on.
struct ConvGeometry {
  int in_h = 0, in_w = 0, channels = 0;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0;
  int out_h = 0, out_w = 0, out_channels = 0;
};

// Output rows [row_begin, row_end) of one image: in is [in_h][in_w][channels], weights
// [out_channels][kernel_h][kernel_w][channels] (TFLite's filter), bias [out_channels]; out is the image's
// [out_h][out_w][out_channels]. Each output value is a dot product of its window with a filter, taken over
// the channels in vectors; taps outside the input are skipped (zero padding).
using NarrowConvRowsFn = void (*)(const ConvGeometry& g, const float* in, const float* weights, const float* bias,
                                  Clamp clamp, int row_begin, int row_end, float* out);

// The same for a transposed convolution (gradient form): pad_top/pad_left are the offsets TFLite
// subtracts, so input pixel (iy, ix) and tap (ky, kx) reach output (iy * stride_h - pad_top + ky,
// ix * stride_w - pad_left + kx). Each output value sums, over the taps that reach it, the dot product of
// an input pixel's channels with a filter's; bias first.
using NarrowTransposeConvRowsFn = void (*)(const ConvGeometry& g, const float* in, const float* weights,
                                           const float* bias, int row_begin, int row_end, float* out);

// HARD_SWISH over n floats in place.
using HardSwishFn = void (*)(float* data, long n);
// data[i] = clamp(data[i] + other[i]) over n floats (a residual ADD).
using AddClampFn = void (*)(float* data, const float* other, long n, Clamp clamp);
// data[i] = clamp(data[i] + max(a[i], b[i], c[i], d[i])) for i < n, clamp(data[i]) for n <= i < total (a
// residual ADD of a shortcut: a 2x2 max pool, zero channels appended).
using AddMax4ClampFn = void (*)(float* data, long total, const float* a, const float* b, const float* c, const float* d,
                                long n, Clamp clamp);

// A matrix product's tile: mr rows by nr columns of C at a time, over B packed by pack_b for nr.
struct GemmTile {
  int mr, nr;
  GemmFn gemm;
};

struct Kernels {
  const char* isa;  // "avx512", "avx2", "baseline"
  GemmTile tile;    // any product's
  GemmTile wide;    // products of suitable widths (gemm_tile_for); tile itself where the ISA has no wider one
  DepthwiseRowsFn depthwise_rows;
  NarrowConvRowsFn narrow_conv_rows;
  NarrowTransposeConvRowsFn narrow_transpose_conv_rows;
  HardSwishFn hard_swish;
  AddClampFn add_clamp;
  AddMax4ClampFn add_max4_clamp;
};

// The kernels this CPU runs, best first (the first is what the delegate uses).
std::vector<const Kernels*> available_kernels();
const Kernels& best_kernels();

// B ([n][k], row-major) in panels of nr columns: panel p holds B[p*nr + j][kk] at [kk][j], columns past n
// zero. packed_b_size gives the floats needed.
size_t packed_b_size(int n, int k, int nr);
void pack_b(const float* b, int n, int k, int nr, float* packed);

// The tile for a product of n output columns: the wide one where n is a multiple of half its width (a
// last panel of half width runs the half tile, which is the narrow tile's own on AVX-512), else the
// narrow one, whose half tile fits the last 8 or 24 columns of 24, 40 or 56 without zero columns.
const GemmTile& gemm_tile_for(const Kernels& kernels, int n);

// A product with constant B ([n][k], row-major): packed once, at construction, for the tile that suits n,
// with its bias (or zeros) padded to the panels.
class PackedGemm {
 public:
  PackedGemm(const Kernels& kernels, const float* b, const float* bias, int n, int k);
  // The rows one tile takes: blocks of rows are best a multiple of it.
  int mr() const { return tile_->mr; }
  // C[m][n] = clamp(bias + A B^T) for A's m rows (leading dimension lda) into C (leading dimension ldc).
  void run(int m, const float* a, int lda, Clamp clamp, float* c, int ldc) const {
    tile_->gemm(m, n_, k_, a, lda, packed_.data(), bias_.data(), clamp, c, ldc);
  }

 private:
  const GemmTile* tile_;
  int n_, k_;
  std::vector<float> packed_;
  std::vector<float> bias_;  // n rounded up to the tile's nr, zero padded
};

}  // namespace baton::cpu

#endif  // BATON_CPU_KERNELS_H
