// What the tests of baton's libtensorflowlite_c.so share: an error reporter that keeps what it is told,
// and a small model. Written against TFLite 2.9's C headers only, as an application would be.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "op_graph.h"
#include "tensorflow/lite/c/c_api.h"

namespace baton::test {

struct Reported {
  std::vector<std::string> messages;
  static void reporter(void* user, const char* format, va_list args) {
    char buffer[4096];
    std::vsnprintf(buffer, sizeof buffer, format, args);
    static_cast<Reported*>(user)->messages.push_back(buffer);
  }
  bool said(const std::string& fragment) const {
    for (const std::string& m : messages) {
      if (m.find(fragment) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() const {
    std::string s;
    for (const std::string& m : messages) s += m + "\n";
    return s;
  }
};

// y = relu(x + c), c constant, for the shape checks; x float32 [1, n].
inline std::vector<uint8_t> add_relu_model(int n) {
  baton::test::OpGraph g;
  const int32_t x = g.input({1, n});
  std::vector<float> c(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) c[static_cast<size_t>(i)] = static_cast<float>(i) - 2.0f;
  std::vector<uint8_t> bytes(c.size() * 4);
  std::memcpy(bytes.data(), c.data(), bytes.size());
  const int32_t k = g.add({1, n}, bytes);
  const int32_t sum = g.add({1, n});
  const int32_t y = g.output({1, n});
  g.op(0 /* ADD */, {x, k}, {sum});
  g.op(19 /* RELU */, {sum}, {y});
  return g.build();
}

}  // namespace baton::test
