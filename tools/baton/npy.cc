#include "npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "model.h"

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
  bool known = false;
  for (const DescrType& d : kTypes) {
    if (descr == d.descr || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(d.descr).substr(1))) {
      arr.type = d.type;
      known = true;
    }
  }
  if (descr == "<u1" || descr == "u1") arr.type = BATON_TYPE_UINT8, known = true;
  if (descr == "<i1" || descr == "i1") arr.type = BATON_TYPE_INT8, known = true;
  if (!known) return bad("dtype '" + descr + "' is not supported (little-endian numbers only)");
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
  size_t need = 0;
  if (!checked_byte_size(arr.shape, arr.type, &need)) return bad("shape overflows");
  const size_t data_at = offset + header_len;
  if (bytes.size() - data_at < need) {
    return bad("holds " + std::to_string(bytes.size() - data_at) + " data bytes, shape needs " + std::to_string(need));
  }
  arr.data.assign(bytes.begin() + data_at, bytes.begin() + data_at + need);
  return arr;
}

Status write_npy(const std::string& path, const NpyArray& array) {
  const std::string descr = npy_descr(array.type);
  if (descr.empty()) return Status::error(path + ": type " + type_name(array.type) + " has no .npy dtype");
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
  f.write(reinterpret_cast<const char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  if (!f) return Status::error(path + ": write failed");
  return Status::ok();
}

}  // namespace baton::tool
