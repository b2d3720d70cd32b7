#include "common/flex_map.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace baton::packkit {
namespace {

// FlexBuffer type codes (flexbuffers::Type).
enum : uint8_t {
  kNull = 0,
  kInt = 1,
  kUInt = 2,
  kFloat = 3,
  kIndirectInt = 6,
  kIndirectUInt = 7,
  kIndirectFloat = 8,
  kMap = 9,
  kVector = 10,
  kVectorInt = 11,
  kVectorUInt = 12,
  kVectorInt2 = 16,
  kVectorUInt2 = 17,
  kVectorInt3 = 19,
  kVectorUInt3 = 20,
  kVectorInt4 = 22,
  kVectorUInt4 = 23,
  kBool = 26,
};

const char* type_name(uint8_t type) {
  switch (type) {
    case 0: return "null";
    case 1: return "int";
    case 2: return "uint";
    case 3: return "float";
    case 4: return "key";
    case 5: return "string";
    case 6: return "indirect int";
    case 7: return "indirect uint";
    case 8: return "indirect float";
    case 9: return "map";
    case 10: return "vector";
    case 25: return "blob";
    case 26: return "bool";
    default: return type >= 11 && type <= 24 ? "typed vector" : (type == 36 ? "bool vector" : "unknown type");
  }
}

bool valid_width(uint64_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }

std::string quoted(std::string_view key) { return "key '" + std::string(key) + "'"; }

}  // namespace

void FlexMap::check(const uint8_t* p, size_t n, const std::string& what) const {
  if (p < begin_ || p > end_ || n > static_cast<size_t>(end_ - p)) {
    throw FlexError(what + ": reads past the end of the " + std::to_string(end_ - begin_) + "-byte buffer");
  }
}

uint64_t FlexMap::read_uint(const uint8_t* p, size_t width, const std::string& what) const {
  check(p, width, what);
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

int64_t FlexMap::read_int(const uint8_t* p, size_t width, const std::string& what) const {
  const uint64_t u = read_uint(p, width, what);
  if (width == 8) return static_cast<int64_t>(u);
  const uint64_t sign = uint64_t{1} << (8 * width - 1);
  return static_cast<int64_t>((u ^ sign) - sign);  // sign-extend
}

double FlexMap::read_float(const uint8_t* p, size_t width, const std::string& what) const {
  check(p, width, what);
  if (width == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (width == 8) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  throw FlexError(what + ": a " + std::to_string(width) + "-byte float is not supported");
}

const uint8_t* FlexMap::indirect(const uint8_t* p, size_t width, const std::string& what) const {
  const uint64_t offset = read_uint(p, width, what);
  if (offset > static_cast<uint64_t>(p - begin_)) throw FlexError(what + ": offset points before the buffer");
  return p - offset;
}

FlexMap FlexMap::parse(std::span<const uint8_t> bytes) {
  FlexMap m(bytes.data(), bytes.data() + bytes.size());
  const std::string what = "root";
  if (bytes.size() < 3) {
    throw FlexError("not a FlexBuffer (" + std::to_string(bytes.size()) + " bytes; at least 3 needed)");
  }
  const uint8_t root_width = bytes[bytes.size() - 1];
  const uint8_t packed = bytes[bytes.size() - 2];
  if (!valid_width(root_width) || bytes.size() < 2u + root_width) {
    throw FlexError("not a FlexBuffer (bad root byte width " + std::to_string(root_width) + ")");
  }
  const uint8_t type = packed >> 2;
  if (type != kMap) {
    throw FlexError(std::string("the root is a ") + type_name(type) + ", not a map");
  }
  const uint8_t* root = bytes.data() + bytes.size() - 2 - root_width;
  m.width_ = size_t{1} << (packed & 3);
  m.values_ = m.indirect(root, root_width, what);
  const size_t w = m.width_;
  if (static_cast<size_t>(m.values_ - m.begin_) < 3 * w) throw FlexError("root map: header lies before the buffer");
  const uint64_t size = m.read_uint(m.values_ - w, w, "root map size");
  if (size > bytes.size()) throw FlexError("root map: size " + std::to_string(size) + " is larger than the buffer");
  m.size_ = static_cast<size_t>(size);
  m.check(m.values_, m.size_ * w + m.size_, "root map values");
  m.keys_width_ = static_cast<size_t>(m.read_uint(m.values_ - 2 * w, w, "root map key width"));
  if (!valid_width(m.keys_width_)) {
    throw FlexError("root map: bad key vector byte width " + std::to_string(m.keys_width_));
  }
  m.keys_ = m.indirect(m.values_ - 3 * w, w, "root map keys");
  if (static_cast<size_t>(m.keys_ - m.begin_) < m.keys_width_) throw FlexError("root map keys: size lies before the buffer");
  const uint64_t key_count = m.read_uint(m.keys_ - m.keys_width_, m.keys_width_, "root map key count");
  if (key_count != m.size_) {
    throw FlexError("root map: " + std::to_string(key_count) + " keys for " + std::to_string(m.size_) + " values");
  }
  m.check(m.keys_, m.size_ * m.keys_width_, "root map keys");
  for (size_t i = 0; i < m.size_; ++i) (void)m.key_at(i);  // every key must be readable
  return m;
}

std::string_view FlexMap::key_at(size_t i) const {
  const std::string what = "key " + std::to_string(i);
  const uint8_t* s = indirect(keys_ + i * keys_width_, keys_width_, what);
  const void* nul = std::memchr(s, 0, static_cast<size_t>(end_ - s));
  if (!nul) throw FlexError(what + ": not NUL-terminated inside the buffer");
  return std::string_view(reinterpret_cast<const char*>(s), static_cast<const uint8_t*>(nul) - s);
}

std::vector<std::string> FlexMap::keys() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < size_; ++i) out.emplace_back(key_at(i));
  return out;
}

