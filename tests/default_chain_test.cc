// The default delegate chain (no `delegates` key, no --delegate): delegates ordered by the devices they
// declare through the ABI 1.1 probe (npu, gpu, cpu; emulated-only left out; then preference, then
// name); an ABI 1.0 delegate without a probe counted as cpu; a configured or named chain decides
// exactly; delegates that are not in the chain never created; disabled plugins never opened; and a 1.1
// plugin read by a host that knows only ABI 1.0.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "delegate_order.h"
#include "interpreter.h"
#include "plugins_report.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> chain_names(const Environment& env) {
  std::vector<std::string> out;
  for (const LoadedPlugin* d : env.delegate_chain()) out.push_back(d->name);
  return out;
}

std::string reason_of(const Environment& env, const std::string& name) {
  const ChainPlacement* p = env.find_placement(name);
  return p ? p->reason : "(no placement)";
}

class DefaultChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* p : {"deleg_a", "deleg_b", "deleg_c", "deleg_d", "deleg_old", "testpack"}) plugins_.add_plugin(p);
  }
  Expected<std::shared_ptr<Environment>> env(const std::string& config,
                                             std::optional<std::vector<std::string>> named = std::nullopt) {
    conf_.write("baton.conf", config);
    EnvironmentOptions o;
    o.plugin_dirs = {plugins_.path()};
    o.config_path = conf_.file("baton.conf");
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.threads = 1;
    o.state_dir = test_state_dir();
    o.delegates = named;
    o.log = [log = log_](baton_log_level, const std::string& line) { log->lines.push_back(line); };
    return Environment::create(o);
  }
  TempDir plugins_, conf_;
  std::shared_ptr<Captured> log_ = std::make_shared<Captured>();
};

TEST_F(DefaultChainTest, OrderedByBestDeviceKindThenPreferenceThenName) {
  auto e = env(
      "[plugin.deleg-a]\ndevices = gpu:Test GPU:0\n"
      "[plugin.deleg-b]\ndevices = cpu:Test CPU:0;npu:Test NPU:-20\n"  // the best device counts, not the first
      "[plugin.deleg-c]\ndevices = emulated:SwiftShader:100\n"
      "[plugin.deleg-d]\ndevices = cpu:Tuned CPU:50;emulated:llvmpipe:0\n");
  ASSERT_TRUE(e) << e.error();
  const Environment& en = *e.value();
  EXPECT_EQ(chain_names(en), (std::vector<std::string>{"deleg-b", "deleg-a", "deleg-d", "deleg-old"}));
  EXPECT_EQ(en.chain_source(), "default");
  EXPECT_NE(reason_of(en, "deleg-b").find("best device npu (Test NPU), preference -20"), std::string::npos)
      << reason_of(en, "deleg-b");
  EXPECT_NE(reason_of(en, "deleg-d").find("best device cpu (Tuned CPU), preference 50"), std::string::npos);
  EXPECT_NE(reason_of(en, "deleg-old").find("declares no devices (ABI 1.0 plugin): counted as cpu"), std::string::npos)
      << reason_of(en, "deleg-old");
  EXPECT_NE(reason_of(en, "deleg-c").find("left out: its only devices are emulated (SwiftShader)"), std::string::npos)
      << reason_of(en, "deleg-c");
  EXPECT_EQ(en.find_placement("deleg-c")->position, -1);
  // Only the chain's delegates were created.
  for (const auto& p : en.registry().plugins()) {
    const bool in_chain = en.find_placement(p->name) && en.find_placement(p->name)->position >= 0;
    if (p->kind == BATON_PLUGIN_DELEGATE) EXPECT_EQ(p->created, in_chain) << p->name;
  }
}

TEST_F(DefaultChainTest, TiesGoToPreferenceThenName) {
  auto e = env(
      "[plugin.deleg-a]\ndevices = cpu:x:0\n"
      "[plugin.deleg-b]\ndevices = cpu:x:0\n"
      "[plugin.deleg-c]\ndevices = cpu:x:10\n"
      "[plugin.deleg-d]\ndevices = cpu:x:-10\n");
  ASSERT_TRUE(e) << e.error();
  EXPECT_EQ(chain_names(*e.value()), (std::vector<std::string>{"deleg-c", "deleg-a", "deleg-b", "deleg-old", "deleg-d"}));
}

