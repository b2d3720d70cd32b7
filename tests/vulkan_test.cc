// The Vulkan delegate (plugins/vulkan) on the machine's Vulkan driver (Mesa's lavapipe where there is no
// GPU), always with the Khronos validation layer on: any validation warning or error fails the test.
// Here: device selection, the validation layer itself, memory planning, the shader cache, failures that
// must come back as statuses (a shader that does not compile, a failing Vulkan call, no driver at all),
// and the command line. The real models are in vulkan_real_models_test.cc, the ops and refusals in
// vulkan_ops_test.cc (shared set-up: vulkan_support.h). A few of the plugin's own sources (device
// choice, the device, the memory planner) are compiled into this program and tested directly.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "device_choice.h"
#include "gpu.h"
#include "interpreter.h"
#include "memory_plan.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_support.h"

// LeakSanitizer reads this from the program. Debian's Khronos validation layer (1.3.239) never frees the
// state its synchronisation validation keeps per command buffer (a reference cycle inside the layer:
// every block is allocated by the layer, none is reachable only through baton), so LSan would fail
// every test that records commands with validation on. Only that library's frames are suppressed.
extern "C" const char* __lsan_default_suppressions() { return "leak:libVkLayer_khronos_validation.so\n"; }

namespace baton::test {
namespace {

namespace fs = std::filesystem;
// The Vulkan functions, as the plugin calls them (vk.h): loaded once a vulkan::Gpu exists.
using namespace baton::vulkan;  // NOLINT(google-build-using-namespace)

// ---- devices -------------------------------------------------------------------------------------------

using vulkan::choose_device;
using vulkan::DeviceSummary;

TEST(VulkanDeviceChoice, PrefersDiscreteThenIntegratedThenAny) {
  // VkPhysicalDeviceType: 1 integrated, 2 discrete, 3 virtual, 4 CPU.
  const DeviceSummary cpu{"llvmpipe", 4, VK_API_VERSION_1_3, "", ""};
  const DeviceSummary igpu{"Intel Iris", 1, VK_API_VERSION_1_3, "", ""};
  const DeviceSummary dgpu{"Radeon RX", 2, VK_API_VERSION_1_2, "", ""};
  const DeviceSummary old{"Old GPU", 2, VK_API_VERSION_1_0, "", "Vulkan 1.0 only (1.1 needed)"};
  std::string why;
  const DeviceSummary vgpu{"virtio-gpu", 3, VK_API_VERSION_1_2, "", ""};
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "", &why), 2);
  EXPECT_EQ(choose_device({cpu, igpu}, "", &why), 1);
  EXPECT_EQ(choose_device({cpu, vgpu}, "", &why), 1);
  // A CPU implementation only when named: slower than a CPU delegate.
  EXPECT_EQ(choose_device({cpu}, "", &why), -1);
  EXPECT_NE(why.find("only a CPU implementation of Vulkan was found (0: llvmpipe"), std::string::npos) << why;
  EXPECT_NE(why.find("used only when the device option names it"), std::string::npos) << why;
  EXPECT_EQ(choose_device({old, cpu}, "", &why), -1);  // an unusable discrete GPU is passed over, lavapipe unnamed
  EXPECT_EQ(choose_device({old, cpu}, "llvm", &why), 1);
  EXPECT_EQ(choose_device({old, cpu}, "1", &why), 1);
  // The option: an index, or part of the name in any case.
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "0", &why), 0);
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "iris", &why), 1);
  EXPECT_EQ(choose_device({cpu, igpu, dgpu}, "3", &why), -1);
  EXPECT_NE(why.find("no Vulkan device matches device = '3'"), std::string::npos) << why;
  EXPECT_EQ(choose_device({old, cpu}, "old", &why), -1);
  EXPECT_NE(why.find("Vulkan 1.0 only"), std::string::npos) << why;
  EXPECT_EQ(choose_device({}, "", &why), -1);
  EXPECT_EQ(why, "no Vulkan device found");
  EXPECT_EQ(choose_device({old}, "", &why), -1);
  EXPECT_NE(why.find("no usable Vulkan device"), std::string::npos) << why;
}

