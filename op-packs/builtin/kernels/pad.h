// PAD / PADV2: every dimension gets `before` and `after` extra elements holding one value.
#ifndef BATON_BUILTIN_KERNELS_PAD_H
#define BATON_BUILTIN_KERNELS_PAD_H

#include <cstddef>
#include <cstdint>

namespace baton::builtin {

inline constexpr int kMaxPadRank = 8;

struct PadPlan {
  int rank = 0;
  int64_t in_dims[kMaxPadRank] = {};
  int64_t before[kMaxPadRank] = {};
  int64_t after[kMaxPadRank] = {};
};

// `pad_value` points at one element of `element_size` bytes (1, 2, 4 or 8).
void pad(const PadPlan& plan, const void* in, void* out, size_t element_size, const void* pad_value);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_PAD_H
