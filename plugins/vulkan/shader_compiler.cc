#include "shader_compiler.h"

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <glslang/build_info.h>

#include <memory>

#include "vk_error.h"

namespace baton::vulkan {
namespace {

struct ShaderDeleter {
  void operator()(glslang_shader_t* s) const { glslang_shader_delete(s); }
};
struct ProgramDeleter {
  void operator()(glslang_program_t* p) const { glslang_program_delete(p); }
};

std::string trimmed(const char* log) {
  std::string s = log ? log : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "no message from glslang" : s;
}

}  // namespace

GlslangProcess::GlslangProcess() { glslang_initialize_process(); }
GlslangProcess::~GlslangProcess() { glslang_finalize_process(); }

std::string compiler_key() {
  return "glslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) + "." +
         std::to_string(GLSLANG_VERSION_PATCH) + " vulkan1.1 spirv1.3";
}

std::vector<uint32_t> compile_compute_shader(const std::string& name, const std::string& source) {
  glslang_input_t input{};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_1;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_3;
  input.code = source.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.messages = static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  input.resource = glslang_default_resource();
  const std::string what = "shader " + name + " did not compile: ";
  std::unique_ptr<glslang_shader_t, ShaderDeleter> shader(glslang_shader_create(&input));
  if (!shader) throw ShaderError(what + "glslang could not create a shader");
  if (!glslang_shader_preprocess(shader.get(), &input) || !glslang_shader_parse(shader.get(), &input)) {
    throw ShaderError(what + trimmed(glslang_shader_get_info_log(shader.get())));
  }
  std::unique_ptr<glslang_program_t, ProgramDeleter> program(glslang_program_create());
  if (!program) throw ShaderError(what + "glslang could not create a program");
  glslang_program_add_shader(program.get(), shader.get());
  if (!glslang_program_link(program.get(), GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT)) {
    throw ShaderError(what + trimmed(glslang_program_get_info_log(program.get())));
  }
  glslang_program_SPIRV_generate(program.get(), GLSLANG_STAGE_COMPUTE);
  const size_t words = glslang_program_SPIRV_get_size(program.get());
  if (words == 0) throw ShaderError(what + trimmed(glslang_program_SPIRV_get_messages(program.get())));
  std::vector<uint32_t> spirv(words);
  glslang_program_SPIRV_get(program.get(), spirv.data());
  return spirv;
}

}  // namespace baton::vulkan
