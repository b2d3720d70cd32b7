// baton-plugin-host: runs one plugin in a process of its own for a host that isolates it. The host
// starts it with the socket on fd 3 and the plugin's path as its argument; this program opens the
// plugin, calls its entry point with the host table of child_table.cc, and serves the host's requests
// (protocol.h) until the host closes the socket. Every Environment of the host process that isolates the
// plugin is an instance here (its own create, options and state), so one child serves them all. Nothing here is
// trusted by the host: if this process dies or stops answering, the host kills it and falls back.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "child.h"
#include "protocol.h"

namespace baton::isolation {
namespace {

template <typename T>
T copy_sized(const void* p, size_t size) {
  T out{};
  std::memcpy(&out, p, std::min(size, sizeof(T)));
  return out;
}

const char* str(const char* s) { return s ? s : ""; }

// The descriptor the host reads (protocol.h), of the plugin this process serves.
Writer describe(const baton_plugin_desc* desc) {
  Writer w = reply(BATON_OK, "");
  const baton_plugin_desc d = copy_sized<baton_plugin_desc>(desc, desc->struct_size);
  w.put<uint32_t>(d.abi_major);
  w.put<uint32_t>(d.abi_minor);
  w.put_string(str(d.name));
  w.put_string(str(d.version));
  w.put<int32_t>(d.kind);
  w.put_string(str(d.description));
  w.put<uint32_t>(d.flags);
  const size_t op_stride = d.op_count && d.ops ? d.ops[0].struct_size : 0;
  const uint32_t op_count = op_stride ? static_cast<uint32_t>(d.op_count) : 0;
  w.put(op_count);
  for (uint32_t i = 0; i < op_count; ++i) {
    const auto o = copy_sized<baton_op_decl>(reinterpret_cast<const uint8_t*>(d.ops) + i * op_stride, op_stride);
    w.put<int32_t>(o.builtin_code);
    w.put_string(str(o.custom_name));
    w.put<int32_t>(o.min_version);
    w.put<int32_t>(o.max_version);
    const bool usable = o.kernel && BATON_STRUCT_HAS(o.kernel, baton_kernel, invoke) &&
                        o.kernel->prepare && o.kernel->invoke;
    w.put<uint8_t>(usable);
  }
  const size_t opt_stride = d.option_count && d.options ? d.options[0].struct_size : 0;
  const uint32_t opt_count = opt_stride ? static_cast<uint32_t>(d.option_count) : 0;
  w.put(opt_count);
  for (uint32_t i = 0; i < opt_count; ++i) {
    const auto o = copy_sized<baton_option_decl>(reinterpret_cast<const uint8_t*>(d.options) + i * opt_stride, opt_stride);
    w.put_string(str(o.name));
    w.put<int32_t>(o.type);
    w.put<uint8_t>(o.default_value != nullptr);
    w.put_string(str(o.default_value));
    w.put_string(str(o.help));
  }
  const bool has_delegate = BATON_STRUCT_HAS(&d, baton_plugin_desc, delegate) && d.delegate;
  const baton_delegate_api api = has_delegate ? copy_sized<baton_delegate_api>(d.delegate, d.delegate->struct_size)
                                              : baton_delegate_api{};
  w.put<uint8_t>(api.check_node != nullptr);
  w.put<uint8_t>(api.select_nodes != nullptr);
  w.put<uint8_t>(api.partition_init && api.partition_invoke);
  w.put<uint8_t>(BATON_STRUCT_HAS(&d, baton_plugin_desc, probe_devices) && d.probe_devices);
  return w;
}

// Opens the plugin and reads its descriptor.
Writer load(const std::string& path) {
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) return reply(BATON_ERROR, std::string("cannot be loaded: ") + str(::dlerror()));
  auto entry = reinterpret_cast<baton_plugin_entry_fn>(::dlsym(library, BATON_PLUGIN_ENTRY_SYMBOL));
  if (!entry) return reply(BATON_ERROR, "no entry symbol '" BATON_PLUGIN_ENTRY_SYMBOL "' (not a baton plugin)");
  baton_error error;
  const baton_plugin_desc* desc = entry(BATON_ABI_VERSION_MAJOR, BATON_ABI_VERSION_MINOR, host_table(), &error);
  if (!desc) {
    return reply(BATON_ERROR, "entry point returned no descriptor: " +
                                  (error.message.empty() ? "no reason given" : error.message));
  }
  if (!BATON_STRUCT_HAS(desc, baton_plugin_desc, destroy)) {
    return reply(BATON_ERROR, "descriptor too small");
  }
  child().desc = desc;
  child().path = path;
  return describe(desc);
}

// The loaded plugin is a loader: it is created (with its defaults) and asked to wrap `file`, whose
// descriptor this process serves from then on. A loader that does not take the file answers
// BATON_UNSUPPORTED with an empty message.
Writer wrap(const std::string& file) {
  Child& c = child();
  const baton_plugin_desc* loader = c.desc;
  if (!loader || loader->kind != BATON_PLUGIN_LOADER ||
      !BATON_STRUCT_HAS(loader, baton_plugin_desc, loader) || !loader->loader ||
      !BATON_STRUCT_HAS(loader->loader, baton_loader_api, wrap_file) || !loader->loader->wrap_file) {
    return reply(BATON_ERROR, c.path + " is not a loader with wrap_file");
  }
  static Instance loader_instance;  // the loader's own create: default options, one thread
  loader_instance.plugin_path = c.path;
  baton_error error;
  if (loader->create && !loader_instance.created) {
    if (loader->create(handle_of(loader_instance), &loader_instance.state, &error) != BATON_OK) {
      return reply(BATON_ERROR, "loader " + std::string(str(loader->name)) + ": create failed: " + error.message);
    }
    loader_instance.created = true;
  }
  const baton_plugin_desc* desc = loader->loader->wrap_file(loader_instance.state, file.c_str(), &error);
  if (!desc) return reply(error.message.empty() ? BATON_UNSUPPORTED : BATON_ERROR, error.message);
  if (!BATON_STRUCT_HAS(desc, baton_plugin_desc, destroy)) {
    return reply(BATON_ERROR, "descriptor too small");
  }
  c.desc = desc;
  c.path = file;
  return describe(desc);
}

baton_delegate_api delegate_api() {
  const baton_plugin_desc* d = child().desc;
  if (!d || !BATON_STRUCT_HAS(d, baton_plugin_desc, delegate) || !d->delegate) return {};
  return copy_sized<baton_delegate_api>(d->delegate, d->delegate->struct_size);
}

// The kernel the plugin declared for this node (the host chose the plugin by the same declarations).
const baton_kernel* find_kernel(const baton_node& n) {
  const baton_plugin_desc* d = child().desc;
  if (!d || !d->ops || !d->op_count) return nullptr;
  const size_t stride = d->ops[0].struct_size;
  for (size_t i = 0; i < d->op_count; ++i) {
    const auto o = copy_sized<baton_op_decl>(reinterpret_cast<const uint8_t*>(d->ops) + i * stride, stride);
    if (o.builtin_code != n.code || n.version < o.min_version || n.version > o.max_version) continue;
    if ((n.code == BATON_OP_CUSTOM || n.code == BATON_OP_STABLEHLO_COMPOSITE) && n.custom_name != str(o.custom_name)) continue;
    return o.kernel;
  }
  return nullptr;
}

baton_node* graph_node_at(const baton_graph& g, int32_t index) {
  return index >= 0 && static_cast<size_t>(index) < g.nodes.size() ? g.nodes[index] : nullptr;
}

template <typename T>
T kernel_fn(const baton_kernel* k, T baton_kernel::*member) {
  const auto copy = copy_sized<baton_kernel>(k, k->struct_size);
  return copy.*member;
}

// The settings of an instance (one Environment's create): plugin path, threads, options.
void read_settings(Reader& r, Instance& in) {
  in.plugin_path = r.get_string();
  in.threads = r.get<int32_t>();
  in.options.clear();
  const uint32_t n = r.get<uint32_t>();
  for (uint32_t i = 0; i < n && !r.failed(); ++i) {
    std::string name = r.get_string();
    in.options[name] = r.get_string();
  }
}

// The instance a request names; created (not yet with the plugin's create) when `add`.
Instance* instance(Reader& r, bool add) {
  const uint64_t id = r.get<uint64_t>();
  auto& all = child().instances;
  auto it = all.find(id);
  if (it != all.end()) return it->second.get();
  if (!add || r.failed()) return nullptr;
  return all.emplace(id, std::make_unique<Instance>()).first->second.get();
}

Writer handle(Message type, Reader& r) {
  Child& c = child();
  std::string why;
  baton_error error;
  switch (type) {
    case Message::create: {
      Instance* in = instance(r, true);
      if (!in) return reply(BATON_INVALID_ARGUMENT, "bad request: no instance");
      read_settings(r, *in);
      if (in->created) return reply(BATON_INVALID_ARGUMENT, "bad request: instance created twice");
      baton_status st = BATON_OK;
      if (c.desc->create) st = c.desc->create(handle_of(*in), &in->state, &error);
      in->created = st == BATON_OK;
      return reply(st, error.message);
    }
    case Message::probe: {
      Instance* in = instance(r, true);
      if (!in) return reply(BATON_INVALID_ARGUMENT, "bad request: no instance");
      read_settings(r, *in);
      if (!BATON_STRUCT_HAS(c.desc, baton_plugin_desc, probe_devices) || !c.desc->probe_devices) {
        return reply(BATON_UNSUPPORTED, "no probe");
      }
      const baton_device* devices = nullptr;
      size_t count = 0;
      const baton_status st = c.desc->probe_devices(handle_of(*in), &devices, &count, &error);
      Writer w = reply(st, error.message);
      if (st != BATON_OK) return w;
      const size_t stride = count && devices ? devices[0].struct_size : 0;
      w.put<uint32_t>(stride ? static_cast<uint32_t>(count) : 0);
      for (size_t i = 0; stride && i < count; ++i) {
        const auto dev = copy_sized<baton_device>(reinterpret_cast<const uint8_t*>(devices) + i * stride, stride);
        w.put_string(str(dev.name));
        w.put<int32_t>(dev.kind);
        w.put<int32_t>(dev.preference);
      }
      return w;
    }
    case Message::check_node: {
      Instance* in = instance(r, false);
      if (!in || !in->created) return reply(BATON_INVALID_ARGUMENT, "bad request: no created instance");
      Group g;
      if (!read_group(r, g, why) || g.nodes.size() != 1) return reply(BATON_INVALID_ARGUMENT, "bad request: " + why);
      const int32_t answer = delegate_api().check_node(in->state, g.nodes[0], &error);
      Writer w = reply(BATON_OK, "");
      w.put<int32_t>(answer);
      w.put_string(error.message);
      return w;
    }
    case Message::select_nodes: {
      Instance* in = instance(r, false);
      if (!in || !in->created) return reply(BATON_INVALID_ARGUMENT, "bad request: no created instance");
      auto sel = std::make_shared<Selection>();
      sel->group.instance = in;
      if (!read_group(r, sel->group, why)) return reply(BATON_INVALID_ARGUMENT, "bad request: " + why);
      const int32_t node_count = r.get<int32_t>();
      const std::vector<int32_t> free_nodes = r.get_vector<int32_t>();
      if (r.failed() || node_count < 0 || node_count > 10000000) return reply(BATON_INVALID_ARGUMENT, "bad request: graph");
      sel->graph.tensors = sel->group.tensors;
      sel->graph.nodes.assign(static_cast<size_t>(node_count), nullptr);
      for (baton_node* n : sel->group.nodes) {
        if (n->index < 0 || n->index >= node_count) return reply(BATON_INVALID_ARGUMENT, "bad request: node index");
        sel->graph.nodes[n->index] = n;
      }
      std::vector<uint8_t> selected(free_nodes.size(), 0);
      const baton_status st = delegate_api().select_nodes(in->state, &sel->graph, free_nodes.data(),
                                                          static_cast<int32_t>(free_nodes.size()), selected.data(),
                                                          &sel->state, &error);
      const uint64_t id = c.next_handle++;
      c.selections[id] = std::move(sel);  // kept even when the selection failed: the host frees it
      Writer w = reply(st, error.message);
      w.put(id);
      w.put_vector(selected);
      return w;
    }
    case Message::selection_free: {
      auto it = c.selections.find(r.get<uint64_t>());
      if (it == c.selections.end()) return reply(BATON_OK, "");
      if (auto f = delegate_api().selection_free) f(it->second->group.instance->state, it->second->state);
      it->second->freed = true;
      c.selections.erase(it);  // partitions made from it keep the graph until they go
      return reply(BATON_OK, "");
    }
    case Message::partition_init: {
      Instance* in = instance(r, false);
      if (!in || !in->created) return reply(BATON_INVALID_ARGUMENT, "bad request: no created instance");
      auto g = std::make_unique<Group>();
      g->instance = in;
      if (const uint64_t from = r.get<uint64_t>(); from != 0) {
        // A partition of a select_nodes round: its nodes and tensors are that round's graph's.
        auto it = c.selections.find(from);
        if (it == c.selections.end()) return reply(BATON_INVALID_ARGUMENT, "bad request: unknown selection");
        g->selection = it->second;
        g->tensors = g->selection->group.tensors;
        for (int32_t index : r.get_vector<int32_t>()) {
          baton_node* n = graph_node_at(g->selection->graph, index);
          if (!n) return reply(BATON_INVALID_ARGUMENT, "bad request: node " + std::to_string(index) + " not in the graph");
          g->nodes.push_back(n);
        }
        g->partition.selection = g->selection->state;
      } else if (!read_group(r, *g, why)) {
        return reply(BATON_INVALID_ARGUMENT, "bad request: " + why);
      }
      g->partition.id = r.get<int32_t>();
      g->partition.inputs = read_slots(r, *g);
      g->partition.outputs = read_slots(r, *g);
      for (baton_node* n : g->nodes) g->partition.nodes.push_back(n);
      const baton_status st = delegate_api().partition_init(in->state, &g->partition, &g->state, &error);
      const uint64_t id = c.next_handle++;
      c.groups[id] = std::move(g);  // kept even when init failed: the host frees it
      Writer w = reply(st, error.message);
      w.put(id);
      return w;
    }
    case Message::kernel_init: {
      Instance* in = instance(r, false);
      if (!in || !in->created) return reply(BATON_INVALID_ARGUMENT, "bad request: no created instance");
      auto g = std::make_unique<Group>();
      g->instance = in;
      if (!read_group(r, *g, why) || g->nodes.size() != 1) return reply(BATON_INVALID_ARGUMENT, "bad request: " + why);
      g->kernel = find_kernel(*g->nodes[0]);
      if (!g->kernel) return reply(BATON_ERROR, "the plugin declares no kernel for this node");
      baton_status st = BATON_OK;
      if (auto init = kernel_fn(g->kernel, &baton_kernel::init)) st = init(in->state, g->nodes[0], &g->state, &error);
      const uint64_t id = c.next_handle++;
      c.groups[id] = std::move(g);
      Writer w = reply(st, error.message);
      w.put(id);
      return w;
    }
    case Message::partition_prepare:
    case Message::kernel_prepare: {
      const bool partition = type == Message::partition_prepare;
      Group* g = find_group(r.get<uint64_t>());
      if (!g) return reply(BATON_INVALID_ARGUMENT, "bad request: unknown handle");
      read_shapes(r, *g, partition);
      if (!read_places(r, *g, why)) return reply(BATON_INVALID_ARGUMENT, "bad request: " + why);
      const baton_status st =
          partition ? delegate_api().partition_prepare
                          ? delegate_api().partition_prepare(g->instance->state, g->state, &g->partition, &error)
                          : BATON_OK
                    : kernel_fn(g->kernel, &baton_kernel::prepare)(g->instance->state, g->state, g->nodes[0],
                                                                   &error);
      Writer w = reply(st, error.message);
      write_shapes(w, *g);
      return w;
    }
    case Message::partition_invoke:
    case Message::kernel_invoke: {
      const bool partition = type == Message::partition_invoke;
      Group* g = find_group(r.get<uint64_t>());
      if (!g) return reply(BATON_INVALID_ARGUMENT, "bad request: unknown handle");
      if (!read_places(r, *g, why)) return reply(BATON_INVALID_ARGUMENT, "bad request: " + why);
      const baton_status st =
          partition ? delegate_api().partition_invoke(g->instance->state, g->state, &g->partition, &error)
                    : kernel_fn(g->kernel, &baton_kernel::invoke)(g->instance->state, g->state, g->nodes[0],
                                                                  &error);
      return reply(st, error.message);
    }
    case Message::partition_free:
    case Message::kernel_free: {
      const uint64_t id = r.get<uint64_t>();
      Group* g = find_group(id);
      if (!g) return reply(BATON_OK, "");
      if (type == Message::partition_free) {
        if (auto f = delegate_api().partition_free) f(g->instance->state, g->state);
      } else if (auto f = kernel_fn(g->kernel, &baton_kernel::free)) {
        f(g->instance->state, g->state);
      }
      c.groups.erase(id);
      return reply(BATON_OK, "");
    }
    case Message::destroy: {
      const uint64_t id = r.get<uint64_t>();
      auto it = c.instances.find(id);
      if (it == c.instances.end()) return reply(BATON_OK, "");
      // The host frees its work before it destroys the plugin; what is left (a host that lost track)
      // is forgotten, not freed: the plugin's own free functions are not called on state it may have dropped.
      std::erase_if(c.groups, [&](const auto& g) { return g.second->instance == it->second.get(); });
      std::erase_if(c.selections, [&](const auto& s) { return s.second->group.instance == it->second.get(); });
      if (it->second->created && c.desc->destroy) c.desc->destroy(it->second->state);
      c.instances.erase(it);
      return reply(BATON_OK, "");
    }
    default:
      return reply(BATON_INVALID_ARGUMENT, "bad request: unknown message " + std::to_string(static_cast<uint32_t>(type)));
  }
}

void map_block(Reader& r, std::vector<int>& fds) {
  const uint64_t id = r.get<uint64_t>(), size = r.get<uint64_t>();
  const bool writable = r.get<uint8_t>() != 0;
  if (fds.empty()) return;
  void* p = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, writable ? MAP_SHARED : MAP_PRIVATE,
                   fds[0], 0);
  for (int fd : fds) ::close(fd);
  fds.clear();
  if (p != MAP_FAILED) child().blocks[id] = Block{static_cast<uint8_t*>(p), size};
}

}  // namespace
}  // namespace baton::isolation

