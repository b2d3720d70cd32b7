#include "stable_delegates.h"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <mutex>

namespace tflite_delegates {

namespace {

// A stable delegate is built with TFLite's opaque API undefined, to be bound to the runtime's when it
// is loaded. The loader defines and exports that API (tflite_opaque.cc), but the host opened the loader
// with RTLD_LOCAL, where a library loaded later cannot see it. So before the first stable delegate is
// opened the loader adds itself to the global scope (RTLD_NOLOAD | RTLD_GLOBAL on its own file). This
// happens only in a process that meets a stable delegate; only the TfLiteOpaque*,
// TfLiteRegistrationExternal* and TfLiteOperator* names (and a marker) are exported, everything else of
// the loader stays hidden.
//
// The first library in the global scope that defines a name wins: if the process already has another
// TFLite runtime with the opaque API (a program linked against TFLite 2.11+), the stable delegate would
// bind to that runtime and be handed our context: refused instead, with that reason.
bool opaque_api_is_ours(std::string* why) {
  static std::once_flag once;
  static std::string problem;
  std::call_once(once, [] {
    Dl_info self{};
    if (!dladdr(reinterpret_cast<void*>(&empty_tflite_settings), &self) || !self.dli_fname ||
        !dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL | RTLD_NODELETE)) {
      problem = "the tflite-delegates loader could not make its TFLite opaque API visible to the delegate";
    }
  });
  if (!problem.empty()) {
    *why = problem;
    return false;
  }
  void* resolved = dlsym(RTLD_DEFAULT, "TfLiteOpaqueContextReplaceNodeSubsetsWithDelegateKernels");
  Dl_info from{};
  if (!resolved || !dladdr(resolved, &from) || !from.dli_fname) {
    *why = "the TFLite opaque API of the tflite-delegates loader is not visible in this process";
    return false;
  }
  // A baton loader (this one, or another copy of it loaded earlier from another folder) is fine.
  void* provider = dlopen(from.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  const bool ours = provider && dlsym(provider, "baton_tflite_opaque_api") != nullptr;
  if (provider) dlclose(provider);
  if (!ours) {
    *why = std::string("another TFLite runtime in this process (") + from.dli_fname +
           ") already provides TFLite's opaque API; the stable delegate would bind to it instead of baton";
    return false;
  }
  return true;
}

// "XNNPACKDelegate" -> "xnnpackdelegate", "vendor gpu.delegate" -> "vendor-gpu-delegate".
std::string plugin_name(const char* delegate_name) {
  std::string name = delegate_name;
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '-';
  }
  return name;
}

}  // namespace

bool open_stable_delegate(const char* path, StableFile* out, std::string* why) {
  if (!opaque_api_is_ours(why)) return false;
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* e = dlerror();
    // Typically an opaque-API function baton does not provide: the message names it.
    *why = std::string("cannot be loaded: ") + (e ? e : "dlopen failed");
    return false;
  }
  const auto* s = static_cast<const TfLiteStableDelegate*>(dlsym(library, TFL_STABLE_DELEGATE_SYMBOL));
  auto refuse = [&](const std::string& reason) {
    dlclose(library);
    *why = "a TFLite stable delegate: " + reason;
    return false;
  };
  if (!s) return refuse(TFL_STABLE_DELEGATE_SYMBOL " is not there once loaded");
  if (!s->delegate_abi_version) return refuse("no delegate_abi_version");
  const std::string abi = s->delegate_abi_version;
  if (abi.substr(0, abi.find('.')) != "1") {
    return refuse("delegate_abi_version " + abi + " is not supported (baton hosts stable delegate ABI 1.x, TFLite's " +
                  TFL_STABLE_DELEGATE_ABI_VERSION + ")");
  }
  if (!s->delegate_name || !*s->delegate_name) return refuse("no delegate_name");
  if (!s->delegate_plugin || !s->delegate_plugin->create || !s->delegate_plugin->destroy) {
    return refuse("delegate_plugin lacks create or destroy");
  }
  out->symbol = s;  // the library stays loaded for the process, as TFLite's own loader leaves it
  out->name = plugin_name(s->delegate_name);
  out->version = s->delegate_version && *s->delegate_version ? s->delegate_version : "unknown";
  out->abi = abi;
  return true;
}

TfLiteDelegate* create_stable_delegate(const TfLiteStableDelegate* stable, std::string* why) {
  const TfLiteOpaqueDelegatePlugin* plugin = stable->delegate_plugin;
  TfLiteOpaqueDelegate* d = plugin->create(empty_tflite_settings());
  if (d) return reinterpret_cast<TfLiteDelegate*>(d);
  // There is no delegate to ask; TFLite's plugins answer get_delegate_errno without one.
  *why = "the stable delegate's create returned no delegate";
  if (plugin->get_delegate_errno) *why += " (get_delegate_errno: " + std::to_string(plugin->get_delegate_errno(nullptr)) + ")";
  return nullptr;
}

void destroy_stable_delegate(const TfLiteStableDelegate* stable, TfLiteDelegate* delegate) {
  stable->delegate_plugin->destroy(reinterpret_cast<TfLiteOpaqueDelegate*>(delegate));
}

const void* empty_tflite_settings() {
  // A flatbuffer table is an int32 offset back to its vtable; a vtable of 4 bytes (its own size, then
  // the table's size) lists no field, so every accessor of TFLiteSettings returns its default.
  alignas(8) static const unsigned char kTable[8] = {4, 0, 4, 0, 4, 0, 0, 0};
  return kTable + 4;
}

}  // namespace tflite_delegates
