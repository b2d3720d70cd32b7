#include "kernels/qdepthwise.h"

#include <algorithm>
#include <cstring>

#include "kernels/quant_math.h"
#include "kernels/requant_simd.h"

namespace baton::builtin {
namespace {

// The taps of one output pixel that fall inside the input.
struct Window {
  int ky0, ky1, kx0, kx1;  // [ky0, ky1) x [kx0, kx1)
  int y0, x0;              // input position of tap (0, 0)
};

Window window(const DepthwiseParams& g, int oy, int ox) {
  Window w;
  w.y0 = oy * g.stride_h - g.pad_top;
  w.x0 = ox * g.stride_w - g.pad_left;
  // First and one-past-last tap index whose input row / column is inside.
  auto first = [](int start, int dilation) { return start >= 0 ? 0 : (-start + dilation - 1) / dilation; };
  auto end = [](int start, int dilation, int taps, int size) {
    if (start >= size) return 0;
    return std::min(taps, (size - 1 - start) / dilation + 1);
  };
  w.ky0 = first(w.y0, g.dilation_h);
  w.ky1 = end(w.y0, g.dilation_h, g.filter_h, g.in_h);
  w.kx0 = first(w.x0, g.dilation_w);
  w.kx1 = end(w.x0, g.dilation_w, g.filter_w, g.in_w);
  return w;
}

int32_t code_at(const uint8_t* p, bool is_signed) {
  return is_signed ? static_cast<int32_t>(static_cast<int8_t>(*p)) : static_cast<int32_t>(*p);
}

// Output channels [c_begin, c_end) of one pixel, one channel at a time (any depth multiplier).
void pixel_scalar(const QDepthwiseParams& p, const uint8_t* image, const Window& w, uint8_t* out, int c_begin,
                  int c_end) {
  const DepthwiseParams& g = p.geo;
  const int out_c = g.in_c * g.depth_multiplier;
  for (int oc = c_begin; oc < c_end; ++oc) {
    const int ic = oc / g.depth_multiplier;
    int32_t acc = p.bias[oc];
    for (int ky = w.ky0; ky < w.ky1; ++ky) {
      const uint8_t* row = image + static_cast<size_t>(w.y0 + ky * g.dilation_h) * g.in_w * g.in_c;
      for (int kx = w.kx0; kx < w.kx1; ++kx) {
        const int32_t x = code_at(row + static_cast<size_t>(w.x0 + kx * g.dilation_w) * g.in_c + ic, p.is_signed);
        // Wrapping, as the SIMD lanes do: only an absurd filter size could leave int32.
        acc = static_cast<int32_t>(static_cast<uint32_t>(acc) +
                                   static_cast<uint32_t>((x - p.input_zero) *
                                                         p.filter[static_cast<size_t>(ky * g.filter_w + kx) * out_c + oc]));
      }
    }
    const Requantize rq{{p.multiplier[oc], p.shift[oc]}, p.output_zero, p.lo, p.hi, false};
    out[oc] = static_cast<uint8_t>(requantize(acc, rq));
  }
}

#ifdef BATON_QUANT_X86

// Depth multiplier 1, sixteen channels per step with the accumulators in one register; TFLite's
// depthwise kernels round the final shift's ties away from zero.
template <bool kSigned>
BATON_TARGET_VNNI void pixel_vnni(const QDepthwiseParams& p, const uint8_t* image, const Window& w, uint8_t* out) {
  const DepthwiseParams& g = p.geo;
  const int channels = g.in_c;
  const __m512i zero_in = _mm512_set1_epi32(p.input_zero);
  const __m512i zp = _mm512_set1_epi32(p.output_zero), lo = _mm512_set1_epi32(p.lo), hi = _mm512_set1_epi32(p.hi);
  for (int c0 = 0; c0 < channels; c0 += 16) {
    const __mmask16 m = channels - c0 >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (channels - c0)) - 1u);
    __m512i acc = _mm512_maskz_loadu_epi32(m, p.bias + c0);
    for (int ky = w.ky0; ky < w.ky1; ++ky) {
      const uint8_t* row = image + static_cast<size_t>(w.y0 + ky * g.dilation_h) * g.in_w * channels + c0;
      const int32_t* taps = p.filter + static_cast<size_t>(ky * g.filter_w) * channels + c0;
      for (int kx = w.kx0; kx < w.kx1; ++kx) {
        const __m128i bytes = _mm_maskz_loadu_epi8(m, row + static_cast<size_t>(w.x0 + kx * g.dilation_w) * channels);
        const __m512i x = _mm512_sub_epi32(kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes), zero_in);
        const __m512i wv = _mm512_maskz_loadu_epi32(m, taps + static_cast<size_t>(kx) * channels);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(x, wv));
      }
    }
    const __m512i mult = _mm512_maskz_loadu_epi32(m, p.multiplier + c0);
    const __m512i shift = _mm512_maskz_loadu_epi32(m, p.shift + c0);
    const __m512i codes = requant16(acc, mult, shift, zp, lo, hi, 0xFFFF);
    _mm_mask_storeu_epi8(out + c0, m, _mm512_cvtepi32_epi8(codes));
  }
}

