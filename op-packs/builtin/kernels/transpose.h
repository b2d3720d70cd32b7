// TRANSPOSE (output dimension i is input dimension perm[i]) and DEPTH_TO_SPACE (NHWC, TensorFlow's DCR
// order: output (y * block + dy, x * block + dx, c) reads input channel (dy * block + dx) * out_c + c).
#ifndef BATON_BUILTIN_KERNELS_TRANSPOSE_H
#define BATON_BUILTIN_KERNELS_TRANSPOSE_H

#include <cstddef>
#include <cstdint>

namespace baton::builtin {

inline constexpr int kMaxTransposeRank = 8;

void transpose(const int32_t* in_dims, const int32_t* perm, int rank, const void* in, void* out,
               size_t element_size);

void depth_to_space(int batch, int in_h, int in_w, int in_c, int block, const void* in, void* out,
                    size_t element_size);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_TRANSPOSE_H