// A real device picked by the option, by index and by name; a name that matches nothing leaves the plugin
// loaded, refusing every node with the reason, and the model runs on the builtin pack.
TEST(VulkanDeviceChoice, OptionPicksTheDeviceOrEveryNodeIsRefused) {
  const vulkan::DeviceListing listing = vulkan::list_devices();
  ASSERT_FALSE(listing.devices.empty()) << listing.error;
  const std::string name = listing.devices[0].name;
  OpGraph g;
  const int32_t in = g.input({1, 4});
  const int32_t out = g.output({1, 4});
  g.op(BATON_OP_RELU, {in}, {out});
  for (const std::string& option : {std::string("0"), name.substr(0, 4)}) {
    auto env = vulkan_env("vulkan", "device = " + option + "\n");
    ASSERT_TRUE(env);
    EXPECT_TRUE(env->logged("running on device 0: " + name)) << env->log_text();
  }
  auto env = vulkan_env("vulkan", "device = no-such-device\n", {}, false);
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), "relu.tflite");
  ASSERT_TRUE(model);
  auto in_or = Interpreter::create(env->env, model.value());
  ASSERT_TRUE(in_or) << in_or.error();
  Interpreter& interp = *in_or.value();
  EXPECT_EQ(interp.placement(0).plugin, "builtin");
  ASSERT_FALSE(interp.refusals(0).empty());
  EXPECT_NE(interp.refusals(0)[0].reason().find("no Vulkan device matches device = 'no-such-device'"), std::string::npos)
      << interp.refusals(0)[0].reason();
  const float values[4] = {-1.0f, 2.0f, -3.0f, 4.0f};
  std::memcpy(interp.input(0).data, values, sizeof values);
  ASSERT_TRUE(interp.invoke());
  const float* got = reinterpret_cast<const float*>(interp.output(0).data);
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 2.0f);
}

// The messenger really reports: an invalid call (a buffer with no usage bits) is one validation error.
TEST(VulkanValidation, TheMessengerCountsWhatTheLayerReports) {
  std::vector<std::string> lines;
  vulkan::Gpu gpu({test_device(), true}, [&](int, const std::string& m) { lines.push_back(m); });
  EXPECT_EQ(gpu.validation_messages(), 0u);
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = 64;
  info.usage = 0;  // VUID-VkBufferCreateInfo-usage-requiredbitmask
  VkBuffer buffer = VK_NULL_HANDLE;
  if (vkCreateBuffer(gpu.device(), &info, nullptr, &buffer) == VK_SUCCESS) vkDestroyBuffer(gpu.device(), buffer, nullptr);
  EXPECT_GE(gpu.validation_messages(), 1u);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("validation error"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("usage"), std::string::npos) << lines[0];
}

// Synchronisation validation is on: two writes to one buffer without a barrier between them are a
// hazard the layer reports (so the delegate's barriers are checked by every test, not only by results).
TEST(VulkanValidation, AMissingBarrierIsReported) {
  std::vector<std::string> lines;
  vulkan::Gpu gpu({test_device(), true}, [&](int, const std::string& m) { lines.push_back(m); });
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = 256;
  info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkBuffer buffer = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateBuffer(gpu.device(), &info, nullptr, &buffer), VK_SUCCESS);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(gpu.device(), buffer, &req);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = gpu.memory_type(req.memoryTypeBits, 0, 0);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  ASSERT_EQ(vkAllocateMemory(gpu.device(), &alloc, nullptr, &memory), VK_SUCCESS);
  ASSERT_EQ(vkBindBufferMemory(gpu.device(), buffer, memory, 0), VK_SUCCESS);
  VkCommandPoolCreateInfo pool_info{};
  pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool_info.queueFamilyIndex = gpu.queue_family();
  VkCommandPool pool = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateCommandPool(gpu.device(), &pool_info, nullptr, &pool), VK_SUCCESS);
  VkCommandBufferAllocateInfo cb_info{};
  cb_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cb_info.commandPool = pool;
  cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cb_info.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  ASSERT_EQ(vkAllocateCommandBuffers(gpu.device(), &cb_info, &cb), VK_SUCCESS);
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  ASSERT_EQ(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
  vkCmdFillBuffer(cb, buffer, 0, 256, 1u);
  EXPECT_EQ(gpu.validation_messages(), 0u) << (lines.empty() ? "" : lines[0]);
  vkCmdFillBuffer(cb, buffer, 0, 256, 2u);  // write after write, no barrier
  EXPECT_GE(gpu.validation_messages(), 1u);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("SYNC-HAZARD-WRITE-AFTER-WRITE"), std::string::npos) << lines[0];
  vkEndCommandBuffer(cb);
  vkDestroyCommandPool(gpu.device(), pool, nullptr);
  vkDestroyBuffer(gpu.device(), buffer, nullptr);
  vkFreeMemory(gpu.device(), memory, nullptr);
}

