// A model with several nodes that cannot run is refused with one error naming all of them.
#include <gtest/gtest.h>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

// Three nodes that cannot run, each for another reason: an op no pack has, a type the builtin kernel does
// not take, a parameter it refuses in prepare. One error names all three, before anything runs.
TEST(UnrunnableNodes, AreAllReportedInOneError) {
  OpGraph g;
  const int32_t x = g.input({2, 3});
  const int32_t i = g.input({2, 3}, 2 /* INT32 */);
  const int32_t a = g.output({2, 3});
  const int32_t b = g.add({2, 3}, {}, 2);
  g.outputs.push_back(b);
  const int32_t c = g.output({2, 3});
  GraphOp custom;
  custom.code = 32;
  custom.custom = "NoSuchOp";
  custom.inputs = {x};
  custom.outputs = {a};
  g.ops.push_back(custom);
  g.op(28 /* TANH */, {i}, {b});
  g.op(0 /* ADD */, {x, x}, {c}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_AddOptions,
                          fb::CreateAddOptions(fbb, fb::ActivationFunctionType_TANH).Union());
  });
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_buffer(g.build(), "three.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_FALSE(interp);
  const std::string& e = interp.error();
  EXPECT_NE(e.find("3 node(s) cannot run"), std::string::npos) << e;
  EXPECT_NE(e.find("node 0 (NoSuchOp v1): no op pack supports custom op 'NoSuchOp'"), std::string::npos) << e;
  EXPECT_NE(e.find("node 1 (TANH v1): prepare failed; builtin: node 1 TANH: input type INT32 not supported"),
            std::string::npos) << e;
  EXPECT_NE(e.find("node 2 (ADD v1): prepare failed; builtin: node 2 ADD: fused activation 4 not supported"),
            std::string::npos) << e;
}

}  // namespace
}  // namespace baton::test
