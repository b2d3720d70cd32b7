// Helpers shared by the STABLEHLO_* kernels (stablehlo_ops.cc, stablehlo_index_ops.cc, window_ops.cc): the element types LiteRT's
// StableHLO kernels take, integer arithmetic that wraps as theirs does, and a walk over every position of
// a shape.
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>
#include <vector>

#include "baton/plugin_api.h"
#include "kernels/dequantize.h"

namespace baton::builtin {

// The schema's BuiltinOptions2 types the kernels read (kind = BATON_OPTIONS_2_KIND + these).
inline constexpr int32_t kStablehloPadOptionsType = 10;
inline constexpr int32_t kStablehloReduceWindowOptionsType = 13;
inline constexpr int32_t kStablehloGatherOptionsType = 16;
inline constexpr int32_t kStablehloScatterOptionsType = 7;
inline constexpr int32_t kStablehloRngBitGeneratorOptionsType = 19;
inline constexpr int32_t kReduceWindowOptionsType = 20;

// Highest rank of STABLEHLO_PAD and DILATE operands.
inline constexpr int kMaxSpreadRank = 8;
// Highest rank any of these kernels takes (each checks its own limit, at most this, in prepare), so that
// invoke keeps positions and strides in fixed arrays and allocates nothing.
inline constexpr int kMaxStablehloRank = 8;
static_assert(kMaxSpreadRank <= kMaxStablehloRank);

// Calls f(T{}) with the C++ type of a numeric type of LiteRT's StableHLO kernels: float32, float64 and the
// signed and unsigned integers of 8 to 64 bits (any other type does nothing; prepare has refused it).
template <typename F>
void with_stablehlo_type(baton_tensor_type t, F&& f) {
  switch (t) {
    case BATON_TYPE_FLOAT32: return f(float{});
    case BATON_TYPE_FLOAT64: return f(double{});
    case BATON_TYPE_INT8: return f(int8_t{});
    case BATON_TYPE_INT16: return f(int16_t{});
    case BATON_TYPE_INT32: return f(int32_t{});
    case BATON_TYPE_INT64: return f(int64_t{});
    case BATON_TYPE_UINT8: return f(uint8_t{});
    case BATON_TYPE_UINT16: return f(uint16_t{});
    case BATON_TYPE_UINT32: return f(uint32_t{});
    case BATON_TYPE_UINT64: return f(uint64_t{});
    default: return;
  }
}

// A float16 element for arithmetic, as LiteRT computes on Eigen::half: + and * in float32, rounded back to
// nearest even (float32 holds more than twice float16's precision, so that is the once-rounded result);
// comparisons on the values. Its bits are the tensor's, so a Half array is the tensor's data.
struct Half {
  uint16_t bits;
  float value() const { return half_to_float(bits); }
  friend Half operator+(Half a, Half b) { return {float_to_half(a.value() + b.value())}; }
  friend Half operator*(Half a, Half b) { return {float_to_half(a.value() * b.value())}; }
  friend bool operator<(Half a, Half b) { return a.value() < b.value(); }
};
static_assert(sizeof(Half) == 2);

// Integer sums and products modulo 2^bits (two's complement), computed in an unsigned type at least as wide
// as int so that no promotion overflows; floats as they are.
template <typename T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, std::make_unsigned_t<T>>;

template <typename T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b)));
  } else {
    return a * b;
  }
}

// The row-major strides of a shape of at most kMaxStablehloRank dimensions (elements, not bytes).
template <typename Dims>
void row_major_strides(const Dims& dims, int64_t* strides) {
  int64_t stride = 1;
  for (int d = static_cast<int>(std::size(dims)) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
}

// Calls f(position, flat index) for every position of `dims` (at most kMaxStablehloRank of them) in
// row-major order.
template <typename F>
void for_each_position(const std::vector<int64_t>& dims, F&& f) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  int64_t pos[kMaxStablehloRank] = {};
  for (int64_t i = 0; i < total; ++i) {
    f(static_cast<const int64_t*>(pos), i);
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
}

}  // namespace baton::builtin
