// The tflite-delegates loader: wraps TFLite delegates found in a plugin folder into ordinary baton
// delegates.
// - External delegates (shared objects exporting tflite_plugin_create_delegate and
//   tflite_plugin_destroy_delegate, the interface of TFLite's external_delegate): named after their file
//   (libedgetpu.so.1 -> edgetpu); the keys of their [plugin.NAME] section are passed to
//   tflite_plugin_create_delegate as strings.
// - Stable delegates (TFL_TheStableDelegate, TFLite 2.12+): named by their delegate_name, created with
//   an empty TFLiteSettings table (stable_delegates.h); they take no options. Their delegate uses TFLite's
//   opaque API, which this loader provides (tflite_opaque.cc).
// The delegate chooses its nodes through TFLite's own Prepare / ReplaceNodeSubsetsWithDelegateKernels,
// over a TfLiteContext that baton emulates (tflite_graph.h), and each partition runs its kernel.
#include <dlfcn.h>

#include <cctype>
#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/plugin_api.h"
#include "stable_delegates.h"
#include "tflite_graph.h"

namespace tflite_delegates {
namespace {

const baton_host_api* g_api = nullptr;

using CreateFn = TfLiteDelegate* (*)(char** keys, char** values, size_t count, void (*report_error)(const char*));
using DestroyFn = void (*)(TfLiteDelegate*);

// One wrapped file, or one TfLiteDelegate object a program handed over (`object`, borrowed). Kept for
// the life of the process once made (TFLite delegates are not written to be unloaded), and shared by
// every registry that finds the same path ("TfLiteDelegate@ADDRESS" for an object).
struct External {
  std::string path, name;
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  TfLiteDelegate* object = nullptr;
  const TfLiteStableDelegate* stable = nullptr;
  std::string version = "unknown", description;
  baton_plugin_desc desc{};
};

std::mutex g_files_mutex;
std::map<std::string, std::unique_ptr<External>>& files() {
  static auto* map = new std::map<std::string, std::unique_ptr<External>>();
  return *map;
}

// tflite_plugin_create_delegate reports through a plain function: collect its messages per thread.
thread_local std::string t_reported;
void collect_report(const char* message) {
  if (!t_reported.empty()) t_reported += "; ";
  t_reported += message ? message : "";
}

// The state of one created wrapped delegate.
struct Wrapped {
  const External* external = nullptr;
  const baton_plugin_host* host = nullptr;
  TfLiteDelegate* delegate = nullptr;
  bool owned = true;  // made by tflite_plugin_create_delegate; not for an object handed over
};

// "libedgetpu.so.1" -> "edgetpu", "libxnn_ext.so" -> "xnn_ext".
std::string name_from_path(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (const size_t so = name.find(".so"); so != std::string::npos) name.resize(so);
  if (name.rfind("lib", 0) == 0) name.erase(0, 3);
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '-';
  }
  return name;
}

baton_status wrapped_create(const baton_plugin_host* host, void** state, baton_error* error) {
  const char* path = g_api->plugin_path(host);
  const External* external = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_files_mutex);
    auto it = files().find(path ? path : "");
    if (it != files().end()) external = it->second.get();
  }
  if (!external) {
    g_api->error_set(error, "tflite-delegates: this plugin's file was not wrapped by this loader");
    return BATON_ERROR;
  }
  if (external->object) {
    *state = new Wrapped{external, host, external->object, false};
    return BATON_OK;
  }
  if (external->stable) {
    std::string why;
    TfLiteDelegate* delegate = create_stable_delegate(external->stable, &why);
    if (!delegate) {
      g_api->error_set(error, why.c_str());
      return BATON_ERROR;
    }
    *state = new Wrapped{external, host, delegate, true};
    return BATON_OK;
  }
  std::vector<std::string> keys, values;
  const char* key = nullptr;
  const char* value = nullptr;
  for (int32_t i = 0; g_api->option_entry(host, i, &key, &value); ++i) {
    keys.emplace_back(key);
    values.emplace_back(value);
  }
  std::vector<char*> key_ptrs, value_ptrs;
  for (size_t i = 0; i < keys.size(); ++i) {
    key_ptrs.push_back(keys[i].data());
    value_ptrs.push_back(values[i].data());
  }
  t_reported.clear();
  TfLiteDelegate* delegate = external->create(key_ptrs.data(), value_ptrs.data(), keys.size(), collect_report);
  if (!delegate) {
    const std::string why = t_reported.empty() ? "no reason reported" : t_reported;
    g_api->error_set(error, ("tflite_plugin_create_delegate returned no delegate: " + why).c_str());
    return BATON_ERROR;
  }
  *state = new Wrapped{external, host, delegate, true};
  return BATON_OK;
}

