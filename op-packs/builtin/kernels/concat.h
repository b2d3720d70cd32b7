// CONCATENATION / PACK (many inputs into one) and SPLIT / UNPACK (one input into many). Both see a
// tensor as [outer, axis * inner]: each input contributes a chunk of `chunk[i]` elements per outer step.
#ifndef BATON_BUILTIN_KERNELS_CONCAT_H
#define BATON_BUILTIN_KERNELS_CONCAT_H

#include <cstddef>
#include <cstdint>

namespace baton::builtin {

void concat(int64_t outer, const int64_t* chunk, const void* const* inputs, int count, void* out,
            size_t element_size);

void split(int64_t outer, const int64_t* chunk, const void* in, void* const* outputs, int count,
           size_t element_size);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_CONCAT_H
