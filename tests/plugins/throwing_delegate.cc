// A delegate in C++ that throws through the C boundary: from check_node for the custom TimesTwo, and from
// partition_prepare for the ADD partitions it took. The host must turn both into statuses and run the
// model on the op packs.
#include <stdexcept>

#include "baton/plugin_api.h"

namespace {

const baton_host_api* api;

int32_t check_node(void*, const baton_node* node, baton_error*) {
  if (api->node_builtin_code(node) == BATON_OP_CUSTOM) throw std::logic_error("check_node blew up");
  return 1;
}
baton_status init(void*, const baton_partition*, void** state, baton_error*) {
  *state = nullptr;
  return BATON_OK;
}
baton_status prepare(void*, void*, const baton_partition*, baton_error*) { throw std::runtime_error("prepare blew up"); }
baton_status invoke(void*, void*, const baton_partition*, baton_error*) { return BATON_ERROR; }
void release(void*, void*) {}

const baton_delegate_api delegate = {sizeof(baton_delegate_api), check_node, init, prepare, invoke, release};
const baton_op_decl ops[] = {
    {sizeof(baton_op_decl), 0 /* ADD */, nullptr, 1, 2, nullptr},
    {sizeof(baton_op_decl), BATON_OP_CUSTOM, "TimesTwo", 1, 1, nullptr},
};
const baton_plugin_desc desc = {
    sizeof(baton_plugin_desc), BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, "thrower", "1.0",
    BATON_PLUGIN_DELEGATE, "throws from check_node and partition_prepare on purpose", ops, 2, nullptr, 0, 0,
    nullptr, nullptr, &delegate,
};

}  // namespace

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t, uint32_t, const baton_host_api* host,
                                                                           baton_error*) {
  api = host;
  return &desc;
}