void wrapped_destroy(void* state) {
  auto* w = static_cast<Wrapped*>(state);
  if (!w) return;
  if (w->owned && w->external->stable) {
    destroy_stable_delegate(w->external->stable, w->delegate);
  } else if (w->owned) {
    w->external->destroy(w->delegate);
  }
  delete w;
}

int32_t check_node(void*, const baton_node*, baton_error* reason) {
  g_api->error_set(reason, "a TFLite delegate chooses its nodes itself (select_nodes, ABI 1.2)");
  return 0;
}

baton_status select_nodes(void* state, const baton_graph* graph, const int32_t* free_nodes, int32_t count,
                          uint8_t* selected, void** selection_state, baton_error* error) {
  auto* w = static_cast<Wrapped*>(state);
  auto* g = new TfliteGraph(g_api, w->host, w->delegate, graph);
  *selection_state = g;  // the host frees it, also after a failure
  return g->select(free_nodes, count, selected, error);
}

void selection_free(void*, void* selection_state) { delete static_cast<TfliteGraph*>(selection_state); }

baton_status partition_init(void*, const baton_partition* partition, void** partition_state, baton_error* error) {
  auto* g = static_cast<TfliteGraph*>(g_api->partition_selection(partition));
  if (!g) {
    g_api->error_set(error, "tflite-delegates: partition without a selection");
    return BATON_ERROR;
  }
  TfliteKernel* kernel = nullptr;
  const baton_status st = TfliteKernel::create(*g, partition, &kernel, error);
  *partition_state = kernel;
  return st;
}

baton_status partition_prepare(void*, void* partition_state, const baton_partition*, baton_error* error) {
  return static_cast<TfliteKernel*>(partition_state)->prepare(error);
}

baton_status partition_invoke(void*, void* partition_state, const baton_partition*, baton_error* error) {
  return static_cast<TfliteKernel*>(partition_state)->invoke(error);
}

void partition_free(void*, void* partition_state) { delete static_cast<TfliteKernel*>(partition_state); }

const baton_delegate_api kDelegateApi = {
    sizeof(baton_delegate_api), check_node,     partition_init, partition_prepare,
    partition_invoke,           partition_free, select_nodes,   selection_free,
};

// What this loader wraps lives for the process (TFLite delegates are not written to be unloaded, and the
// wrapped descriptors point into this library): once it wraps one, the library stays mapped when the host
// closes it. A loader that wraps nothing is unloaded with it (no TFLite delegate in the plugin folders).
void pin_this_library() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&pin_this_library), &self) && self.dli_fname) {
      dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
  });
}

// Fills the descriptor of a wrapped delegate and keeps it (g_files_mutex held).
const baton_plugin_desc* keep(std::unique_ptr<External> external, std::string description) {
  pin_this_library();
  external->description = std::move(description);
  baton_plugin_desc& d = external->desc;
  d.struct_size = sizeof(baton_plugin_desc);
  d.abi_major = BATON_ABI_VERSION_MAJOR;
  d.abi_minor = BATON_ABI_VERSION_MINOR;
  d.name = external->name.c_str();
  d.version = external->version.c_str();
  d.kind = BATON_PLUGIN_DELEGATE;
  d.description = external->description.c_str();
  d.flags = external->stable ? 0 : BATON_PLUGIN_FLAG_ANY_OPTIONS;  // a stable delegate takes TFLiteSettings only
  d.create = wrapped_create;
  d.destroy = wrapped_destroy;
  d.delegate = &kDelegateApi;
  const std::string path = external->path;
  return &files().insert_or_assign(path, std::move(external)).first->second->desc;
}

