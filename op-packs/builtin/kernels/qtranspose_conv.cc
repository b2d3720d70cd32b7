#include "kernels/qtranspose_conv.h"

#include <algorithm>
#include <cstddef>

#include "kernels/qconv.h"

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

size_t align64(size_t n) { return (n + 63) & ~size_t{63}; }

}  // namespace

void qtranspose_gemm_prepare(const QTransposeConvParams& p, const uint8_t* filter, const int32_t* bias,
                             QTransposeGemm& g) {
  const TransposeConvParams& geo = p.geo;
  g.isa = best_quant_isa();
  g.is_signed = p.type != QTransposeType::kUint8;
  g.k = geo.in_c;
  g.n = geo.filter_h * geo.filter_w * geo.out_c;
  const std::vector<uint8_t> rows = transpose_conv_rows(geo, filter);
  g.packed.assign(qgemm_packed_b_size(g.n, g.k), 0);
  std::vector<int32_t> col_sums(qgemm_n_padded(g.n), 0);
  qgemm_pack_b(rows.data(), g.k, g.n, g.k, !g.is_signed, g.packed.data(), col_sums.data());
  const int32_t a_zero = p.in_zero + (g.is_signed ? 128 : 0);
  g.b_zero = g.is_signed ? p.filter_zero : p.filter_zero - 128;
  g.col_offset.assign(col_sums.size(), 0);
  qgemm_column_offsets(g.n, g.k, nullptr, col_sums.data(), a_zero, g.b_zero, g.col_offset.data());
  g.bias.assign(geo.out_c, 0);
  if (bias) std::copy_n(bias, geo.out_c, g.bias.begin());
  g.multiplier.resize(geo.out_c);
  g.shift.resize(geo.out_c);
  for (int oc = 0; oc < geo.out_c; ++oc) {
    g.multiplier[oc] = p.mults[oc].multiplier;
    g.shift[oc] = p.mults[oc].shift;
  }
}

size_t qtranspose_gemm_scratch(const QTransposeConvParams& p, const QTransposeGemm& g, int workers) {
  const size_t products = align64(static_cast<size_t>(p.geo.in_h) * p.geo.in_w * g.n * sizeof(int32_t));
  const size_t sums = align64(static_cast<size_t>(p.geo.out_c) * sizeof(int32_t)) * workers;
  return products + sums + qgemm_scratch_per_worker(g.k) * workers;
}

void qtranspose_conv_gemm(const QTransposeConvParams& p, const QTransposeGemm& g, const uint8_t* input,
                          uint8_t* output, uint8_t* scratch, Parallel* parallel) {
  const TransposeConvParams& geo = p.geo;
  const int workers = worker_count(parallel);
  const int oc_count = geo.out_c;
  auto* products = reinterpret_cast<int32_t*>(scratch);
  uint8_t* sums_base = scratch + align64(static_cast<size_t>(geo.in_h) * geo.in_w * g.n * sizeof(int32_t));
  const size_t sums_stride = align64(static_cast<size_t>(oc_count) * sizeof(int32_t));
  uint8_t* gemm_scratch = sums_base + sums_stride * workers;
  const size_t in_image = static_cast<size_t>(geo.in_h) * geo.in_w * geo.in_c;
  const size_t out_image = static_cast<size_t>(geo.out_h) * geo.out_w * oc_count;
  for (int b = 0; b < geo.batch; ++b) {
    if (geo.in_c > 0) {
      QGemmInt32Output out;
      out.col_offset = g.col_offset.data();
      out.b_zero = g.b_zero;
      out.out = products;
      out.ldc = g.n;
      const QDenseRows rows{input + b * in_image, g.k};
      qgemm(g.isa, rows.rows(g.is_signed), geo.in_h * geo.in_w, g.n, g.k, g.packed.data(), out, gemm_scratch, parallel);
    }
    uint8_t* image_out = output + b * out_image;
    const int chunks = std::min(geo.out_h, 4 * workers);
    parallel_run(parallel, chunks, [&](int task, int worker) {
      auto* sum = reinterpret_cast<uint32_t*>(sums_base + sums_stride * worker);
      const int y0 = static_cast<int>(static_cast<int64_t>(geo.out_h) * task / chunks);
      const int y1 = static_cast<int>(static_cast<int64_t>(geo.out_h) * (task + 1) / chunks);
      for (int oy = y0; oy < y1; ++oy) {
        for (int ox = 0; ox < geo.out_w; ++ox) {
          for (int oc = 0; oc < oc_count; ++oc) sum[oc] = static_cast<uint32_t>(g.bias[oc]);
          if (geo.in_c > 0) {
            // By value: the sums are uint32_t, which may alias an int the lambda would read by reference,
            // and then no loop over them vectorises.
            for_each_landing(geo, oy, ox, [sum, products, n = g.n, oc_count](size_t pixel, int tap) {
              const int32_t* src = products + pixel * n + static_cast<size_t>(tap) * oc_count;
              for (int oc = 0; oc < oc_count; ++oc) sum[oc] += static_cast<uint32_t>(src[oc]);
            });
          }
          requantize_row(g.isa, reinterpret_cast<const int32_t*>(sum), g.multiplier.data(), g.shift.data(), p.out_zero,
                         p.lo, p.hi, false, image_out + (static_cast<size_t>(oy) * geo.out_w + ox) * oc_count,
                         oc_count);
        }
      }
    });
  }
}

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
