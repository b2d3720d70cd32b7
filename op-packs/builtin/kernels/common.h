// Shared vocabulary of the builtin pack's kernels: activation ranges, TFLite's padding arithmetic,
// and the CPU dispatch macro. Kernels are plain functions over raw pointers and small parameter structs;
// they know nothing of the plugin ABI, so the tests call them directly.
#ifndef BATON_BUILTIN_KERNELS_COMMON_H
#define BATON_BUILTIN_KERNELS_COMMON_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace baton::builtin {

// Output clamp of a fused activation (NONE, RELU, RELU_N1_TO_1, RELU6). TANH and SIGN_BIT are not
// clamps; the glue refuses them.
struct ActivationRange {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

inline float clamp_activation(float v, ActivationRange r) { return std::min(std::max(v, r.lo), r.hi); }

enum class Padding { kSame, kValid };

// TFLite's output size of a sliding window (conv, pool): SAME covers every input position, VALID only
// whole windows. Returns <= 0 when a VALID window does not fit.
inline int window_output_size(Padding padding, int in, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  return padding == Padding::kSame ? (in + stride - 1) / stride : (in - effective + stride) / stride;
}

// Padding before the first input element. TFLite puts half of the total padding (rounded down) in
// front and the rest behind.
inline int window_padding_before(int in, int out, int filter, int stride, int dilation) {
  const int effective = (filter - 1) * dilation + 1;
  const int total = (out - 1) * stride + effective - in;
  return total > 0 ? total / 2 : 0;
}

inline int64_t element_count(const int32_t* dims, int rank) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

}  // namespace baton::builtin

// Compile the body of a hot loop twice, for AVX2+FMA and for the baseline x86-64 (or whatever the
// target is), and pick one at run time. The body is an always-inline template `NAME##_impl`; this
// defines `NAME` that forwards to the best compiled copy. Never -march=native: the pack must load on any
// x86-64.
#if defined(__x86_64__) && defined(__GNUC__)
#define BATON_BUILTIN_HAS_AVX2_DISPATCH 1
#define BATON_DISPATCH_AVX2(RET, NAME, PARAMS, ARGS)                                     \
  __attribute__((target("avx2,fma"))) static RET NAME##_avx2 PARAMS { return NAME##_impl ARGS; } \
  static RET NAME##_base PARAMS { return NAME##_impl ARGS; }                              \
  static RET NAME PARAMS {                                                                \
    static const bool use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); \
    return use_avx2 ? NAME##_avx2 ARGS : NAME##_base ARGS;                                \
  }
#else
#define BATON_DISPATCH_AVX2(RET, NAME, PARAMS, ARGS) \
  static RET NAME PARAMS { return NAME##_impl ARGS; }
#endif

namespace baton::builtin {

// The instruction sets the width-templated float kernels (kernels/vector_math.h) are compiled for.
enum class VectorIsa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2 };

// The best of them this CPU (and its OS) runs.
inline VectorIsa best_vector_isa() {
#if defined(BATON_BUILTIN_HAS_AVX2_DISPATCH)
  static const VectorIsa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return VectorIsa::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::kAvx2;
    return VectorIsa::kBaseline;
  }();
  return isa;
#else
  return VectorIsa::kBaseline;
#endif
}

}  // namespace baton::builtin

// Like BATON_DISPATCH_AVX2 for a body templated on its lane count, `template <int W> NAME##_impl`: 16 lanes
// for AVX-512, 8 for AVX2+FMA and the baseline. Defines `NAME##_for(VectorIsa)`, the copy for that ISA (a
// function pointer; the tests run each), and `NAME`, the best copy for this CPU.
#if defined(BATON_BUILTIN_HAS_AVX2_DISPATCH)
#define BATON_DISPATCH_WIDTHS(RET, NAME, PARAMS, ARGS)                                                  \
  __attribute__((target("avx512f,avx512dq,avx2,fma"))) static RET NAME##_avx512 PARAMS {               \
    return NAME##_impl<16> ARGS;                                                                        \
  }                                                                                                     \
  __attribute__((target("avx2,fma"))) static RET NAME##_avx2 PARAMS { return NAME##_impl<8> ARGS; }    \
  static RET NAME##_base PARAMS { return NAME##_impl<8> ARGS; }                                         \
  [[maybe_unused]] static auto NAME##_for(VectorIsa isa) {                                              \
    return isa == VectorIsa::kAvx512 ? NAME##_avx512 : isa == VectorIsa::kAvx2 ? NAME##_avx2 : NAME##_base; \
  }                                                                                                     \
  [[maybe_unused]] static RET NAME PARAMS {                                                             \
    static const auto best = NAME##_for(best_vector_isa());                                             \
    return best ARGS;                                                                                   \
  }
#else
#define BATON_DISPATCH_WIDTHS(RET, NAME, PARAMS, ARGS)                                    \
  [[maybe_unused]] static auto NAME##_for(VectorIsa) { return +[] PARAMS { return NAME##_impl<8> ARGS; }; } \
  [[maybe_unused]] static RET NAME PARAMS { return NAME##_impl<8> ARGS; }
#endif

#endif  // BATON_BUILTIN_KERNELS_COMMON_H