// ---- memory planning ----------------------------------------------------------------------------------

TEST(VulkanMemoryPlan, TensorsShareMemoryOnlyWhenTheirLifetimesDoNotOverlap) {
  // a [0,1] 100 bytes, b [1,2] 60, c [2,3] 100, d [3,3] 40, alignment 16.
  // Largest first: a at 0 (ends 100); c overlaps b only in time, and b is not placed yet: c at 0.
  // b (60) overlaps a [0,100) and c [0,100): at 112 (100 aligned). d overlaps c [0,100): at 112.
  const vulkan::MemoryPlan plan = vulkan::plan_memory({{100, 0, 1}, {60, 1, 2}, {100, 2, 3}, {40, 3, 3}}, 16);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 112, 0, 112}));
  EXPECT_EQ(plan.total, 176);  // 112 + 60 = 172, aligned
}

// ---- the shader cache -----------------------------------------------------------------------------------

// The files of `dir` whose names end in `extension` (".spv": shaders, ".pipelines": the pipeline cache).
std::vector<fs::path> cache_files(const std::string& dir, const char* extension) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == extension) found.push_back(e.path());
  }
  return found;
}
size_t spv_files(const std::string& dir) { return cache_files(dir, ".spv").size(); }

struct Counts {
  int compiled = -1, cached = -1;
  int pipeline_bytes_read = -1;  // the pipeline cache read at start, as the plugin's first log line says
};

Counts shader_counts(const VulkanEnv& env) {
  const std::string log = env.log_text();
  const size_t at = log.find("shaders: ");
  Counts c;
  if (at == std::string::npos || std::sscanf(log.c_str() + at, "shaders: %d compiled, %d from the disk cache", &c.compiled, &c.cached) != 2) {
    return {};
  }
  const size_t read = log.find(", pipeline cache ");
  if (read != std::string::npos) std::sscanf(log.c_str() + read, ", pipeline cache %d bytes read", &c.pipeline_bytes_read);
  return c;
}

// Runs the small conv model once in a fresh environment with `options`; returns what the log says.
Counts run_conv(const std::string& options, std::string* fallbacks = nullptr) {
  auto env = vulkan_env("vulkan", options);
  if (!env) return {};
  auto model = load_model_buffer(conv_graph(fb::Padding_SAME, 2, 1, 3, true, {1, 9, 11, 3}, 5, 3).build(), "conv.tflite");
  auto vi = Interpreter::create(env->env, model.value());
  EXPECT_TRUE(vi) << vi.error();
  if (!vi) return {};
  Interpreter& v = *vi.value();
  const auto data = random_floats(v.input(0).bytes / 4, 3);
  std::memcpy(v.input(0).data, data.data(), data.size());
  Status s = v.invoke();
  EXPECT_TRUE(s) << s.message();
  if (fallbacks) *fallbacks = fallbacks_text(v);
  EXPECT_EQ(env->validation_messages(), "");
  return shader_counts(*env);
}

TEST(VulkanShaderCache, TheSecondStartCompilesNothing) {
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\n";
  const Counts first = run_conv(options);
  EXPECT_GT(first.compiled, 0);
  EXPECT_EQ(first.cached, 0);
  const size_t files = spv_files(cache.path());
  EXPECT_EQ(files, static_cast<size_t>(first.compiled));
  const Counts second = run_conv(options);
  EXPECT_EQ(second.compiled, 0);
  EXPECT_EQ(second.cached, first.compiled);
  // A damaged file reads as a miss: that shader is compiled again and the file rewritten.
  for (const auto& e : fs::directory_iterator(cache.path())) {
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "BATONSPV garbage";
    break;
  }
  const Counts third = run_conv(options);
  EXPECT_EQ(third.compiled, 1);
  EXPECT_EQ(third.cached, first.compiled - 1);
  EXPECT_EQ(run_conv(options).compiled, 0);
}

