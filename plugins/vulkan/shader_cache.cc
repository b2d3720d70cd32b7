#include "shader_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fnv1a.h"

namespace baton::vulkan {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMagicBytes = 8;
constexpr char kSpirvFileMagic[kMagicBytes] = {'B', 'A', 'T', 'O', 'N', 'S', 'P', 'V'};
constexpr char kPipelinesFileMagic[kMagicBytes] = {'B', 'A', 'T', 'O', 'N', 'P', 'L', 'C'};
constexpr char kTuningFileMagic[kMagicBytes] = {'B', 'A', 'T', 'O', 'N', 'W', 'G', 'T'};
constexpr uint32_t kSpirvMagic = 0x07230203u;

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

bool get_u32(const std::string& in, size_t& at, uint32_t* v) {
  if (in.size() - at < sizeof *v) return false;
  std::memcpy(v, in.data() + at, sizeof *v);
  at += sizeof *v;
  return true;
}

}  // namespace

std::string ShaderCache::default_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/baton/vulkan";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/baton/vulkan";
  return "";
}

std::string ShaderCache::path(const std::string& key, const char* extension) const {
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.%s", static_cast<unsigned long long>(fnv1a(key)), extension);
  return dir_ + "/" + name;
}

std::string ShaderCache::path_for(const std::string& key) const { return path(key, "spv"); }

std::optional<std::string> ShaderCache::read_entry(const std::string& file, const char* magic, const std::string& key,
                                                   size_t unit) const {
  if (!enabled()) return std::nullopt;
  std::ifstream f(file, std::ios::binary);
  if (!f) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < kMagicBytes || std::memcmp(bytes.data(), magic, kMagicBytes) != 0) return std::nullopt;
  size_t at = kMagicBytes;
  uint32_t key_size = 0, count = 0;
  if (!get_u32(bytes, at, &key_size) || bytes.size() - at < key_size) return std::nullopt;
  if (bytes.compare(at, key_size, key) != 0 || key_size != key.size()) return std::nullopt;
  at += key_size;
  if (!get_u32(bytes, at, &count) || count == 0 || (bytes.size() - at) != static_cast<size_t>(count) * unit) {
    return std::nullopt;
  }
  return bytes.substr(at);
}

bool ShaderCache::write_entry(const std::string& file, const char* magic, const std::string& key, const std::string& payload,
                              size_t unit, std::string* why) const {
  if (!enabled()) return true;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    *why = "cannot create " + dir_ + ": " + ec.message();
    return false;
  }
  std::string bytes(magic, kMagicBytes);
  put_u32(bytes, static_cast<uint32_t>(key.size()));
  bytes += key;
  put_u32(bytes, static_cast<uint32_t>(payload.size() / unit));
  bytes += payload;
  const std::string tmp = file + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      *why = "cannot write " + tmp;
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    *why = "cannot rename " + tmp + " to " + file + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::optional<std::vector<uint32_t>> ShaderCache::load(const std::string& key) const {
  const std::optional<std::string> payload = read_entry(path_for(key), kSpirvFileMagic, key, 4);
  if (!payload) return std::nullopt;
  std::vector<uint32_t> spirv(payload->size() / 4);
  std::memcpy(spirv.data(), payload->data(), payload->size());
  if (spirv[0] != kSpirvMagic) return std::nullopt;
  return spirv;
}

bool ShaderCache::store(const std::string& key, const std::vector<uint32_t>& spirv, std::string* why) const {
  const std::string payload(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4);
  return write_entry(path_for(key), kSpirvFileMagic, key, payload, 4, why);
}

std::optional<std::string> ShaderCache::load_pipelines(const std::string& key) const {
  return read_entry(path(key, "pipelines"), kPipelinesFileMagic, key, 1);
}

bool ShaderCache::store_pipelines(const std::string& key, const std::string& data, std::string* why) const {
  return write_entry(path(key, "pipelines"), kPipelinesFileMagic, key, data, 1, why);
}

std::optional<std::string> ShaderCache::load_tuning(const std::string& key) const {
  return read_entry(tuning_path(key), kTuningFileMagic, key, 1);
}

bool ShaderCache::store_tuning(const std::string& key, const std::string& text, std::string* why) const {
  return write_entry(tuning_path(key), kTuningFileMagic, key, text, 1, why);
}

}  // namespace baton::vulkan
