// The vulkan delegate costs nothing where it is not used: on a machine whose only Vulkan device is a CPU
// implementation (lavapipe), building the default chain (which probes it) and even naming it in the chain
// without naming that device must not load a Vulkan driver into the process, nor the Vulkan loader itself
// (libvulkan.so.1, opened on first use: plugins/vulkan/vk.h), nor the plugin's shader compiler
// (baton-vulkan-glslang, about a megabyte of memory once loaded). This is its own program,
// which links no Vulkan library: whatever driver is mapped here, the plugin mapped it. Checked with a
// fresh device cache (the helper process answers) and again with that cache (the file answers); last, a
// positive control: with the device named, the driver is mapped, so the check can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

// File names of the Vulkan drivers installed here (the manifests' library_path), plus LLVM, which
// Mesa's software drivers bring, the Vulkan loader and the plugin's shader compiler module.
std::set<std::string> driver_names() {
  std::set<std::string> names = {"libLLVM", "baton-vulkan-glslang", "libvulkan.so"};
  std::error_code ec;
  for (const char* dir : {"/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"}) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::ifstream f(e.path());
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      const size_t key = text.find("\"library_path\"");
      if (key == std::string::npos) continue;
      const size_t open = text.find('"', text.find(':', key) + 1);
      const size_t close = text.find('"', open + 1);
      if (open == std::string::npos || close == std::string::npos) continue;
      names.insert(fs::path(text.substr(open + 1, close - open - 1)).filename().string());
    }
  }
  return names;
}

// The driver libraries (and the compiler module) mapped into this process now.
std::set<std::string> mapped_drivers() {
  const std::set<std::string> drivers = driver_names();
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const std::string file = fs::path(line.substr(line.find_last_of(' ') + 1)).filename().string();
    for (const std::string& d : drivers) {
      if (!file.empty() && file.rfind(d, 0) == 0) found.insert(file);
    }
  }
  return found;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += x + " ";
  return out;
}

std::vector<uint8_t> relu_model() {
  OpGraph g;
  const int32_t in = g.input({1, 4});
  const int32_t out = g.output({1, 4});
  g.op(19 /* RELU */, {in}, {out});
  return g.build();
}

class VulkanLazy : public ::testing::Test {
 protected:
  Expected<std::shared_ptr<Environment>> env(const std::string& config, bool name_vulkan) {
    conf_.write("baton.conf", "[plugin.vulkan]\ncache-dir = " + cache_.path() + "\n" + config);
    EnvironmentOptions o;
    o.plugin_dirs = {VULKAN_PLUGIN_DIR, BUILTIN_PACK_DIR};
    o.config_path = conf_.file("baton.conf");
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.threads = 1;
    o.state_dir = test_state_dir();
    if (name_vulkan) o.delegates = std::vector<std::string>{"vulkan"};
    o.log = [log = log_](baton_log_level, const std::string& line) { log->lines.push_back(line); };
    return Environment::create(o);
  }
  static TempDir cache_;
  TempDir conf_;
  std::shared_ptr<Captured> log_ = std::make_shared<Captured>();
};
TempDir VulkanLazy::cache_;

TEST_F(VulkanLazy, LavapipeUnnamedLoadsNoDriverAndTakesNothing) {
  ASSERT_TRUE(mapped_drivers().empty()) << joined(mapped_drivers());
  for (const bool warm_cache : {false, true}) {
    SCOPED_TRACE(warm_cache ? "device list from the cache" : "device list from the helper process");
    // The default chain probes vulkan.
    auto e = env("", false);
    ASSERT_TRUE(e) << e.error();
    const LoadedPlugin* vulkan = e.value()->registry().find("vulkan");
    ASSERT_NE(vulkan, nullptr);
    auto devices = const_cast<LoadedPlugin*>(vulkan)->devices();
    ASSERT_TRUE(devices) << devices.error();
    ASSERT_FALSE(devices->empty());
    if (std::any_of(devices->begin(), devices->end(), [](const DeviceInfo& d) { return d.kind != BATON_DEVICE_EMULATED; })) {
      GTEST_SKIP() << "this machine has a Vulkan device that is not a CPU implementation";
    }
    EXPECT_EQ(e.value()->find_placement("vulkan")->position, -1);
    EXPECT_FALSE(vulkan->created);
    EXPECT_FALSE(fs::is_empty(cache_.path()));  // the helper's answer was cached
    EXPECT_TRUE(mapped_drivers().empty()) << joined(mapped_drivers());

    // Named in the chain without its device named: created, refuses the node, still no driver.
    auto named = env("", true);
    ASSERT_TRUE(named) << named.error();
    auto model = load_model_buffer(relu_model(), "relu.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(named.value(), model.value());
    ASSERT_TRUE(interp) << interp.error();
    EXPECT_EQ(interp.value()->placement(0).plugin, "builtin");
    ASSERT_FALSE(interp.value()->refusals(0).empty());
    EXPECT_NE(interp.value()->refusals(0)[0].reason().find("only a CPU implementation of Vulkan was found"), std::string::npos)
        << interp.value()->refusals(0)[0].reason();
    EXPECT_TRUE(mapped_drivers().empty()) << joined(mapped_drivers());
  }
}

// The positive control: with the device named the delegate runs on it, and the driver is mapped, and so
// is the compiler (the shader cache is new to this process). Runs after the test above (gtest keeps the
// order of one file), since a mapped driver stays mapped.
TEST_F(VulkanLazy, ZNamedDeviceLoadsTheDriver) {
  auto e = env("device = 0\n", true);
  ASSERT_TRUE(e) << e.error();
  auto model = load_model_buffer(relu_model(), "relu.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(e.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->placement(0).plugin, "vulkan");
  EXPECT_FALSE(mapped_drivers().empty());
  const auto mapped = mapped_drivers();
  EXPECT_TRUE(std::any_of(mapped.begin(), mapped.end(), [](const std::string& f) {
    return f.rfind("baton-vulkan-glslang", 0) == 0;
  })) << joined(mapped);
}

}  // namespace
}  // namespace baton::test
