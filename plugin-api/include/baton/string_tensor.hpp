// baton string tensors: reading and writing the packed layout of a BATON_TYPE_STRING tensor's data, a
// header-only C++17 helper over baton/plugin_api.h for the host and for plugins.
//
// The layout is TFLite's (so a model's constant string buffers are used as they are, and a TFLite user's
// bytes mean the same here): an int32 count N, then N + 1 int32 offsets from the start of the buffer
// (string i is the bytes [offset i, offset i + 1); writers make the last offset the buffer's size), then the
// strings' bytes, one after the other. All integers are little-endian, as on every host baton runs on.
// A tensor of N elements therefore has at least 4 * (N + 2) bytes; its byte size comes from its contents,
// not its shape (tensor_set_byte_size in plugin_api.h).
#ifndef BATON_STRING_TENSOR_HPP
#define BATON_STRING_TENSOR_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace baton::strings {

// The smallest buffer of `count` strings (all empty).
inline size_t packed_size_of_empty(int64_t count) { return 4 * (static_cast<size_t>(count) + 2); }

// Why `data` (of `bytes` bytes) is not a packed buffer of `count` strings; "" when it is one. Checks
// every offset, so a reader that passed this check never reads out of bounds.
inline std::string check_packed(const void* data, size_t bytes, int64_t count) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (count < 0) return "negative string count";
  if (bytes < 4 || !p) return "shorter than its 4-byte string count";
  int32_t n = 0;
  std::memcpy(&n, p, 4);
  if (n != count) return "holds " + std::to_string(n) + " strings where its shape has " + std::to_string(count);
  const size_t header = packed_size_of_empty(count);
  if (bytes < header) {
    return std::to_string(bytes) + " bytes, shorter than the " + std::to_string(header) + "-byte header of " +
           std::to_string(count) + " strings";
  }
  // Offsets may leave gaps (TFLite reads them as they are); they must not go backwards or leave the buffer.
  int32_t previous = static_cast<int32_t>(header);
  for (int64_t i = 0; i <= count; ++i) {
    int32_t offset = 0;
    std::memcpy(&offset, p + 4 + 4 * i, 4);
    if (offset < previous) {
      return i == 0 ? "its first string starts at byte " + std::to_string(offset) + ", inside the " +
                          std::to_string(header) + "-byte header"
                    : "offset " + std::to_string(i) + " goes backwards";
    }
    if (static_cast<size_t>(offset) > bytes) {
      return "offset " + std::to_string(i) + " (" + std::to_string(offset) + ") is past its " +
             std::to_string(bytes) + " bytes";
    }
    previous = offset;
  }
  return "";
}

// A read-only view of a packed buffer that check_packed accepted (or that a kernel's host checked).
class PackedStrings {
 public:
  PackedStrings() = default;
  explicit PackedStrings(const void* data) : p_(static_cast<const uint8_t*>(data)) {}
  int32_t count() const { return p_ ? word(0) : 0; }
  std::string_view at(int64_t i) const {
    const int32_t begin = word(1 + i), end = word(2 + i);
    return {reinterpret_cast<const char*>(p_) + begin, static_cast<size_t>(end - begin)};
  }

 private:
  int32_t word(int64_t k) const {
    int32_t v;
    std::memcpy(&v, p_ + 4 * k, 4);
    return v;
  }
  const uint8_t* p_ = nullptr;
};

// Builds a packed buffer: add the strings, then packed_size() tells the byte size to ask for and
// write_to() fills memory of that size.
class PackedWriter {
 public:
  void add(std::string_view s) {
    ends_.push_back(static_cast<int32_t>(text_.size() + s.size()));
    text_.append(s);
  }
  // Pieces joined by `separator`, as one string.
  template <typename Pieces>
  void add_joined(const Pieces& pieces, char separator) {
    bool first = true;
    for (std::string_view piece : pieces) {
      if (!first) text_.push_back(separator);
      text_.append(piece);
      first = false;
    }
    ends_.push_back(static_cast<int32_t>(text_.size()));
  }
  int64_t count() const { return static_cast<int64_t>(ends_.size()); }
  size_t packed_size() const { return packed_size_of_empty(count()) + text_.size(); }
  void write_to(void* out) const {
    auto* p = static_cast<uint8_t*>(out);
    const int32_t n = static_cast<int32_t>(ends_.size());
    const int32_t header = static_cast<int32_t>(packed_size_of_empty(n));
    std::memcpy(p, &n, 4);
    std::memcpy(p + 4, &header, 4);
    for (int32_t i = 0; i < n; ++i) {
      const int32_t offset = header + ends_[i];
      std::memcpy(p + 8 + 4 * i, &offset, 4);
    }
    if (!text_.empty()) std::memcpy(p + header, text_.data(), text_.size());
  }
  std::vector<uint8_t> packed() const {
    std::vector<uint8_t> out(packed_size());
    write_to(out.data());
    return out;
  }
  void clear() {
    text_.clear();
    ends_.clear();
  }

 private:
  std::string text_;
  std::vector<int32_t> ends_;
};

}  // namespace baton::strings

#endif  // BATON_STRING_TENSOR_HPP
