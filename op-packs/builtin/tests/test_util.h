// Helpers shared by the kernel tests: seeded random data, element-wise comparison, the ISAs to try.
#ifndef BATON_BUILTIN_TESTS_TEST_UTIL_H
#define BATON_BUILTIN_TESTS_TEST_UTIL_H

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/qgemm.h"

namespace baton::builtin::testing {

inline std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Relative-and-absolute tolerance: sums of many products differ in the last bits with the order.
inline void expect_near_all(const std::vector<float>& expected, const std::vector<float>& actual, float tol = 1e-4f) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(expected[i], actual[i], tol * (1.0f + std::fabs(expected[i]))) << "at " << i;
  }
}

// Every quantized-kernel instruction set this CPU can run, the scalar one first.
inline std::vector<QuantIsa> isas() {
  std::vector<QuantIsa> out = {QuantIsa::kScalar};
  if (best_quant_isa() >= QuantIsa::kAvx2) out.push_back(QuantIsa::kAvx2);
  if (best_quant_isa() >= QuantIsa::kAvx512Vnni) out.push_back(QuantIsa::kAvx512Vnni);
  return out;
}

}  // namespace baton::builtin::testing

#endif  // BATON_BUILTIN_TESTS_TEST_UTIL_H
