// Compiled SPIR-V on disk, so the second start of a model compiles nothing. One file per shader
// variant, named by a hash of its key; the file repeats the whole key (the shader's full source with its
// specialisation defines, the compiler and the driver), so a hash collision or a file from another
// build reads as a miss, never as the wrong shader. A damaged file also reads as a miss and is rewritten.
// Writes go to a temporary file renamed into place, so concurrent processes never see half a file.
// Beside the shaders, one file per device and driver keeps the driver's pipeline cache (the compiled
// pipelines' bytes as vkGetPipelineCacheData gives them), checked the same way, and the workgroup sizes
// measured on it (tuning.h).
#ifndef BATON_VULKAN_SHADER_CACHE_H
#define BATON_VULKAN_SHADER_CACHE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton::vulkan {

class ShaderCache {
 public:
  // An empty `dir` turns the cache off.
  explicit ShaderCache(std::string dir) : dir_(std::move(dir)) {}

  // $XDG_CACHE_HOME/baton/vulkan, else $HOME/.cache/baton/vulkan; empty when neither is set.
  static std::string default_dir();

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  std::string path_for(const std::string& key) const;

  std::optional<std::vector<uint32_t>> load(const std::string& key) const;
  // Returns false (and a reason) when the file could not be written; the shader still runs.
  bool store(const std::string& key, const std::vector<uint32_t>& spirv, std::string* why) const;

  // The pipeline cache's bytes kept under `key` (HASH.pipelines); none when absent or damaged.
  std::optional<std::string> load_pipelines(const std::string& key) const;
  bool store_pipelines(const std::string& key, const std::string& data, std::string* why) const;
  // The workgroup tuning table's text kept under `key` (HASH.tuning), checked the same way.
  std::optional<std::string> load_tuning(const std::string& key) const;
  bool store_tuning(const std::string& key, const std::string& text, std::string* why) const;
  std::string tuning_path(const std::string& key) const { return path(key, "tuning"); }

 private:
  std::string path(const std::string& key, const char* extension) const;
  // A file's payload: `count` units of `unit` bytes after the magic and the key it must repeat.
  std::optional<std::string> read_entry(const std::string& path, const char* magic, const std::string& key, size_t unit) const;
  bool write_entry(const std::string& path, const char* magic, const std::string& key, const std::string& payload, size_t unit,
                   std::string* why) const;

  std::string dir_;
};

}  // namespace baton::vulkan

#endif  // BATON_VULKAN_SHADER_CACHE_H
