// Elementwise unary ops on float32 (activations and math functions), and SOFTMAX and LOG_SOFTMAX over
// the last axis. ROUND rounds halves to even, as TFLite does. GELU is exact (through erfc) or TFLite's
// tanh approximation.
#ifndef BATON_BUILTIN_KERNELS_UNARY_H
#define BATON_BUILTIN_KERNELS_UNARY_H

#include <cstdint>

#include "kernels/common.h"

namespace baton::builtin {

enum class UnaryOp {
  kRelu, kRelu6, kReluN1To1, kLogistic, kTanh, kHardSwish, kRsqrt, kLog, kSquare, kSqrt, kExp, kAbs, kNeg,
  kSin, kCos, kElu, kFloor, kCeil, kRound, kGelu, kGeluApproximate
};

void unary(UnaryOp op, const float* in, float* out, int64_t n);
// The same with the vectorised functions (EXP, TANH, LOGISTIC, GELU) compiled for `isa`, which this CPU must
// run (best_vector_isa() or below): for the tests, which hold every ISA's copy to the same bounds.
void unary(VectorIsa isa, UnaryOp op, const float* in, float* out, int64_t n);

// One element of GELU, for the 8-bit lookup tables too.
float gelu(float x);
float gelu_approximate(float x);

// out[r][i] = exp(beta * (in[r][i] - max_r)) / sum_j exp(beta * (in[r][j] - max_r))
void softmax(const float* in, float* out, int64_t rows, int64_t depth, float beta);

// out[r][i] = in[r][i] - max_r - log(sum_j exp(in[r][j] - max_r))
void log_softmax(const float* in, float* out, int64_t rows, int64_t depth);

// out[r][i] = in[r][i] / max(sqrt(sum_j in[r][j]^2), 1e-6), TFLite's L2_NORMALIZATION over the last axis.
void l2_normalize(const float* in, float* out, int64_t rows, int64_t depth);

// out[r][i] = in[r][i] * (bias + alpha * sum of in[r][j]^2 for |j - i| <= radius)^-beta, TFLite's
// LOCAL_RESPONSE_NORMALIZATION over the last axis.
void local_response_normalize(const float* in, float* out, int64_t rows, int64_t depth, int radius, float bias,
                              float alpha, float beta);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_UNARY_H
