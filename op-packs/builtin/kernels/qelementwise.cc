#include "kernels/qelementwise.h"

#include <algorithm>
#include <type_traits>

#include "kernels/requant_simd.h"

namespace baton::builtin {
namespace {

// One inner run of n elements; a_step and b_step are 0 (a broadcast scalar) or 1 (contiguous). T is the
// code type: uint8_t, int8_t or int16_t.
template <typename T>
using RunFn = void (*)(const QBinaryParams& p, const T* a, int64_t a_step, const T* b, int64_t b_step, T* out,
                       int64_t n);

template <typename T>
void run_scalar(const QBinaryParams& p, const T* a, int64_t as, const T* b, int64_t bs, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(qbinary_one(p, a[i * as], b[i * bs]));
}

#ifdef BATON_QUANT_X86

// Lambdas do not inherit a target attribute, so the lane loads and stores are small functions of their own.
template <typename T>
BATON_TARGET_VNNI inline __m512i codes16(const T* src, int64_t step, int64_t i, __mmask16 m) {
  if (step == 0) return _mm512_set1_epi32(static_cast<int32_t>(src[0]));
  if constexpr (sizeof(T) == 2) {
    return _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(m, src + i));
  } else {
    const __m128i bytes = _mm_maskz_loadu_epi8(m, src + i);
    return std::is_signed_v<T> ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
  }
}

template <typename T>
BATON_TARGET_VNNI inline void store16(T* out, __mmask16 m, __m512i codes) {
  if constexpr (sizeof(T) == 2) _mm256_mask_storeu_epi16(out, m, _mm512_cvtepi32_epi16(codes));
  else _mm_mask_storeu_epi8(out, m, _mm512_cvtepi32_epi8(codes));
}

template <typename T>
BATON_TARGET_AVX2 inline __m256i codes8(const T* src, int64_t step, int64_t i) {
  if (step == 0) return _mm256_set1_epi32(static_cast<int32_t>(src[0]));
  if constexpr (sizeof(T) == 2) {
    return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  } else {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
    return std::is_signed_v<T> ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
  }
}

// 16 clamped codes (two registers of 8) stored as T.
template <typename T>
BATON_TARGET_AVX2 inline void store8x2(T* out, __m256i c0, __m256i c1) {
  if constexpr (sizeof(T) == 2) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute4x64_epi64(_mm256_packs_epi32(c0, c1), 0xD8));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), codes_to_bytes(c0, c1));
  }
}

// Sixteen lanes per step; ADD/SUB and MUL rescale with TFLite's own (ties away from zero) rounding.
template <typename T>
BATON_TARGET_VNNI void run_vnni(const QBinaryParams& p, const T* a, int64_t as, const T* b, int64_t bs, T* out,
                                int64_t n) {
  const __m512i am = _mm512_set1_epi32(p.a_mult.multiplier), ar = _mm512_set1_epi32(-p.a_mult.shift);
  const __m512i bm = _mm512_set1_epi32(p.b_mult.multiplier), br = _mm512_set1_epi32(-p.b_mult.shift);
  const __m512i om = _mm512_set1_epi32(p.out_mult.multiplier);
  const __m512i ol = _mm512_set1_epi32(std::max(p.out_mult.shift, 0));
  const __m512i orr = _mm512_set1_epi32(std::max(-p.out_mult.shift, 0));
  const __m512i none = _mm512_setzero_si512();
  const __m512i za = _mm512_set1_epi32(p.a_zero), zb = _mm512_set1_epi32(p.b_zero);
  const __m512i zo = _mm512_set1_epi32(p.out_zero), lo = _mm512_set1_epi32(p.lo), hi = _mm512_set1_epi32(p.hi);
  const __m512i shift20 = _mm512_set1_epi32(p.left_shift);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512i x = _mm512_sub_epi32(codes16(a, as, i, m), za);
    const __m512i y = _mm512_sub_epi32(codes16(b, bs, i, m), zb);
    __m512i raw;
    if (p.op == QBinaryOp::kMul) {
      raw = mbqm16(_mm512_mullo_epi32(x, y), om, ol, orr, 0xFFFF);
    } else {
      // The input multipliers are below one (shift <= 0), checked in qbinary_prepare.
      const __m512i sx = mbqm16(_mm512_sllv_epi32(x, shift20), am, none, ar, 0xFFFF);
      const __m512i sy = mbqm16(_mm512_sllv_epi32(y, shift20), bm, none, br, 0xFFFF);
      const __m512i sum = p.op == QBinaryOp::kAdd ? _mm512_add_epi32(sx, sy) : _mm512_sub_epi32(sx, sy);
      raw = mbqm16(sum, om, ol, orr, 0xFFFF);
    }
    store16(out + i, m, _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(raw, zo), lo), hi));
  }
}

