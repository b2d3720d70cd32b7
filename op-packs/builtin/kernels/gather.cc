#include "kernels/gather.h"

#include <cstring>

namespace baton::builtin {

template <typename Index>
bool gather(const GatherParams& p, const void* params, const Index* indices, void* out, size_t element_size,
            int64_t* bad) {
  const size_t row = static_cast<size_t>(p.inner) * element_size;
  const auto* src = static_cast<const unsigned char*>(params);
  auto* dst = static_cast<unsigned char*>(out);
  for (int64_t b = 0; b < p.batch; ++b) {
    const Index* idx = indices + b * p.indices_per_batch;
    for (int64_t o = 0; o < p.outer; ++o) {
      const unsigned char* base = src + static_cast<size_t>((b * p.outer + o) * p.axis_size) * row;
      for (int64_t i = 0; i < p.indices_per_batch; ++i) {
        const int64_t k = idx[i];
        if (k < 0 || k >= p.axis_size) {
          *bad = k;
          return false;
        }
        std::memcpy(dst, base + static_cast<size_t>(k) * row, row);
        dst += row;
      }
    }
  }
  return true;
}

template bool gather<int32_t>(const GatherParams&, const void*, const int32_t*, void*, size_t, int64_t*);
template bool gather<int64_t>(const GatherParams&, const void*, const int64_t*, void*, size_t, int64_t*);

}  // namespace baton::builtin
