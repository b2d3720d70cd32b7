#include "datatype.h"

#include <bit>
#include <cstring>

namespace baton::serve {

namespace {

struct Entry {
  baton_tensor_type type;
  std::string_view name;
  size_t size;
};

// STRING is BYTES: TFLite's string tensors hold bytes, which is what the protocol's BYTES carries.
constexpr Entry kTypes[] = {
    {BATON_TYPE_BOOL, "BOOL", 1},     {BATON_TYPE_UINT8, "UINT8", 1},     {BATON_TYPE_UINT16, "UINT16", 2},
    {BATON_TYPE_UINT32, "UINT32", 4}, {BATON_TYPE_UINT64, "UINT64", 8},   {BATON_TYPE_INT8, "INT8", 1},
    {BATON_TYPE_INT16, "INT16", 2},   {BATON_TYPE_INT32, "INT32", 4},     {BATON_TYPE_INT64, "INT64", 8},
    {BATON_TYPE_FLOAT16, "FP16", 2},  {BATON_TYPE_FLOAT32, "FP32", 4},    {BATON_TYPE_FLOAT64, "FP64", 8},
    {BATON_TYPE_BFLOAT16, "BF16", 2}, {BATON_TYPE_STRING, "BYTES", 0},
};

}  // namespace

std::optional<std::string_view> protocol_datatype(baton_tensor_type type) {
  for (const Entry& e : kTypes) {
    if (e.type == type) return e.name;
  }
  return std::nullopt;
}

bool is_protocol_datatype(std::string_view name) {
  for (const Entry& e : kTypes) {
    if (e.name == name) return true;
  }
  return false;
}

size_t datatype_size(std::string_view name) {
  for (const Entry& e : kTypes) {
    if (e.name == name) return e.size;
  }
  return 0;
}

uint16_t float_to_half(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: infinity
  if (abs < 0x38800000u) {
    // A subnormal half (or zero): shift the mantissa with its implicit bit, rounding to nearest even.
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // value = mant * 2^(exp - 150); a subnormal half counts 2^-24
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t f;
  if (exp == 0) {
    if (mant == 0) {
      f = sign;
    } else {
      // Subnormal: normalise.
      int e = -1;
      uint32_t m = mant;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      f = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (m & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    f = sign | 0x7f800000u | mant << 13;
  } else {
    f = sign | (exp + 112) << 23 | mant << 13;
  }
  return std::bit_cast<float>(f);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace baton::serve
