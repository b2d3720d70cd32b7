#include "kernels/lsh_projection.h"

#include <cstring>
#include <vector>

#include "kernels/fingerprint.h"

namespace baton::builtin {
namespace {

int sign_bit(float seed, const LshInput& input, std::vector<uint8_t>& key) {
  std::memcpy(key.data(), &seed, sizeof seed);
  double score = 0.0;
  for (int64_t r = 0; r < input.rows; ++r) {
    if (input.row_bytes > 0) std::memcpy(key.data() + sizeof seed, input.bytes + r * input.row_bytes, input.row_bytes);
    const auto value = static_cast<double>(static_cast<int64_t>(fingerprint64(key.data(), key.size())));
    score += input.weights ? static_cast<double>(input.weights[r]) * value : value;
  }
  return score > 0 ? 1 : 0;
}

}  // namespace

void lsh_projection_sparse(const float* seeds, int functions, int bits, const LshInput& input, int32_t* out) {
  std::vector<uint8_t> key(sizeof(float) + input.row_bytes);
  for (int f = 0; f < functions; ++f) {
    uint32_t signature = 0;
    for (int b = 0; b < bits; ++b) {
      signature = (signature << 1) | static_cast<uint32_t>(sign_bit(seeds[f * bits + b], input, key));
    }
    // TFLite adds f * (1 << bits) in int32; at 32 bits its shift count wraps to 0 on x86, adding f.
    out[f] = static_cast<int32_t>(signature + static_cast<uint32_t>(f) * (uint32_t{1} << (bits & 31)));
  }
}

void lsh_projection_dense(const float* seeds, int functions, int bits, const LshInput& input, int32_t* out) {
  std::vector<uint8_t> key(sizeof(float) + input.row_bytes);
  for (int i = 0; i < functions * bits; ++i) out[i] = sign_bit(seeds[i], input, key);
}

}  // namespace baton::builtin
