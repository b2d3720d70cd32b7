// Quantized ops that TFLite 2.9's kernels compute through a table, the way they compute them on x86:
//  - LOGISTIC, GELU, ELU, ...: a 256-entry table, entry for code v = clamp(round(f(in_scale * (v -
//    in_zero)) * (1 / out_scale)) + out_zero), all in float (LOGISTIC's output must be scale 1/256, zero
//    point 0 (uint8) or -128 (int8)).
//  - SOFTMAX: a 256-entry float table table[255 - d] = expf(-in_scale * beta * d) for d = 0..255; per row
//    the entries for (max - x) are summed in order, each divided into 1 / (sum * out_scale) and rounded
//    (uint8: + 0.5 then truncated; int8: round half away from zero, plus the zero point -128), clamped.
#ifndef BATON_BUILTIN_KERNELS_QLOOKUP_H
#define BATON_BUILTIN_KERNELS_QLOOKUP_H

#include <cstdint>

#include "kernels/parallel.h"

namespace baton::builtin {

// table[code byte] = output code byte of f(real value of the code).
void lookup_table(bool is_signed, float in_scale, int32_t in_zero, float out_scale, int32_t out_zero,
                  float (*f)(float), uint8_t table[256]);
float sigmoid(float x);
void apply_table(const uint8_t table[256], const uint8_t* in, uint8_t* out, int64_t n);

void softmax_table(float in_scale, float beta, float table[256]);
// Rows split across `parallel`'s workers when the op is large (null: the caller's thread).
void qsoftmax(bool is_signed, const float table[256], float out_scale, int32_t out_zero, const uint8_t* in,
              uint8_t* out, int64_t rows, int64_t depth, Parallel* parallel = nullptr);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QLOOKUP_H