// Output columns [begin, end) of row oy whose taps all lie inside the input, sixteen channels at a time:
// the row's pixels share each block's taps (in registers when kTaps is 9, a 3x3 filter; kTaps 0 reads
// them from the filter for any size), and the input zero point's share is already in interior_bias.
template <bool kSigned, int kTaps>
BATON_TARGET_VNNI void interior_vnni(const QDepthwiseParams& p, const uint8_t* image, int oy, int begin, int end,
                                     uint8_t* out_row) {
  const DepthwiseParams& g = p.geo;
  const int channels = g.in_c;
  const int taps = kTaps != 0 ? kTaps : g.filter_h * g.filter_w;
  const __m512i zp = _mm512_set1_epi32(p.output_zero), lo = _mm512_set1_epi32(p.lo), hi = _mm512_set1_epi32(p.hi);
  const uint8_t* row0 = image + static_cast<size_t>(oy * g.stride_h - g.pad_top) * g.in_w * channels;
  const ptrdiff_t step = static_cast<ptrdiff_t>(g.stride_w) * channels;
  for (int c0 = 0; c0 < channels; c0 += 16) {
    const __mmask16 m = channels - c0 >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << (channels - c0)) - 1u);
    const __m512i bias = _mm512_maskz_loadu_epi32(m, p.interior_bias + c0);
    const __m512i mult = _mm512_maskz_loadu_epi32(m, p.multiplier + c0);
    const __m512i shift = _mm512_maskz_loadu_epi32(m, p.shift + c0);
    __m512i w[kTaps != 0 ? kTaps : 1];
    if constexpr (kTaps != 0) {
      for (int t = 0; t < kTaps; ++t) w[t] = _mm512_maskz_loadu_epi32(m, p.filter + static_cast<size_t>(t) * channels + c0);
    }
    const uint8_t* origin = row0 + (static_cast<ptrdiff_t>(begin) * g.stride_w - g.pad_left) * channels + c0;
    uint8_t* out = out_row + static_cast<size_t>(begin) * channels + c0;
    for (int ox = begin; ox < end; ++ox, origin += step, out += channels) {
      __m512i acc = bias;
      for (int t = 0; t < taps; ++t) {
        const __m128i bytes = _mm_maskz_loadu_epi8(m, origin + p.tap_offset[t]);
        const __m512i x = kSigned ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
        const __m512i wv =
            kTaps != 0 ? w[t] : _mm512_maskz_loadu_epi32(m, p.filter + static_cast<size_t>(t) * channels + c0);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(x, wv));
      }
      const __m512i codes = requant16(acc, mult, shift, zp, lo, hi, 0xFFFF);
      _mm_mask_storeu_epi8(out, m, _mm512_cvtepi32_epi8(codes));
    }
  }
}

template <bool kSigned>
BATON_TARGET_VNNI void interior_vnni_any(const QDepthwiseParams& p, const uint8_t* image, int oy, int begin, int end,
                                         uint8_t* out_row) {
  if (p.geo.filter_h * p.geo.filter_w == 9) interior_vnni<kSigned, 9>(p, image, oy, begin, end, out_row);
  else interior_vnni<kSigned, 0>(p, image, oy, begin, end, out_row);
}

template <bool kSigned>
BATON_TARGET_AVX2 void pixel_avx2(const QDepthwiseParams& p, const uint8_t* image, const Window& w, uint8_t* out) {
  const DepthwiseParams& g = p.geo;
  const int channels = g.in_c;
  const __m256i zero_in = _mm256_set1_epi32(p.input_zero);
  const __m256i zp = _mm256_set1_epi32(p.output_zero), lo = _mm256_set1_epi32(p.lo), hi = _mm256_set1_epi32(p.hi);
  const __m256i away = _mm256_set1_epi32(-1);
  int c0 = 0;
  for (; c0 + 16 <= channels; c0 += 16) {
    __m256i acc[2] = {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.bias + c0)),
                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.bias + c0 + 8))};
    for (int ky = w.ky0; ky < w.ky1; ++ky) {
      const uint8_t* row = image + static_cast<size_t>(w.y0 + ky * g.dilation_h) * g.in_w * channels + c0;
      const int32_t* taps = p.filter + static_cast<size_t>(ky * g.filter_w) * channels + c0;
      for (int kx = w.kx0; kx < w.kx1; ++kx) {
        const uint8_t* in = row + static_cast<size_t>(w.x0 + kx * g.dilation_w) * channels;
        const int32_t* wt = taps + static_cast<size_t>(kx) * channels;
        for (int h = 0; h < 2; ++h) {
          const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + 8 * h));
          const __m256i x = _mm256_sub_epi32(kSigned ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes), zero_in);
          const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wt + 8 * h));
          acc[h] = _mm256_add_epi32(acc[h], _mm256_mullo_epi32(x, wv));
        }
      }
    }
    __m256i codes[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i mult = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.multiplier + c0 + 8 * h));
      const __m256i shift = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.shift + c0 + 8 * h));
      codes[h] = requant8(acc[h], mult, shift, zp, lo, hi, away);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c0), codes_to_bytes(codes[0], codes[1]));
  }
  if (c0 < channels) pixel_scalar(p, image, w, out, c0, channels);
}

