// An op pack that misbehaves on purpose, in C++, for the hardening tests:
//   custom "ThrowInPrepare" v1  throws a C++ exception out of prepare (through the C boundary)
//   custom "ThrowInInvoke"  v1  throws out of invoke
//   custom "WriteTooFar"    v1  writes 16 bytes past the end of its output (caught under AddressSanitizer)
//   ADD v1-2                    throws out of prepare, so that another pack declaring ADD must take over
//   custom "TimesTwo" v1        throws out of invoke, so that another pack must take over at the first run
//   custom "BadStrings" v1      writes a string output whose last offset points past its buffer
//   custom "NoStringSize" v1    never sets its string output's byte size
#include <cstring>
#include <stdexcept>

#include "baton/plugin_api.h"

namespace {

const baton_host_api* api;

baton_status same_shape(const baton_node* node, baton_error* error) {
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(api->node_input(node, 0), &dims);
  return api->tensor_set_shape(api->node_output(node, 0), rank, dims, error);
}

baton_status throw_prepare(void*, void*, const baton_node*, baton_error*) {
  throw std::runtime_error("prepare went wrong");
}
baton_status plain_prepare(void*, void*, const baton_node* node, baton_error* error) { return same_shape(node, error); }
baton_status throw_invoke(void*, void*, const baton_node*, baton_error*) { throw std::bad_alloc(); }
baton_status write_too_far(void*, void*, const baton_node* node, baton_error*) {
  baton_tensor* out = api->node_output(node, 0);
  auto* bytes = static_cast<unsigned char*>(api->tensor_mutable_data(out));
  std::memset(bytes, 0, api->tensor_byte_size(out) + 16);
  return BATON_OK;
}

// String outputs (ABI 1.7): the input's shape; BadStrings asks for the bytes of empty strings.
baton_status string_prepare(void*, void*, const baton_node* node, baton_error* error) {
  if (baton_status st = same_shape(node, error); st != BATON_OK) return st;
  baton_tensor* out = api->node_output(node, 0);
  const int32_t* dims = nullptr;
  const int32_t rank = api->tensor_shape(out, &dims);
  size_t count = 1;
  for (int32_t d = 0; d < rank; ++d) count *= static_cast<size_t>(dims[d]);
  return api->tensor_set_byte_size(out, 4 * (count + 2), error);
}
baton_status bad_strings(void*, void*, const baton_node* node, baton_error*) {
  baton_tensor* out = api->node_output(node, 0);
  auto* words = static_cast<int32_t*>(api->tensor_mutable_data(out));
  const size_t n = api->tensor_byte_size(out) / 4 - 2;
  words[0] = static_cast<int32_t>(n);
  for (size_t i = 0; i <= n; ++i) words[1 + i] = static_cast<int32_t>(4 * (n + 2));
  words[1 + n] = 1 << 20;  // the last offset, far past the end
  return BATON_OK;
}

const baton_kernel k_throw_prepare = {sizeof(baton_kernel), nullptr, nullptr, throw_prepare, throw_invoke};
const baton_kernel k_throw_invoke = {sizeof(baton_kernel), nullptr, nullptr, plain_prepare, throw_invoke};
const baton_kernel k_write_too_far = {sizeof(baton_kernel), nullptr, nullptr, plain_prepare, write_too_far};
const baton_kernel k_bad_strings = {sizeof(baton_kernel), nullptr, nullptr, string_prepare, bad_strings};
const baton_kernel k_no_string_size = {sizeof(baton_kernel), nullptr, nullptr, plain_prepare, bad_strings};

const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "ThrowInPrepare", 1, 1, &k_throw_prepare},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "ThrowInInvoke", 1, 1, &k_throw_invoke},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "WriteTooFar", 1, 1, &k_write_too_far},
    {sizeof(baton_op_decl), 0 /* ADD */, nullptr, 1, 2, &k_throw_prepare},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "TimesTwo", 1, 1, &k_throw_invoke},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "BadStrings", 1, 1, &k_bad_strings},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "NoStringSize", 1, 1, &k_no_string_size},
};

const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, "misbehaving", "1.0",
    BATON_PLUGIN_OP_PACK, "throws and writes out of bounds on purpose", ops, sizeof ops / sizeof ops[0],
    nullptr, 0, 0, nullptr, nullptr, nullptr,
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t, uint32_t, const baton_host_api* host,
                                                                           baton_error*) {
  api = host;
  return &desc;
}
