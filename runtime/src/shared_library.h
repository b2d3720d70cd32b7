// A plugin's shared object, opened with dlopen (RTLD_NOW | RTLD_LOCAL: every symbol resolved at once, none
// shared with the next plugin) and closed by unload() or the destructor. The plugin ABI is C, so a symbol
// is its name as dlsym reads it. (Boost.DLL did this before: it converts every path to a
// std::filesystem::path, whose code is 64 KB of libstdc++ pages that each process faulted in for it.)
#ifndef BATON_SHARED_LIBRARY_H
#define BATON_SHARED_LIBRARY_H

#include <string>

namespace baton {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary() { unload(); }

  // Opens `path` (closing what this held); false with the dynamic loader's message in *why if it cannot.
  bool load(const std::string& path, std::string* why);
  bool is_loaded() const { return handle_ != nullptr; }
  // The address of an exported symbol; null when none is loaded or it has no such symbol.
  void* symbol(const char* name) const;
  bool has(const char* name) const { return symbol(name) != nullptr; }
  void unload();

 private:
  void* handle_ = nullptr;
};

}  // namespace baton

#endif  // BATON_SHARED_LIBRARY_H
