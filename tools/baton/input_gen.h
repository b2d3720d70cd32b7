// Deterministic inputs for `baton run` without --input. The stream and the value mapping are the same
// as the reference runner's (mulberry32; stream i seeded with seed + i * 0x9E3779B9 mod 2^32; floats
// ((x >> 8) / 2^24) * 2 - 1; integers from the top bits), so a run with the same seed feeds the same
// numbers as the reference did.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
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

// --int-range LO:HI: integer inputs drawn from [LO, HI] instead of the type's whole range (token ids for an
// embedding, indices for a gather), LO + floor(x * (HI - LO + 1) / 2^32), as the reference runner draws them.
struct IntRange {
  int64_t lo = 0, hi = 0;
};

// "LO:HI" with LO <= HI, else nullopt.
inline std::optional<IntRange> parse_int_range(const std::string& text) {
  const size_t colon = text.find(':', 1);
  if (colon == std::string::npos) return std::nullopt;
  char* end = nullptr;
  IntRange r;
  r.lo = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + colon) return std::nullopt;
  r.hi = std::strtoll(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || colon + 1 == text.size() || r.lo > r.hi) return std::nullopt;
  return r;
}

// Fills `out` (bytes of `count` elements of `type`); returns false for types it cannot generate. With a
// range, integer types take values in it (each clamped to what the type holds).
inline bool generate_input(baton_tensor_type type, size_t count, uint32_t seed, uint32_t index,
                           std::vector<uint8_t>& out, std::optional<IntRange> range = std::nullopt) {
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
  auto in_range = [&]<typename T>(T) {
    const double span = static_cast<double>(range->hi - range->lo) + 1.0;
    fill([&] {
      const double v = static_cast<double>(range->lo) + std::floor(rng.next() * span / 4294967296.0);
      return static_cast<T>(std::clamp<double>(v, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()));
    });
    return true;
  };
  if (range) {
    switch (type) {
      case BATON_TYPE_UINT8: return in_range(uint8_t{});
      case BATON_TYPE_INT8: return in_range(int8_t{});
      case BATON_TYPE_INT16: return in_range(int16_t{});
      case BATON_TYPE_INT32: return in_range(int32_t{});
      case BATON_TYPE_INT64: return in_range(int64_t{});
      default: break;
    }
  }
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
