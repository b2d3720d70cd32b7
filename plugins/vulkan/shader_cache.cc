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

constexpr char kMagic[8] = {'B', 'A', 'T', 'O', 'N', 'S', 'P', 'V'};
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

std::string ShaderCache::path_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.spv", static_cast<unsigned long long>(fnv1a(key)));
  return dir_ + "/" + name;
}

std::optional<std::vector<uint32_t>> ShaderCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream f(path_for(key), std::ios::binary);
  if (!f) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  size_t at = sizeof kMagic;
  uint32_t key_size = 0, words = 0;
  if (!get_u32(bytes, at, &key_size) || bytes.size() - at < key_size) return std::nullopt;
  if (bytes.compare(at, key_size, key) != 0 || key_size != key.size()) return std::nullopt;
  at += key_size;
  if (!get_u32(bytes, at, &words) || words == 0 || (bytes.size() - at) != static_cast<size_t>(words) * 4) {
    return std::nullopt;
  }
  std::vector<uint32_t> spirv(words);
  std::memcpy(spirv.data(), bytes.data() + at, static_cast<size_t>(words) * 4);
  if (spirv[0] != kSpirvMagic) return std::nullopt;
  return spirv;
}

bool ShaderCache::store(const std::string& key, const std::vector<uint32_t>& spirv, std::string* why) const {
  if (!enabled()) return true;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    *why = "cannot create " + dir_ + ": " + ec.message();
    return false;
  }
  std::string bytes(kMagic, sizeof kMagic);
  put_u32(bytes, static_cast<uint32_t>(key.size()));
  bytes += key;
  put_u32(bytes, static_cast<uint32_t>(spirv.size()));
  bytes.append(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4);
  const std::string path = path_for(key);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      *why = "cannot write " + tmp;
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    *why = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

}  // namespace baton::vulkan