TEST_F(DefaultChainTest, NoDeviceAndFailingProbeAreLeftOutWithTheReason) {
  auto e = env("[plugin.deleg-a]\ndevices = none\n[plugin.deleg-b]\ndevices = fail\n");
  ASSERT_TRUE(e) << e.error();
  const Environment& en = *e.value();
  EXPECT_EQ(chain_names(en), (std::vector<std::string>{"deleg-c", "deleg-d", "deleg-old"}));
  EXPECT_EQ(reason_of(en, "deleg-a"), "left out: it found no device to run on");
  EXPECT_EQ(reason_of(en, "deleg-b"), "left out: device probe failed: simulated probe failure: no /dev/fake-accelerator");
}

TEST_F(DefaultChainTest, ANamedChainDecidesExactlyEmulatedIncluded) {
  const std::string conf = "[plugin.deleg-c]\ndevices = emulated:SwiftShader:0\n[plugin.deleg-a]\ndevices = npu:n:0\n";
  auto named = env(conf, std::vector<std::string>{"deleg-c", "deleg-d"});
  ASSERT_TRUE(named) << named.error();
  EXPECT_EQ(chain_names(*named.value()), (std::vector<std::string>{"deleg-c", "deleg-d"}));
  EXPECT_EQ(reason_of(*named.value(), "deleg-a"), "not named by --delegate");
  EXPECT_FALSE(named.value()->registry().find("deleg-a")->created);
  auto configured = env("delegates = deleg-c, deleg-old\n" + conf);
  ASSERT_TRUE(configured) << configured.error();
  EXPECT_EQ(chain_names(*configured.value()), (std::vector<std::string>{"deleg-c", "deleg-old"}));
  EXPECT_EQ(configured.value()->chain_source(), "the config's delegates key");
}

