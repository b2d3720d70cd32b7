// The builtin op pack's entry point: every op with the version range TFLite's builtin resolver registers
// for it, and the `threads` option. The C boundary (descriptor, kernel calls, errors) is the op-pack
// kit's (baton/op_pack_kit.hpp); one kernel serves every op, looked up by the node's code.
#include <algorithm>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "baton/op_pack_kit.hpp"
#include "baton/plugin_api.h"
#include "glue/op_context.h"
#include "glue/shared_pool.h"

namespace baton::builtin {
namespace {

std::span<const OpDef> op_defs() {
  static const std::vector<OpDef> defs = [] {
    std::vector<OpDef> all;
    for (auto family : {conv_ops(), fully_connected_ops(), binary_ops(), unary_ops(), pool_ops(), reshape_ops(),
                        slice_ops(), resize_ops(), dequantize_ops(), quantize_ops(), logic_ops(), shape_ops(),
                        reduce_ops(), mirror_pad_ops(), scan_ops(), index_ops(), data_shape_ops(), spatial_ops(), fill_ops(),
                        movement_ops(), shape_value_ops(), discretize_ops(), conv3d_ops(),
                        recurrent_ops(), lstm_ops(), complex_ops(), random_ops(), lookup_table_ops(),
                        string_ops(), litert_ops(), stablehlo_ops(), stablehlo_index_ops(), window_ops()}) {
      all.insert(all.end(), family.begin(), family.end());
    }
    return all;
  }();
  return defs;
}

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "threads", BATON_OPTION_INT, "0",
     "worker threads for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED; 0 = the host's thread count"},
};

std::unique_ptr<PluginState> create(const baton_host_api& api, const baton_plugin_host* host, uint32_t host_abi_minor) {
  auto state = std::make_unique<PluginState>();
  state->api = &api;
  state->host = host;
  state->host_abi_minor = host_abi_minor;
  int64_t threads = api.option_int(host, "threads", 0);
  if (threads <= 0) threads = api.thread_count(host);
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  state->threads = static_cast<int>(std::min<int64_t>(threads, 256));
  if (state->threads > 1) {
#ifdef BATON_BUILTIN_PTHREADPOOL
    auto shared = std::make_unique<SharedPoolParallel>();
    if (shared->start(&api, host, state->threads)) state->pool = std::move(shared);
#endif
    if (!state->pool) state->pool = std::make_unique<ThreadPool>(state->threads);
  }
  return state;
}

const kit::OpPack<OpContext, PluginState> kPack = {
    "builtin",
    "0.1.0",
    "float32, 8-bit and int8-weight CPU kernels for TFLite's builtin ops",
    op_defs,
    kOptions,
    0,  // not reentrant: the thread pool is shared by all nodes
    create,
    nullptr,  // every failure is an OpError or a standard exception
};

}  // namespace
}  // namespace baton::builtin

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  using namespace baton::builtin;
  return baton::kit::OpPackBoundary<OpContext, PluginState>::entry(kPack, host_abi_major, host_abi_minor, api, error);
}