std::optional<FlexMap::Ref> FlexMap::find(std::string_view key) const {
  for (size_t i = 0; i < size_; ++i) {
    if (key_at(i) == key) {
      const uint8_t packed = values_[size_ * width_ + i];
      Ref r{values_ + i * width_, static_cast<uint8_t>(width_), static_cast<uint8_t>(1u << (packed & 3)),
            static_cast<uint8_t>(packed >> 2)};
      if (r.type == kNull) return std::nullopt;
      return r;
    }
  }
  return std::nullopt;
}

bool FlexMap::has(std::string_view key) const { return find(key).has_value(); }

int64_t FlexMap::scalar_int(const Ref& r, const std::string& what) const {
  switch (r.type) {
    case kInt: return read_int(r.p, r.parent_width, what);
    case kUInt:
    case kBool: {
      const uint64_t u = read_uint(r.p, r.parent_width, what);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw FlexError(what + ": value too large");
      return static_cast<int64_t>(u);
    }
    case kIndirectInt: return read_int(indirect(r.p, r.parent_width, what), r.byte_width, what);
    case kIndirectUInt: {
      const uint64_t u = read_uint(indirect(r.p, r.parent_width, what), r.byte_width, what);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw FlexError(what + ": value too large");
      return static_cast<int64_t>(u);
    }
    default: throw FlexError(what + ": expected an integer, found " + type_name(r.type));
  }
}

std::optional<int64_t> FlexMap::get_int(std::string_view key) const {
  const auto r = find(key);
  if (!r) return std::nullopt;
  return scalar_int(*r, quoted(key));
}

std::optional<double> FlexMap::get_float(std::string_view key) const {
  const auto r = find(key);
  if (!r) return std::nullopt;
  const std::string what = quoted(key);
  switch (r->type) {
    case kFloat: return read_float(r->p, r->parent_width, what);
    case kIndirectFloat: return read_float(indirect(r->p, r->parent_width, what), r->byte_width, what);
    case kInt: case kUInt: case kIndirectInt: case kIndirectUInt: return static_cast<double>(scalar_int(*r, what));
    default: throw FlexError(what + ": expected a number, found " + type_name(r->type));
  }
}