// A stable delegate's file (g_files_mutex held).
const baton_plugin_desc* wrap_stable(const char* path, baton_error* error) {
  StableFile file;
  std::string why;
  if (!open_stable_delegate(path, &file, &why)) {
    g_api->error_set(error, why.c_str());
    return nullptr;
  }
  auto external = std::make_unique<External>();
  external->path = path;
  external->name = file.name;
  external->version = file.version;
  external->stable = file.symbol;
  return keep(std::move(external), "TFLite stable delegate '" + std::string(file.symbol->delegate_name) +
                                       "' (stable delegate ABI " + file.abi + "); created with default TFLiteSettings, "
                                       "it takes no options");
}

// Offered each file without a baton entry point: ours when it exports tflite_plugin_create_delegate or
// TFL_TheStableDelegate.
const baton_plugin_desc* wrap_file(void*, const char* path, baton_error* error) {
  const bool external_delegate = g_api->file_exports_symbol(path, "tflite_plugin_create_delegate") == 1;
  if (!external_delegate && g_api->file_exports_symbol(path, TFL_STABLE_DELEGATE_SYMBOL) != 1) return nullptr;
  std::lock_guard<std::mutex> lock(g_files_mutex);
  auto it = files().find(path);
  if (it != files().end()) return &it->second->desc;
  if (!external_delegate) return wrap_stable(path, error);
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    g_api->error_set(error, (std::string("cannot be loaded: ") + (why ? why : "dlopen failed")).c_str());
    return nullptr;
  }
  auto external = std::make_unique<External>();
  external->path = path;
  external->name = name_from_path(path);
  external->create = reinterpret_cast<CreateFn>(dlsym(library, "tflite_plugin_create_delegate"));
  external->destroy = reinterpret_cast<DestroyFn>(dlsym(library, "tflite_plugin_destroy_delegate"));
  if (!external->create || !external->destroy) {
    dlclose(library);
    g_api->error_set(error, "a TFLite external delegate without tflite_plugin_destroy_delegate");
    return nullptr;
  }
  return keep(std::move(external),
              "TFLite external delegate; its options are passed to it as strings (baton cannot validate them)");
}

// A TfLiteDelegate object a program handed over (the TFLite-compatible library's
// TfLiteInterpreterOptionsAddDelegate): hosted exactly like an external delegate's.
const baton_plugin_desc* wrap_object(void*, const char* format, void* object, const char* name, baton_error*) {
  if (std::string(format) != "TfLiteDelegate" || !object) return nullptr;
  char address[32];
  std::snprintf(address, sizeof address, "%p", object);
  const std::string path = std::string(format) + "@" + address;
  std::lock_guard<std::mutex> lock(g_files_mutex);
  auto external = std::make_unique<External>();
  external->path = path;
  external->name = name;
  external->object = static_cast<TfLiteDelegate*>(object);
  return keep(std::move(external), "a TfLiteDelegate object handed over by the program (TFLite C API)");
}

const baton_loader_api kLoaderApi = {sizeof(baton_loader_api), wrap_file, wrap_object};

const baton_plugin_desc kLoader = [] {
  baton_plugin_desc d{};
  d.struct_size = sizeof(baton_plugin_desc);
  d.abi_major = BATON_ABI_VERSION_MAJOR;
  d.abi_minor = BATON_ABI_VERSION_MINOR;
  d.name = "tflite-delegates";
  d.version = "1.0";
  d.kind = BATON_PLUGIN_LOADER;
  d.description = "hosts TFLite external delegates (tflite_plugin_create_delegate) and stable delegates "
                  "(TFL_TheStableDelegate) found in plugin folders";
  d.loader = &kLoaderApi;
  return d;
}();

}  // namespace
}  // namespace tflite_delegates

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_major, uint32_t host_minor,
                                                                          const baton_host_api* api,
                                                                          baton_error* error) {
  // Loaders, plugin_path, option_entry and select_nodes are ABI 1.2.
  if (host_major != BATON_ABI_VERSION_MAJOR || host_minor < 2 ||
      !BATON_STRUCT_HAS(api, baton_host_api, partition_selection)) {
    if (api && api->error_set) api->error_set(error, "tflite-delegates needs a host with ABI 1.2 or later");
    return nullptr;
  }
  tflite_delegates::g_api = api;
  return &tflite_delegates::kLoader;
}
