#include "npy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "baton/string_tensor.hpp"

namespace baton::tool {

namespace {

struct DescrType {
  const char* descr;
  baton_tensor_type type;
};
const DescrType kTypes[] = {
    {"<f4", BATON_TYPE_FLOAT32}, {"<f2", BATON_TYPE_FLOAT16}, {"<i4", BATON_TYPE_INT32},
    {"|u1", BATON_TYPE_UINT8},   {"<i8", BATON_TYPE_INT64},   {"|b1", BATON_TYPE_BOOL},
    {"<i2", BATON_TYPE_INT16},   {"|i1", BATON_TYPE_INT8},    {"<f8", BATON_TYPE_FLOAT64},
    {"<u8", BATON_TYPE_UINT64},  {"<u4", BATON_TYPE_UINT32},  {"<u2", BATON_TYPE_UINT16},
    {"<c8", BATON_TYPE_COMPLEX64}, {"<c16", BATON_TYPE_COMPLEX128},
};

// Value of `key` in the header dict, as raw text up to the next top-level comma or brace.
std::string dict_value(const std::string& header, const std::string& key) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return {};
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) return {};
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  if (i < header.size() && header[i] == '(') {
    size_t close = header.find(')', i);
    return close == std::string::npos ? std::string() : header.substr(i, close - i + 1);
  }
  size_t end = header.find_first_of(",}", i);
  return header.substr(i, end == std::string::npos ? std::string::npos : end - i);
}

// Appends code point `c` as UTF-8; false if it is none (past U+10FFFF or a surrogate).
bool append_utf8(std::string& out, uint32_t c) {
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return false;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return true;
}

// The width of a string dtype ('|S5' -> 5 bytes, '<U5' -> 5 characters) and whether it is text; 0 when
// `descr` is no string dtype this reads.
size_t string_width(const std::string& descr, bool* text) {
  std::string rest = descr;
  if (!rest.empty() && (rest[0] == '|' || rest[0] == '<' || rest[0] == '=')) rest = rest.substr(1);
  if (rest.size() < 2 || (rest[0] != 'S' && rest[0] != 'U')) return 0;
  if (rest[0] == 'S' && descr[0] != '|' && descr[0] != 'S') return 0;
  if (rest.find_first_not_of("0123456789", 1) != std::string::npos || rest.size() > 10) return 0;
  *text = rest[0] == 'U';
  return std::stoul(rest.substr(1));
}

// Elements of `width` (bytes or UTF-32 characters) from `data` as a packed buffer, or why not.
Expected<std::vector<uint8_t>> pack_fixed_width(const uint8_t* data, size_t count, size_t width, bool text) {
  strings::PackedWriter writer;
  std::string s;
  for (size_t i = 0; i < count; ++i) {
    s.clear();
    if (text) {
      for (size_t k = 0; k < width; ++k) {
        uint32_t c = 0;
        std::memcpy(&c, data + (i * width + k) * 4, 4);
        if (!append_utf8(s, c)) return Status::error("element " + std::to_string(i) + " holds " + std::to_string(c) + ", not a Unicode code point");
      }
    } else {
      s.assign(reinterpret_cast<const char*>(data + i * width), width);
    }
    while (!s.empty() && s.back() == '\0') s.pop_back();  // NumPy's padding
    writer.add(s);
  }
  return writer.packed();
}

}  // namespace

std::string npy_descr(baton_tensor_type type) {
  for (const DescrType& d : kTypes) {
    if (d.type == type) return d.descr;
  }
  return {};
}

