// Deterministic inputs for `baton run` without --input. The stream and the value mapping are the same
// as the reference runner's (mulberry32; stream i seeded with seed + i * 0x9E3779B9 mod 2^32; floats
// ((x >> 8) / 2^24) * 2 - 1; integers from the top bits), so a run with the same seed feeds the same
// numbers as the reference did.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "baton/plugin_api.h"

namespace baton::tool {

class Mulberry32 {
 public:
  explicit Mulberry32(uint32_t seed) : a_(seed) {}
  uint32_t next() {
    a_ += 0x6D2B79F5u;
    uint32_t t = (a_ ^ (a_ >> 15)) * (1u | a_);
    t = (t + ((t ^ (t >> 7)) * (61u | t))) ^ t;
    return t ^ (t >> 14);
  }

 private:
  uint32_t a_;
};

// Fills `out` (bytes of `count` elements of `type`); returns false for types it cannot generate.
inline bool generate_input(baton_tensor_type type, size_t count, uint32_t seed, uint32_t index,
                           std::vector<uint8_t>& out) {
  Mulberry32 rng(seed + index * 0x9E3779B9u);
  auto fill = [&](auto make) {
    using T = decltype(make());
    out.resize(count * sizeof(T));
    for (size_t i = 0; i < count; ++i) {
      T v = make();
      std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
    }
  };
  auto next_float = [&] { return static_cast<float>((rng.next() >> 8) / 16777216.0 * 2.0 - 1.0); };
  switch (type) {
    case BATON_TYPE_FLOAT32: fill(next_float); return true;
    // Real and imaginary parts in turn from the float stream (the reference runner makes no complex inputs).
    case BATON_TYPE_COMPLEX64: fill([&] { return std::array<float, 2>{next_float(), next_float()}; }); return true;
    case BATON_TYPE_UINT8: fill([&] { return static_cast<uint8_t>(rng.next() >> 24); }); return true;
    case BATON_TYPE_INT8: fill([&] { return static_cast<int8_t>(static_cast<int>(rng.next() >> 24) - 128); }); return true;
    case BATON_TYPE_INT32: fill([&] { return static_cast<int32_t>(rng.next()); }); return true;
    case BATON_TYPE_INT16: fill([&] { return static_cast<int16_t>(static_cast<int>(rng.next() >> 16) - 32768); }); return true;
    case BATON_TYPE_BOOL: fill([&] { return static_cast<uint8_t>(rng.next() >> 31); }); return true;
    default: return false;
  }
}

}  // namespace baton::tool
