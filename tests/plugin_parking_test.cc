// Op packs that no model of an environment uses are parked (destroyed, their library unloaded) and loaded
// again when a model needs them: checked by whether the library is mapped in this process, and by the
// models' outputs (worked out by hand) through packs loaded a second and third time. A pack whose file
// changed while parked fails the model that needs it, naming the file. Delegates of the chain are parked
// the same way while no model holds a partition of theirs.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "interpreter.h"
#include "plugins_report.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

class OpPackParkingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.add_plugin("testpack");
    dir_.add_plugin("triplepack");
    auto env = isolated_environment({dir_.path()}, "", log_);
    ASSERT_TRUE(env) << env.error();
    env_ = env.value();
    testpack_ = env_->registry().find("testpack");
    triplepack_ = env_->registry().find("triplepack");
    ASSERT_TRUE(testpack_ && triplepack_);
  }
  Expected<std::unique_ptr<Interpreter>> make(const TinyModel& m) {
    auto model = load_model_buffer(m.build(), "tiny.tflite");
    if (!model) return model.status();
    return Interpreter::create(env_, model.value());
  }
  // Runs `in` (six floats into every input) and returns output 0.
  static std::vector<float> run(Interpreter& in, const std::vector<float>& x) {
    for (size_t i = 0; i < in.input_count(); ++i) std::memcpy(in.input(i).data, x.data(), in.input(i).bytes);
    EXPECT_TRUE(in.invoke());
    std::vector<float> y(in.output(0).bytes / 4);
    std::memcpy(y.data(), in.output(0).data, in.output(0).bytes);
    return y;
  }
  TempDir dir_;
  std::shared_ptr<Captured> log_ = std::make_shared<Captured>();
  std::shared_ptr<Environment> env_;
  const LoadedPlugin* testpack_ = nullptr;
  const LoadedPlugin* triplepack_ = nullptr;
};

TEST_F(OpPackParkingTest, AnUnusedPackIsParkedAndLoadedAgainWhenAModelNeedsIt) {
  // No model yet: both parked, their declarations still reported.
  EXPECT_TRUE(testpack_->parked());
  EXPECT_TRUE(triplepack_->parked());
  EXPECT_FALSE(library_mapped(testpack_->path));
  EXPECT_FALSE(library_mapped(triplepack_->path));
  const std::string text = plugins_text(*env_);
  const size_t at = text.find("\ntriplepack ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("parked: no model of this environment uses it now", at), std::string::npos) << text.substr(at);
  EXPECT_NE(text.find("TimesThree v1", at), std::string::npos) << text.substr(at);

  // a + a, RELU, times two: testpack is loaded again; triplepack stays parked.
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};
  auto doubled = make(add_then_double());
  ASSERT_TRUE(doubled) << doubled.error();
  EXPECT_TRUE(library_mapped(testpack_->path));
  EXPECT_FALSE(library_mapped(triplepack_->path));
  EXPECT_EQ(run(*doubled.value(), x), (std::vector<float>{4, 0, 12, 0, 20, 0}));

  // TimesThree: triplepack is loaded again and runs.
  auto tripled = make(times_three());
  ASSERT_TRUE(tripled) << tripled.error();
  EXPECT_FALSE(triplepack_->parked());
  EXPECT_TRUE(library_mapped(triplepack_->path));
  EXPECT_EQ(run(*tripled.value(), x), (std::vector<float>{3, -6, 9, -12, 15, -18}));

  // Another model without TimesThree while `tripled` lives: triplepack is held, not parked.
  auto second = make(add_then_double());
  ASSERT_TRUE(second) << second.error();
  EXPECT_TRUE(library_mapped(triplepack_->path));
  EXPECT_EQ(run(*tripled.value(), x), (std::vector<float>{3, -6, 9, -12, 15, -18}));

  // Once `tripled` is gone, the next model made parks it again; a third load runs as the first did.
  tripled.value().reset();
  auto third = make(add_then_double());
  ASSERT_TRUE(third) << third.error();
  EXPECT_TRUE(triplepack_->parked());
  EXPECT_FALSE(library_mapped(triplepack_->path));
  auto again = make(times_three());
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(run(*again.value(), x), (std::vector<float>{3, -6, 9, -12, 15, -18}));
  // The first model ran on the pack it held all along.
  EXPECT_EQ(run(*doubled.value(), x), (std::vector<float>{4, 0, 12, 0, 20, 0}));
}

