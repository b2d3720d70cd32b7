// uint8, int8 and 16x8 TRANSPOSE_CONV with TFLite 2.9's integer arithmetic: each input code (minus its
// zero point) times each filter code (minus its zero point, 0 for int8 / int16 filters) scattered into
// an integer accumulator per output element (int32; int64 for int16 inputs), the bias added to every
// output element, the sum rescaled per output channel (multiply_by_quantized_multiplier, or its int64
// form for 16x8), plus the output zero point, clamped to the type.
#ifndef BATON_BUILTIN_KERNELS_QTRANSPOSE_CONV_H
#define BATON_BUILTIN_KERNELS_QTRANSPOSE_CONV_H

#include <cstdint>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/qgemm.h"
#include "kernels/quant_math.h"
#include "kernels/transpose_conv.h"

namespace baton::builtin {

// kInt16 takes an int64 bias, kInt16Bias32 an int32 one (TFLite 2.9 accepts either, and with an int32
// bias accumulates in int32 and rescales with the 32-bit multiply, as for 8-bit codes).
enum class QTransposeType { kUint8, kInt8, kInt16, kInt16Bias32 };

struct QTransposeConvParams {
  TransposeConvParams geo;
  QTransposeType type = QTransposeType::kUint8;
  int32_t in_zero = 0, filter_zero = 0, out_zero = 0;
  int32_t lo = 0, hi = 255;
  std::vector<QuantizedMultiplier> mults;  // one per output channel
};

// `bias` is int32 (8-bit, kInt16Bias32) or int64 (kInt16), or null; `scratch` holds out elements of int64.
void qtranspose_conv(const QTransposeConvParams& p, const void* input, const void* filter, const void* bias,
                     void* output, int64_t* scratch);

// The 8-bit kernel for a constant filter, the same bits by another road: one 8-bit matrix product per
// image (qgemm, int32 out) of the input pixels (m = in_h * in_w rows of in_c codes) by the filter seen as
// n = filter_h * filter_w * out_c rows of in_c codes (tap-major), then per output pixel the sum of the
// products that land on it (gathered, not scattered, so that threads split the output rows), the bias,
// and TFLite's rescale per output channel. int32 sums wrap as TFLite's do; the order of the additions
// does not change a wrapping sum.
struct QTransposeGemm {
  QuantIsa isa = QuantIsa::kScalar;
  bool is_signed = false;
  int n = 0, k = 0;
  std::vector<int8_t> packed;
  std::vector<int32_t> col_offset;
  int32_t b_zero = 0;
  std::vector<int32_t> bias;  // out_c values, zeros without a bias
  std::vector<int32_t> multiplier, shift;  // out_c each
};

// Packs `filter` (uint8 or int8 codes, [out_c, filter_h, filter_w, in_c]) for p's 8-bit type.
void qtranspose_gemm_prepare(const QTransposeConvParams& p, const uint8_t* filter, const int32_t* bias,
                             QTransposeGemm& g);
// Scratch bytes the kernel needs with `workers` workers (64-byte aligned start).
size_t qtranspose_gemm_scratch(const QTransposeConvParams& p, const QTransposeGemm& g, int workers);
void qtranspose_conv_gemm(const QTransposeConvParams& p, const QTransposeGemm& g, const uint8_t* input,
                          uint8_t* output, uint8_t* scratch, Parallel* parallel);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QTRANSPOSE_CONV_H
