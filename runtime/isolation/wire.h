// The wire between the host and a `baton-plugin-host` child: length-prefixed frames on a Unix stream
// socket, each optionally carrying file descriptors (SCM_RIGHTS), and a plain byte writer / reader for
// their contents. Both sides are the same build of baton, so values travel in native byte order.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace baton::isolation {

class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof(T));
  }
  void put_bytes(const void* data, size_t size) {
    put<uint64_t>(size);
    if (size) append(data, size);
  }
  void put_string(const std::string& s) { put_bytes(s.data(), s.size()); }
  template <typename T>
  void put_vector(const std::vector<T>& v) {
    put_bytes(v.data(), v.size() * sizeof(T));
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void append(const void* data, size_t size) {
    const size_t at = bytes_.size();
    bytes_.resize(at + size);
    std::memcpy(bytes_.data() + at, data, size);
  }
  std::vector<uint8_t> bytes_;
};

// Reads what a Writer wrote. Reading past the end yields zeros and sets failed(): a malformed frame
// becomes an error message, never a read out of bounds.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  explicit Reader(const std::vector<uint8_t>& v) : Reader(v.data(), v.size()) {}
  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    if (static_cast<size_t>(end_ - p_) < sizeof(T)) {
      failed_ = true;
      p_ = end_;
      return value;
    }
    std::memcpy(&value, p_, sizeof(T));
    p_ += sizeof(T);
    return value;
  }
  // A view of the next byte block (valid while the frame lives).
  const uint8_t* get_bytes(size_t* size) {
    const uint64_t n = get<uint64_t>();
    if (n > static_cast<uint64_t>(end_ - p_)) {
      failed_ = true;
      p_ = end_;
      *size = 0;
      return nullptr;
    }
    const uint8_t* at = p_;
    p_ += n;
    *size = static_cast<size_t>(n);
    return at;
  }
  std::string get_string() {
    size_t n = 0;
    const uint8_t* at = get_bytes(&n);
    return at ? std::string(reinterpret_cast<const char*>(at), n) : std::string();
  }
  template <typename T>
  std::vector<T> get_vector() {
    size_t n = 0;
    const uint8_t* at = get_bytes(&n);
    std::vector<T> v(n / sizeof(T));
    if (at && !v.empty()) std::memcpy(v.data(), at, v.size() * sizeof(T));
    return v;
  }
  bool failed() const { return failed_; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  bool failed_ = false;
};

// Sends one frame (with `fds` attached, at most 8). Never raises SIGPIPE. Returns false when the peer
// is gone.
bool send_frame(int socket, const std::vector<uint8_t>& bytes, const std::vector<int>& fds = {});

enum class Received { frame, closed, timed_out, failed };

// Waits until `deadline` for one whole frame. Received fds are owned by the caller.
Received receive_frame(int socket, std::chrono::steady_clock::time_point deadline, std::vector<uint8_t>& bytes,
                       std::vector<int>& fds);

}  // namespace baton::isolation
