#include "kernels/fingerprint.h"

#include <cstring>
#include <utility>

namespace baton::builtin {
namespace {

// FarmHash's primes.
constexpr uint64_t kPrime0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kPrime1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kPrime2 = 0x9ae16a3b2f90404fULL;

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // the pack builds for little-endian targets only
}

uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

uint64_t rotate_right(uint64_t v, int shift) { return shift == 0 ? v : (v >> shift) | (v << (64 - shift)); }

uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

// Two words mixed into one with multiplier `mul`.
uint64_t mix_pair(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t hash_up_to_16(const uint8_t* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kPrime2 + len * 2;
    const uint64_t a = load64(s) + kPrime2;
    const uint64_t b = load64(s + len - 8);
    const uint64_t c = rotate_right(b, 37) * mul + a;
    const uint64_t d = (rotate_right(a, 25) + b) * mul;
    return mix_pair(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kPrime2 + len * 2;
    const uint64_t a = load32(s);
    return mix_pair(len + (a << 3), load32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint32_t y = static_cast<uint32_t>(s[0]) + (static_cast<uint32_t>(s[len >> 1]) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(s[len - 1]) << 2);
    return shift_mix(y * kPrime2 ^ z * kPrime0) * kPrime2;
  }
  return kPrime2;
}

uint64_t hash_17_to_32(const uint8_t* s, size_t len) {
  const uint64_t mul = kPrime2 + len * 2;
  const uint64_t a = load64(s) * kPrime1;
  const uint64_t b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul;
  const uint64_t d = load64(s + len - 16) * kPrime2;
  return mix_pair(rotate_right(a + b, 43) + rotate_right(c, 30) + d, a + rotate_right(b + kPrime2, 18) + c, mul);
}

uint64_t hash_33_to_64(const uint8_t* s, size_t len) {
  const uint64_t mul = kPrime2 + len * 2;
  const uint64_t a = load64(s) * kPrime2;
  const uint64_t b = load64(s + 8);
  const uint64_t c = load64(s + len - 8) * mul;
  const uint64_t d = load64(s + len - 16) * kPrime2;
  const uint64_t y = rotate_right(a + b, 43) + rotate_right(c, 30) + d;
  const uint64_t z = mix_pair(y, a + rotate_right(b + kPrime2, 18) + c, mul);
  const uint64_t e = load64(s + 16) * mul;
  const uint64_t f = load64(s + 24);
  const uint64_t g = (y + load64(s + len - 32)) * mul;
  const uint64_t h = (z + load64(s + len - 24)) * mul;
  return mix_pair(rotate_right(e + f, 43) + rotate_right(g, 30) + h, e + rotate_right(f + a, 18) + g, mul);
}

// 32 bytes folded into a pair with two seeds.
std::pair<uint64_t, uint64_t> fold32(const uint8_t* s, uint64_t a, uint64_t b) {
  const uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
  a += w;
  b = rotate_right(b + a + z, 21);
  const uint64_t c = a;
  a += x;
  a += y;
  b += rotate_right(a, 44);
  return {a + z, b + c};
}

}  // namespace

uint64_t fingerprint64(const uint8_t* s, size_t len) {
  if (len <= 16) return hash_up_to_16(s, len);
  if (len <= 32) return hash_17_to_32(s, len);
  if (len <= 64) return hash_33_to_64(s, len);

  // 64-byte blocks, then the last 64 bytes (overlapping the blocks when the length is not a multiple).
  constexpr uint64_t kSeed = 81;
  uint64_t x = kSeed;
  uint64_t y = kSeed * kPrime1 + 113;
  uint64_t z = shift_mix(y * kPrime2 + 113) * kPrime2;
  std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
  x = x * kPrime2 + load64(s);
  const uint8_t* end = s + ((len - 1) / 64) * 64;
  const uint8_t* last64 = end + ((len - 1) & 63) - 63;
  do {
    x = rotate_right(x + y + v.first + load64(s + 8), 37) * kPrime1;
    y = rotate_right(y + v.second + load64(s + 48), 42) * kPrime1;
    x ^= w.second;
    y += v.first + load64(s + 40);
    z = rotate_right(z + w.first, 33) * kPrime1;
    v = fold32(s, v.second * kPrime1, x + w.first);
    w = fold32(s + 32, z + w.second, y + load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = kPrime1 + ((z & 0xff) << 1);
  s = last64;
  w.first += (len - 1) & 63;
  v.first += w.first;
  w.first += v.first;
  x = rotate_right(x + y + v.first + load64(s + 8), 37) * mul;
  y = rotate_right(y + v.second + load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + load64(s + 40);
  z = rotate_right(z + w.first, 33) * mul;
  v = fold32(s, v.second * mul, x + w.first);
  w = fold32(s + 32, z + w.second, y + load64(s + 16));
  std::swap(z, x);
  return mix_pair(mix_pair(v.first, w.first, mul) + shift_mix(y) * kPrime0 + z, mix_pair(v.second, w.second, mul) + x,
                  mul);
}

}  // namespace baton::builtin
