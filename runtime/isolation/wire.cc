#include "wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace baton::isolation {
namespace {

constexpr size_t kMaxFds = 8;
constexpr uint64_t kMaxFrame = uint64_t{1} << 32;  // a larger length is a broken peer

bool write_all(int socket, const uint8_t* p, size_t n, const std::vector<int>& fds) {
  bool fds_sent = fds.empty();
  while (n > 0) {
    iovec iov{const_cast<uint8_t*>(p), n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    if (!fds_sent) {
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    fds_sent = true;
    p += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

// Waits for readable data until the deadline; false on timeout.
bool wait_readable(int socket, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int ms = left.count() <= 0 ? 0 : left.count() > 1000000 ? 1000000 : static_cast<int>(left.count());
    pollfd p{socket, POLLIN, 0};
    const int r = ::poll(&p, 1, ms);
    if (r > 0) return true;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0 && ms == 0) return false;
    if (r < 0) return true;  // let the read report it
  }
}

Received read_all(int socket, uint8_t* p, size_t n, std::chrono::steady_clock::time_point deadline,
                  std::vector<int>& fds) {
  while (n > 0) {
    if (!wait_readable(socket, deadline)) return Received::timed_out;
    iovec iov{p, n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno == ECONNRESET ? Received::closed : Received::failed;
    }
    if (got == 0) return Received::closed;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.push_back(fd);
      }
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return Received::frame;
}

}  // namespace

bool send_frame(int socket, const std::vector<uint8_t>& bytes, const std::vector<int>& fds) {
  if (fds.size() > kMaxFds) return false;
  const uint64_t size = bytes.size();
  // The length and the fds go first; the body follows.
  if (!write_all(socket, reinterpret_cast<const uint8_t*>(&size), sizeof size, fds)) return false;
  return write_all(socket, bytes.data(), bytes.size(), {});
}

Received receive_frame(int socket, std::chrono::steady_clock::time_point deadline, std::vector<uint8_t>& bytes,
                       std::vector<int>& fds) {
  uint64_t size = 0;
  if (Received r = read_all(socket, reinterpret_cast<uint8_t*>(&size), sizeof size, deadline, fds);
      r != Received::frame) {
    return r;
  }
  if (size > kMaxFrame) return Received::failed;
  bytes.resize(static_cast<size_t>(size));
  return read_all(socket, bytes.data(), bytes.size(), deadline, fds);
}

}  // namespace baton::isolation
