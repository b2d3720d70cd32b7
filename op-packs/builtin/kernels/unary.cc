#include "kernels/unary.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common.h"
#include "kernels/vector_math.h"

namespace baton::builtin {
namespace {


template <typename F>
void map(const float* __restrict in, float* __restrict out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

template <int W>
BATON_INLINE void tanh_vector_impl(const float* in, float* out, int64_t n) {
  map_lanes<W>(in, out, n, [](auto x) BATON_LAMBDA { return tanh_lanes(x); });
}
template <int W>
BATON_INLINE void logistic_vector_impl(const float* in, float* out, int64_t n) {
  map_lanes<W>(in, out, n, [](auto x) BATON_LAMBDA { return logistic_lanes(x); });
}
template <int W>
BATON_INLINE void exp_vector_impl(const float* in, float* out, int64_t n) {
  map_lanes<W>(in, out, n, [](auto x) BATON_LAMBDA { return exp_lanes(x); });
}
template <int W>
BATON_INLINE void gelu_approximate_vector_impl(const float* in, float* out, int64_t n) {
  map_lanes<W>(in, out, n, [](auto x) BATON_LAMBDA {
    constexpr float kSqrt2OverPi = 0.79788456080286536f;
    return 0.5f * x * (1.0f + tanh_lanes(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  });
}
// TFLite's order of operations: x * relu6(x + 3), then / 6.
template <int W>
BATON_INLINE void hard_swish_vector_impl(const float* in, float* out, int64_t n) {
  map_lanes<W>(in, out, n, [](auto x) BATON_LAMBDA {
    using V = decltype(x);
    const V zero = V{} + 0.0f, six = V{} + 6.0f, r = x + 3.0f;
    const V relu6 = r < zero ? zero : (r > six ? six : r);
    return x * relu6 / 6.0f;
  });
}
template <int W>
BATON_INLINE void gelu_vector_impl(const float* in, float* out, int64_t n) {
  map_lanes<W>(in, out, n, [](auto x) BATON_LAMBDA { return gelu_lanes(x); });
}

BATON_DISPATCH_WIDTHS(void, hard_swish_vector, (const float* in, float* out, int64_t n), (in, out, n))
BATON_DISPATCH_WIDTHS(void, gelu_vector, (const float* in, float* out, int64_t n), (in, out, n))
BATON_DISPATCH_WIDTHS(void, tanh_vector, (const float* in, float* out, int64_t n), (in, out, n))
BATON_DISPATCH_WIDTHS(void, logistic_vector, (const float* in, float* out, int64_t n), (in, out, n))
BATON_DISPATCH_WIDTHS(void, exp_vector, (const float* in, float* out, int64_t n), (in, out, n))
BATON_DISPATCH_WIDTHS(void, gelu_approximate_vector, (const float* in, float* out, int64_t n), (in, out, n))

// A row's maximum, W lanes at a time.
template <int W>
BATON_INLINE float row_max(const float* x, int64_t depth) {
  using V = typename Lanes<W>::F;
  float max = x[0];
  int64_t i = 0;
  if (depth >= W) {
    V m;
    std::memcpy(&m, x, sizeof(m));
    for (i = W; i + W <= depth; i += W) {
      V v;
      std::memcpy(&v, x + i, sizeof(v));
      m = m > v ? m : v;
    }
    for (int j = 0; j < W; ++j) max = std::max(max, m[j]);
  }
  for (; i < depth; ++i) max = std::max(max, x[i]);
  return max;
}

// The sum over a row of exp((x - max) * beta) by exp_lanes, in W partial sums (the tail block's padding
// lanes left out of it); each exp also goes to y when y is given.
template <int W>
BATON_INLINE float exp_sum(const float* x, float* y, int64_t depth, float max, float beta) {
  using V = typename Lanes<W>::F;
  V sums = {};
  int64_t i = 0;
  for (; i + W <= depth; i += W) {
    V v;
    std::memcpy(&v, x + i, sizeof(v));
    v = exp_lanes<V, kFlushTiny>((v - max) * beta);
    if (y) std::memcpy(y + i, &v, sizeof(v));
    sums += v;
  }
  float sum = 0.0f;
  for (int j = 0; j < W; ++j) sum += sums[j];
  if (i < depth) {
    float block[W] = {};
    std::memcpy(block, x + i, sizeof(float) * (depth - i));
    V v;
    std::memcpy(&v, block, sizeof(v));
    v = exp_lanes<V, kFlushTiny>((v - max) * beta);
    for (int j = 0; j < depth - i; ++j) sum += v[j];
    if (y) {
      std::memcpy(block, &v, sizeof(v));
      std::memcpy(y + i, block, sizeof(float) * (depth - i));
    }
  }
  return sum;
}

// SOFTMAX W lanes at a time: the row's maximum, the exps into the output with their sum, then each
// scaled by 1 / sum.
template <int W>
BATON_INLINE void softmax_rows_impl(const float* in, float* out, int64_t rows, int64_t depth, float beta) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * depth;
    float* y = out + r * depth;
    const float inv = 1.0f / exp_sum<W>(x, y, depth, row_max<W>(x, depth), beta);
    for (int64_t i = 0; i < depth; ++i) y[i] *= inv;
  }
}

// LOG_SOFTMAX: x - max - log(sum of exp(x - max)), the sum as SOFTMAX's (its flushed tiny terms cannot
// move a sum of at least 1).
template <int W>
BATON_INLINE void log_softmax_rows_impl(const float* in, float* out, int64_t rows, int64_t depth) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * depth;
    float* y = out + r * depth;
    const float max = row_max<W>(x, depth);
    const float log_sum = std::log(exp_sum<W>(x, nullptr, depth, max, 1.0f));
    for (int64_t i = 0; i < depth; ++i) y[i] = x[i] - max - log_sum;
  }
}

// L2_NORMALIZATION: each row divided by the root of its sum of squares (at least 1e-6), the sum in W
// partial sums and the division in lanes (the same quotient as one by one).
template <int W>
BATON_INLINE void l2_normalize_rows_impl(const float* in, float* out, int64_t rows, int64_t depth) {
  using V = typename Lanes<W>::F;
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * depth;
    float* y = out + r * depth;
    V sums = {};
    int64_t i = 0;
    for (; i + W <= depth; i += W) {
      V v;
      std::memcpy(&v, x + i, sizeof(v));
      sums += v * v;
    }
    float sum = 0.0f;
    for (int j = 0; j < W; ++j) sum += sums[j];
    for (; i < depth; ++i) sum += x[i] * x[i];
    const float norm = std::max(std::sqrt(sum), 1e-6f);
    map_lanes<W>(x, y, depth, [norm](auto v) BATON_LAMBDA { return v / norm; });
  }
}

