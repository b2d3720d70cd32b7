// The builtin pack's random ops (RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL, MULTINOMIAL) in models built
// here: unseeded nodes drawing from the system's entropy, never folded at load, and seeded again when a
// resize prepares them. Their seeded outputs against native TFLite's: RepeatedInvoke in op_cases_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

// Random ops' models built here: a float32 [n] or [rows, classes] tensor from constants, with seeds.
OptionsFn random_seeds(int64_t seed, int64_t seed2) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_RandomOptions, fb::CreateRandomOptions(fbb, seed, seed2).Union());
  };
}

std::vector<uint8_t> int32_bytes(std::vector<int32_t> values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<float> floats_of(const Tensor& t) {
  std::vector<float> out(t.bytes / 4);
  std::memcpy(out.data(), t.data, t.bytes);
  return out;
}

std::unique_ptr<Interpreter> interpreter_for(const std::shared_ptr<Environment>& env, const OpGraph& g) {
  auto model = load_model_buffer(g.build(), "random.tflite");
  EXPECT_TRUE(model) << model.error();
  if (!model) return nullptr;
  auto interp = Interpreter::create(env, model.value());
  EXPECT_TRUE(interp) << interp.error();
  return interp ? std::move(interp.value()) : nullptr;
}

// Both seeds 0: TFLite 2.9 seeds each node from the system's entropy, so there is no fixed output to
// compare; the numbers have the distribution's range and moments, change from invoke to invoke, and differ
// between two interpreters of one model. TFLite 2.9 reads only a seed's low 32 bits: 2^32 is 0 too.
TEST(RandomOps, UnseededNodesDrawFromTheSystemsEntropy) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  constexpr int kCount = 8192;
  for (int32_t code : {148 /* RANDOM_UNIFORM */, 146 /* RANDOM_STANDARD_NORMAL */}) {
    OpGraph g;
    const int32_t shape = g.add({1}, int32_bytes({kCount}), 2 /* INT32 */);
    const int32_t out = g.output({kCount});
    g.op(code, {shape}, {out}, code == 148 ? random_seeds(0, 0) : random_seeds(int64_t{1} << 32, 0));
    auto a = interpreter_for(env.value(), g);
    auto b = interpreter_for(env.value(), g);
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(a->invoke());
    const std::vector<float> first = floats_of(a->output(0));
    ASSERT_TRUE(a->invoke());
    const std::vector<float> second = floats_of(a->output(0));
    ASSERT_TRUE(b->invoke());
    const std::vector<float> other = floats_of(b->output(0));
    EXPECT_NE(first, second) << code;
    EXPECT_NE(first, other) << code;
    double sum = 0, squares = 0;
    for (float v : first) {
      if (code == 148) {
        EXPECT_GE(v, 0.0f);
        EXPECT_LT(v, 1.0f);
      }
      EXPECT_TRUE(std::isfinite(v));
      sum += v;
      squares += static_cast<double>(v) * v;
    }
    const double mean = sum / kCount, variance = squares / kCount - mean * mean;
    if (code == 148) {
      EXPECT_NEAR(mean, 0.5, 0.02);
      EXPECT_NEAR(variance, 1.0 / 12, 0.01);
    } else {
      EXPECT_NEAR(mean, 0.0, 0.05);
      EXPECT_NEAR(variance, 1.0, 0.08);
    }
  }
  // MULTINOMIAL: classes drawn as often as their probabilities say (0.1, 0.2, 0.3, 0.4).
  OpGraph g;
  std::vector<float> logits = {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f)};
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), logits.data(), 16);
  const int32_t l = g.add({1, 4}, bytes);
  const int32_t n = g.add({}, int32_bytes({kCount}), 2);
  const int32_t out = g.add({1, kCount}, {}, 2);
  g.outputs.push_back(out);
  g.op(149 /* MULTINOMIAL */, {l, n}, {out}, random_seeds(0, 0));
  auto m = interpreter_for(env.value(), g);
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->invoke());
  std::vector<int> counts(4);
  const auto* drawn = reinterpret_cast<const int32_t*>(m->output(0).data);
  for (int k = 0; k < kCount; ++k) {
    ASSERT_GE(drawn[k], 0);
    ASSERT_LT(drawn[k], 4);
    ++counts[static_cast<size_t>(drawn[k])];
  }
  for (int c = 0; c < 4; ++c) EXPECT_NEAR(counts[static_cast<size_t>(c)] / double(kCount), 0.1 * (c + 1), 0.02) << c;
}

// A random node whose inputs are all constant is not folded at load (its output is not a function of
// them): a node after it sees new numbers at every invoke.
TEST(RandomOps, AreNotFoldedAtLoad) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  OpGraph g;
  const int32_t shape = g.add({2}, int32_bytes({2, 4}), 2);
  const int32_t r = g.add({2, 4});
  const int32_t out = g.output({2, 4});
  g.op(146 /* RANDOM_STANDARD_NORMAL */, {shape}, {r}, random_seeds(5, 6));
  g.op(101 /* ABS */, {r}, {out});
  auto in = interpreter_for(env.value(), g);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->folded_nodes(), 0u);
  ASSERT_TRUE(in->invoke());
  const std::vector<float> first = floats_of(in->output(0));
  ASSERT_TRUE(in->invoke());
  EXPECT_NE(floats_of(in->output(0)), first);
  for (float v : first) EXPECT_GE(v, 0.0f);
}

// An input resize prepares every node again, as TFLite's AllocateTensors after ResizeInputTensor does:
// a random node is seeded again and starts its sequence over.
TEST(RandomOps, AResizePreparesThemAgainFromTheirSeeds) {
  auto env = isolated_environment({BUILTIN_PACK_DIR});
  ASSERT_TRUE(env) << env.error();
  OpGraph g;
  const int32_t x = g.input({2});
  const int32_t y = g.output({2});
  const int32_t shape = g.add({1}, int32_bytes({6}), 2);
  const int32_t r = g.output({6});
  g.op(101 /* ABS */, {x}, {y});
  g.op(148 /* RANDOM_UNIFORM */, {shape}, {r}, random_seeds(7, 8));
  auto in = interpreter_for(env.value(), g);
  ASSERT_TRUE(in);
  ASSERT_TRUE(in->invoke());
  const std::vector<float> first = floats_of(in->output(1));
  ASSERT_TRUE(in->invoke());
  EXPECT_NE(floats_of(in->output(1)), first);
  ASSERT_TRUE(in->resize_input(0, {3}));
  ASSERT_TRUE(in->invoke());
  EXPECT_EQ(floats_of(in->output(1)), first);
}

}  // namespace
}  // namespace baton::test
