// A tiny model built in the test runs through the test op pack; outputs are checked against values
// worked out by hand. Also: resolution errors name op, version and loaded ranges; resizing re-prepares.
#include <gtest/gtest.h>

#include "interpreter.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

class InterpreterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.add_plugin("testpack");
    auto env = isolated_environment({dir_.path()});
    ASSERT_TRUE(env) << env.error();
    env_ = env.value();
  }
  Expected<std::unique_ptr<Interpreter>> make(const TinyModel& m) {
    auto model = load_model_buffer(m.build(), "tiny.tflite");
    if (!model) return model.status();
    return Interpreter::create(env_, model.value());
  }
  static void set(Tensor& t, const std::vector<float>& v) {
    ASSERT_EQ(t.bytes, v.size() * 4);
    std::memcpy(t.data, v.data(), t.bytes);
  }
  static std::vector<float> get(const Tensor& t) {
    std::vector<float> v(t.bytes / 4);
    std::memcpy(v.data(), t.data, t.bytes);
    return v;
  }
  TempDir dir_;
  std::shared_ptr<Environment> env_;
};

TEST_F(InterpreterTest, AddReluThenTimesTwoComputesByHand) {
  auto interp = make(add_then_double());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_EQ(in.input_count(), 2u);
  set(in.input(0), {1, -2, 3, -4, 5, -6});
  set(in.input(1), {0.5f, 1, -4, 3, 0, 7});
  ASSERT_TRUE(in.invoke());
  // a + b = {1.5, -1, -1, -1, 5, 1}; RELU -> {1.5, 0, 0, 0, 5, 1}; times two -> {3, 0, 0, 0, 10, 2}.
  EXPECT_EQ(get(in.output(0)), (std::vector<float>{3, 0, 0, 0, 10, 2}));
  EXPECT_EQ(in.placement(0).plugin, "testpack");
}

TEST_F(InterpreterTest, ConstantInputIsReadFromTheModel) {
  TinyModel m = add_then_double();
  m.tensors[1].data = floats({10, 20, 30, 40, 50, 60});
  m.inputs = {0};
  auto interp = make(m);
  ASSERT_TRUE(interp) << interp.error();
  set(interp.value()->input(0), {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(interp.value()->invoke());
  EXPECT_EQ(get(interp.value()->output(0)), (std::vector<float>{22, 44, 66, 88, 110, 132}));
}

TEST_F(InterpreterTest, VersionNoPackCoversNamesOpVersionAndLoadedRanges) {
  TinyModel m = add_then_double();
  m.ops[0].version = 3;
  auto interp = make(m);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 (ADD v3): no op pack supports op ADD version 3 (loaded: testpack has ADD v1-2)"),
            std::string::npos)
      << interp.error();
}

TEST_F(InterpreterTest, UnknownCustomOpIsNamed) {
  TinyModel m = add_then_double();
  m.ops[1].custom = "TimesThree";
  auto interp = make(m);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("no op pack supports custom op 'TimesThree' version 1"), std::string::npos)
      << interp.error();
}

TEST_F(InterpreterTest, PrepareErrorNamesNodeAndPlugin) {
  TinyModel m = add_then_double();
  m.tensors[1].shape = {3, 3};  // ADD here does no broadcasting
  auto interp = make(m);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 (ADD v1): prepare failed; testpack: testpack ADD: inputs differ in size"),
            std::string::npos)
      << interp.error();
}

TEST_F(InterpreterTest, ResizeInputReprepares) {
  auto interp = make(add_then_double());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_TRUE(in.resize_input(0, {1, 2}));
  ASSERT_TRUE(in.resize_input(1, {1, 2}));
  ASSERT_TRUE(in.ensure_prepared());
  EXPECT_EQ(in.output(0).shape, (std::vector<int32_t>{1, 2}));
  set(in.input(0), {1, 2});
  set(in.input(1), {3, -9});
  ASSERT_TRUE(in.invoke());
  EXPECT_EQ(get(in.output(0)), (std::vector<float>{8, 0}));
}

TEST_F(InterpreterTest, ArenaIsSmallerThanTheNaiveSum) {
  // A chain of TimesTwo: with reuse only two activations need to exist at once.
  TinyModel m;
  for (int i = 0; i < 6; ++i) m.tensors.push_back({{256}, 0, {}, "t" + std::to_string(i)});
  for (int i = 0; i < 5; ++i) m.ops.push_back({32, "TimesTwo", 1, {i}, {i + 1}});
  m.inputs = {0};
  m.outputs = {5};
  auto interp = make(m);
  ASSERT_TRUE(interp) << interp.error();
  EXPECT_EQ(interp.value()->naive_bytes(), 6u * 1024);
#if !defined(__SANITIZE_ADDRESS__)  // under ASan every tensor gets its own place and a redzone
  // Step s runs node s; t_s (s >= 1) is alive at steps s-1..s, and the input t0 for the whole run (a
  // failed first run is repeated from it), so at most three tensors are alive at once.
  EXPECT_EQ(interp.value()->arena_bytes(), 3u * 1024);
#endif
  std::vector<float> x(256, 1.5f);
  set(interp.value()->input(0), x);
  ASSERT_TRUE(interp.value()->invoke());
  EXPECT_EQ(get(interp.value()->output(0)), std::vector<float>(256, 48.0f));
}

// An environment made with no state_dir, as the C API, TFLite's C API and the CLI make theirs, keeps its
// crash journal in this test process's folder, not in the user's $XDG_STATE_HOME or ~/.local/state.
TEST(StateFolder, AnEnvironmentWithoutAStateDirKeepsItsJournalInTheTestsOwn) {
  EnvironmentOptions o;
  o.use_environment_variables = false;
  o.use_default_dirs = false;
  o.read_config = false;
  o.log = [](baton_log_level, const std::string&) {};
  auto env = Environment::create(o);
  ASSERT_TRUE(env) << env.error();
  EXPECT_EQ(env.value()->journal_dir(), test_state_dir() + "/baton/journal");
  const char* home = std::getenv("HOME");
  if (home && *home) EXPECT_NE(env.value()->journal_dir(), std::string(home) + "/.local/state/baton/journal");
}

}  // namespace
}  // namespace baton::test
