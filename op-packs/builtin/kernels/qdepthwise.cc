#include "kernels/qdepthwise.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/simd.h"

namespace baton::builtin {
namespace {

typedef int32_t Int8x32 __attribute__((vector_size(32)));
typedef uint8_t U8x8 __attribute__((vector_size(8)));
typedef int8_t S8x8 __attribute__((vector_size(8)));

// acc[c] += (in[c] - zero) * w[c] for c < n: eight channels at a time in int32 lanes.
template <typename T>
BATON_INLINE void tap_impl(int32_t* __restrict acc, const T* __restrict in, const int32_t* __restrict w, int n,
                           int32_t zero) {
  using Bytes = std::conditional_t<std::is_signed_v<T>, S8x8, U8x8>;
  int c = 0;
  const Int8x32 z = Int8x32{} + zero;
  for (; c + 8 <= n; c += 8) {
    Bytes b;
    std::memcpy(&b, in + c, sizeof(b));
    Int8x32 x = __builtin_convertvector(b, Int8x32) - z;
    Int8x32 wv, av;
    std::memcpy(&wv, w + c, sizeof(wv));
    std::memcpy(&av, acc + c, sizeof(av));
    av += x * wv;
    std::memcpy(acc + c, &av, sizeof(av));
  }
  for (; c < n; ++c) acc[c] += (static_cast<int32_t>(in[c]) - zero) * w[c];
}

BATON_INLINE void tap_u8_impl(int32_t* acc, const uint8_t* in, const int32_t* w, int n, int32_t zero) {
  tap_impl(acc, in, w, n, zero);
}
BATON_INLINE void tap_s8_impl(int32_t* acc, const int8_t* in, const int32_t* w, int n, int32_t zero) {
  tap_impl(acc, in, w, n, zero);
}
BATON_DISPATCH_AVX2(void, tap_u8, (int32_t * acc, const uint8_t* in, const int32_t* w, int n, int32_t zero),
                    (acc, in, w, n, zero))
BATON_DISPATCH_AVX2(void, tap_s8, (int32_t * acc, const int8_t* in, const int32_t* w, int n, int32_t zero),
                    (acc, in, w, n, zero))

void row_task(QuantIsa isa, const QDepthwiseParams& p, const uint8_t* input, uint8_t* output, int32_t* acc,
              int b, int oy) {
  const DepthwiseParams& g = p.geo;
  const int out_c = g.in_c * g.depth_multiplier;
  const int y0 = oy * g.stride_h - g.pad_top;
  for (int ox = 0; ox < g.out_w; ++ox) {
    const int x0 = ox * g.stride_w - g.pad_left;
    std::memcpy(acc, p.bias, sizeof(int32_t) * out_c);
    for (int ky = 0; ky < g.filter_h; ++ky) {
      const int iy = y0 + ky * g.dilation_h;
      if (iy < 0 || iy >= g.in_h) continue;
      for (int kx = 0; kx < g.filter_w; ++kx) {
        const int ix = x0 + kx * g.dilation_w;
        if (ix < 0 || ix >= g.in_w) continue;
        const uint8_t* in = input + ((static_cast<size_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c;
        const int32_t* w = p.filter + static_cast<size_t>(ky * g.filter_w + kx) * out_c;
        if (g.depth_multiplier == 1) {
          if (p.is_signed) tap_s8(acc, reinterpret_cast<const int8_t*>(in), w, out_c, p.input_zero);
          else tap_u8(acc, in, w, out_c, p.input_zero);
        } else {
          for (int ic = 0; ic < g.in_c; ++ic) {
            const int32_t x = (p.is_signed ? static_cast<int32_t>(static_cast<int8_t>(in[ic])) : in[ic]) - p.input_zero;
            for (int m = 0; m < g.depth_multiplier; ++m) {
              const int oc = ic * g.depth_multiplier + m;
              acc[oc] += x * w[oc];
            }
          }
        }
      }
    }
    requantize_row(isa, acc, p.multiplier, p.shift, p.output_zero, p.lo, p.hi, false,
                   output + ((static_cast<size_t>(b) * g.out_h + oy) * g.out_w + ox) * out_c, out_c);
  }
}

}  // namespace

size_t qdepthwise_scratch_size(const QDepthwiseParams& p, int workers) {
  return static_cast<size_t>(workers) * static_cast<size_t>(p.geo.in_c * p.geo.depth_multiplier);
}

void qdepthwise_conv2d(QuantIsa isa, const QDepthwiseParams& p, const uint8_t* input, uint8_t* output,
                       int32_t* scratch, Parallel* parallel) {
  const DepthwiseParams& g = p.geo;
  const size_t out_c = static_cast<size_t>(g.in_c) * g.depth_multiplier;
  parallel_run(parallel, g.batch * g.out_h, [&](int task, int worker) {
    row_task(isa, p, input, output, scratch + worker * out_c, task / g.out_h, task % g.out_h);
  });
}

}  // namespace baton::builtin
