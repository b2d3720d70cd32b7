#include "kernels/keyed_lookup.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace baton::builtin {
namespace {

// The index of `key` in `keys`, or -1: glibc's bsearch, probing the middle of [lo, hi) and comparing by
// `key - probe` in wrapping int32 arithmetic, TFLite's comparator.
int64_t find_key(int32_t key, const int32_t* keys, int64_t rows) {
  int64_t lo = 0, hi = rows;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    const auto order = static_cast<int32_t>(static_cast<uint32_t>(key) - static_cast<uint32_t>(keys[mid]));
    if (order < 0) {
      hi = mid;
    } else if (order > 0) {
      lo = mid + 1;
    } else {
      return mid;
    }
  }
  return -1;
}

void combine(Combiner combiner, int lookups, float total_weight, float squared_weights, float* row,
             int64_t embedding) {
  if (combiner == Combiner::sum || lookups == 0) return;
  const float divisor = combiner == Combiner::mean ? total_weight : std::sqrt(squared_weights);
  for (int64_t k = 0; k < embedding; ++k) row[k] /= divisor;
}

}  // namespace

void hashtable_lookup(const int32_t* lookups, int64_t count, const int32_t* keys, int64_t rows, const uint8_t* values,
                      size_t row_bytes, uint8_t* out, uint8_t* hits) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = find_key(lookups[i], keys, rows);
    hits[i] = row < 0 ? 0 : 1;
    if (row_bytes == 0) continue;  // rows of no elements: the tensors may have no memory at all
    uint8_t* dst = out + static_cast<size_t>(i) * row_bytes;
    if (row < 0) {
      std::memset(dst, 0, row_bytes);
    } else {
      std::memcpy(dst, values + static_cast<size_t>(row) * row_bytes, row_bytes);
    }
  }
}

std::string embedding_lookup_sparse(const int32_t* ids, const int32_t* indices, int64_t count, int lookup_rank,
                                    const int32_t* dense_shape, const float* weights, const float* params,
                                    int64_t param_rows, int64_t embedding, Combiner combiner, float* out,
                                    int64_t out_rows) {
  // The output row of each lookup, checked before anything is written.
  auto out_row = [&](int64_t i) {
    int64_t row = 0, stride = 1;
    for (int k = lookup_rank - 2; k >= 0; --k) {
      row += indices[i * lookup_rank + k] * stride;
      stride *= dense_shape[k];
    }
    return row;
  };
  for (int64_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] >= param_rows) {
      return "id " + std::to_string(ids[i]) + " (lookup " + std::to_string(i) + ") is outside [0, " +
             std::to_string(param_rows) + ")";
    }
    for (int k = 0; k < lookup_rank - 1; ++k) {
      const int32_t c = indices[i * lookup_rank + k];
      if (c < 0 || c >= dense_shape[k]) {
        return "index " + std::to_string(i) + " has coordinate " + std::to_string(c) + " outside [0, " +
               std::to_string(dense_shape[k]) + ") in dimension " + std::to_string(k);
      }
    }
  }
  std::fill(out, out + out_rows * embedding, 0.0f);
  int64_t current = 0;
  int lookups = 0;
  float total_weight = 0.0f, squared_weights = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = out_row(i);
    if (row != current) {
      combine(combiner, lookups, total_weight, squared_weights, out + current * embedding, embedding);
      lookups = 0;
      total_weight = squared_weights = 0.0f;
      current = row;
    }
    ++lookups;
    const float w = weights[i];
    squared_weights += w * w;
    total_weight += w;
    const float* src = params + static_cast<int64_t>(ids[i]) * embedding;
    float* dst = out + current * embedding;
    for (int64_t k = 0; k < embedding; ++k) dst[k] += src[k] * w;
  }
  if (out_rows > 0) combine(combiner, lookups, total_weight, squared_weights, out + current * embedding, embedding);
  return {};
}

}  // namespace baton::builtin
