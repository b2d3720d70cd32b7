#include "kernels/random.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <vector>

namespace baton::builtin {
namespace {

// Philox4x32's multipliers and its key schedule's increments (the golden ratio and sqrt(3) - 1 in 32-bit
// fixed point), from the paper.
constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kKeyStep0 = 0x9E3779B9u;
constexpr uint32_t kKeyStep1 = 0xBB67AE85u;
constexpr int kRounds = 10;

Philox4x32::Block philox_round(const Philox4x32::Block& c, uint32_t k0, uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kMultiplier0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kMultiplier1) * c[2];
  return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
          static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
}

// A float in [1, 2) from the word's low 23 bits as mantissa, less one: 2^23 evenly spaced values in [0, 1).
float unit_float(uint32_t word) { return std::bit_cast<float>(0x3F800000u | (word & 0x7FFFFFu)) - 1.0f; }

// A double in [0, 1) from 52 bits: the first word's low 20 bits above the second word.
double unit_double(uint32_t high, uint32_t low) {
  const uint64_t mantissa = (static_cast<uint64_t>(high & 0xFFFFFu) << 32) | low;
  return std::bit_cast<double>((uint64_t{1023} << 52) | mantissa) - 1.0;
}

// Box-Muller on two words, in TensorFlow's precision: the radius in float, the angle's 2 pi product in
// double rounded to float, sine and cosine from the C library's sincosf.
void normal_pair(uint32_t w0, uint32_t w1, float* f0, float* f1) {
  constexpr float kEpsilon = 1.0e-7f;
  float u1 = unit_float(w0);
  if (u1 < kEpsilon) u1 = kEpsilon;
  const float angle = static_cast<float>(2.0 * 3.14159265358979323846 * static_cast<double>(unit_float(w1)));
  const float radius = std::sqrt(-2.0f * std::log(u1));
  float s = 0.0f, c = 0.0f;
  ::sincosf(angle, &s, &c);
  *f0 = s * radius;
  *f1 = c * radius;
}

}  // namespace

Philox4x32::Philox4x32(uint64_t seed, uint64_t seed2)
    : key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)},
      counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)} {}

Philox4x32::Block philox4x32_block(uint32_t k0, uint32_t k1, Philox4x32::Block counter) {
  for (int r = 0; r < kRounds; ++r) {
    counter = philox_round(counter, k0, k1);
    k0 += kKeyStep0;
    k1 += kKeyStep1;
  }
  return counter;
}

std::array<uint32_t, 2> threefry2x32_block(uint32_t k0, uint32_t k1, std::array<uint32_t, 2> x) {
  // The key schedule's third word with the paper's parity constant, and the rotations of rounds 1-4 and
  // 5-8 (repeating).
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x[0] += ks[0];
  x[1] += ks[1];
  for (uint32_t injection = 1; injection <= 5; ++injection) {
    for (int rotation : kRotations[(injection - 1) % 2]) {
      x[0] += x[1];
      x[1] = (x[1] << rotation) | (x[1] >> (32 - rotation));
      x[1] ^= x[0];
    }
    x[0] += ks[injection % 3];
    x[1] += ks[(injection + 1) % 3] + injection;
  }
  return x;
}

Philox4x32::Block Philox4x32::operator()() {
  const Block block = philox4x32_block(key_[0], key_[1], counter_);
  skip(1);
  return block;
}

void Philox4x32::skip(uint64_t blocks) {
  // The counter is one 128-bit number, word 0 lowest.
  uint64_t carry = blocks;
  for (uint32_t& word : counter_) {
    const uint64_t sum = static_cast<uint64_t>(word) + (carry & 0xFFFFFFFFu);
    word = static_cast<uint32_t>(sum);
    carry = (carry >> 32) + (sum >> 32);
    if (carry == 0) break;
  }
}

Philox4x32 seeded_philox(int64_t seed, int64_t seed2) {
  if (seed == 0 && seed2 == 0) {
    static std::mutex mutex;
    static std::mt19937_64 entropy{std::random_device{}()};
    std::lock_guard<std::mutex> lock(mutex);
    const uint64_t a = entropy();
    const uint64_t b = entropy();
    return Philox4x32(a, b);
  }
  return Philox4x32(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
}

void random_uniform(Philox4x32& rng, float* out, int64_t count) {
  for (int64_t i = 0; i < count; i += 4) {
    const Philox4x32::Block block = rng();
    const int64_t n = std::min<int64_t>(4, count - i);
    for (int64_t k = 0; k < n; ++k) out[i + k] = unit_float(block[k]);
  }
}

void random_standard_normal(Philox4x32& rng, float* out, int64_t count) {
  for (int64_t i = 0; i < count; i += 4) {
    const Philox4x32::Block block = rng();
    const int64_t n = std::min<int64_t>(4, count - i);
    for (int64_t k = 0; k < n; k += 2) {
      float second = 0.0f;
      normal_pair(block[k], block[k + 1], &out[i + k], k + 1 < n ? &out[i + k + 1] : &second);
    }
  }
}

template <typename Index>
void multinomial(Philox4x32& rng, const float* logits, int rows, int classes, int samples, Index* out) {
  Philox4x32 draws = rng;
  // TensorFlow reserves 256 times two words per sample, samples rounded up to a multiple of 4, per row.
  const uint64_t rounded = (static_cast<uint64_t>(samples) + 3) / 4 * 4;
  rng.skip(static_cast<uint64_t>(rows) * rounded * 2 * 256);

  std::vector<double> cdf(static_cast<size_t>(classes));
  Philox4x32::Block block{};
  int used = 4;  // words of `block` taken; the rows share one stream of pairs
  for (int r = 0; r < rows; ++r) {
    const float* row = logits + static_cast<int64_t>(r) * classes;
    float max = std::numeric_limits<float>::lowest();
    for (int c = 0; c < classes; ++c) {
      if (std::isfinite(row[c])) max = std::max(max, row[c]);
    }
    const double max_logit = max;
    double total = 0.0;
    for (int c = 0; c < classes; ++c) {
      if (std::isfinite(row[c])) total += std::exp(static_cast<double>(row[c]) - max_logit);
      cdf[static_cast<size_t>(c)] = total;
    }
    Index* out_row = out + static_cast<int64_t>(r) * samples;
    for (int s = 0; s < samples; ++s) {
      if (used == 4) {
        block = draws();
        used = 0;
      }
      const double target = unit_double(block[used], block[used + 1]) * total;
      used += 2;
      out_row[s] = static_cast<Index>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin());
    }
  }
}

template void multinomial<int32_t>(Philox4x32&, const float*, int, int, int, int32_t*);
template void multinomial<int64_t>(Philox4x32&, const float*, int, int, int, int64_t*);

}  // namespace baton::builtin