std::optional<bool> FlexMap::get_bool(std::string_view key) const {
  const auto r = find(key);
  if (!r) return std::nullopt;
  return scalar_int(*r, quoted(key)) != 0;
}

std::optional<std::vector<int64_t>> FlexMap::get_int_vector(std::string_view key) const {
  const auto r = find(key);
  if (!r) return std::nullopt;
  const std::string what = quoted(key);
  const size_t w = r->byte_width;
  const uint8_t t = r->type;
  const uint8_t* data = indirect(r->p, r->parent_width, what);
  std::vector<int64_t> out;
  auto sized = [&]() -> size_t {
    if (static_cast<size_t>(data - begin_) < w) throw FlexError(what + ": vector size lies before the buffer");
    const uint64_t n = read_uint(data - w, w, what);
    if (n > static_cast<uint64_t>(end_ - begin_)) throw FlexError(what + ": vector size " + std::to_string(n) + " is larger than the buffer");
    return static_cast<size_t>(n);
  };
  if (t == kVectorInt || t == kVectorUInt) {
    const size_t n = sized();
    check(data, n * w, what);
    for (size_t i = 0; i < n; ++i) {
      if (t == kVectorInt) {
        out.push_back(read_int(data + i * w, w, what));
      } else {
        const uint64_t u = read_uint(data + i * w, w, what);
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw FlexError(what + ": value too large");
        out.push_back(static_cast<int64_t>(u));
      }
    }
  } else if (t == kVectorInt2 || t == kVectorUInt2 || t == kVectorInt3 || t == kVectorUInt3 || t == kVectorInt4 ||
             t == kVectorUInt4) {
    const size_t n = (t - kVectorInt2) / 3 + 2;
    const bool is_signed = (t - kVectorInt2) % 3 == 0;
    check(data, n * w, what);
    for (size_t i = 0; i < n; ++i) {
      out.push_back(is_signed ? read_int(data + i * w, w, what)
                              : static_cast<int64_t>(read_uint(data + i * w, w, what) &
                                                     static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
    }
  } else if (t == kVector) {
    const size_t n = sized();
    check(data, n * w + n, what);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t packed = data[n * w + i];
      const Ref e{data + i * w, static_cast<uint8_t>(w), static_cast<uint8_t>(1u << (packed & 3)),
                  static_cast<uint8_t>(packed >> 2)};
      out.push_back(scalar_int(e, what + " element " + std::to_string(i)));
    }
  } else {
    throw FlexError(what + ": expected a vector of integers, found " + type_name(t));
  }
  return out;
}

int32_t FlexMap::int32_or(std::string_view key, int32_t fallback) const {
  const auto v = get_int(key);
  if (!v) return fallback;
  if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
    throw FlexError(quoted(key) + ": " + std::to_string(*v) + " does not fit in 32 bits");
  }
  return static_cast<int32_t>(*v);
}

float FlexMap::float_or(std::string_view key, float fallback) const {
  const auto v = get_float(key);
  if (!v) return fallback;
  if (std::isfinite(*v) && std::abs(*v) > std::numeric_limits<float>::max()) {
    throw FlexError(quoted(key) + ": " + std::to_string(*v) + " does not fit in a float");
  }
  return static_cast<float>(*v);
}

int32_t FlexMap::require_int32(std::string_view key) const {
  if (!has(key)) throw FlexError(quoted(key) + " is missing");
  return int32_or(key, 0);
}

float FlexMap::require_float(std::string_view key) const {
  if (!has(key)) throw FlexError(quoted(key) + " is missing");
  return float_or(key, 0.0f);
}

}  // namespace baton::packkit
