// GLSL compute shaders to SPIR-V with glslang's C interface, at run time. Targets Vulkan 1.1 /
// SPIR-V 1.3, which every device the delegate accepts can run. glslang itself is in the module
// baton-vulkan-glslang beside the plugin (glslang_module.h), loaded on the first compile.
#ifndef BATON_VULKAN_SHADER_COMPILER_H
#define BATON_VULKAN_SHADER_COMPILER_H

#include <cstdint>
#include <string>
#include <vector>

namespace baton::vulkan {

// glslang's process-wide tables, held while a plugin state lives: set up by the first compile, released
// when the last holder goes (glslang counts its users, so two loaded copies of the plugin and nested
// lifetimes are fine).
class GlslangProcess {
 public:
  GlslangProcess();
  ~GlslangProcess();
  GlslangProcess(const GlslangProcess&) = delete;
  GlslangProcess& operator=(const GlslangProcess&) = delete;
};

// Compiles `source` (a complete compute shader) and returns its SPIR-V words. Throws ShaderError
// "shader NAME did not compile: <glslang's log>" on any failure, and one naming the module's file when
// the module cannot be loaded.
std::vector<uint32_t> compile_compute_shader(const std::string& name, const std::string& source);

// What identifies the compiler's output besides the source: glslang's version and the target.
std::string compiler_key();

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_SHADER_COMPILER_H
