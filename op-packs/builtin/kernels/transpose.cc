#include "kernels/transpose.h"

#include <cstring>

#include "kernels/element_copy.h"

namespace baton::builtin {

void transpose(const int32_t* in_dims, const int32_t* perm, int rank, const void* in, void* out,
               size_t element_size) {
  with_element_type(element_size, [&](auto zero) {
    using T = decltype(zero);
    const T* src = static_cast<const T*>(in);
    T* dst = static_cast<T*>(out);
    if (rank == 0) {
      *dst = *src;
      return;
    }
    int64_t in_strides[kMaxTransposeRank] = {};
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; --d) {
      in_strides[d] = s;
      s *= in_dims[d];
    }
    const int64_t count = s;
    if (count == 0) return;
    int64_t out_dims[kMaxTransposeRank] = {}, step[kMaxTransposeRank] = {};
    for (int d = 0; d < rank; ++d) {
      out_dims[d] = in_dims[perm[d]];
      step[d] = in_strides[perm[d]];
    }
    const int last = rank - 1;
    const int64_t n = out_dims[last];
    int64_t index[kMaxTransposeRank] = {};
    int64_t offset = 0;
    for (int64_t o = 0; o < count; o += n) {
      for (int64_t j = 0; j < n; ++j) dst[o + j] = src[offset + j * step[last]];
      for (int d = last - 1; d >= 0; --d) {
        offset += step[d];
        if (++index[d] < out_dims[d]) break;
        offset -= step[d] * out_dims[d];
        index[d] = 0;
      }
    }
  });
}

void depth_to_space(int batch, int in_h, int in_w, int in_c, int block, const void* in, void* out,
                    size_t element_size) {
  const int out_c = in_c / (block * block);
  const size_t run = static_cast<size_t>(out_c) * element_size;  // contiguous in both tensors
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  for (int b = 0; b < batch; ++b) {
    for (int y = 0; y < in_h; ++y) {
      for (int dy = 0; dy < block; ++dy) {
        for (int x = 0; x < in_w; ++x) {
          const unsigned char* pixel =
              src + ((static_cast<size_t>(b) * in_h + y) * in_w + x) * in_c * element_size;
          // Its channels of this dy, for every dx, lie side by side in both tensors.
          copy_run(dst, pixel + static_cast<size_t>(dy) * block * run, block * run);
          dst += block * run;
        }
      }
    }
  }
}

}  // namespace baton::builtin
