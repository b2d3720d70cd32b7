// GATHER: out[b][o][i][r] = params[b][o][indices[b][i]][r], where b runs over the batch_dims leading
// dimensions, o over the dimensions before the axis, i over the indices' own dimensions and r over
// those after the axis.
#ifndef BATON_BUILTIN_KERNELS_GATHER_H
#define BATON_BUILTIN_KERNELS_GATHER_H

#include <cstddef>
#include <cstdint>

namespace baton::builtin {

struct GatherParams {
  int64_t batch = 1, outer = 1, axis_size = 1, inner = 1;
  int64_t indices_per_batch = 1;
};

// Indices are int32 or int64 (index_size 4 or 8). Returns false, writing the bad index to *bad, when an
// index is out of [0, axis_size).
template <typename Index>
bool gather(const GatherParams& p, const void* params, const Index* indices, void* out, size_t element_size,
            int64_t* bad);

extern template bool gather<int32_t>(const GatherParams&, const void*, const int32_t*, void*, size_t, int64_t*);
extern template bool gather<int64_t>(const GatherParams&, const void*, const int64_t*, void*, size_t, int64_t*);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_GATHER_H