Expected<NpyArray> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error(path + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  auto bad = [&](const std::string& why) { return Status::error(path + ": not a usable .npy file: " + why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return bad("no NUMPY magic");
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return bad("unknown format version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) return bad("truncated header");
  const std::string header = bytes.substr(offset, header_len);
  std::string descr = dict_value(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  NpyArray arr;
  bool text = false;
  const size_t width = string_width(descr, &text);
  bool known = width > 0;
  if (known) arr.type = BATON_TYPE_STRING;
  for (const DescrType& d : kTypes) {
    if (descr == d.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(d.descr).substr(1))) {
      arr.type = d.type;
      known = true;
    }
  }
  if (descr == "<u1" || descr == "u1") arr.type = BATON_TYPE_UINT8, known = true;
  if (descr == "<i1" || descr == "i1") arr.type = BATON_TYPE_INT8, known = true;
  if (descr == "|O" || descr == "O") {
    return bad("an object array (pickled) is not supported; save strings as bytes ('|S') or str ('<U') arrays");
  }
  if (!known) return bad("dtype '" + descr + "' is not supported (little-endian numbers, '|S' bytes and '<U' text only)");
  if (dict_value(header, "fortran_order").find("True") != std::string::npos) return bad("Fortran order is not supported");
  std::string shape = dict_value(header, "shape");
  if (shape.empty() || shape.front() != '(') return bad("no shape");
  std::stringstream dims(shape.substr(1, shape.size() - 2));
  std::string item;
  while (std::getline(dims, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    long long d = std::atoll(item.c_str() + b);
    if (d < 0 || d > INT32_MAX) return bad("bad dimension '" + item + "'");
    arr.shape.push_back(static_cast<int32_t>(d));
  }
  // Bytes of data the shape needs: for strings, elements of the dtype's fixed width.
  const bool is_string = arr.type == BATON_TYPE_STRING;
  const size_t item_bytes = text ? 4 * width : width;
  size_t count = 1;
  for (int32_t d : arr.shape) {
    if (d != 0 && count > SIZE_MAX / static_cast<size_t>(d)) return bad("shape overflows");
    count *= static_cast<size_t>(d);
  }
  const size_t element_bytes = is_string ? item_bytes : baton_tensor_type_size(arr.type);
  if (element_bytes != 0 && count > SIZE_MAX / element_bytes) return bad("shape overflows");
  const size_t need = count * element_bytes;
  const size_t data_at = offset + header_len;
  if (bytes.size() - data_at < need) {
    return bad("holds " + std::to_string(bytes.size() - data_at) + " data bytes, shape needs " + std::to_string(need));
  }
  if (is_string) {
    auto packed = pack_fixed_width(reinterpret_cast<const uint8_t*>(bytes.data()) + data_at, count, width, text);
    if (!packed) return bad(packed.error());
    arr.data = std::move(packed.value());
    return arr;
  }
  arr.data.assign(bytes.begin() + data_at, bytes.begin() + data_at + need);
  return arr;
}

Status write_npy(const std::string& path, const NpyArray& array) {
  std::string descr = npy_descr(array.type);
  const uint8_t* data = array.data.data();
  size_t data_size = array.data.size();
  std::vector<uint8_t> fixed;  // a string tensor's elements, each padded to the longest
  if (array.type == BATON_TYPE_STRING) {
    int64_t count = 1;
    for (int32_t d : array.shape) count *= d;
    const std::string why = strings::check_packed(array.data.data(), array.data.size(), count);
    if (!why.empty()) return Status::error(path + ": not a string tensor's value: " + why);
    const strings::PackedStrings texts(array.data.data());
    size_t width = 1;  // NumPy has no zero-width bytes dtype
    for (int64_t i = 0; i < count; ++i) width = std::max(width, texts.at(i).size());
    fixed.assign(static_cast<size_t>(count) * width, 0);
    for (int64_t i = 0; i < count; ++i) {
      const std::string_view s = texts.at(i);
      std::memcpy(fixed.data() + i * width, s.data(), s.size());
    }
    descr = "|S" + std::to_string(width);
    data = fixed.data();
    data_size = fixed.size();
  }
  if (descr.empty()) return Status::error(path + ": type " + baton_tensor_type_name(array.type) + " has no .npy dtype");
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(array.shape[i]);
  if (array.shape.size() == 1) shape += ",";
  shape += ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) return Status::error(path + ": cannot write");
  const char magic[] = "\x93NUMPY\x01\x00";
  f.write(magic, 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  f.write(len_bytes, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(data_size));
  if (!f) return Status::error(path + ": write failed");
  return Status::ok();
}

}  // namespace baton::tool
