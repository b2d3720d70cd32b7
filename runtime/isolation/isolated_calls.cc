// The functions of an isolated plugin's descriptor: each reads what the plugin would read through the
// host table (with that very table), sends it to the child as a group (protocol.h), and gives the
// child's answer back: status, message, output shapes. Tensor data never travels: constants are places in
// the mapped model file (or, for constants the host made, inline once at init), other tensors places in
// the shared arena at each invoke.
#include <cstddef>
#include <cstring>
#include <unordered_map>

#include "baton/tflite_ops.h"
#include "isolated_plugin.h"
#include "option_arrays.h"
#include "plugin_registry.h"
#include "protocol.h"
#include "shared_memory.h"

namespace baton::isolation {
namespace {

const baton_host_api& api() { return *host_api_table(); }

IsolatedPlugin& plugin_of(void* state) { return *static_cast<IsolatedPlugin*>(state); }

void fail(baton_error* error, const std::string& message) { api().error_set(error, message.c_str()); }

// The host tensors of one group, by slot, and the blocks the child must map for them.
struct HostGroup {
  std::vector<baton_tensor*> slots;
  std::unordered_map<const baton_tensor*, int32_t> slot_of;
  std::vector<IsolatedPlugin::Block> blocks;
  uint64_t handle = 0;
  uint64_t generation = 0;
  bool partition = false;
  std::vector<int32_t> io;  // slots whose data the child needs at invoke
  // The last places sent, by io entry: found again only when the host moves a tensor (a new plan).
  std::vector<const void*> last_data;
  std::vector<SharedLocation> last_place;
  uint64_t places_generation = 0;  // blocks_generation() when they were found
};

void add_block(HostGroup& g, const SharedLocation& at) {
  for (const auto& b : g.blocks) {
    if (b.id == at.block) return;
  }
  g.blocks.push_back({at.block, at.block_size, at.fd, at.writable});
}

int32_t slot(HostGroup& g, baton_tensor* t) {
  if (!t) return -1;
  auto [it, added] = g.slot_of.emplace(t, static_cast<int32_t>(g.slots.size()));
  if (added) g.slots.push_back(t);
  return it->second;
}

void put_tensor(Writer& w, HostGroup& g, baton_tensor* t) {
  w.put<int32_t>(api().tensor_index(t));
  w.put_string(api().tensor_name(t));
  w.put<int32_t>(api().tensor_type(t));
  const int32_t* dims = nullptr;
  const int32_t rank = api().tensor_shape(t, &dims);
  w.put_bytes(dims, rank > 0 ? rank * sizeof(int32_t) : 0);
  const size_t bytes = api().tensor_byte_size(t);
  w.put<uint64_t>(bytes);
  const bool constant = api().tensor_is_constant(t) != 0;
  w.put<int32_t>(constant);
  baton_quantization q{};
  q.struct_size = sizeof q;
  api().tensor_quantization(t, &q);
  w.put_bytes(q.scales, q.scale_count > 0 ? q.scale_count * sizeof(float) : 0);
  w.put_bytes(q.zero_points, q.scale_count > 0 && q.zero_points ? q.scale_count * sizeof(int64_t) : 0);
  w.put<int32_t>(q.quantized_dimension);
  w.put<int32_t>(q.block_size);
  w.put<int32_t>(q.block_scale_type);
  w.put_bytes(q.block_scales, q.block_size > 0 ? static_cast<size_t>(q.block_scale_count) *
                                                     (q.block_scale_type == BATON_TYPE_FLOAT16 ? 2 : 4)
                                               : 0);
  const void* data = constant ? api().tensor_data(t) : nullptr;
  if (!data) {
    w.put<uint8_t>(0);
  } else if (auto at = find_shared(data, bytes)) {
    add_block(g, *at);
    w.put<uint8_t>(1);
    w.put(at->block);
    w.put(at->offset);
  } else {
    w.put<uint8_t>(2);
    w.put_bytes(data, bytes);
  }
}

// A node's intermediates, where the host table has them (ABI 1.3).
int32_t intermediate_count(const baton_node* n) {
  const bool has = BATON_STRUCT_HAS(&api(), baton_host_api, node_intermediate) && api().node_intermediate_count &&
                   api().node_intermediate;
  return has ? api().node_intermediate_count(n) : 0;
}

void put_group(Writer& w, HostGroup& g, const std::vector<const baton_node*>& nodes) {
  // Slots first, so that tensors can be written before the nodes that name them.
  for (const baton_node* n : nodes) {
    for (int32_t i = 0; i < api().node_input_count(n); ++i) slot(g, api().node_input(n, i));
    for (int32_t i = 0; i < api().node_output_count(n); ++i) slot(g, api().node_output(n, i));
    for (int32_t i = 0; i < intermediate_count(n); ++i) slot(g, api().node_intermediate(n, i));
  }
  w.put<uint32_t>(static_cast<uint32_t>(g.slots.size()));
  for (baton_tensor* t : g.slots) put_tensor(w, g, t);
  w.put<uint32_t>(static_cast<uint32_t>(nodes.size()));
  for (const baton_node* n : nodes) {
    const int32_t code = api().node_builtin_code(n);
    w.put<int32_t>(api().node_index(n));
    w.put<int32_t>(code);
    const char* custom = api().node_custom_name(n);
    w.put_string(custom ? custom : "");
    w.put<int32_t>(api().node_version(n));
    std::vector<int32_t> inputs, outputs;
    for (int32_t i = 0; i < api().node_input_count(n); ++i) inputs.push_back(slot(g, api().node_input(n, i)));
    for (int32_t i = 0; i < api().node_output_count(n); ++i) outputs.push_back(slot(g, api().node_output(n, i)));
    w.put_vector(inputs);
    w.put_vector(outputs);
    const baton_builtin_options* o = api().node_builtin_options(n);
    w.put_bytes(o, sizeof *o);
    std::vector<int32_t> array;
    if (code == BATON_OP_RESHAPE && o->u.reshape.new_shape_count > 0 && o->u.reshape.new_shape) {
      array.assign(o->u.reshape.new_shape, o->u.reshape.new_shape + o->u.reshape.new_shape_count);
    } else if (code == BATON_OP_SQUEEZE && o->u.squeeze.squeeze_dims_count > 0 && o->u.squeeze.squeeze_dims) {
      array.assign(o->u.squeeze.squeeze_dims, o->u.squeeze.squeeze_dims + o->u.squeeze.squeeze_dims_count);
    } else if (code == BATON_OP_BUCKETIZE && o->u.bucketize.boundaries_count > 0 && o->u.bucketize.boundaries) {
      // BUCKETIZE's float boundaries travel as their bit patterns.
      array.resize(static_cast<size_t>(o->u.bucketize.boundaries_count));
      std::memcpy(array.data(), o->u.bucketize.boundaries, array.size() * sizeof(float));
    } else {
      array = isolation::pack_int64_option_arrays(*o);
    }
    w.put_vector(array);
    size_t size = 0;
    const uint8_t* custom_options = api().node_custom_options(n, &size);
    w.put_bytes(custom_options, custom_options ? size : 0);
    std::vector<int32_t> intermediates;
    for (int32_t i = 0; i < intermediate_count(n); ++i) intermediates.push_back(slot(g, api().node_intermediate(n, i)));
    w.put_vector(intermediates);
  }
}

// Shapes of every non-constant tensor, before a prepare.
void put_shapes(Writer& w, const HostGroup& g) {
  uint32_t n = 0;
  for (baton_tensor* t : g.slots) n += !api().tensor_is_constant(t);
  w.put(n);
  for (size_t s = 0; s < g.slots.size(); ++s) {
    baton_tensor* t = g.slots[s];
    if (api().tensor_is_constant(t)) continue;
    const int32_t* dims = nullptr;
    const int32_t rank = api().tensor_shape(t, &dims);
    w.put<int32_t>(static_cast<int32_t>(s));
    w.put_bytes(dims, rank > 0 ? rank * sizeof(int32_t) : 0);
    w.put<uint64_t>(api().tensor_byte_size(t));
  }
}

// The shapes the plugin set in the child, applied to the host's tensors.
baton_status apply_shapes(Reader r, const HostGroup& g, baton_error* error) {
  const uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n && !r.failed(); ++i) {
    const int32_t s = r.get<int32_t>();
    const std::vector<int32_t> dims = r.get_vector<int32_t>();
    if (s < 0 || static_cast<size_t>(s) >= g.slots.size()) return fail(error, "isolation: bad slot in reply"), BATON_ERROR;
    const baton_status st = api().tensor_set_shape(g.slots[s], static_cast<int32_t>(dims.size()), dims.data(), error);
    if (st != BATON_OK) return st;
  }
  for (int32_t s : r.get_vector<int32_t>()) {
    if (s < 0 || static_cast<size_t>(s) >= g.slots.size()) return fail(error, "isolation: bad slot in reply"), BATON_ERROR;
    if (baton_status st = api().tensor_set_dynamic(g.slots[s], error); st != BATON_OK) return st;
  }
  if (r.failed()) return fail(error, "isolation: malformed reply"), BATON_ERROR;
  return BATON_OK;
}

// Where the child finds the data of the group's non-constant inputs and outputs now.
baton_status put_places(Writer& w, HostGroup& g, baton_error* error) {
  w.put<uint32_t>(static_cast<uint32_t>(g.io.size()));
  // A block that went may have left its address to a new one: then every place is found again.
  const uint64_t generation = blocks_generation();
  const bool blocks_changed = generation != g.places_generation;
  g.places_generation = generation;
  for (size_t i = 0; i < g.io.size(); ++i) {
    baton_tensor* t = g.slots[g.io[i]];
    const void* data = api().tensor_data(t);
    if (data != g.last_data[i] || !data || blocks_changed) {
      const size_t bytes = api().tensor_byte_size(t);
      auto at = data ? find_shared(data, bytes) : std::nullopt;
      if (!at) {
        fail(error, "isolation: tensor " + std::to_string(api().tensor_index(t)) + " \"" + api().tensor_name(t) +
                        "\" does not lie in memory shared with the plugin's process");
        return BATON_UNSUPPORTED;
      }
      g.last_data[i] = data;
      g.last_place[i] = *at;
    }
    add_block(g, g.last_place[i]);
    w.put<int32_t>(g.io[i]);
    w.put(g.last_place[i].block);
    w.put(g.last_place[i].offset);
  }
  return BATON_OK;
}

// The data the host has now for the group's tensors: at a prepare at invoke (shapes that depend on
// values), the inputs computed so far. The plugin sees the same tensor_data in its process as in the host's.
void put_values(Writer& w, HostGroup& g) {
  std::vector<std::pair<int32_t, SharedLocation>> places;
  for (int32_t s : g.io) {
    const void* data = api().tensor_data(g.slots[s]);
    if (!data) continue;
    if (auto at = find_shared(data, api().tensor_byte_size(g.slots[s]))) places.emplace_back(s, *at);
  }
  w.put<uint32_t>(static_cast<uint32_t>(places.size()));
  for (const auto& [s, at] : places) {
    add_block(g, at);
    w.put<int32_t>(s);
    w.put(at.block);
    w.put(at.offset);
  }
}

void set_io(HostGroup& g, const std::vector<baton_tensor*>& tensors) {
  for (baton_tensor* t : tensors) {
    if (!t || api().tensor_is_constant(t)) continue;
    const int32_t s = g.slot_of.at(t);
    if (std::find(g.io.begin(), g.io.end(), s) == g.io.end()) g.io.push_back(s);
  }
  g.last_data.assign(g.io.size(), nullptr);
  g.last_place.assign(g.io.size(), SharedLocation{});
}

baton_status answer(Expected<IsolatedPlugin::Reply>& got, baton_error* error) {
  if (!got) return fail(error, got.status().message()), BATON_ERROR;
  if (got->status != BATON_OK) fail(error, got->error);
  return got->status;
}

// Handles made in a child that has since died are gone: say so instead of asking the new one.
bool stale(IsolatedPlugin& p, const HostGroup& g, baton_error* error) {
  if (g.generation == p.generation()) return false;
  fail(error, "isolated plugin " + p.name + ": its process was restarted; this work was lost with the old one");
  return true;
}

baton_status init_group(IsolatedPlugin& p, Message type, HostGroup& g, const std::vector<const baton_node*>& nodes,
                        const baton_partition* partition, const char* stage, baton_error* error) {
  Writer w;
  w.put(type);
  w.put(p.instance());
  if (partition) w.put<uint64_t>(0);  // not made from a selection
  put_group(w, g, nodes);
  if (partition) {
    std::vector<baton_tensor*> in, out;
    for (int32_t i = 0; i < api().partition_input_count(partition); ++i) in.push_back(api().partition_input(partition, i));
    for (int32_t i = 0; i < api().partition_output_count(partition); ++i) out.push_back(api().partition_output(partition, i));
    std::vector<int32_t> in_slots, out_slots;
    for (baton_tensor* t : in) in_slots.push_back(slot(g, t));
    for (baton_tensor* t : out) out_slots.push_back(slot(g, t));
    w.put<int32_t>(api().partition_id(partition));
    w.put_vector(in_slots);
    w.put_vector(out_slots);
    in.insert(in.end(), out.begin(), out.end());
    set_io(g, in);
  } else {
    std::vector<baton_tensor*> io;
    for (int32_t i = 0; i < api().node_input_count(nodes[0]); ++i) io.push_back(api().node_input(nodes[0], i));
    for (int32_t i = 0; i < api().node_output_count(nodes[0]); ++i) io.push_back(api().node_output(nodes[0], i));
    set_io(g, io);
  }
  auto got = p.call(w, g.blocks, false, stage, true);
  g.generation = got ? got->generation : 0;
  if (got) g.handle = got->reader().get<uint64_t>();
  return answer(got, error);
}

baton_status prepare_group(IsolatedPlugin& p, Message type, HostGroup& g, const char* stage, baton_error* error) {
  if (stale(p, g, error)) return BATON_ERROR;
  Writer w;
  w.put(type);
  w.put(g.handle);
  put_shapes(w, g);
  g.blocks.clear();
  put_values(w, g);
  auto got = p.call(w, g.blocks, false, stage, false);
  const baton_status st = answer(got, error);
  if (!got) return st;
  const baton_status shapes = apply_shapes(got->reader(), g, error);
  return st != BATON_OK ? st : shapes;
}

baton_status invoke_group(IsolatedPlugin& p, Message type, HostGroup& g, const char* stage, baton_error* error) {
  if (stale(p, g, error)) return BATON_ERROR;
  Writer w;
  w.put(type);
  w.put(g.handle);
  g.blocks.clear();
  if (baton_status st = put_places(w, g, error); st != BATON_OK) return st;
  auto got = p.call(w, g.blocks, true, stage, false);
  return answer(got, error);
}

void free_group(IsolatedPlugin& p, Message type, HostGroup* g, const char* stage) {
  if (!g) return;
  if (g->generation == p.generation() && g->handle) {
    Writer w;
    w.put(type);
    w.put(g->handle);
    (void)p.call(w, {}, false, stage, false);
  }
  delete g;
}

// ---- delegate ----

int32_t check_node(void* state, const baton_node* node, baton_error* reason) {
  IsolatedPlugin& p = plugin_of(state);
  HostGroup g;
  Writer w;
  w.put(Message::check_node);
  w.put(p.instance());
  put_group(w, g, {node});
  auto got = p.call(w, g.blocks, false, "check_node", true);
  if (!got) return fail(reason, got.status().message()), 0;
  if (got->status != BATON_OK) return fail(reason, got->error), 0;
  Reader r = got->reader();
  const int32_t yes = r.get<int32_t>();
  const std::string why = r.get_string();
  if (!yes) fail(reason, why);
  return yes;
}

// One select_nodes round in the child: the whole graph as one group, whose slots are the model's tensor
// indices, and the child's handle of the plugin's selection state.
struct HostSelection {
  HostGroup graph;
  uint64_t handle = 0;
  uint64_t generation = 0;
};

baton_status select_nodes(void* state, const baton_graph* graph, const int32_t* free_nodes, int32_t free_count,
                          uint8_t* selected, void** selection_state, baton_error* error) {
  IsolatedPlugin& p = plugin_of(state);
  auto* sel = new HostSelection;
  *selection_state = sel;  // the host frees it, also after a failure
  HostGroup& g = sel->graph;
  const int32_t tensor_count = api().graph_tensor_count(graph);
  for (int32_t i = 0; i < tensor_count; ++i) {
    baton_tensor* t = api().graph_tensor(graph, i);
    if (!t || slot(g, t) != i) return fail(error, "isolation: graph tensor " + std::to_string(i) + " missing"), BATON_ERROR;
  }
  const int32_t node_count = api().graph_node_count(graph);
  std::vector<const baton_node*> nodes;
  for (int32_t i = 0; i < node_count; ++i) {
    if (const baton_node* n = api().graph_node(graph, i)) nodes.push_back(n);
  }
  Writer w;
  w.put(Message::select_nodes);
  w.put(p.instance());
  put_group(w, g, nodes);
  if (g.slots.size() != static_cast<size_t>(tensor_count)) {
    return fail(error, "isolation: a node names a tensor outside the graph"), BATON_ERROR;
  }
  w.put(node_count);
  w.put_vector(std::vector<int32_t>(free_nodes, free_nodes + free_count));
  auto got = p.call(w, g.blocks, false, "node selection", true);
  if (!got) return fail(error, got.status().message()), BATON_ERROR;
  Reader r = got->reader();
  sel->generation = got->generation;
  sel->handle = r.get<uint64_t>();
  const std::vector<uint8_t> chosen = r.get_vector<uint8_t>();
  if (got->status != BATON_OK) return fail(error, got->error), got->status;
  if (r.failed() || chosen.size() != static_cast<size_t>(free_count)) {
    return fail(error, "isolation: malformed reply to node selection"), BATON_ERROR;
  }
  std::copy(chosen.begin(), chosen.end(), selected);
  if (!got->error.empty()) fail(error, got->error);  // the reason for the nodes it left
  return BATON_OK;
}

void selection_free(void* state, void* selection_state) {
  IsolatedPlugin& p = plugin_of(state);
  auto* sel = static_cast<HostSelection*>(selection_state);
  if (!sel) return;
  if (sel->handle && sel->generation == p.generation()) {
    Writer w;
    w.put(Message::selection_free);
    w.put(sel->handle);
    (void)p.call(w, {}, false, "selection free", false);
  }
  delete sel;
}

baton_status partition_init(void* state, const baton_partition* partition, void** partition_state, baton_error* error) {
  IsolatedPlugin& p = plugin_of(state);
  auto* g = new HostGroup;
  g->partition = true;
  *partition_state = g;
  std::vector<const baton_node*> nodes;
  for (int32_t i = 0; i < api().partition_node_count(partition); ++i) nodes.push_back(api().partition_node(partition, i));
  auto* sel = static_cast<HostSelection*>(api().partition_selection(partition));
  if (!sel) return init_group(p, Message::partition_init, *g, nodes, partition, "partition init", error);
  // A partition of a select_nodes round: the child builds it from that round's graph, which the plugin
  // holds on to, so slots are the graph's.
  if (sel->generation != p.generation()) {
    return fail(error, "isolated plugin " + p.name + ": its process was restarted after it selected these nodes"),
           BATON_ERROR;
  }
  g->slots = sel->graph.slots;
  g->slot_of = sel->graph.slot_of;
  std::vector<int32_t> indices;
  for (const baton_node* n : nodes) indices.push_back(api().node_index(n));
  std::vector<baton_tensor*> in, out;
  for (int32_t i = 0; i < api().partition_input_count(partition); ++i) in.push_back(api().partition_input(partition, i));
  for (int32_t i = 0; i < api().partition_output_count(partition); ++i) out.push_back(api().partition_output(partition, i));
  std::vector<int32_t> in_slots, out_slots;
  for (baton_tensor* t : in) in_slots.push_back(slot(*g, t));
  for (baton_tensor* t : out) out_slots.push_back(slot(*g, t));
  if (g->slots.size() != sel->graph.slots.size()) {
    return fail(error, "isolation: the partition reads a tensor outside its selection's graph"), BATON_ERROR;
  }
  Writer w;
  w.put(Message::partition_init);
  w.put(p.instance());
  w.put(sel->handle);
  w.put_vector(indices);
  w.put<int32_t>(api().partition_id(partition));
  w.put_vector(in_slots);
  w.put_vector(out_slots);
  in.insert(in.end(), out.begin(), out.end());
  set_io(*g, in);
  auto got = p.call(w, {}, false, "partition init", false);
  g->generation = got ? got->generation : 0;
  if (got) g->handle = got->reader().get<uint64_t>();
  return answer(got, error);
}

baton_status partition_prepare(void* state, void* partition_state, const baton_partition*, baton_error* error) {
  return prepare_group(plugin_of(state), Message::partition_prepare, *static_cast<HostGroup*>(partition_state),
                       "partition prepare", error);
}

baton_status partition_invoke(void* state, void* partition_state, const baton_partition*, baton_error* error) {
  return invoke_group(plugin_of(state), Message::partition_invoke, *static_cast<HostGroup*>(partition_state),
                      "partition invoke", error);
}

void partition_free(void* state, void* partition_state) {
  free_group(plugin_of(state), Message::partition_free, static_cast<HostGroup*>(partition_state), "partition free");
}

// ---- op-pack kernel ----

baton_status kernel_init(void* state, const baton_node* node, void** node_state, baton_error* error) {
  IsolatedPlugin& p = plugin_of(state);
  auto* g = new HostGroup;
  *node_state = g;
  return init_group(p, Message::kernel_init, *g, {node}, nullptr, "kernel init", error);
}

baton_status kernel_prepare(void* state, void* node_state, const baton_node*, baton_error* error) {
  return prepare_group(plugin_of(state), Message::kernel_prepare, *static_cast<HostGroup*>(node_state),
                       "kernel prepare", error);
}

baton_status kernel_invoke(void* state, void* node_state, const baton_node*, baton_error* error) {
  return invoke_group(plugin_of(state), Message::kernel_invoke, *static_cast<HostGroup*>(node_state), "kernel invoke",
                      error);
}

void kernel_free(void* state, void* node_state) {
  free_group(plugin_of(state), Message::kernel_free, static_cast<HostGroup*>(node_state), "kernel free");
}

}  // namespace

