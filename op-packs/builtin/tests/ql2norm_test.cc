// 8-bit L2_NORMALIZATION: the AVX-512 rows must give the scalar rows' bytes exactly (the scalar rule is
// held to native TFLite 2.9 by the op cases l2_normalization_*), on depths around the 16- and 32-code
// steps, zero points at both ends of the range, rows whose differences are all zero (TFLite's largest
// multiplier) and rows at the saturating end.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/ql2norm.h"
#include "kernels/qgemm.h"

namespace baton::builtin::testing {
namespace {

TEST(QL2Norm, Avx512RowsAreTheScalarRowsBitForBit) {
  if (best_quant_isa() != QuantIsa::kAvx512Vnni) GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  std::mt19937 rng(11);
  for (bool is_signed : {true, false}) {
    const std::vector<int32_t> zeros = is_signed ? std::vector<int32_t>{-128, 0, 5, 127} : std::vector<int32_t>{0, 128, 200, 255};
    for (int32_t zero : zeros) {
      for (int64_t depth : {1, 2, 15, 16, 17, 31, 32, 33, 47, 100, 256, 1000}) {
        const int64_t rows = 5;
        std::vector<uint8_t> in(static_cast<size_t>(rows * depth));
        std::uniform_int_distribution<int> code(0, 255);
        for (uint8_t& c : in) c = static_cast<uint8_t>(code(rng));
        // Row 1: every code at the zero point (a zero sum); row 2: every code at the far end of the range.
        const uint8_t zero_code = static_cast<uint8_t>(is_signed ? static_cast<int8_t>(zero) : zero);
        const uint8_t far = is_signed ? (zero >= 0 ? 0x80 : 0x7F) : (zero >= 128 ? 0 : 255);
        for (int64_t c = 0; c < depth; ++c) {
          in[static_cast<size_t>(depth + c)] = zero_code;
          in[static_cast<size_t>(2 * depth + c)] = far;
        }
        in[static_cast<size_t>(3 * depth)] = zero_code;  // row 3: one code off the others
        std::vector<uint8_t> scalar(in.size(), 0xAB), simd(in.size(), 0xCD);
        ql2_normalize(QuantIsa::kScalar, is_signed, zero, in.data(), scalar.data(), rows, depth);
        ql2_normalize(QuantIsa::kAvx512Vnni, is_signed, zero, in.data(), simd.data(), rows, depth);
        EXPECT_EQ(simd, scalar) << (is_signed ? "int8" : "uint8") << " zero point " << zero << ", depth " << depth;
      }
    }
  }
}

}  // namespace
}  // namespace baton::builtin::testing
