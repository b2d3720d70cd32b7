// TFLite's legacy lookup ops: HASHTABLE_LOOKUP (rows of a table found by int32 key) and
// EMBEDDING_LOOKUP_SPARSE (embedding rows gathered for a sparse tensor of ids, weighted and combined per
// row of the sparse tensor), with TFLite 2.9's search and summation order.
#ifndef BATON_BUILTIN_KERNELS_KEYED_LOOKUP_H
#define BATON_BUILTIN_KERNELS_KEYED_LOOKUP_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace baton::builtin {

// For each of `count` lookups, the row of `values` whose key matches (`keys` ascending, `rows` of them,
// each row `row_bytes` bytes) copied to `out`, and 1 in `hits`; zero bytes and 0 where none matches. The
// search is the C library's bsearch with TFLite's comparator, a wrapping int32 difference, so that keys
// far apart are found (or missed) as TFLite finds them.
void hashtable_lookup(const int32_t* lookups, int64_t count, const int32_t* keys, int64_t rows, const uint8_t* values,
                      size_t row_bytes, uint8_t* out, uint8_t* hits);

enum class Combiner { sum = 0, mean = 1, sqrtn = 2 };

// EMBEDDING_LOOKUP_SPARSE. Lookup i takes row ids[i] of `params` ([param_rows, embedding] floats), times
// weights[i], into the output row its coordinates (`indices`, [count, lookup_rank]) give by their first
// lookup_rank - 1 values in `dense_shape`; the last coordinate only orders the lookups of a row.
// Consecutive lookups into one output row are combined: summed, then divided by their total weight
// (MEAN) or the root of their squared weights' sum (SQRTN). A row revisited after another is combined
// again, as TFLite 2.9 does. Returns an empty string, or why the lookups cannot be done (an id or a
// coordinate out of range), before anything is written.
std::string embedding_lookup_sparse(const int32_t* ids, const int32_t* indices, int64_t count, int lookup_rank,
                                    const int32_t* dense_shape, const float* weights, const float* params,
                                    int64_t param_rows, int64_t embedding, Combiner combiner, float* out,
                                    int64_t out_rows);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_KEYED_LOOKUP_H
