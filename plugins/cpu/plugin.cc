// The cpu delegate's entry point and C boundary: the descriptor (the ops of its patterns, its options, a CPU
// device preferred before general CPU delegates, so that in the default chain it picks its pairs before
// xnnpack takes the rest), create/destroy (the kernels for this CPU, the host's shared thread pool) and the
// delegate calls. Every call catches everything and turns it into a status.
#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "baton/plugin_api.h"
#include "baton/plugin_kit.hpp"
#include "partition.h"

namespace baton::cpu {
namespace {

const baton_host_api* g_api = nullptr;

const baton_option_decl kOptions[] = {
    {sizeof(baton_option_decl), "threads", BATON_OPTION_INT, "0",
     "threads of the pthreadpool the pairs run on (the host's, shared with other plugins asking for as many); 0 = the host's thread count"},
};

// Runs a subset (depthwise + 1x1 pairs) faster than a general CPU delegate and gives the rest on.
constexpr int32_t kPreference = 10;

baton_status plugin_create(const baton_plugin_host* host, void** plugin_state, baton_error* error) {
  return kit::guarded(g_api, error, "create", [&] {
    auto state = std::make_unique<PluginState>();
    state->api = g_api;
    state->host = host;
    state->kernels = &best_kernels();
    int32_t threads = static_cast<int32_t>(g_api->option_int(host, "threads", 0));
    if (threads <= 0) threads = g_api->thread_count(host);
    if (threads <= 0) threads = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
    state->threads = threads;  // the pool starts with the first partition (PluginState::start_pool)
    *plugin_state = state.release();
    return BATON_OK;
  });
}

void plugin_destroy(void* plugin_state) { delete static_cast<PluginState*>(plugin_state); }

baton_status probe_devices(const baton_plugin_host*, const baton_device** devices, size_t* count, baton_error* error) {
  return kit::guarded(g_api, error, "probe", [&] {
    static const std::string name = kit::cpu_model_name() + " (" + best_kernels().isa + ")";
    static const baton_device cpu = {sizeof(baton_device), name.c_str(), BATON_DEVICE_CPU, kPreference};
    *devices = &cpu;
    *count = 1;
    return BATON_OK;
  });
}

// Nodes are chosen from the whole graph (select_nodes); a node on its own is never enough.
int32_t check_node(void*, const baton_node*, baton_error* reason) {
  g_api->error_set(reason, "cpu: takes depthwise + 1x1 convolution pairs, chosen from the whole graph (select_nodes)");
  return 0;
}

baton_status select_nodes(void* plugin_state, const baton_graph* graph, const int32_t* free_nodes, int32_t count,
                          uint8_t* selected, void** selection_state, baton_error* error) {
  *selection_state = nullptr;
  const auto& state = *static_cast<const PluginState*>(plugin_state);
  return kit::guarded(g_api, error, "select_nodes",
                      [&] { return state.select(graph, free_nodes, count, selected, error); });
}

void selection_free(void*, void*) {}

baton_status partition_init(void* plugin_state, const baton_partition* partition, void** partition_state,
                            baton_error* error) {
  return kit::guarded(g_api, error, "partition init", [&] {
    auto p = std::make_unique<Partition>(*static_cast<PluginState*>(plugin_state));
    p->build(partition);
    *partition_state = p.release();
    return BATON_OK;
  });
}

baton_status partition_prepare(void*, void* partition_state, const baton_partition* partition, baton_error* error) {
  return kit::guarded(g_api, error, "partition prepare",
                      [&] { return static_cast<Partition*>(partition_state)->prepare(partition, error); });
}

baton_status partition_invoke(void*, void* partition_state, const baton_partition*, baton_error* error) {
  return kit::guarded(g_api, error, "partition invoke",
                      [&] { return static_cast<Partition*>(partition_state)->invoke(error); });
}

void partition_free(void*, void* partition_state) { delete static_cast<Partition*>(partition_state); }

const baton_delegate_api kDelegateApi = {
    sizeof(baton_delegate_api), check_node,     partition_init, partition_prepare,
    partition_invoke,           partition_free, select_nodes,   selection_free,
};

const baton_plugin_desc* describe() {
  static const baton_op_decl decls[] = {
      {sizeof(baton_op_decl), 4 /* DEPTHWISE_CONV_2D */, nullptr, 1, 7, nullptr},
      {sizeof(baton_op_decl), 3 /* CONV_2D */, nullptr, 1, 8, nullptr},
      // Between a depthwise and its 1x1 convolution, as the depthwise clamp, or after a residual ADD
      // (float32 only).
      {sizeof(baton_op_decl), 19 /* RELU */, nullptr, 1, 3, nullptr},
      {sizeof(baton_op_decl), 20 /* RELU_N1_TO_1 */, nullptr, 1, 1, nullptr},
      {sizeof(baton_op_decl), 21 /* RELU6 */, nullptr, 1, 3, nullptr},
      {sizeof(baton_op_decl), BATON_OP_CUSTOM, "Convolution2DTransposeBias", 1, 1, nullptr},
      // After a 1x1 convolution that it alone reads (float32 only).
      {sizeof(baton_op_decl), 117 /* HARD_SWISH */, nullptr, 1, 1, nullptr},
      {sizeof(baton_op_decl), 0 /* ADD */, nullptr, 1, 5, nullptr},
      // Float32 with constant weights (the versions that add other types and formats are refused by
      // reading the node).
      {sizeof(baton_op_decl), 9 /* FULLY_CONNECTED */, nullptr, 1, 12, nullptr},
  };
  static const baton_plugin_desc desc = {
      sizeof(baton_plugin_desc),
      BATON_ABI_VERSION_MAJOR,
      BATON_ABI_VERSION_MINOR,
      "cpu",
      "0.1.0",
      BATON_PLUGIN_DELEGATE,
      "float32 depthwise + 1x1 convolution pairs fused row block by row block, 1x1 and narrow convolutions, dense "
      "layers (FULLY_CONNECTED), on the CPU",
      decls,
      sizeof(decls) / sizeof(decls[0]),
      kOptions,
      sizeof(kOptions) / sizeof(kOptions[0]),
      0,  // not reentrant: a partition's buffers are used by every invoke
      plugin_create,
      plugin_destroy,
      &kDelegateApi,
      probe_devices,
      nullptr,
  };
  return &desc;
}

}  // namespace
}  // namespace baton::cpu

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  (void)host_abi_minor;
  if (!baton::kit::host_is_usable(host_abi_major, api, error, "cpu", true)) return nullptr;
  baton::cpu::g_api = api;
  return baton::cpu::describe();
}