template <typename T>
BATON_TARGET_AVX2 void run_avx2(const QBinaryParams& p, const T* a, int64_t as, const T* b, int64_t bs, T* out,
                                int64_t n) {
  const __m256i am = _mm256_set1_epi32(p.a_mult.multiplier), ar = _mm256_set1_epi32(-p.a_mult.shift);
  const __m256i bm = _mm256_set1_epi32(p.b_mult.multiplier), br = _mm256_set1_epi32(-p.b_mult.shift);
  const __m256i om = _mm256_set1_epi32(p.out_mult.multiplier);
  const __m256i ol = _mm256_set1_epi32(std::max(p.out_mult.shift, 0));
  const __m256i orr = _mm256_set1_epi32(std::max(-p.out_mult.shift, 0));
  const __m256i none = _mm256_setzero_si256();
  const __m256i away = _mm256_set1_epi32(-1);
  const __m256i za = _mm256_set1_epi32(p.a_zero), zb = _mm256_set1_epi32(p.b_zero);
  const __m256i zo = _mm256_set1_epi32(p.out_zero), lo = _mm256_set1_epi32(p.lo), hi = _mm256_set1_epi32(p.hi);
  const __m256i shift20 = _mm256_set1_epi32(p.left_shift);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i v[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i x = _mm256_sub_epi32(codes8(a, as, i + 8 * h), za);
      const __m256i y = _mm256_sub_epi32(codes8(b, bs, i + 8 * h), zb);
      __m256i raw;
      if (p.op == QBinaryOp::kMul) {
        raw = mbqm8(_mm256_mullo_epi32(x, y), om, ol, orr, away);
      } else {
        const __m256i sx = mbqm8(_mm256_sllv_epi32(x, shift20), am, none, ar, away);
        const __m256i sy = mbqm8(_mm256_sllv_epi32(y, shift20), bm, none, br, away);
        raw = mbqm8(p.op == QBinaryOp::kAdd ? _mm256_add_epi32(sx, sy) : _mm256_sub_epi32(sx, sy), om, ol, orr, away);
      }
      v[h] = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(raw, zo), lo), hi);
    }
    store8x2(out + i, v[0], v[1]);
  }
  if (i < n) run_scalar<T>(p, a + i * as, as, b + i * bs, bs, out + i, n - i);
}

#endif  // BATON_QUANT_X86

template <typename T>
RunFn<T> pick(QuantIsa isa) {
#ifdef BATON_QUANT_X86
  if (isa == QuantIsa::kAvx512Vnni) return run_vnni<T>;
  if (isa == QuantIsa::kAvx2) return run_avx2<T>;
#endif
  (void)isa;
  return run_scalar<T>;
}

// Below this many output elements one thread does the whole op: handing out tasks would cost more.
constexpr int64_t kSplitElements = 32 * 1024;

