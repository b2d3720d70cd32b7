// AVERAGE_POOL_2D and MAX_POOL_2D on uint8 / int8 codes (input and output share scale and zero point,
// as TFLite requires). The average is TFLite's integer one: the sum of the covered elements divided by
// their count, rounded half away from zero; then the fused activation's clamp.
#ifndef BATON_BUILTIN_KERNELS_QPOOL_H
#define BATON_BUILTIN_KERNELS_QPOOL_H

#include <cstdint>

#include "kernels/pool.h"

namespace baton::builtin {

struct QPoolParams {
  PoolParams geo;  // geo.range is unused
  bool is_signed = false;
  int32_t lo = 0, hi = 255;
};

void qaverage_pool(const QPoolParams& p, const uint8_t* input, uint8_t* output);
void qmax_pool(const QPoolParams& p, const uint8_t* input, uint8_t* output);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_QPOOL_H
