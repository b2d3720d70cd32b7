// GCC/Clang vector extensions: 8 floats that the compiler maps to one AVX register in an AVX2 clone and
// to two SSE registers in the baseline one. Only ever used inside always-inline bodies, never passed
// across a call, so no ABI depends on the target.
#ifndef BATON_BUILTIN_KERNELS_SIMD_H
#define BATON_BUILTIN_KERNELS_SIMD_H

namespace baton::builtin {

typedef float Float8 __attribute__((vector_size(32)));

#define BATON_INLINE inline __attribute__((always_inline))
// A lambda is a function of its own: it must be inlined to take the target of the dispatched copy.
#define BATON_LAMBDA __attribute__((always_inline))

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_SIMD_H
