// uint8, int8 and 16x8 TRANSPOSE_CONV with TFLite 2.9's integer arithmetic: each input code (minus its
// zero point) times each filter code (minus its zero point, 0 for int8 / int16 filters) scattered into
// an integer accumulator per output element (int32; int64 for int16 inputs), the bias added to every
// output element, the sum rescaled per output channel (multiply_by_quantized_multiplier, or its int64
// form for 16x8), plus the output zero point, clamped to the type.
#ifndef BATON_BUILTIN_KERNELS_QTRANSPOSE_CONV_H
#define BATON_BUILTIN_KERNELS_QTRANSPOSE_CONV_H

#include <cstdint>
#include <vector>

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

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QTRANSPOSE_CONV_H