TEST(VulkanShaderCache, CanBeTurnedOff) {
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\nshader-cache = false\n";
  EXPECT_GT(run_conv(options).compiled, 0);
  EXPECT_GT(run_conv(options).compiled, 0);
  EXPECT_EQ(spv_files(cache.path()), 0u);
  EXPECT_TRUE(cache_files(cache.path(), ".pipelines").empty());
}

// The driver's pipeline cache is written beside the shaders once the pipelines are made, read by the next
// start, and a damaged file reads as none: the model still runs, and the file is written again.
TEST(VulkanShaderCache, ThePipelineCacheIsKeptBesideTheShaders) {
  TempDir cache;
  const std::string options = "cache-dir = " + cache.path() + "\n";
  EXPECT_EQ(run_conv(options).pipeline_bytes_read, 0);
  const std::vector<fs::path> files = cache_files(cache.path(), ".pipelines");
  ASSERT_EQ(files.size(), 1u);
  const auto read = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  const std::string saved = read(files[0]);
  // The file's magic, then the key that names the device and driver, then the driver's bytes (at least
  // the 32 of Vulkan's pipeline cache header).
  ASSERT_GT(saved.size(), 8u + 32u);
  EXPECT_EQ(saved.substr(0, 8), "BATONPLC");
  EXPECT_NE(saved.find("baton vulkan pipeline cache 1\n"), std::string::npos);
  const Counts second = run_conv(options);
  EXPECT_GE(second.pipeline_bytes_read, 32);
  EXPECT_EQ(second.compiled, 0);
  std::ofstream(files[0], std::ios::binary | std::ios::trunc) << "BATONPLC garbage";
  std::string fallbacks;
  EXPECT_EQ(run_conv(options, &fallbacks).pipeline_bytes_read, 0);
  EXPECT_EQ(fallbacks, "");
  EXPECT_EQ(read(files[0]).substr(0, 8), "BATONPLC");
  EXPECT_GT(read(files[0]).size(), 8u + 32u);
  EXPECT_GE(run_conv(options).pipeline_bytes_read, 32);
}

// ---- failures come back as statuses ---------------------------------------------------------------------

TEST(VulkanFailures, AShaderThatDoesNotCompileFallsBackNamingTheShader) {
  TempDir shaders;
  shaders.write("conv2d.comp", "void main() { this is not GLSL; }\n");
  std::string fallbacks;
  run_conv("shader-cache = false\nshader-dir = " + shaders.path() + "\n", &fallbacks);
  EXPECT_NE(fallbacks.find("vulkan lost 1 nodes at init: shader conv2d did not compile: ERROR: 0:1:"), std::string::npos)
      << fallbacks;
}

// BATON_VULKAN_FAIL makes the named Vulkan call fail as a driver would (vk_error.h).
class ScopedFailure {
 public:
  explicit ScopedFailure(const char* call) { setenv("BATON_VULKAN_FAIL", call, 1); }
  ~ScopedFailure() { unsetenv("BATON_VULKAN_FAIL"); }
};

