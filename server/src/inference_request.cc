#include "inference_request.h"

#include <cstring>
#include <limits>

namespace baton::serve {

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

Status decode_length_prefixed(const std::string& tensor_name, const char* data, size_t size,
                              std::vector<std::string>* strings) {
  size_t at = 0;
  while (at < size) {
    if (size - at < 4) {
      return Status::error(Code::kInvalidArgument, "input '" + tensor_name + "': BYTES element " +
                                                       std::to_string(strings->size()) +
                                                       " has no complete 4-byte length");
    }
    uint32_t length = 0;
    std::memcpy(&length, data + at, 4);
    at += 4;
    if (length > size - at) {
      return Status::error(Code::kInvalidArgument, "input '" + tensor_name + "': BYTES element " +
                                                       std::to_string(strings->size()) + " declares " +
                                                       std::to_string(length) + " bytes, only " +
                                                       std::to_string(size - at) + " remain");
    }
    strings->emplace_back(data + at, length);
    at += length;
  }
  return {};
}

std::string encode_length_prefixed(const std::vector<std::string>& strings) {
  std::string out;
  size_t total = 0;
  for (const std::string& s : strings) total += 4 + s.size();
  out.reserve(total);
  for (const std::string& s : strings) {
    const uint32_t length = static_cast<uint32_t>(s.size());
    out.append(reinterpret_cast<const char*>(&length), 4);
    out += s;
  }
  return out;
}

}  // namespace baton::serve
