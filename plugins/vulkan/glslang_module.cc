// baton-vulkan-glslang: glslang behind the small C table of glslang_module.h, loaded by the vulkan plugin
// when it first compiles a shader.
#include "glslang_module.h"

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace {

struct ShaderDeleter {
  void operator()(glslang_shader_t* s) const { glslang_shader_delete(s); }
};
struct ProgramDeleter {
  void operator()(glslang_program_t* p) const { glslang_program_delete(p); }
};

char* copied(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

int32_t fail(char** log, const char* message, const char* fallback) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  *log = copied(s.empty() ? fallback : s);
  return 0;
}

int32_t compile(const char* source, uint32_t** words, size_t* count, char** log) {
  *words = nullptr;
  *count = 0;
  *log = nullptr;
  try {
    glslang_input_t input{};
    input.language = GLSLANG_SOURCE_GLSL;
    input.stage = GLSLANG_STAGE_COMPUTE;
    input.client = GLSLANG_CLIENT_VULKAN;
    input.client_version = GLSLANG_TARGET_VULKAN_1_1;
    input.target_language = GLSLANG_TARGET_SPV;
    input.target_language_version = GLSLANG_TARGET_SPV_1_3;
    input.code = source;
    input.default_version = 450;
    input.default_profile = GLSLANG_NO_PROFILE;
    input.messages = static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
    input.resource = glslang_default_resource();
    std::unique_ptr<glslang_shader_t, ShaderDeleter> shader(glslang_shader_create(&input));
    if (!shader) return fail(log, nullptr, "glslang could not create a shader");
    if (!glslang_shader_preprocess(shader.get(), &input) || !glslang_shader_parse(shader.get(), &input)) {
      return fail(log, glslang_shader_get_info_log(shader.get()), "no message from glslang");
    }
    std::unique_ptr<glslang_program_t, ProgramDeleter> program(glslang_program_create());
    if (!program) return fail(log, nullptr, "glslang could not create a program");
    glslang_program_add_shader(program.get(), shader.get());
    if (!glslang_program_link(program.get(), GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
      return fail(log, glslang_program_get_info_log(program.get()), "no message from glslang");
    }
    glslang_program_SPIRV_generate(program.get(), GLSLANG_STAGE_COMPUTE);
    const size_t n = glslang_program_SPIRV_get_size(program.get());
    if (n == 0) return fail(log, glslang_program_SPIRV_get_messages(program.get()), "no message from glslang");
    *words = static_cast<uint32_t*>(std::malloc(n * sizeof(uint32_t)));
    if (!*words) return fail(log, nullptr, "out of memory for the SPIR-V");
    glslang_program_SPIRV_get(program.get(), *words);
    *count = n;
    return 1;
  } catch (const std::bad_alloc&) {
    return fail(log, nullptr, "out of memory in glslang");
  } catch (...) {
    return fail(log, nullptr, "glslang threw an exception");
  }
}

const baton_vulkan_glslang_module kModule = {
    BATON_VULKAN_GLSLANG_MODULE_VERSION,
    [] { glslang_initialize_process(); },
    [] { glslang_finalize_process(); },
    compile,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const baton_vulkan_glslang_module* baton_vulkan_glslang_module_get() {
  return &kModule;
}
