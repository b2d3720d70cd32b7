// A small, bounds-checked reader for the FlexBuffer maps that TFLite custom ops carry as custom_options
// (MediaPipe's face-landmark ops, TFLite_Detection_PostProcess). Shared by the mediapipe and detection
// packs; it depends on nothing but the C++ standard library.
//
// Format (FlexBuffers, as written by flatbuffers' flexbuffers::Builder): the buffer ends with the root
// value, one byte of packed type (type << 2 | bit width) and one byte with the root's byte width.
// Offsets point backwards (target = position - offset). A map is a vector of values preceded by three
// fields of its byte width: the offset to its sorted key vector, that vector's byte width, and the size;
// after the values come one packed-type byte per value. Keys are offsets to NUL-terminated strings.
//
// Every read is checked against the buffer: a malformed blob throws FlexError with a message saying
// which key (or the root) is broken and why; it never reads outside the buffer.
#ifndef BATON_OP_PACKS_COMMON_FLEX_MAP_H
#define BATON_OP_PACKS_COMMON_FLEX_MAP_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace baton::packkit {

class FlexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FlexMap {
 public:
  // Parses the root of `bytes` as a map. Throws FlexError when it is not a well-formed map.
  // The map borrows `bytes`.
  static FlexMap parse(std::span<const uint8_t> bytes);

  size_t size() const { return size_; }
  std::vector<std::string> keys() const;
  bool has(std::string_view key) const;

  // Absent key (or an explicit null): nullopt. Present but of another type or malformed: FlexError
  // naming the key.
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;  // ints are converted
  std::optional<bool> get_bool(std::string_view key) const;    // ints: non-zero is true
  std::optional<std::vector<int64_t>> get_int_vector(std::string_view key) const;

  // Convenience: int32 range checked; `fallback` when absent.
  int32_t int32_or(std::string_view key, int32_t fallback) const;
  float float_or(std::string_view key, float fallback) const;
  // Throws FlexError "key 'k' is missing" when absent.
  int32_t require_int32(std::string_view key) const;
  float require_float(std::string_view key) const;

 private:
  struct Ref {
    const uint8_t* p = nullptr;
    uint8_t parent_width = 0;
    uint8_t byte_width = 0;
    uint8_t type = 0;
  };

  FlexMap(const uint8_t* begin, const uint8_t* end) : begin_(begin), end_(end) {}
  void check(const uint8_t* p, size_t n, const std::string& what) const;
  uint64_t read_uint(const uint8_t* p, size_t width, const std::string& what) const;
  int64_t read_int(const uint8_t* p, size_t width, const std::string& what) const;
  double read_float(const uint8_t* p, size_t width, const std::string& what) const;
  const uint8_t* indirect(const uint8_t* p, size_t width, const std::string& what) const;
  std::string_view key_at(size_t i) const;
  std::optional<Ref> find(std::string_view key) const;
  int64_t scalar_int(const Ref& r, const std::string& what) const;

  const uint8_t* begin_;
  const uint8_t* end_;
  const uint8_t* values_ = nullptr;  // the map's value slots
  size_t width_ = 0;                 // byte width of the value slots
  size_t size_ = 0;
  const uint8_t* keys_ = nullptr;  // the key vector's slots
  size_t keys_width_ = 0;
};

}  // namespace baton::packkit

#endif  // BATON_OP_PACKS_COMMON_FLEX_MAP_H