// One run per innermost dimension of the plan. On several workers, many runs go out as contiguous ranges
// of runs, and each of a few long runs in pieces (multiples of 64 elements).
template <typename T>
void walk(RunFn<T> run, const QBinaryParams& p, const BroadcastPlan& plan, const T* a, const T* b, T* out,
          Parallel* parallel) {
  if (plan.count == 0) return;
  const int last = plan.rank - 1;
  const int64_t n = plan.dims[last];
  const int64_t as = plan.a_strides[last], bs = plan.b_strides[last];
  const int workers = worker_count(parallel);
  if (workers < 2 || plan.count < kSplitElements) {
    for_each_broadcast_run(plan, [&](int64_t o, int64_t a_off, int64_t b_off) {
      run(p, a + a_off, as, b + b_off, bs, out + o, n);
    });
    return;
  }
  const int64_t runs = plan.count / n;
  if (runs < workers) {
    const int64_t piece = (n / workers + 63) / 64 * 64;
    for_each_broadcast_run(plan, [&](int64_t o, int64_t a_off, int64_t b_off) {
      parallel_run(parallel, workers, [&](int task, int) {
        const int64_t begin = std::min(n, task * piece), end = std::min(n, begin + piece);
        if (end > begin) run(p, a + a_off + begin * as, as, b + b_off + begin * bs, bs, out + o + begin, end - begin);
      });
    });
    return;
  }
  parallel_run(parallel, workers, [&](int task, int) {
    for (int64_t r = runs * task / workers, r_end = runs * (task + 1) / workers; r < r_end; ++r) {
      int64_t rest = r, a_off = 0, b_off = 0;  // the run's place in the outer dimensions
      for (int d = last - 1; d >= 0; --d) {
        const int64_t i = rest % plan.dims[d];
        rest /= plan.dims[d];
        a_off += i * plan.a_strides[d];
        b_off += i * plan.b_strides[d];
      }
      run(p, a + a_off, as, b + b_off, bs, out + r * n, n);
    }
  });
}

}  // namespace

bool qbinary_prepare(QBinaryParams& p, float a_scale, float b_scale, float out_scale) {
  if (!(a_scale > 0 && b_scale > 0 && out_scale > 0)) return false;
  if (p.op == QBinaryOp::kMul) {
    // float arithmetic first, then widened: TFLite writes `double m = s1 * s2 / so` with float operands.
    const float real = a_scale * b_scale / out_scale;
    p.out_mult = quantize_multiplier(static_cast<double>(real));
    return p.out_mult.shift <= 30;
  }
  p.left_shift = 20;
  const double twice_max = 2.0 * static_cast<double>(std::max(a_scale, b_scale));
  p.a_mult = quantize_multiplier(static_cast<double>(a_scale) / twice_max);
  p.b_mult = quantize_multiplier(static_cast<double>(b_scale) / twice_max);
  p.out_mult = quantize_multiplier(twice_max / ((1 << p.left_shift) * static_cast<double>(out_scale)));
  return p.a_mult.shift <= 0 && p.b_mult.shift <= 0 && p.out_mult.shift <= 0;
}

int32_t qbinary_one(const QBinaryParams& p, int32_t a, int32_t b) {
  const int32_t x = a - p.a_zero;
  const int32_t y = b - p.b_zero;
  int32_t raw;
  if (p.op == QBinaryOp::kMul) {
    raw = multiply_by_quantized_multiplier(x * y, p.out_mult);
  } else {
    const int32_t sx = multiply_by_quantized_multiplier(shift_left_wrapping(x, p.left_shift), p.a_mult);
    const int32_t sy = multiply_by_quantized_multiplier(shift_left_wrapping(y, p.left_shift), p.b_mult);
    raw = multiply_by_quantized_multiplier(p.op == QBinaryOp::kAdd ? sx + sy : sx - sy, p.out_mult);
  }
  return std::clamp(raw + p.out_zero, p.lo, p.hi);
}

void qbinary(QuantIsa isa, const QBinaryParams& p, const BroadcastPlan& plan, const uint8_t* a, const uint8_t* b,
             uint8_t* out, Parallel* parallel) {
  if (p.is_signed) {
    walk(pick<int8_t>(isa), p, plan, reinterpret_cast<const int8_t*>(a), reinterpret_cast<const int8_t*>(b),
         reinterpret_cast<int8_t*>(out), parallel);
  } else {
    walk(pick<uint8_t>(isa), p, plan, a, b, out, parallel);
  }
}

void qbinary16(QuantIsa isa, const QBinaryParams& p, const BroadcastPlan& plan, const int16_t* a, const int16_t* b,
               int16_t* out) {
  walk(pick<int16_t>(isa), p, plan, a, b, out, nullptr);
}

}  // namespace baton::builtin
