#include "kernels.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels_depthwise.h"
#include "kernels_gemm.h"
#include "kernels_narrow.h"
#include "kernels_vector.h"

namespace baton::cpu {
namespace {

using namespace detail;  // the bodies of kernels_*.h

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

template <class V>
BATON_INLINE V max(V a, V b) {
  return a > b ? a : b;
}

template <class V>
BATON_INLINE void add_max4_clamp_impl(float* data, long total, const float* a, const float* b, const float* c,
                                      const float* d, long n, Clamp cl) {
  constexpr int L = lanes<V>;
  long i = 0;
  for (; i + L <= n; i += L) {
    const V m = max(max(load<V>(a + i), load<V>(b + i)), max(load<V>(c + i), load<V>(d + i)));
    store(data + i, clamp(load<V>(data + i) + m, cl));
  }
  for (; i < n; ++i) data[i] = clamp(data[i] + std::max(std::max(a[i], b[i]), std::max(c[i], d[i])), cl);
  for (; i + L <= total; i += L) store(data + i, clamp(load<V>(data + i), cl));
  for (; i < total; ++i) data[i] = clamp(data[i], cl);
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
#define BATON_CPU_KERNELS(SUFFIX, ATTRIBUTES, V, MR, NV, VH, MRH, WIDE)                                          \
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
  ATTRIBUTES void add_max4_clamp_##SUFFIX(float* data, long total, const float* a, const float* b, const float* c, \
                                          const float* d, long n, Clamp cl) {                                \
    add_max4_clamp_impl<V>(data, total, a, b, c, d, n, cl);                                                   \
  }                                                                                                        \
  const Kernels kKernels_##SUFFIX = {#SUFFIX, {MR, lanes<V> * NV, gemm_##SUFFIX},                           \
                                     WIDE,                                                                 \
                                     depthwise_rows_##SUFFIX,                                             \
                                     narrow_conv_rows_##SUFFIX, narrow_transpose_conv_rows_##SUFFIX, hard_swish_##SUFFIX, \
                                     add_clamp_##SUFFIX, add_max4_clamp_##SUFFIX};

// WIDE: the tile of a product whose width is a multiple of 16 (gemm_tile_for). AVX-512's is 8 x 32 (16
// of the 32 zmm): per step of the depth it loads two vectors of B and eight values of A for sixteen
// multiply-adds, where 8 x 16 loads one and eight for eight, and on an Intel Sapphire Rapids (two 512-bit
// multiply-add ports) the loads, not the multiply-adds, bound these products. Against 8 x 16 alone,
// minima over 3 alternating rounds: hand_landmark_full 3.39 -> 3.06 ms at 2 threads, palm_detection_lite
// 5.17 -> 4.62 and face_detection_full_range 2.06 -> 1.88 at 1; no MediaPipe model slower (6 x 32 was
// 8% behind 8 x 32 on hand_landmark_full at 1 thread). Widths of 24, 40 or 56 stay on 8 x 16, whose
// half tile fits their last columns; 32 would leave zero columns. The other ISAs have no registers for a
// wider tile: theirs is the same.
#define BATON_CPU_SAME_TILE(MR, NV, V, SUFFIX) {MR, lanes<V> * NV, gemm_##SUFFIX}

BATON_CPU_KERNELS(baseline, , V4, 4, 2, V4, 8, BATON_CPU_SAME_TILE(4, 2, V4, baseline))
#if defined(__x86_64__) && defined(__GNUC__)
BATON_CPU_KERNELS(avx2, __attribute__((target("avx2,fma"))), V8, 6, 2, V8, 12, BATON_CPU_SAME_TILE(6, 2, V8, avx2))
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void gemm_wide_avx512(int m, int n, int k, const float* a, int lda,
                                                                          const float* b, const float* bias, Clamp cl,
                                                                          float* c, int ldc) {
  gemm_impl<V16, 8, 2, V16, 8>(m, n, k, a, lda, b, bias, cl, c, ldc);
}
BATON_CPU_KERNELS(avx512, __attribute__((target("avx512f,avx512vl,avx2,fma"))), V16, 8, 1, V8, 12,
                  (GemmTile{8, 32, gemm_wide_avx512}))
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

const GemmTile& gemm_tile_for(const Kernels& kernels, int n) {
  return n % (kernels.wide.nr / 2) == 0 ? kernels.wide : kernels.tile;
}

PackedGemm::PackedGemm(const Kernels& kernels, const float* b, const float* bias, int n, int k)
    : tile_(&gemm_tile_for(kernels, n)), n_(n), k_(k) {
  packed_.resize(packed_b_size(n, k, tile_->nr));
  pack_b(b, n, k, tile_->nr, packed_.data());
  bias_.assign(static_cast<size_t>((n + tile_->nr - 1) / tile_->nr * tile_->nr), 0.0f);
  if (bias) std::copy(bias, bias + n, bias_.begin());
}

}  // namespace baton::cpu
