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
  EXPECT_NE(interp.error().find("node 0 (ThrowInPrepare v1) in misbehaving: prepare failed: the plugin threw an "
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
