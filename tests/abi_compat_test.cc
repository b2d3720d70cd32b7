// The plugin ABI's promise that a minor version works both ways, seen from the tutorial pack: atan.so,
// built against today's headers, loads into a host whose function table is only as large as ABI 1.0's
// and computes there, because it tests for the functions it calls rather than for the headers' minor.
#include <dlfcn.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "baton/plugin_api.h"
#include "graph.h"
#include "plugin_registry.h"

namespace baton::test {
namespace {

// An ABI 1.0 host table ends with partition_output; 1.1 added no host function, 1.2 appended plugin_path.
constexpr size_t kAbi10HostTableSize = offsetof(baton_host_api, plugin_path);
static_assert(kAbi10HostTableSize == offsetof(baton_host_api, partition_output) + sizeof(void*));

// The fake host's handles: one node with one input and one output.
struct FakeError {
  std::string message;
};
struct FakeTensor {
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> dims;
  std::vector<float> data;
};
struct FakeNode {
  FakeTensor* input = nullptr;
  FakeTensor* output = nullptr;
};

FakeTensor* tensor_of(const baton_tensor* t) { return reinterpret_cast<FakeTensor*>(const_cast<baton_tensor*>(t)); }
const FakeNode* node_of(const baton_node* n) { return reinterpret_cast<const FakeNode*>(n); }
baton_tensor* handle_of(FakeTensor* t) { return reinterpret_cast<baton_tensor*>(t); }

void error_set(baton_error* e, const char* m) { reinterpret_cast<FakeError*>(e)->message = m; }
int32_t node_index(const baton_node*) { return 0; }
int32_t node_input_count(const baton_node*) { return 1; }
baton_tensor* node_input(const baton_node* n, int32_t i) { return i == 0 ? handle_of(node_of(n)->input) : nullptr; }
int32_t node_output_count(const baton_node*) { return 1; }
baton_tensor* node_output(const baton_node* n, int32_t i) { return i == 0 ? handle_of(node_of(n)->output) : nullptr; }
baton_tensor_type tensor_type(const baton_tensor* t) { return tensor_of(t)->type; }
int32_t tensor_shape(const baton_tensor* t, const int32_t** dims) {
  *dims = tensor_of(t)->dims.data();
  return static_cast<int32_t>(tensor_of(t)->dims.size());
}
size_t tensor_byte_size(const baton_tensor* t) { return tensor_of(t)->data.size() * sizeof(float); }
const void* tensor_data(const baton_tensor* t) { return tensor_of(t)->data.data(); }
void* tensor_mutable_data(baton_tensor* t) { return tensor_of(t)->data.data(); }
baton_status tensor_set_shape(baton_tensor* t, int32_t rank, const int32_t* dims, baton_error*) {
  FakeTensor* tensor = tensor_of(t);
  tensor->dims.assign(dims, dims + rank);
  size_t count = 1;
  for (int32_t d : tensor->dims) count *= static_cast<size_t>(d);
  tensor->data.assign(count, 0.0f);
  return BATON_OK;
}

// The table an ABI 1.0 host hands over: struct_size and minor of 1.0, the 1.0 functions the pack may
// call filled in. What lies past struct_size is not the pack's to read: it is filled with a poison that
// crashes a call through it, as a 1.0 host's memory past its table would be anything.
baton_host_api abi10_host_table() {
  baton_host_api api;
  std::memset(&api, 0xA5, sizeof api);
  std::memset(&api, 0, kAbi10HostTableSize);
  api.struct_size = kAbi10HostTableSize;
  api.abi_major = 1;
  api.abi_minor = 0;
  api.error_set = error_set;
  api.node_index = node_index;
  api.node_input_count = node_input_count;
  api.node_input = node_input;
  api.node_output_count = node_output_count;
  api.node_output = node_output;
  api.tensor_type = tensor_type;
  api.tensor_shape = tensor_shape;
  api.tensor_byte_size = tensor_byte_size;
  api.tensor_data = tensor_data;
  api.tensor_mutable_data = tensor_mutable_data;
  api.tensor_set_shape = tensor_set_shape;
  return api;
}

struct Library {
  void* handle = dlopen(ATAN_PACK, RTLD_NOW | RTLD_LOCAL);
  ~Library() {
    if (handle) dlclose(handle);
  }
  baton_plugin_entry_fn entry() const {
    return reinterpret_cast<baton_plugin_entry_fn>(dlsym(handle, BATON_PLUGIN_ENTRY_SYMBOL));
  }
};

TEST(AbiCompat, TutorialPackBuiltTodayComputesInAnAbi10Host) {
  Library lib;
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  ASSERT_NE(lib.entry(), nullptr);
  static const baton_host_api api = abi10_host_table();  // valid until unload, as the ABI says
  FakeError error;
  const baton_plugin_desc* desc = lib.entry()(1, 0, &api, reinterpret_cast<baton_error*>(&error));
  ASSERT_NE(desc, nullptr) << error.message;

  // Read as a 1.0 host reads the descriptor: the fields through `delegate` are where 1.0 put them.
  ASSERT_TRUE(BATON_STRUCT_HAS(desc, baton_plugin_desc, delegate));
  EXPECT_EQ(desc->abi_major, 1u);
  EXPECT_STREQ(desc->name, "atan");
  EXPECT_EQ(desc->kind, BATON_PLUGIN_OP_PACK);
  ASSERT_EQ(desc->op_count, 1u);
  const baton_op_decl& op = desc->ops[0];
  ASSERT_TRUE(BATON_STRUCT_HAS(&op, baton_op_decl, kernel));
  EXPECT_EQ(op.builtin_code, BATON_OP_CUSTOM);
  EXPECT_STREQ(op.custom_name, "Atan");
  ASSERT_NE(op.kernel, nullptr);
  ASSERT_TRUE(BATON_STRUCT_HAS(op.kernel, baton_kernel, invoke));
  const baton_kernel& kernel = *op.kernel;

  FakeTensor x{BATON_TYPE_FLOAT32, {2, 3}, {-10.0f, -1.0f, -0.25f, 0.0f, 0.5f, 3.0f}};
  FakeTensor y;
  FakeNode node{&x, &y};
  const auto* node_handle = reinterpret_cast<const baton_node*>(&node);
  auto* err = reinterpret_cast<baton_error*>(&error);
  void* node_state = nullptr;
  if (kernel.init) {
    ASSERT_EQ(kernel.init(nullptr, node_handle, &node_state, err), BATON_OK) << error.message;
  }
  ASSERT_EQ(kernel.prepare(nullptr, node_state, node_handle, err), BATON_OK) << error.message;
  EXPECT_EQ(y.dims, x.dims);
  ASSERT_EQ(kernel.invoke(nullptr, node_state, node_handle, err), BATON_OK) << error.message;
  ASSERT_EQ(y.data.size(), x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) EXPECT_FLOAT_EQ(y.data[i], std::atan(x.data[i])) << "element " << i;
  if (kernel.free) kernel.free(nullptr, node_state);
}

// It still refuses, with a reason, a table that lacks a function it calls, and another major.
TEST(AbiCompat, TutorialPackRefusesATableWithoutTheFunctionsItCalls) {
  Library lib;
  ASSERT_NE(lib.handle, nullptr) << dlerror();
  baton_host_api api = abi10_host_table();
  api.struct_size = offsetof(baton_host_api, tensor_set_shape);  // everything but tensor_set_shape
  FakeError error;
  EXPECT_EQ(lib.entry()(1, 0, &api, reinterpret_cast<baton_error*>(&error)), nullptr);
  EXPECT_NE(error.message.find("atan: needs a host"), std::string::npos) << error.message;

  api = abi10_host_table();
  error.message.clear();
  EXPECT_EQ(lib.entry()(2, 0, &api, reinterpret_cast<baton_error*>(&error)), nullptr);
  EXPECT_NE(error.message.find("atan: needs a host"), std::string::npos) << error.message;
}

// ABI 1.13 appended the blockwise fields to baton_quantization: a plugin built before them passes the
// older struct_size, and the host writes nothing past it; one built after gets the tensor's block scales.
TEST(AbiCompat, TensorQuantizationWritesNoFieldPastAnOlderStructSize) {
  const std::vector<uint8_t> scales(8, 0);  // four FLOAT16 scales
  TensorInfo info;
  info.type = BATON_TYPE_INT4;
  info.shape = {2, 64};
  info.quant.block_size = 32;
  info.quant.block_scale_type = BATON_TYPE_FLOAT16;
  info.quant.block_scales = scales;
  Tensor tensor;
  tensor.info = &info;
  const auto* handle = reinterpret_cast<const baton_tensor*>(&tensor);
  baton_quantization q;
  std::memset(&q, 0xab, sizeof q);
  q.struct_size = offsetof(baton_quantization, block_size);
  host_api_table()->tensor_quantization(handle, &q);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&q);
  for (size_t i = offsetof(baton_quantization, block_size); i < sizeof q; ++i) ASSERT_EQ(bytes[i], 0xab) << "byte " << i;
  EXPECT_EQ(q.scale_count, 0);
  q.struct_size = sizeof q;
  host_api_table()->tensor_quantization(handle, &q);
  EXPECT_EQ(q.block_size, 32);
  EXPECT_EQ(q.block_scale_type, BATON_TYPE_FLOAT16);
  EXPECT_EQ(q.block_scale_count, 4);
  EXPECT_EQ(q.block_scales, scales.data());
}

}  // namespace
}  // namespace baton::test
