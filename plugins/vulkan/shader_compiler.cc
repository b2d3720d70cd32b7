#include "shader_compiler.h"

#include <dlfcn.h>
#include <glslang/build_info.h>  // glslang's version, as macros: no glslang code is linked here

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>

#include "glslang_module.h"
#include "vk_error.h"

namespace baton::vulkan {
namespace {

// The module (glslang_module.h), loaded on the first compile and kept for the process's life (glslang's
// thread-local and static state makes unloading it unsafe); glslang's process tables are initialised while
// a GlslangProcess lives and a compile has needed them.
struct Compiler {
  std::mutex mutex;
  const baton_vulkan_glslang_module* module = nullptr;
  std::string load_error;  // why the module could not be loaded, once tried
  int users = 0;           // live GlslangProcess objects
  bool initialized = false;
};

Compiler& compiler() {
  static Compiler c;
  return c;
}

// The module's path: beside this plugin's own file.
std::string module_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_path), &info) == 0 || !info.dli_fname) return BATON_VULKAN_GLSLANG_MODULE_FILE;
  return (std::filesystem::path(info.dli_fname).parent_path() / BATON_VULKAN_GLSLANG_MODULE_FILE).string();
}

// The module, loaded and initialised; throws ShaderError naming the file and the reason when it cannot be.
const baton_vulkan_glslang_module& ready_module(Compiler& c) {
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.module && c.load_error.empty()) {
    const std::string path = module_path();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    auto entry = handle ? reinterpret_cast<baton_vulkan_glslang_module_fn>(dlsym(handle, BATON_VULKAN_GLSLANG_MODULE_ENTRY))
                        : nullptr;
    const baton_vulkan_glslang_module* m = entry ? entry() : nullptr;
    if (!handle) {
      const char* why = dlerror();
      c.load_error = "the shader compiler " + path + " could not be loaded: " + (why ? why : "no reason given");
    } else if (!m || m->version != BATON_VULKAN_GLSLANG_MODULE_VERSION) {
      c.load_error = "the shader compiler " + path + " is not the one this plugin was built with";
    } else {
      c.module = m;
    }
  }
  if (!c.module) throw ShaderError(c.load_error);
  if (!c.initialized) {
    c.module->initialize();
    c.initialized = true;
  }
  return *c.module;
}

}  // namespace

GlslangProcess::GlslangProcess() {
  Compiler& c = compiler();
  std::lock_guard<std::mutex> lock(c.mutex);
  ++c.users;
}

GlslangProcess::~GlslangProcess() {
  Compiler& c = compiler();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (--c.users == 0 && c.initialized) {
    c.module->finalize();
    c.initialized = false;
  }
}

std::string compiler_key() {
  return "glslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) + "." +
         std::to_string(GLSLANG_VERSION_PATCH) + " vulkan1.1 spirv1.3";
}

std::vector<uint32_t> compile_compute_shader(const std::string& name, const std::string& source) {
  const std::string what = "shader " + name + " did not compile: ";
  const baton_vulkan_glslang_module& module = ready_module(compiler());
  uint32_t* words = nullptr;
  size_t count = 0;
  char* log = nullptr;
  if (!module.compile(source.c_str(), &words, &count, &log)) {
    const std::string message = log ? log : "no message from glslang";
    std::free(log);
    throw ShaderError(what + message);
  }
  std::unique_ptr<uint32_t, decltype(&std::free)> owned(words, &std::free);
  return std::vector<uint32_t>(words, words + count);
}

}  // namespace baton::vulkan
