// Plugins that misbehave must not take the host down: an exception thrown through the C boundary becomes
// an error status naming the node; a plugin that writes past its output is caught under
// AddressSanitizer at the write (the arena poisons a redzone after every tensor in that build).
#include <gtest/gtest.h>

#include "interpreter.h"
#include "test_support.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

Expected<std::unique_ptr<Interpreter>> one_custom_op(const std::string& dir, const std::string& op) {
  auto env = isolated_environment({dir});
  if (!env) return env.status();
  TinyModel m;
  m.tensors = {{{4}, 0, {}, "x"}, {{4}, 0, {}, "y"}, {{4}, 0, {}, "z"}};
  m.ops = {{32, op, 1, {0}, {1}}, {32, "TimesTwo", 1, {1}, {2}}};
  m.inputs = {0};
  m.outputs = {2};
  auto model = load_model_buffer(m.build(), "bad.tflite");
  if (!model) return model.status();
  return Interpreter::create(env.value(), model.value());
}

TEST(MisbehavingPlugin, ExceptionInPrepareBecomesAnError) {
  TempDir dir;
  dir.add_plugin("misbehaving");
  dir.add_plugin("testpack");
  auto interp = one_custom_op(dir.path(), "ThrowInPrepare");
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 (ThrowInPrepare v1): prepare failed; misbehaving: the plugin threw an "
                                "exception across the C boundary"),
            std::string::npos)
      << interp.error();
}

TEST(MisbehavingPlugin, ExceptionInInvokeBecomesAnErrorAndTheInterpreterLives) {
  TempDir dir;
  dir.add_plugin("misbehaving");
  dir.add_plugin("testpack");
  auto interp = one_custom_op(dir.path(), "ThrowInInvoke");
  ASSERT_TRUE(interp) << interp.error();
  Status s = interp.value()->invoke();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("node 0 (ThrowInInvoke v1) in misbehaving: invoke failed: the plugin threw"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(interp.value()->invoke());  // and again, still no crash
}

TEST(MisbehavingPlugin, NextOpPackTakesNodesWhoseKernelThrewInPrepareOrFirstInvoke) {
  TempDir dir;
  dir.add_plugin("misbehaving", "a_misbehaving.so");  // loads first, so it is asked first for ADD
  dir.add_plugin("testpack", "b_testpack.so");
  auto log = std::make_shared<Captured>();
  auto env = isolated_environment({dir.path()}, "", log);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.placement(0).plugin, "testpack");
  EXPECT_EQ(in.placement(1).plugin, "misbehaving");  // its TimesTwo prepares fine; it throws at invoke
  ASSERT_EQ(in.fallbacks().size(), 1u);
  EXPECT_EQ(in.fallbacks()[0].plugin, "misbehaving");
  EXPECT_NE(in.fallbacks()[0].reason.find("threw an exception"), std::string::npos);
  bool warned = false;
  for (const std::string& l : log->lines) warned |= l.find("op pack misbehaving failed to prepare it") != std::string::npos;
  EXPECT_TRUE(warned);
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 1, 1, 1, 1, -9};
  std::memcpy(in.input(0).data, a, sizeof a);
  std::memcpy(in.input(1).data, b, sizeof b);
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  float out[6];
  std::memcpy(out, in.output(0).data, sizeof out);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{4, 6, 8, 10, 12, 0}));  // 2 * relu(a + b)
  EXPECT_EQ(in.placement(1).plugin, "testpack");
  ASSERT_EQ(in.fallbacks().size(), 2u);
  EXPECT_EQ(in.fallbacks()[1].stage, "invoke");
  std::memcpy(in.input(0).data, a, sizeof a);
  std::memcpy(in.input(1).data, b, sizeof b);
  ASSERT_TRUE(in.invoke());  // later runs stay on the new pack
  std::memcpy(out, in.output(0).data, sizeof out);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{4, 6, 8, 10, 12, 0}));
}

