// The child side of isolation (baton-plugin-host): the ABI's handles as this program defines them,
// the host table it gives the plugin (child_table.cc), and the request loop (plugin_host_main.cc).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "wire.h"

// The opaque handles of the ABI, as this program defines them.
struct baton_error {
  std::string message;
};
struct baton_tensor {
  int32_t index = 0;
  std::string name;
  baton_tensor_type type = BATON_TYPE_FLOAT32;
  std::vector<int32_t> dims;
  size_t bytes = 0;
  bool constant = false;
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
  int32_t block_size = 0;  // blockwise quantization: its scales, as their bytes
  baton_tensor_type block_scale_type = BATON_TYPE_FLOAT32;
  std::vector<uint8_t> block_scales;
  const void* constant_data = nullptr;
  std::vector<uint8_t> inline_data;  // an inline constant, 64-byte aligned inside
  uint8_t* data = nullptr;  // a non-constant tensor's place, during invoke only
  bool shape_writable = false;
  bool dynamic = false;
  bool shape_set = false;
};
struct baton_node {
  int32_t index = 0, code = 0, version = 1;
  std::string custom_name;
  std::vector<baton_tensor*> inputs, outputs, intermediates;
  baton_builtin_options options{};
  std::vector<int32_t> option_array;
  std::vector<uint8_t> custom_options;
};
struct baton_partition {
  int32_t id = 0;
  std::vector<const baton_node*> nodes;
  std::vector<baton_tensor*> inputs, outputs;
  void* selection = nullptr;  // the plugin's selection state of the round that made it
};
// The whole graph a delegate with select_nodes chooses from: nodes by model index (null where a node
// does not run), tensors by model index.
struct baton_graph {
  std::vector<baton_node*> nodes;
  std::vector<baton_tensor*> tensors;
};

namespace baton::isolation {

constexpr int kSocket = 3;

// One create of the plugin: one Environment of the host (several may share this process). Its address is
// the `baton_plugin_host` handle the plugin is given, so option reads answer from its own settings.
struct Instance {
  void* state = nullptr;
  bool created = false;
  std::map<std::string, std::string> options;
  int32_t threads = 1;
  std::string plugin_path;
};

struct Selection;

// The nodes of one call with the tensors they touch, by slot. A group read from a message owns them; a
// partition made from a selection views the selection's (so the plugin, which keeps the graph's tensor
// handles from its selection, finds this partition's data in them at invoke).
struct Group {
  Instance* instance = nullptr;
  std::vector<baton_tensor*> tensors;  // by slot
  std::vector<baton_node*> nodes;
  std::vector<std::unique_ptr<baton_tensor>> owned_tensors;
  std::vector<std::unique_ptr<baton_node>> owned_nodes;
  std::shared_ptr<Selection> selection;  // kept alive by the partitions made from it
  baton_partition partition;
  void* state = nullptr;              // partition_state or node_state
  const baton_kernel* kernel = nullptr;  // op packs
};

// One select_nodes round: the whole graph (slots are the model's tensor indices) and the plugin's state.
struct Selection {
  Group group;
  baton_graph graph;
  void* state = nullptr;
  bool freed = false;  // selection_free was called
};

struct Block {
  uint8_t* base = nullptr;
  size_t size = 0;
};

struct Child {
  std::mutex send_mutex;  // log lines may come from a plugin's own threads
  const baton_plugin_desc* desc = nullptr;
  std::string path;
  std::map<uint64_t, std::unique_ptr<Instance>> instances;  // by the host's instance id
  std::map<uint64_t, Block> blocks;
  std::map<uint64_t, std::unique_ptr<Group>> groups;
  std::map<uint64_t, std::shared_ptr<Selection>> selections;
  uint64_t next_handle = 1;
  std::vector<baton_device> devices;
  std::vector<std::string> device_names;
};

Child& child();
const baton_host_api* host_table();
const baton_plugin_host* handle_of(Instance& instance);
void send(Writer& w);
Writer reply(baton_status status, const std::string& error);
bool read_group(Reader& r, Group& g, std::string& why);
std::vector<baton_tensor*> read_slots(Reader& r, Group& g);
void read_shapes(Reader& r, Group& g, bool partition);
void write_shapes(Writer& w, Group& g);
bool read_places(Reader& r, Group& g, std::string& why);
Group* find_group(uint64_t handle);

}  // namespace baton::isolation