namespace forward {

// What an instance is created with: the plugin path, threads and options the host gives this Environment.
void put_settings(Writer& w, const baton_plugin_host* host) {
  w.put_string(api().plugin_path(host));
  w.put<int32_t>(api().thread_count(host));
  std::vector<std::pair<std::string, std::string>> options;
  const char* key = nullptr;
  const char* value = nullptr;
  for (int32_t i = 0; api().option_entry(host, i, &key, &value); ++i) options.emplace_back(key, value);
  w.put<uint32_t>(static_cast<uint32_t>(options.size()));
  for (const auto& [k, v] : options) {
    w.put_string(k);
    w.put_string(v);
  }
}

baton_status create(const baton_plugin_host* host, void** state, baton_error* error) {
  IsolatedPlugin* p = LoadedPlugin::from(host)->isolated.get();
  if (!p) return fail(error, "isolation: the plugin has no process"), BATON_ERROR;
  p->host = host;
  Writer w;
  w.put(Message::create);
  w.put(p->instance());
  put_settings(w, host);
  auto got = p->create(std::move(w));
  *state = p;
  return answer(got, error);
}

void destroy(void* state) { plugin_of(state).destroy(); }

baton_status probe(const baton_plugin_host* host, const baton_device** devices, size_t* count, baton_error* error) {
  IsolatedPlugin* p = LoadedPlugin::from(host)->isolated.get();
  if (!p) return fail(error, "isolation: the plugin has no process"), BATON_ERROR;
  if (!p->host) p->host = host;
  Writer w;
  w.put(Message::probe);
  w.put(p->instance());
  put_settings(w, host);
  auto got = p->call(w, {}, false, "probe_devices", true);
  const baton_status st = answer(got, error);
  if (st != BATON_OK) return st;
  Reader r = got->reader();
  const uint32_t n = std::min<uint32_t>(r.get<uint32_t>(), 1000);
  p->device_names.clear();
  std::vector<std::pair<int32_t, int32_t>> kinds;
  for (uint32_t i = 0; i < n && !r.failed(); ++i) {
    p->device_names.push_back(r.get_string());
    const int32_t kind = r.get<int32_t>();
    kinds.emplace_back(kind, r.get<int32_t>());
  }
  p->devices.clear();
  for (size_t i = 0; i < kinds.size(); ++i) {
    p->devices.push_back(baton_device{sizeof(baton_device), p->device_names[i].c_str(), kinds[i].first, kinds[i].second});
  }
  *devices = p->devices.data();
  *count = p->devices.size();
  return BATON_OK;
}

const baton_kernel kernel = {sizeof(baton_kernel), kernel_init, kernel_free, kernel_prepare, kernel_invoke};

const baton_delegate_api delegate = [] {
  baton_delegate_api d{};
  d.struct_size = sizeof d;
  d.check_node = check_node;
  d.partition_init = partition_init;
  d.partition_prepare = partition_prepare;
  d.partition_invoke = partition_invoke;
  d.partition_free = partition_free;
  return d;
}();

const baton_delegate_api selecting_delegate = [] {
  baton_delegate_api d = delegate;
  d.select_nodes = select_nodes;
  d.selection_free = selection_free;
  return d;
}();

}  // namespace forward
}  // namespace baton::isolation
