// The random ops' generator against Philox4x32-10's published known-answer vectors (Random123's
// kat_vectors), and TensorFlow's word-to-number mappings on words chosen by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/random.h"

namespace baton::builtin::testing {
namespace {

// A generator keyed by `key` with its 128-bit counter at (counter_high, counter_low).
Philox4x32 at(uint64_t key, uint64_t counter_high, uint64_t counter_low) {
  Philox4x32 rng(key, counter_high);
  rng.skip(counter_low);
  return rng;
}

TEST(Philox, MatchesThePublishedKnownAnswers) {
  EXPECT_EQ(at(0, 0, 0)(), (Philox4x32::Block{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(at(~0ull, ~0ull, ~0ull)(), (Philox4x32::Block{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  // The counter 243f6a88 85a308d3 13198a2e 03707344 (word 0 first), the key a4093822 299f31d0: pi's digits.
  EXPECT_EQ(at(0x299f31d0a4093822ull, 0x0370734413198a2eull, 0x85a308d3243f6a88ull)(),
            (Philox4x32::Block{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, StepsAndSkipsItsCounterAsOne128BitNumber) {
  Philox4x32 stepped = at(5, 0, ~0ull);
  stepped();  // the low 64 bits wrap into the high ones
  EXPECT_EQ(stepped(), at(5, 1, 0)());
  Philox4x32 skipped(9, 3);
  skipped.skip(1000);
  EXPECT_EQ(skipped(), at(9, 3, 1000)());
}

TEST(RandomNumbers, UniformTakesFourWordsABlockAndDropsTheTail) {
  Philox4x32 a(42, 7), b(42, 7);
  std::vector<float> five(5), three(3);
  random_uniform(a, five.data(), 5);  // two blocks
  random_uniform(a, three.data(), 3);  // the third block
  const Philox4x32::Block first = b(), second = b(), third = b();
  // A word's low 23 bits over 2^23: 0x00400000 is one half.
  auto unit = [](uint32_t w) { return static_cast<float>(w & 0x7fffff) / 8388608.0f; };
  EXPECT_EQ(five[0], unit(first[0]));
  EXPECT_EQ(five[3], unit(first[3]));
  EXPECT_EQ(five[4], unit(second[0]));
  EXPECT_EQ(three[0], unit(third[0]));
  for (float v : five) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}

TEST(RandomNumbers, NormalPairsAreBoxMullerOfTwoWords) {
  Philox4x32 a(3, 4), b(3, 4);
  std::vector<float> three(3);
  random_standard_normal(a, three.data(), 3);  // an odd count: the second pair's second value is dropped
  const Philox4x32::Block block = b();
  auto unit = [](uint32_t w) { return static_cast<double>(w & 0x7fffff) / 8388608.0; };
  const double radius = std::sqrt(-2.0 * std::log(std::max(unit(block[0]), 1e-7)));
  const double angle = 2.0 * M_PI * unit(block[1]);
  EXPECT_NEAR(three[0], radius * std::sin(angle), 1e-5);
  EXPECT_NEAR(three[1], radius * std::cos(angle), 1e-5);
  // The next invoke starts on a new block.
  std::vector<float> next(2);
  random_standard_normal(a, next.data(), 2);
  Philox4x32 c = b;
  std::vector<float> expected(2);
  random_standard_normal(c, expected.data(), 2);
  EXPECT_EQ(next, expected);
}

TEST(RandomNumbers, MultinomialDrawsFromACopyAndSkipsWhatTensorFlowReserves) {
  const std::vector<float> logits = {0.0f, -INFINITY, 1.0f, NAN};  // classes 1 and 3 are never drawn
  Philox4x32 rng(1, 2), copy(1, 2);
  std::vector<int64_t> out(2 * 3);
  multinomial(rng, logits.data(), 1, 4, 6, out.data());
  for (int64_t v : out) EXPECT_TRUE(v == 0 || v == 2) << v;
  // One row of 6 samples reserves 8 * 2 * 256 blocks.
  copy.skip(8 * 2 * 256);
  EXPECT_EQ(rng(), copy());
}

}  // namespace
}  // namespace baton::builtin::testing