// While parked, the pack's file was replaced by one that declares other ops: the model that needs it fails,
// naming the pack, its file and why; the environment goes on with the other pack.
TEST_F(OpPackParkingTest, APackWhoseFileChangedWhileParkedFailsNamingTheFile) {
  ASSERT_TRUE(triplepack_->parked());
  const std::string path = triplepack_->path;
  std::filesystem::remove(path);
  std::filesystem::copy_file(test_plugin("testpack"), path);  // no TimesThree
  auto tripled = make(times_three());
  ASSERT_FALSE(tripled);
  EXPECT_NE(tripled.error().find("op pack triplepack (" + path +
                                 ") could not be loaded again: the file no longer declares what it did when first loaded"),
            std::string::npos)
      << tripled.error();
  auto doubled = make(add_then_double());
  ASSERT_TRUE(doubled) << doubled.error();
  EXPECT_EQ(run(*doubled.value(), {1, 2, 3, 4, 5, 6}), (std::vector<float>{4, 8, 12, 16, 20, 24}));
}

// An environment made with park_plugins = false (a fuzzer's) keeps every pack loaded.
TEST(OpPackParking, AnEnvironmentMayKeepItsPacksLoaded) {
  TempDir dir;
  dir.add_plugin("testpack");
  dir.add_plugin("triplepack");
  EnvironmentOptions o = isolated_options({dir.path()});
  o.log = [](baton_log_level, const std::string&) {};
  o.park_plugins = false;
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  ASSERT_TRUE(Interpreter::create(env.value(), model.value()));
  for (const char* name : {"testpack", "triplepack"}) {
    const LoadedPlugin* p = env.value()->registry().find(name);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(p->parked()) << name;
    EXPECT_TRUE(library_mapped(p->path)) << name;
  }
}

