// LSH_PROJECTION: locality-sensitive hashing of an input's rows into bits, as TFLite 2.9 computes it. Each
// seed (a float of the `hash` tensor, [functions, bits]) gives one bit: the sign of the (weighted) sum, in
// double, of the 64-bit fingerprints of the seed's four bytes followed by each input row's bytes. SPARSE
// packs a function's bits into one int32 (plus the function's index times 2^bits); DENSE gives each bit
// as an int32 0 or 1.
#ifndef BATON_BUILTIN_KERNELS_LSH_PROJECTION_H
#define BATON_BUILTIN_KERNELS_LSH_PROJECTION_H

#include <cstddef>
#include <cstdint>

namespace baton::builtin {

struct LshInput {
  const uint8_t* bytes = nullptr;
  int64_t rows = 0;
  size_t row_bytes = 0;
  const float* weights = nullptr;  // one per row, or null for weight 1
};

void lsh_projection_sparse(const float* seeds, int functions, int bits, const LshInput& input, int32_t* out);
void lsh_projection_dense(const float* seeds, int functions, int bits, const LshInput& input, int32_t* out);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_LSH_PROJECTION_H
