// A minimal in-memory host for testing the pack through its C ABI without the runtime: tensors and
// nodes in vectors, the host table implemented over them, and a loop that resolves, prepares and
// invokes nodes in order the way the runtime does (non-constant data unreadable during prepare; a node
// that marks an output dynamic is prepared again with its inputs' values just before invoke).
#ifndef BATON_BUILTIN_TESTS_FAKE_HOST_H
#define BATON_BUILTIN_TESTS_FAKE_HOST_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "baton/plugin_api.h"

struct baton_error {
  std::string message;
};

namespace baton::builtin::testing {

struct FakeGraph;

struct FakeTensor {
  FakeGraph* graph = nullptr;
  int32_t index = 0;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> dims;
  std::vector<unsigned char> data;
  bool constant = false;
  bool dynamic = false;  // its shape needs input values: the node is prepared again before invoke
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
};

struct FakeNode {
  FakeGraph* graph = nullptr;
  int32_t index = 0;
  int32_t code = 0;
  int32_t version = 1;
  std::vector<int32_t> inputs;  // -1 = omitted
  std::vector<int32_t> outputs;
  baton_builtin_options options{};
};

struct FakeGraph {
  std::vector<FakeTensor> tensors;
  std::vector<FakeNode> nodes;
  bool preparing = false;

  FakeGraph() { tensors.reserve(64); nodes.reserve(64); }

  int add_tensor(baton_tensor_type type, std::vector<int32_t> dims, const void* data = nullptr, bool constant = false);
  template <typename T>
  int constant(baton_tensor_type type, std::vector<int32_t> dims, const std::vector<T>& values) {
    return add_tensor(type, std::move(dims), values.data(), true);
  }
  int floats(std::vector<int32_t> dims, const std::vector<float>& values, bool is_constant = false) {
    return add_tensor(BATON_TYPE_FLOAT32, std::move(dims), values.data(), is_constant);
  }
  int output(baton_tensor_type type = BATON_TYPE_FLOAT32) { return add_tensor(type, {}); }
  FakeNode& add_node(int32_t code, std::vector<int32_t> inputs, std::vector<int32_t> outputs, int32_t version = 1);

  template <typename T>
  std::vector<T> values(int t) const {
    std::vector<T> out(tensors[t].data.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), tensors[t].data.data(), out.size() * sizeof(T));
    return out;
  }
};

// The loaded pack.
class FakeHost {
 public:
  // `host_abi_minor`: the minor version the fake host tells the entry point it speaks.
  explicit FakeHost(const char* path, int64_t threads = 1, uint32_t host_abi_minor = BATON_ABI_VERSION_MINOR);
  ~FakeHost();
  const baton_plugin_desc* desc() const { return desc_; }
  const std::string& load_error() const { return load_error_.message; }

  // Runs every node; returns the first failing status, with its message in `error`.
  baton_status run(FakeGraph& graph, std::string* error);

 private:
  void* library_ = nullptr;
  const baton_plugin_desc* desc_ = nullptr;
  void* plugin_state_ = nullptr;
  baton_error load_error_;
};

}  // namespace baton::builtin::testing

#endif  // BATON_BUILTIN_TESTS_FAKE_HOST_H