// A delegate of the default chain that takes no node of a model is parked once the model is made, loaded
// and created again (with its options) for a model it takes, and held while that model lives.
TEST(DelegateParking, ADelegateWithoutAPartitionIsParkedAndLoadedAgainForAModelItTakes) {
  TempDir dir;
  dir.add_plugin("testpack");
  dir.add_plugin("triplepack");
  dir.add_plugin("deleg_a");
  dir.write("baton.conf", "[plugin.deleg-a]\nops = TimesTwo\ndevices = cpu:test:0\n");
  const std::string config = dir.file("baton.conf");
  auto log = std::make_shared<Captured>();
  auto env = isolated_environment({dir.path()}, config, log);
  ASSERT_TRUE(env) << env.error();
  const LoadedPlugin* deleg = env.value()->registry().find("deleg-a");
  ASSERT_NE(deleg, nullptr);
  ASSERT_EQ(env.value()->delegate_chain().size(), 1u);
  // Made with the environment (its create is what decides whether it joins the chain), then parked until
  // a model needs it.
  EXPECT_TRUE(deleg->parked());
  EXPECT_FALSE(library_mapped(deleg->path));
  auto make = [&](const TinyModel& m) -> Expected<std::unique_ptr<Interpreter>> {
    auto model = load_model_buffer(m.build(), "tiny.tflite");
    if (!model) return model.status();
    return Interpreter::create(env.value(), model.value());
  };
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};
  auto run = [&](Interpreter& in) {
    for (size_t i = 0; i < in.input_count(); ++i) std::memcpy(in.input(i).data, x.data(), in.input(i).bytes);
    EXPECT_TRUE(in.invoke());
    std::vector<float> y(in.output(0).bytes / 4);
    std::memcpy(y.data(), in.output(0).data, in.output(0).bytes);
    return y;
  };
  // TimesThree alone: nothing for deleg-a, parked, its declarations and devices still reported.
  auto tripled = make(times_three());
  ASSERT_TRUE(tripled) << tripled.error();
  EXPECT_TRUE(deleg->parked());
  EXPECT_FALSE(library_mapped(deleg->path));
  EXPECT_EQ(run(*tripled.value()), (std::vector<float>{3, -6, 9, -12, 15, -18}));
  const std::string text = plugins_text(*env.value());
  const size_t at = text.find("\ndeleg-a ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("parked: no model of this environment uses it now", at), std::string::npos) << text.substr(at);
  EXPECT_NE(text.find("test", at), std::string::npos) << text.substr(at);

  // a + a, RELU, times two: deleg-a is loaded again with its option and takes TimesTwo.
  auto doubled = make(add_then_double());
  ASSERT_TRUE(doubled) << doubled.error();
  EXPECT_FALSE(deleg->parked());
  EXPECT_TRUE(library_mapped(deleg->path));
  ASSERT_EQ(doubled.value()->partitions().size(), 1u);
  EXPECT_EQ(doubled.value()->partitions()[0]->plugin, deleg);
  EXPECT_EQ(run(*doubled.value()), (std::vector<float>{4, 0, 12, 0, 20, 0}));
  // Held while that model lives, though the next takes nothing from it.
  auto again = make(times_three());
  ASSERT_TRUE(again) << again.error();
  EXPECT_FALSE(deleg->parked());
  EXPECT_EQ(run(*doubled.value()), (std::vector<float>{4, 0, 12, 0, 20, 0}));
  doubled.value().reset();
  auto third = make(times_three());
  ASSERT_TRUE(third) << third.error();
  EXPECT_TRUE(deleg->parked());
  EXPECT_FALSE(library_mapped(deleg->path));
}

// While parked, the delegate's file was replaced by another delegate's: the next model's partitioning warns,
// naming the delegate, its file and why, and runs without it.
TEST(DelegateParking, ADelegateWhoseFileChangedWhileParkedIsLeftOutWithAWarning) {
  TempDir dir;
  dir.add_plugin("testpack");
  dir.add_plugin("deleg_a");
  dir.write("baton.conf", "[plugin.deleg-a]\ndevices = cpu:test:0\n");
  auto log = std::make_shared<Captured>();
  auto env = isolated_environment({dir.path()}, dir.file("baton.conf"), log);
  ASSERT_TRUE(env) << env.error();
  const LoadedPlugin* deleg = env.value()->registry().find("deleg-a");
  ASSERT_NE(deleg, nullptr);
  ASSERT_TRUE(deleg->parked());
  const std::string path = deleg->path;
  std::filesystem::remove(path);
  std::filesystem::copy_file(test_plugin("deleg_b"), path);  // names itself deleg-b
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  auto in = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(in) << in.error();
  EXPECT_TRUE(in.value()->partitions().empty());
  const std::string want = "delegate deleg-a (" + path +
                           ") could not be loaded again: the file no longer declares what it did when first loaded; "
                           "the chain goes on without it";
  EXPECT_TRUE(std::any_of(log->lines.begin(), log->lines.end(),
                          [&](const std::string& l) { return l.find(want) != std::string::npos; }))
      << want;
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};
  for (size_t i = 0; i < in.value()->input_count(); ++i) std::memcpy(in.value()->input(i).data, x.data(), 24);
  ASSERT_TRUE(in.value()->invoke());
  std::vector<float> y(6);
  std::memcpy(y.data(), in.value()->output(0).data, 24);
  EXPECT_EQ(y, (std::vector<float>{4, 0, 12, 0, 20, 0}));  // on testpack: (x + x), RELU, times two
}

}  // namespace
}  // namespace baton::test
