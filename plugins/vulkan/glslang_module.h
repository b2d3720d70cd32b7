// The interface between the vulkan plugin and baton-vulkan-glslang, the module that holds glslang (and
// SPIRV-Tools). glslang is most of the plugin's size and its static initialisers and relocations touch
// about a megabyte at load, so it lives in a module of its own beside the plugin that shader_compiler.cc
// loads the first time a shader is compiled: a process that never runs a partition on vulkan (no GPU,
// another delegate first, or every shader in the on-disk cache) never maps it. Internal to the plugin: both
// sides are built together, so the version below only catches a stale module left beside a newer plugin.
#ifndef BATON_VULKAN_GLSLANG_MODULE_H
#define BATON_VULKAN_GLSLANG_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BATON_VULKAN_GLSLANG_MODULE_FILE "baton-vulkan-glslang.module"
#define BATON_VULKAN_GLSLANG_MODULE_ENTRY "baton_vulkan_glslang_module_get"
#define BATON_VULKAN_GLSLANG_MODULE_VERSION 1

typedef struct baton_vulkan_glslang_module {
  uint32_t version; /* BATON_VULKAN_GLSLANG_MODULE_VERSION */
  /* glslang's process-wide tables: glslang counts initialisations, each finalize undoes one. */
  void (*initialize)(void);
  void (*finalize)(void);
  /* Compiles a complete GLSL compute shader for Vulkan 1.1 / SPIR-V 1.3. On success returns 1 and sets
   * *words (malloc'd) and *count; on failure returns 0 and sets *log (malloc'd, glslang's message). The
   * caller frees either with free(). Never throws. */
  int32_t (*compile)(const char* source, uint32_t** words, size_t* count, char** log);
} baton_vulkan_glslang_module;

typedef const baton_vulkan_glslang_module* (*baton_vulkan_glslang_module_fn)(void);

#ifdef __cplusplus
}
#endif

#endif  // BATON_VULKAN_GLSLANG_MODULE_H