int main(int argc, char** argv) {
  using namespace baton::isolation;
  if (argc < 2) {
    std::fprintf(stderr, "baton-plugin-host: runs a baton plugin for a host that isolates it; not for use by hand\n");
    return 2;
  }
  std::vector<uint8_t> bytes;
  std::vector<int> fds;
  for (;;) {
    bytes.clear();
    for (int fd : fds) ::close(fd);
    fds.clear();
    const Received got = receive_frame(kSocket, std::chrono::steady_clock::time_point::max(), bytes, fds);
    if (got != Received::frame) _exit(0);  // the host closed the socket: nothing left to do
    Reader r(bytes);
    const auto type = r.get<Message>();
    if (type == Message::map_block) {
      map_block(r, fds);
      continue;
    }
    if (type == Message::unmap_block) {
      const uint64_t id = r.get<uint64_t>();
      auto it = child().blocks.find(id);
      if (it != child().blocks.end()) {
        ::munmap(it->second.base, it->second.size);
        child().blocks.erase(it);
      }
      continue;
    }
    Writer w = type == Message::load ? load(argv[1])
               : type == Message::wrap ? wrap(r.get_string())
               : child().desc ? handle(type, r)
                              : reply(BATON_ERROR, "no plugin loaded");
    send(w);
  }
}