#endif  // BATON_QUANT_X86

// The output columns of a row whose taps all lie inside the input: [begin, end), empty when the row's
// taps leave it vertically.
struct Interior {
  int begin = 0, end = 0;
};

Interior interior_columns(const DepthwiseParams& g, int oy) {
  const int y0 = oy * g.stride_h - g.pad_top;
  if (y0 < 0 || y0 + (g.filter_h - 1) * g.dilation_h >= g.in_h) return {};
  const int begin = std::min(g.out_w, (g.pad_left + g.stride_w - 1) / g.stride_w);
  const int last = g.in_w - 1 + g.pad_left - (g.filter_w - 1) * g.dilation_w;  // ox * stride_w may reach this
  const int end = last < 0 ? 0 : std::min(g.out_w, last / g.stride_w + 1);
  return end > begin ? Interior{begin, end} : Interior{};
}

void row_task(QuantIsa isa, const QDepthwiseParams& p, const uint8_t* input, uint8_t* output, int b, int oy) {
  const DepthwiseParams& g = p.geo;
  const int out_c = g.in_c * g.depth_multiplier;
  const uint8_t* image = input + static_cast<size_t>(b) * g.in_h * g.in_w * g.in_c;
  uint8_t* out_row = output + (static_cast<size_t>(b) * g.out_h + oy) * g.out_w * out_c;
  Interior inner;
#ifdef BATON_QUANT_X86
  if (g.depth_multiplier == 1 && isa == QuantIsa::kAvx512Vnni && p.interior_bias != nullptr) {
    inner = interior_columns(g, oy);
    if (inner.end > inner.begin) {
      if (p.is_signed) interior_vnni_any<true>(p, image, oy, inner.begin, inner.end, out_row);
      else interior_vnni_any<false>(p, image, oy, inner.begin, inner.end, out_row);
    }
  }
#endif
  for (int ox = 0; ox < g.out_w; ++ox) {
    if (ox == inner.begin && inner.end > inner.begin) {
      ox = inner.end - 1;
      continue;
    }
    const Window w = window(g, oy, ox);
    uint8_t* out = out_row + static_cast<size_t>(ox) * out_c;
#ifdef BATON_QUANT_X86
    if (g.depth_multiplier == 1 && isa == QuantIsa::kAvx512Vnni) {
      if (p.is_signed) pixel_vnni<true>(p, image, w, out);
      else pixel_vnni<false>(p, image, w, out);
      continue;
    }
    if (g.depth_multiplier == 1 && isa == QuantIsa::kAvx2) {
      if (p.is_signed) pixel_avx2<true>(p, image, w, out);
      else pixel_avx2<false>(p, image, w, out);
      continue;
    }
#endif
    (void)isa;
    pixel_scalar(p, image, w, out, 0, out_c);
  }
}

}  // namespace

void qdepthwise_interior_tables(const QDepthwiseParams& p, std::vector<int32_t>& interior_bias,
                                std::vector<ptrdiff_t>& tap_offset) {
  const DepthwiseParams& g = p.geo;
  const int out_c = g.in_c * g.depth_multiplier;
  const int taps = g.filter_h * g.filter_w;
  interior_bias.assign(static_cast<size_t>(out_c), 0);
  for (int c = 0; c < out_c; ++c) {
    uint32_t sum = 0;  // wrapping, as the accumulation does
    for (int t = 0; t < taps; ++t) sum += static_cast<uint32_t>(p.filter[static_cast<size_t>(t) * out_c + c]);
    interior_bias[c] = static_cast<int32_t>(static_cast<uint32_t>(p.bias[c]) - static_cast<uint32_t>(p.input_zero) * sum);
  }
  tap_offset.assign(static_cast<size_t>(taps), 0);
  for (int ky = 0; ky < g.filter_h; ++ky) {
    for (int kx = 0; kx < g.filter_w; ++kx) {
      tap_offset[static_cast<size_t>(ky) * g.filter_w + kx] =
          (static_cast<ptrdiff_t>(ky) * g.dilation_h * g.in_w + static_cast<ptrdiff_t>(kx) * g.dilation_w) * g.in_c;
    }
  }
}

void qdepthwise_conv2d(QuantIsa isa, const QDepthwiseParams& p, const uint8_t* input, uint8_t* output,
                       Parallel* parallel) {
  const DepthwiseParams& g = p.geo;
  parallel_run(parallel, g.batch * g.out_h, [&](int task, int) { row_task(isa, p, input, output, task / g.out_h, task % g.out_h); });
}

}  // namespace baton::builtin
