#include "kernels/pad.h"

#include <cstring>

#include "kernels/element_copy.h"

namespace baton::builtin {
namespace {

template <typename T>
struct Padder {
  const PadPlan& plan;
  T value;
  int64_t out_inner[kMaxPadRank];  // output elements per step of each dimension
  int64_t in_inner[kMaxPadRank];

  void fill(T* out, int64_t n) const {
    for (int64_t i = 0; i < n; ++i) out[i] = value;
  }

  // Writes the output block of dimension d from the input block `in`; returns the end of the output.
  T* block(int d, const T* in, T* out) const {
    fill(out, plan.before[d] * out_inner[d]);
    out += plan.before[d] * out_inner[d];
    if (d == plan.rank - 1) {
      std::memcpy(out, in, plan.in_dims[d] * sizeof(T));
      out += plan.in_dims[d];
    } else {
      for (int64_t i = 0; i < plan.in_dims[d]; ++i) out = block(d + 1, in + i * in_inner[d], out);
    }
    fill(out, plan.after[d] * out_inner[d]);
    return out + plan.after[d] * out_inner[d];
  }
};

// The same padding with trailing dimensions that have none merged into the one before (an NHWC pad of
// H and W copies whole rows of W * C elements, not C at a time).
PadPlan merge_unpadded_tail(const PadPlan& plan) {
  PadPlan m = plan;
  while (m.rank >= 2 && m.before[m.rank - 1] == 0 && m.after[m.rank - 1] == 0) {
    const int64_t inner = m.in_dims[m.rank - 1];
    m.in_dims[m.rank - 2] *= inner;
    m.before[m.rank - 2] *= inner;
    m.after[m.rank - 2] *= inner;
    --m.rank;
  }
  return m;
}

}  // namespace

void pad(const PadPlan& original, const void* in, void* out, size_t element_size, const void* pad_value) {
  const PadPlan plan = merge_unpadded_tail(original);
  with_element_type(element_size, [&](auto zero) {
    using T = decltype(zero);
    Padder<T> padder{plan, T{}, {}, {}};
    std::memcpy(&padder.value, pad_value, sizeof(T));
    if (plan.rank == 0) {
      std::memcpy(out, in, sizeof(T));
      return;
    }
    int64_t out_size = 1, in_size = 1;
    for (int d = plan.rank - 1; d >= 0; --d) {
      padder.out_inner[d] = out_size;
      padder.in_inner[d] = in_size;
      out_size *= plan.before[d] + plan.in_dims[d] + plan.after[d];
      in_size *= plan.in_dims[d];
    }
    if (in_size == 0) {
      padder.fill(static_cast<T*>(out), out_size);
      return;
    }
    padder.block(0, static_cast<const T*>(in), static_cast<T*>(out));
  });
}

}  // namespace baton::builtin
