// A 64-bit fingerprint of a byte string: FarmHash's Fingerprint64 (its portable "na" Hash64, the
// CityHash-derived function whose values FarmHash promises never to change), which TFLite's LSH_PROJECTION
// hashes its keys with. Written from FarmHash's published definition; little-endian reads.
#ifndef BATON_BUILTIN_KERNELS_FINGERPRINT_H
#define BATON_BUILTIN_KERNELS_FINGERPRINT_H

#include <cstddef>
#include <cstdint>

namespace baton::builtin {

uint64_t fingerprint64(const uint8_t* bytes, size_t size);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_FINGERPRINT_H