TEST(VulkanFailures, AFailingVulkanCallFallsBackNamingTheResult) {
  OpGraph g = conv_graph(fb::Padding_SAME, 2, 1, 3, true, {1, 9, 11, 3}, 5, 3);
  struct Case {
    const char* call;
    bool at_invoke;        // fail the call during the first invoke, else while the partition is built
    const char* expected;  // in the fallback's text
  };
  for (const Case& c : {Case{"vkAllocateMemory", false, "at init: vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                        // The first pipeline made is the pack shader of the 3-channel input.
                        Case{"vkCreateComputePipelines", false,
                             "at init: vkCreateComputePipelines (shader pack) failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                        Case{"vkQueueSubmit", false, "at init: vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                        Case{"vkQueueSubmit", true, "at invoke: vkQueueSubmit failed: VK_ERROR_OUT_OF_DEVICE_MEMORY"}}) {
    SCOPED_TRACE(c.expected);
    auto env = vulkan_env();
    ASSERT_TRUE(env);
    auto model = load_model_buffer(g.build(), "conv.tflite");
    ASSERT_TRUE(model);
    auto bi = Interpreter::create(builtin_env(), model.value());
    ASSERT_TRUE(bi);
    std::unique_ptr<Interpreter> v;
    {
      std::unique_ptr<ScopedFailure> failure;
      if (!c.at_invoke) failure = std::make_unique<ScopedFailure>(c.call);
      auto vi = Interpreter::create(env->env, model.value());
      ASSERT_TRUE(vi) << vi.error();
      v = std::move(vi.value());
    }
    EXPECT_EQ(v->placement(0).plugin, c.at_invoke ? "vulkan" : "builtin");
    Interpreter& b = *bi.value();
    const auto data = random_floats(v->input(0).bytes / 4, 5);
    std::memcpy(v->input(0).data, data.data(), data.size());
    std::memcpy(b.input(0).data, data.data(), data.size());
    {
      std::unique_ptr<ScopedFailure> failure;
      if (c.at_invoke) failure = std::make_unique<ScopedFailure>(c.call);
      Status s = v->invoke();
      ASSERT_TRUE(s) << s.message();
    }
    ASSERT_TRUE(b.invoke());
    EXPECT_NE(fallbacks_text(*v).find(c.expected), std::string::npos) << fallbacks_text(*v);
    EXPECT_EQ(v->placement(0).plugin, "builtin");
    EXPECT_EQ(relative_error(reinterpret_cast<const float*>(v->output(0).data), reinterpret_cast<const float*>(b.output(0).data),
                             b.output(0).bytes / 4),
              0.0);
    EXPECT_EQ(env->validation_messages(), "");
  }
}

// ---- the command line -----------------------------------------------------------------------------------

struct Result {
  int code = -1;
  std::string out;
};

Result baton(const std::string& env, const std::string& args) {
  Result r;
  const std::string cmd = "XDG_STATE_HOME=" + test_state_dir() + " XDG_CACHE_HOME=" + shared_cache_dir() + " " + env + " " +
                          std::string(BATON_EXE) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class VulkanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(work_.file("relu.tflite"), std::ios::binary).write(reinterpret_cast<const char*>(model_.data()),
                                                                       static_cast<std::streamsize>(model_.size()));
    work_.write("empty.conf", "# nothing\n");
    common_ = " --config " + work_.file("empty.conf") + " --plugin-dir " + VULKAN_PLUGIN_DIR + " --plugin-dir " + BUILTIN_PACK_DIR;
  }
  std::vector<uint8_t> model_ = [] {
    OpGraph g;
    const int32_t in = g.input({1, 6});
    const int32_t out = g.output({1, 6});
    g.op(BATON_OP_RELU6, {in}, {out});
    return g.build();
  }();
  TempDir work_;
  std::string common_;
};

// `baton plugins` shows the devices the probe found, each with its kind, and the default chain with the
// reason for each delegate: on a machine whose only Vulkan device is a CPU implementation, vulkan is
// left out and xnnpack is the chain.
TEST_F(VulkanCli, PluginsListsTheDevicesAndTheDefaultChain) {
  const vulkan::DeviceListing listing = vulkan::list_devices();
  ASSERT_FALSE(listing.devices.empty()) << listing.error;
  const bool only_cpu = std::all_of(listing.devices.begin(), listing.devices.end(),
                                    [](const DeviceSummary& d) { return d.type == VK_PHYSICAL_DEVICE_TYPE_CPU; });
  Result r = baton("", "plugins" + common_ + " --plugin-dir " + XNNPACK_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(std::string(only_cpu ? "emulated: " : "gpu: ") + listing.devices[0].name), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cpu: "), std::string::npos) << r.out;  // xnnpack's
  if (only_cpu) {
    // The build tree's cpu delegate (preference 10) goes before xnnpack.
    EXPECT_NE(r.out.find("delegate chain: cpu xnnpack\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1. cpu: best device cpu"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2. xnnpack: best device cpu"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("vulkan: left out: its only devices are emulated (" + listing.devices[0].name), std::string::npos)
        << r.out;
  } else {
    EXPECT_NE(r.out.find("delegate chain: vulkan cpu xnnpack\n"), std::string::npos) << r.out;
  }
  // Named, it is in the chain and takes the node (with its device named).
  work_.write("lavapipe.conf", "[plugin.vulkan]\ndevice = 0\n");
  Result plan = baton("", "plan " + work_.file("relu.tflite") + " --delegate vulkan --config " + work_.file("lavapipe.conf") +
                              " --plugin-dir " + VULKAN_PLUGIN_DIR + " --plugin-dir " + BUILTIN_PACK_DIR);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("RELU6 v1                     vulkan (partition 0)"), std::string::npos) << plan.out;
}

// Unnamed, lavapipe is not used even when vulkan is named in the chain: every node is refused with the
// reason and runs on the next link.
TEST_F(VulkanCli, ACpuImplementationUnnamedTakesNothing) {
  const vulkan::DeviceListing listing = vulkan::list_devices();
  if (std::any_of(listing.devices.begin(), listing.devices.end(),
                  [](const DeviceSummary& d) { return d.type != VK_PHYSICAL_DEVICE_TYPE_CPU; })) {
    GTEST_SKIP() << "this machine has a Vulkan device that is not a CPU implementation";
  }
  Result plan = baton("", "plan " + work_.file("relu.tflite") + " --delegate vulkan" + common_);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("vulkan refused: only a CPU implementation of Vulkan was found"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("builtin"), std::string::npos) << plan.out;
}

// No Vulkan driver: the plugin loads, says so, refuses every node with that reason, and the model runs.
TEST_F(VulkanCli, NoDriverRefusesEveryNodeAndTheModelRuns) {
  const std::string no_driver = "VK_DRIVER_FILES=/nonexistent/icd.json VK_ICD_FILENAMES=/nonexistent/icd.json";
  Result p = baton(no_driver, "plugins" + common_);
  EXPECT_EQ(p.code, 0) << p.out;
  EXPECT_NE(p.out.find("devices: device probe failed: no Vulkan driver"), std::string::npos) << p.out;
  Result plan = baton(no_driver, "plan " + work_.file("relu.tflite") + " --delegate vulkan" + common_);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("vulkan refused: no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)"), std::string::npos)
      << plan.out;
  Result run = baton(no_driver, "run " + work_.file("relu.tflite") + " --delegate vulkan --output-dir " + work_.path() + common_);
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_TRUE(fs::exists(work_.file("out_0.npy")));
  // With a delegate after it, that one takes the node.
  Result next = baton(no_driver, "plan " + work_.file("relu.tflite") + " --delegate vulkan --delegate xnnpack" + common_ +
                                     " --plugin-dir " + XNNPACK_PLUGIN_DIR);
  EXPECT_EQ(next.code, 0) << next.out;
  EXPECT_NE(next.out.find("RELU6 v1                     xnnpack (partition 0)"), std::string::npos) << next.out;
}

// Validation asked for where the layer is not installed: the same, with the package to install.
TEST_F(VulkanCli, ValidationWithoutTheLayerIsAReason) {
  work_.write("validate.conf", "[plugin.vulkan]\nvalidation = true\ndevice = " + test_device() + "\n");
  Result plan = baton("VK_LAYER_PATH=/nonexistent", "plan " + work_.file("relu.tflite") + " --delegate vulkan --config " +
                                                        work_.file("validate.conf") + " --plugin-dir " + VULKAN_PLUGIN_DIR +
                                                        " --plugin-dir " + BUILTIN_PACK_DIR);
  EXPECT_EQ(plan.code, 0) << plan.out;
  EXPECT_NE(plan.out.find("vulkan refused: validation was asked for but VK_LAYER_KHRONOS_validation is not installed "
                          "(Debian: vulkan-validationlayers)"),
            std::string::npos)
      << plan.out;
}

// The plugin installed without its shader compiler module (baton-vulkan-glslang.module beside it): the
// partition's init fails naming the file, its nodes fall back, and the model runs.
TEST_F(VulkanCli, AMissingShaderCompilerFallsBackNamingTheFile) {
  const std::string dir = work_.path() + "/plugins";
  fs::create_directories(dir);
  for (const char* f : {"libbaton_vulkan.so", "baton-vulkan-probe"}) {
    fs::copy_file(std::string(VULKAN_PLUGIN_DIR) + "/" + f, dir + "/" + f);
  }
  work_.write("nocompiler.conf", "[plugin.vulkan]\nshader-cache = false\ndevice = " + test_device() + "\n");
  Result run = baton("", "run " + work_.file("relu.tflite") + " --delegate vulkan --verbose --output-dir " + work_.path() +
                             " --config " + work_.file("nocompiler.conf") + " --plugin-dir " + dir + " --plugin-dir " +
                             BUILTIN_PACK_DIR);
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("the shader compiler " + dir + "/baton-vulkan-glslang.module could not be loaded: "),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(fs::exists(work_.file("out_0.npy")));
}

}  // namespace
}  // namespace baton::test