BATON_DISPATCH_WIDTHS(void, l2_normalize_rows, (const float* in, float* out, int64_t rows, int64_t depth),
                      (in, out, rows, depth))

BATON_DISPATCH_WIDTHS(void, log_softmax_rows, (const float* in, float* out, int64_t rows, int64_t depth),
                      (in, out, rows, depth))

BATON_DISPATCH_WIDTHS(void, softmax_rows, (const float* in, float* out, int64_t rows, int64_t depth, float beta),
                      (in, out, rows, depth, beta))

}  // namespace

float gelu(float x) { return 0.5f * x * std::erfc(x * -0.70710678118654752f); }

float gelu_approximate(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286536f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

void unary(VectorIsa isa, UnaryOp op, const float* in, float* out, int64_t n) {
  switch (op) {
    case UnaryOp::kRelu: return map(in, out, n, [](float x) { return std::max(x, 0.0f); });
    case UnaryOp::kRelu6: return map(in, out, n, [](float x) { return std::min(std::max(x, 0.0f), 6.0f); });
    case UnaryOp::kReluN1To1:
      return map(in, out, n, [](float x) { return std::min(std::max(x, -1.0f), 1.0f); });
    case UnaryOp::kLogistic: return logistic_vector_for(isa)(in, out, n);
    case UnaryOp::kTanh: return tanh_vector_for(isa)(in, out, n);
    case UnaryOp::kHardSwish: return hard_swish_vector_for(isa)(in, out, n);
    case UnaryOp::kRsqrt: return map(in, out, n, [](float x) { return 1.0f / std::sqrt(x); });
    case UnaryOp::kLog: return map(in, out, n, [](float x) { return std::log(x); });
    case UnaryOp::kSquare: return map(in, out, n, [](float x) { return x * x; });
    case UnaryOp::kSqrt: return map(in, out, n, [](float x) { return std::sqrt(x); });
    case UnaryOp::kExp: return exp_vector_for(isa)(in, out, n);
    case UnaryOp::kAbs: return map(in, out, n, [](float x) { return std::fabs(x); });
    case UnaryOp::kNeg: return map(in, out, n, [](float x) { return -x; });
    case UnaryOp::kSin: return map(in, out, n, [](float x) { return std::sin(x); });
    case UnaryOp::kCos: return map(in, out, n, [](float x) { return std::cos(x); });
    case UnaryOp::kElu: return map(in, out, n, [](float x) { return x < 0.0f ? std::expm1(x) : x; });
    case UnaryOp::kFloor: return map(in, out, n, [](float x) { return std::floor(x); });
    case UnaryOp::kCeil: return map(in, out, n, [](float x) { return std::ceil(x); });
    case UnaryOp::kRound: return map(in, out, n, [](float x) { return std::nearbyint(x); });
    case UnaryOp::kGelu: return gelu_vector_for(isa)(in, out, n);
    case UnaryOp::kGeluApproximate: return gelu_approximate_vector_for(isa)(in, out, n);
  }
}

void unary(UnaryOp op, const float* in, float* out, int64_t n) { unary(best_vector_isa(), op, in, out, n); }

void softmax(const float* in, float* out, int64_t rows, int64_t depth, float beta) {
  softmax_rows(in, out, rows, depth, beta);
}

void log_softmax(const float* in, float* out, int64_t rows, int64_t depth) {
  if (depth > 0) log_softmax_rows(in, out, rows, depth);
}

void l2_normalize(const float* in, float* out, int64_t rows, int64_t depth) {
  if (depth > 0) l2_normalize_rows(in, out, rows, depth);
}

void local_response_normalize(const float* in, float* out, int64_t rows, int64_t depth, int radius, float bias,
                              float alpha, float beta) {
  for (int64_t r = 0; r < rows; ++r, in += depth, out += depth) {
    for (int64_t i = 0; i < depth; ++i) {
      const int64_t lo = std::max<int64_t>(0, i - radius), hi = std::min<int64_t>(depth - 1, i + radius);
      float sum = 0.0f;
      for (int64_t j = lo; j <= hi; ++j) sum += in[j] * in[j];
      out[i] = in[i] * std::pow(bias + alpha * sum, -beta);
    }
  }
}

}  // namespace baton::builtin
