// int16 SOFTMAX, LOGISTIC and TANH as TFLite 2.9's integer kernels compute them (outputs scale 1/32768,
// zero point 0):
//  - SOFTMAX: each difference to the row's maximum rescaled so that [-65535, 0] spans [-10, 0], looked
//    up (with linear interpolation between 512 entries) in a table of exp; the sum of the row's exps
//    normalised to [1, 2) and its reciprocal looked up in a table of 1 / (1 + x); the tables are TFLite's
//    (each entry biased by half the interpolation error at its midpoint).
//  - LOGISTIC / TANH: the input rescaled to 1/(3 * 4096) (an integer multiplier and a right shift), then
//    a 256-entry table of sigmoid(i / 24) in 0.16 fixed point (midpoint-corrected), interpolated; tanh(x) = 2 sigmoid(2x) - 1.
//    Except where the input scale is the power of two of Q3.12 (2^-12; TANH also 2^-11, doubled with
//    saturation to Q3.12), within TFLite's tolerance (log2 within 1e-3 of an integer): there the codes
//    go through gemmlowp's fixed-point logistic or tanh as they are, as in TFLite's optimized kernel.
#ifndef BATON_BUILTIN_KERNELS_Q16_ACTIVATION_H
#define BATON_BUILTIN_KERNELS_Q16_ACTIVATION_H

#include <cstdint>

#include "kernels/quant_math.h"

namespace baton::builtin {

struct Q16SoftmaxParams {
  QuantizedMultiplier input;  // in_scale * beta / (10 / 65535)
  int16_t exp_table[513] = {};
  int16_t reciprocal_table[513] = {};
};

void q16_softmax_prepare(Q16SoftmaxParams& p, float in_scale, float beta);
// `exps` holds `depth` values (one row's exponentials; the caller's, so that nothing allocates here).
void q16_softmax(const Q16SoftmaxParams& p, const int16_t* in, int16_t* out, int64_t rows, int64_t depth,
                 int16_t* exps);

struct Q16SigmoidParams {
  int32_t multiplier = 0;  // the table path's rescale
  int left_shift = 0;
  int pot_shift = -1;  // >= 0: the fixed-point path, the codes shifted left by this much first
};

void q16_sigmoid_prepare(Q16SigmoidParams& p, float in_scale, bool tanh);
void q16_logistic(const Q16SigmoidParams& p, const int16_t* in, int16_t* out, int64_t n);
void q16_tanh(const Q16SigmoidParams& p, const int16_t* in, int16_t* out, int64_t n);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_Q16_ACTIVATION_H
