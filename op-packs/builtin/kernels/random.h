// Random numbers as TFLite 2.9's RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL draw them: the
// Philox4x32-10 counter-based generator (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011) keyed and started from the node's two seeds, and TensorFlow's mappings of its 32-bit words
// to floats, normal pairs and doubles. The same seeds give the same numbers, bit for bit.
#ifndef BATON_BUILTIN_KERNELS_RANDOM_H
#define BATON_BUILTIN_KERNELS_RANDOM_H

#include <array>
#include <cstdint>

namespace baton::builtin {

// One Philox4x32-10 stream: a 64-bit key and a 128-bit counter. Each call gives the four 32-bit words of
// the counter's block and steps the counter by one.
class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;

  Philox4x32() = default;
  // TensorFlow's seeding: `seed` is the key, `seed2` the counter's upper 64 bits (the lower start at 0).
  Philox4x32(uint64_t seed, uint64_t seed2);

  Block operator()();
  // Steps the counter by `blocks` without computing them.
  void skip(uint64_t blocks);

 private:
  std::array<uint32_t, 2> key_{};
  Block counter_{};
};

// One Philox4x32-10 block: `counter` under the key (k0, k1), ten rounds with the key stepped between them.
Philox4x32::Block philox4x32_block(uint32_t k0, uint32_t k1, Philox4x32::Block counter);

// One Threefry2x32-20 block (the same paper): the counter pair under the key (k0, k1), twenty rounds with a
// key injection after every four.
std::array<uint32_t, 2> threefry2x32_block(uint32_t k0, uint32_t k1, std::array<uint32_t, 2> counter);

// The generator a node starts from: its seeds, or, when both are 0, two fresh numbers from the system's
// entropy (TFLite then seeds a 64-bit Mersenne Twister from /dev/urandom once and draws both from it).
Philox4x32 seeded_philox(int64_t seed, int64_t seed2);

// `count` floats uniform in [0, 1): one block per four values, the words of a block's tail that are not
// needed dropped (the next call starts on a new block).
void random_uniform(Philox4x32& rng, float* out, int64_t count);

// `count` floats from a standard normal distribution, a Box-Muller pair per two words of a block. An
// odd count drops the last value of the last pair (TFLite writes it one past the end of its output).
void random_standard_normal(Philox4x32& rng, float* out, int64_t count);

// MULTINOMIAL: `samples` class indices per row of `logits` ([rows, classes], classes > 0), each drawn
// from the softmax of the row's finite logits. The draws come from a copy of `rng`; `rng` itself skips
// ahead by what TensorFlow reserves for the call, so that the next call draws other numbers.
template <typename Index>
void multinomial(Philox4x32& rng, const float* logits, int rows, int classes, int samples, Index* out);

extern template void multinomial<int32_t>(Philox4x32&, const float*, int, int, int, int32_t*);
extern template void multinomial<int64_t>(Philox4x32&, const float*, int, int, int, int64_t*);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_RANDOM_H
