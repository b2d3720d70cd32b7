#include "kernels/qtranspose_conv.h"

#include <algorithm>
#include <cstddef>

namespace baton::builtin {
namespace {

template <typename In, typename Filter, typename Bias, typename Acc>
void run(const QTransposeConvParams& p, const In* input, const Filter* filter, const Bias* bias, In* output,
         int64_t* scratch) {
  const TransposeConvParams& g = p.geo;
  const size_t out_count = static_cast<size_t>(g.batch) * g.out_h * g.out_w * g.out_c;
  std::fill(scratch, scratch + out_count, 0);
  // An input of no channels scatters nothing, however many positions it has.
  for (int b = 0; g.in_c > 0 && b < g.batch; ++b) {
    for (int iy = 0; iy < g.in_h; ++iy) {
      for (int ix = 0; ix < g.in_w; ++ix) {
        const In* in = input + ((static_cast<size_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c;
        for (int ky = 0; ky < g.filter_h; ++ky) {
          const int oy = iy * g.stride_h + ky - g.pad_top;
          if (oy < 0 || oy >= g.out_h) continue;
          for (int kx = 0; kx < g.filter_w; ++kx) {
            const int ox = ix * g.stride_w + kx - g.pad_left;
            if (ox < 0 || ox >= g.out_w) continue;
            int64_t* acc = scratch + ((static_cast<size_t>(b) * g.out_h + oy) * g.out_w + ox) * g.out_c;
            for (int oc = 0; oc < g.out_c; ++oc) {
              const Filter* f = filter + ((static_cast<size_t>(oc) * g.filter_h + ky) * g.filter_w + kx) * g.in_c;
              Acc sum = 0;
              for (int ic = 0; ic < g.in_c; ++ic) {
                sum += static_cast<Acc>((static_cast<int32_t>(in[ic]) - p.in_zero) *
                                        (static_cast<int32_t>(f[ic]) - p.filter_zero));
              }
              // int32 accumulators wrap as TFLite's do.
              acc[oc] = static_cast<Acc>(static_cast<Acc>(acc[oc]) + sum);
            }
          }
        }
      }
    }
  }
  for (size_t i = 0; i < out_count; ++i) {
    const int oc = static_cast<int>(i % g.out_c);
    Acc acc = static_cast<Acc>(scratch[i]);
    if (bias) acc = static_cast<Acc>(acc + static_cast<Acc>(bias[oc]));
    int32_t v;
    if constexpr (sizeof(Acc) == 8) {
      v = multiply_by_quantized_multiplier_64(acc, p.mults[oc]);
    } else {
      v = multiply_by_quantized_multiplier(acc, p.mults[oc]);
    }
    output[i] = static_cast<In>(std::clamp(v + p.out_zero, p.lo, p.hi));
  }
}

}  // namespace

void qtranspose_conv(const QTransposeConvParams& p, const void* input, const void* filter, const void* bias,
                     void* output, int64_t* scratch) {
  switch (p.type) {
    case QTransposeType::kUint8:
      return run<uint8_t, uint8_t, int32_t, int32_t>(p, static_cast<const uint8_t*>(input),
                                                     static_cast<const uint8_t*>(filter),
                                                     static_cast<const int32_t*>(bias), static_cast<uint8_t*>(output),
                                                     scratch);
    case QTransposeType::kInt8:
      return run<int8_t, int8_t, int32_t, int32_t>(p, static_cast<const int8_t*>(input),
                                                   static_cast<const int8_t*>(filter),
                                                   static_cast<const int32_t*>(bias), static_cast<int8_t*>(output),
                                                   scratch);
    case QTransposeType::kInt16Bias32:
      return run<int16_t, int8_t, int32_t, int32_t>(p, static_cast<const int16_t*>(input),
                                                    static_cast<const int8_t*>(filter),
                                                    static_cast<const int32_t*>(bias), static_cast<int16_t*>(output),
                                                    scratch);
    default:
      return run<int16_t, int8_t, int64_t, int64_t>(p, static_cast<const int16_t*>(input),
                                                    static_cast<const int8_t*>(filter),
                                                    static_cast<const int64_t*>(bias), static_cast<int16_t*>(output),
                                                    scratch);
  }
}

}  // namespace baton::builtin