// A delegate the default chain leaves out costs no memory: its library is unloaded once the environment
// is made, and what it declared (its devices, the reason it is out) stays for the reports. The chain's
// delegates, created, are parked until a model needs them (plugin_parking_test.cc), and one left out of a
// named chain without being probed is not touched.
TEST_F(DefaultChainTest, ADelegateLeftOutIsUnloadedAndStillReported) {
  const std::string conf = "[plugin.deleg-c]\ndevices = emulated:SwiftShader:100\n[plugin.deleg-a]\ndevices = none\n";
  auto e = env(conf);
  ASSERT_TRUE(e) << e.error();
  Environment& en = *e.value();
  for (const char* name : {"deleg-a", "deleg-c"}) {
    const LoadedPlugin* p = en.registry().find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(p->unloaded()) << name;
    EXPECT_FALSE(library_mapped(p->path)) << name;
  }
  for (const LoadedPlugin* d : en.delegate_chain()) {
    EXPECT_FALSE(d->unloaded()) << d->name;
    EXPECT_TRUE(d->parked()) << d->name;
    EXPECT_FALSE(library_mapped(d->path)) << d->name;
  }
  // The op pack, used by no model yet, is parked (plugin_parking_test.cc): loaded again for the model below.
  EXPECT_FALSE(library_mapped(en.registry().find("testpack")->path));
  const std::string text = plugins_text(en);
  const size_t at = text.find("\ndeleg-c ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("unloaded: this environment does not use it", at), std::string::npos) << text.substr(at);
  EXPECT_NE(text.find("SwiftShader", at), std::string::npos) << text.substr(at);
  EXPECT_NE(reason_of(en, "deleg-c").find("left out: its only devices are emulated (SwiftShader)"), std::string::npos);
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(e.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  ASSERT_TRUE(interp.value()->invoke());
  EXPECT_TRUE(library_mapped(en.registry().find("testpack")->path));
  // The delegate that took the model's nodes is loaded again.
  ASSERT_FALSE(interp.value()->partitions().empty());
  EXPECT_TRUE(library_mapped(interp.value()->partitions()[0]->plugin->path));

  auto named = env(conf, std::vector<std::string>{"deleg-b"});
  ASSERT_TRUE(named) << named.error();
  EXPECT_FALSE(named.value()->registry().find("deleg-c")->unloaded());  // never probed: kept
}

// The emulated delegate, named, really runs: the ADD of the tiny model goes to it.
TEST_F(DefaultChainTest, ANamedEmulatedDelegateRuns) {
  auto e = env("[plugin.deleg-c]\ndevices = emulated:SwiftShader:0\nops = ADD\n", std::vector<std::string>{"deleg-c"});
  ASSERT_TRUE(e) << e.error();
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(e.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->placement(0).plugin, "deleg-c");
}

// The ABI 1.0 delegate (no probe, shorter descriptor and delegate functions) loads in this newer host
// and takes nodes through check_node.
TEST_F(DefaultChainTest, AnAbi10DelegateWorksInThisHost) {
  auto e = env("[plugin.deleg-a]\ndevices = none\n[plugin.deleg-b]\ndevices = none\n[plugin.deleg-c]\ndevices = none\n"
               "[plugin.deleg-d]\ndevices = none\n[plugin.deleg-old]\nops = ADD\n");
  ASSERT_TRUE(e) << e.error();
  const LoadedPlugin* old = e.value()->registry().find("deleg-old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->abi_minor, 0u);
  EXPECT_FALSE(old->declares_devices());
  EXPECT_EQ(chain_names(*e.value()), (std::vector<std::string>{"deleg-old"}));
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(e.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->placement(0).plugin, "deleg-old");
}

// The rule itself, on made-up declarations.
TEST(DelegateOrder, RuleOnMadeUpDeclarations) {
  std::vector<DelegateCandidate> c = {
      {"zeta", std::vector<DeviceInfo>{{"a", BATON_DEVICE_GPU, 0}}, true},
      {"alpha", std::vector<DeviceInfo>{{"b", BATON_DEVICE_GPU, 0}}, true},
      {"npu", std::vector<DeviceInfo>{{"c", BATON_DEVICE_EMULATED, 0}, {"d", BATON_DEVICE_NPU, -5}}, true},
      {"lava", std::vector<DeviceInfo>{{"llvmpipe", BATON_DEVICE_EMULATED, 1000}}, true},
      {"broken", Status::error("device probe failed: x"), true},
  };
  const std::vector<ChainPlacement> order = default_delegate_order(c);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0].name, "npu");
  EXPECT_EQ(order[1].name, "alpha");
  EXPECT_EQ(order[2].name, "zeta");
  EXPECT_EQ(order[3].name, "broken");
  EXPECT_EQ(order[3].position, -1);
  EXPECT_EQ(order[4].name, "lava");
  EXPECT_EQ(order[4].position, -1);
}

// A disabled plugin is never opened: its library constructor (which writes a marker file) never runs.
// Without `disabled` the same setup opens it, so the check can fail.
TEST(DisabledPlugins, AreNotOpened) {
  TempDir dir, conf, state;
  dir.add_plugin("testplugin_ctor_marker");
  const std::string marker = state.file("opened");
  ASSERT_EQ(setenv("BATON_TEST_OPENED_MARKER", marker.c_str(), 1), 0);
  conf.write("baton.conf", "disabled = testplugin-ctor-marker\n");
  auto e = isolated_environment({dir.path()}, conf.file("baton.conf"));
  ASSERT_TRUE(e) << e.error();
  EXPECT_FALSE(fs::exists(marker));
  ASSERT_EQ(e.value()->registry().disabled().size(), 1u);
  EXPECT_EQ(e.value()->registry().disabled()[0].name, "testplugin-ctor-marker");
  EXPECT_EQ(e.value()->registry().find("testplugin-ctor-marker"), nullptr);
  conf.write("baton.conf", "# nothing disabled\n");
  auto enabled = isolated_environment({dir.path()}, conf.file("baton.conf"));
  ASSERT_TRUE(enabled) << enabled.error();
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_NE(enabled.value()->registry().find("testplugin-ctor-marker"), nullptr);
  unsetenv("BATON_TEST_OPENED_MARKER");
}

TEST(DisabledPlugins, NamesFromFiles) {
  EXPECT_EQ(plugin_name_from_file("/usr/lib/x86_64-linux-gnu/baton/plugins/libbaton_vulkan.so"), "vulkan");
  EXPECT_EQ(plugin_name_from_file("libedgetpu.so.1"), "edgetpu");
  EXPECT_EQ(plugin_name_from_file("deleg_a.so"), "deleg-a");
}

// ---- a newer plugin read by a host that only knows ABI 1.0 ---------------------------------------------

// The descriptor as ABI 1.0 declared it: every field up to `delegate`, nothing after.
struct Desc10 {
  size_t struct_size;
  uint32_t abi_major, abi_minor;
  const char* name;
  const char* version;
  baton_plugin_kind kind;
  const char* description;
  const baton_op_decl* ops;
  size_t op_count;
  const baton_option_decl* options;
  size_t option_count;
  uint32_t flags;
  baton_status (*create)(const baton_plugin_host*, void**, baton_error*);
  void (*destroy)(void*);
  const baton_delegate_api* delegate;
};
// 1.1 and 1.2 only appended: every 1.0 field is where a 1.0 host reads it, and 1.2's fields follow the
// last 1.1 field of each struct they extend.
static_assert(offsetof(Desc10, delegate) == offsetof(baton_plugin_desc, delegate));
static_assert(offsetof(Desc10, create) == offsetof(baton_plugin_desc, create));
static_assert(sizeof(Desc10) == offsetof(baton_plugin_desc, probe_devices));
static_assert(offsetof(baton_plugin_desc, loader) == offsetof(baton_plugin_desc, probe_devices) + sizeof(void*));
static_assert(offsetof(baton_delegate_api, select_nodes) ==
              offsetof(baton_delegate_api, partition_free) + sizeof(void*));
static_assert(offsetof(baton_host_api, plugin_path) == offsetof(baton_host_api, partition_output) + sizeof(void*));

struct FakeError {
  std::string message;
};
void fake_error_set(baton_error* e, const char* m) { reinterpret_cast<FakeError*>(e)->message = m; }
const char* fake_option_string(const baton_plugin_host*, const char*, const char* fallback) { return fallback; }

TEST(AbiCompat, NewerDelegateInAnAbi10Host) {
  void* lib = dlopen(test_plugin("deleg_a").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry = reinterpret_cast<baton_plugin_entry_fn>(dlsym(lib, BATON_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  // A 1.0 host's table: the same functions (1.1 added none); only what create needs is filled in.
  baton_host_api api{};
  api.struct_size = sizeof api;
  api.abi_major = 1;
  api.abi_minor = 0;
  api.error_set = fake_error_set;
  api.option_string = fake_option_string;
  FakeError error;
  const baton_plugin_desc* raw = entry(1, 0, &api, reinterpret_cast<baton_error*>(&error));
  ASSERT_NE(raw, nullptr) << error.message;
  // The 1.0 host copies what it knows, as its struct_size rule says.
  ASSERT_GE(raw->struct_size, sizeof(Desc10));
  Desc10 d{};
  std::memcpy(&d, raw, sizeof d);
  EXPECT_EQ(d.abi_major, 1u);
  EXPECT_EQ(d.abi_minor, static_cast<uint32_t>(BATON_ABI_VERSION_MINOR));  // what it was built with (>= 1.1)
  EXPECT_STREQ(d.name, "deleg-a");
  EXPECT_EQ(d.kind, BATON_PLUGIN_DELEGATE);
  ASSERT_NE(d.delegate, nullptr);
  EXPECT_NE(d.delegate->check_node, nullptr);
  // Create works without the probe ever being called.
  void* state = nullptr;
  ASSERT_NE(d.create, nullptr);
  EXPECT_EQ(d.create(reinterpret_cast<const baton_plugin_host*>(&api), &state, reinterpret_cast<baton_error*>(&error)),
            BATON_OK)
      << error.message;
  dlclose(lib);
}

}  // namespace
}  // namespace baton::test