TEST(MisbehavingPlugin, DelegateThrowingFromCheckAndPrepareLeavesTheModelOnTheOpPacks) {
  TempDir dir, conf;
  dir.add_plugin("thrower");
  dir.add_plugin("testpack");
  conf.write("baton.conf", "delegates = thrower\n");
  auto log = std::make_shared<Captured>();
  auto env = isolated_environment({dir.path()}, conf.file("baton.conf"), log);
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(add_then_double().build(), "tiny.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.placement(0).kind, "op-pack");
  EXPECT_EQ(in.placement(1).kind, "op-pack");
  ASSERT_FALSE(in.refusals(1).empty());
  EXPECT_EQ(in.refusals(1)[0].reason(), "the plugin threw an exception across the C boundary");
  ASSERT_EQ(in.fallbacks().size(), 1u);
  EXPECT_EQ(in.fallbacks()[0].stage, "prepare");
  bool warned = false;
  for (const std::string& l : log->lines) warned |= l.find("delegate thrower lost partition 0") != std::string::npos;
  EXPECT_TRUE(warned);
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0, 0, 0, 0, 0, -7};
  std::memcpy(in.input(0).data, a, sizeof a);
  std::memcpy(in.input(1).data, b, sizeof b);
  ASSERT_TRUE(in.invoke());
  float out[6];
  std::memcpy(out, in.output(0).data, sizeof out);
  EXPECT_EQ(std::vector<float>(out, out + 6), (std::vector<float>{2, 4, 6, 8, 10, 0}));
}

// One custom op from a string input [2] to a string output [2], given the strings "ab" and "".
Expected<std::unique_ptr<Interpreter>> one_string_op(const std::string& dir, const std::string& op) {
  auto env = isolated_environment({dir});
  if (!env) return env.status();
  TinyModel m;
  m.tensors = {{{2}, 5 /* STRING */, {}, "words"}, {{2}, 5, {}, "out"}};
  m.ops = {{32, op, 1, {0}, {1}}};
  m.inputs = {0};
  m.outputs = {1};
  auto model = load_model_buffer(m.build(), "strings.tflite");
  if (!model) return model.status();
  auto interp = Interpreter::create(env.value(), model.value());
  if (!interp) return interp;
  const uint8_t words[] = {2, 0, 0, 0, 16, 0, 0, 0, 18, 0, 0, 0, 18, 0, 0, 0, 'a', 'b'};
  if (Status s = interp.value()->set_string_input(0, words, sizeof words); !s) return s;
  return interp;
}

// The host checks a string output before any node reads it: a kernel's bad offsets fail that node.
TEST(MisbehavingPlugin, AMalformedStringOutputFailsTheNodeThatWroteIt) {
  TempDir dir;
  dir.add_plugin("misbehaving");
  auto interp = one_string_op(dir.path(), "BadStrings");
  ASSERT_TRUE(interp) << interp.error();
  Status s = interp.value()->invoke();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("node 0 (BadStrings v1) in misbehaving wrote a malformed string tensor 1: offset 2 (1048576) "
                             "is past its 16 bytes"),
            std::string::npos)
      << s.message();
}

TEST(MisbehavingPlugin, AStringOutputWithoutAByteSizeFailsTheNode) {
  TempDir dir;
  dir.add_plugin("misbehaving");
  auto interp = one_string_op(dir.path(), "NoStringSize");
  ASSERT_TRUE(interp) << interp.error();
  Status s = interp.value()->invoke();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("node 0 (NoStringSize v1) in misbehaving: its prepare set no byte size"), std::string::npos)
      << s.message();
}

#if defined(__SANITIZE_ADDRESS__)
TEST(MisbehavingPluginDeathTest, WritePastTheOutputIsCaughtUnderAddressSanitizer) {
  TempDir dir;
  dir.add_plugin("misbehaving");
  dir.add_plugin("testpack");
  EXPECT_DEATH(
      {
        auto interp = one_custom_op(dir.path(), "WriteTooFar");
        if (interp) (void)interp.value()->invoke();
      },
      "use-after-poison|heap-buffer-overflow");
}
#endif

}  // namespace
}  // namespace baton::test
