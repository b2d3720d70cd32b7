#include "shared_library.h"

#include <dlfcn.h>

namespace baton {

bool SharedLibrary::load(const std::string& path, std::string* why) {
  unload();
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* message = ::dlerror();
    *why = message ? message : "dlopen failed without a message";
  }
  return handle_ != nullptr;
}

void* SharedLibrary::symbol(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

void SharedLibrary::unload() {
  if (handle_) ::dlclose(handle_);
  handle_ = nullptr;
}

}  // namespace baton
