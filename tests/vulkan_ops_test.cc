// The Vulkan delegate's ops, with the validation layer on: small graphs of each op, with odd sizes
// (channels not a multiple of 4, 1x1 spatial, stride 2 on odd inputs), through vulkan and through the
// builtin pack alone on the same random inputs, compared (two runs: the second replays the recorded
// command buffer); fusion and memory reuse in a chain; and the refusals `baton plan` shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu.h"
#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

// ---- small graphs against the builtin pack ---------------------------------------------------------------

// Interpreters of `g` in vulkan's environment and in the builtin pack's; null where one could not be made
// (a test failure already).
struct GraphRun {
  std::unique_ptr<Interpreter> vulkan, builtin;
};
GraphRun open_graph(const VulkanEnv& env, const OpGraph& g, const std::string& name) {
  GraphRun r;
  auto model = load_model_buffer(g.build(), name + ".tflite");
  EXPECT_TRUE(model) << model.error();
  if (!model) return r;
  auto vi = Interpreter::create(env.env, model.value());
  EXPECT_TRUE(vi) << vi.error();
  auto bi = Interpreter::create(builtin_env(), model.value());
  EXPECT_TRUE(bi) << bi.error();
  if (vi && bi) r = {std::move(vi.value()), std::move(bi.value())};
  return r;
}

// One vulkan environment per precision (`fp16` false, true), shared by the cases of this process: each
// case gets its own interpreters (and partitions), not its own Vulkan instance and device.
const std::unique_ptr<VulkanEnv>& shared_vulkan_env(bool f16) {
  static std::unique_ptr<VulkanEnv> envs[2];
  auto& env = envs[f16];
  if (!env) env = vulkan_env("vulkan", f16 ? "fp16 = true\n" : "");
  return env;
}

// The tolerance of an op in float16 storage (the `fp16` option), relative to the output's largest magnitude:
// the inputs, weights and output each rounded to 11 significant bits (4.9e-4 apart), the products added in
// float32.
constexpr double kFloat16OpTolerance = 4e-3;

// Runs `g` through vulkan and through builtin alone on the same random inputs in [lo, hi]; every node
// must go to vulkan and the outputs must agree within `tolerance` of the largest magnitude. Twice: with
// float32 storage, then (unless `float16` is false) with float16 storage within kFloat16OpTolerance (or
// `tolerance` when larger).
void expect_same_as_builtin(const OpGraph& g, const std::string& what, float lo = -1.0f, float hi = 1.0f,
                            const std::vector<std::vector<int32_t>>& resize = {}, double tolerance = 1e-5,
                            bool float16 = true) {
  for (const bool f16 : {false, true}) {
    if (f16 && !float16) break;
    SCOPED_TRACE(what + (f16 ? " (float16 storage)" : " (float32)"));
    const auto& env = shared_vulkan_env(f16);
    ASSERT_TRUE(env);
    ASSERT_EQ(env->logged("; float16 storage"), f16);
    const size_t log_mark = env->log->lines.size();
    const double bound = f16 ? std::max(tolerance, kFloat16OpTolerance) : tolerance;
    const GraphRun opened = open_graph(*env, g, what);
    ASSERT_TRUE(opened.vulkan && opened.builtin);
    Interpreter& v = *opened.vulkan;
    Interpreter& b = *opened.builtin;
    for (size_t i = 0; i < v.nodes().size(); ++i) {
      const auto& refusals = v.refusals(i);
      EXPECT_EQ(v.placement(i).kind, "delegate") << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason);
    }
    for (size_t i = 0; i < resize.size(); ++i) {
      ASSERT_TRUE(v.resize_input(i, resize[i]));
      ASSERT_TRUE(b.resize_input(i, resize[i]));
    }
    ASSERT_TRUE(v.ensure_prepared());
    ASSERT_TRUE(b.ensure_prepared());
    for (int run = 0; run < 2; ++run) {  // the second run replays the same command buffer on new inputs
      for (size_t i = 0; i < v.input_count(); ++i) {
        const auto data = random_floats(v.input(i).bytes / 4, 17 + static_cast<uint32_t>(i + 7 * run), lo, hi);
        std::memcpy(v.input(i).data, data.data(), data.size());
        std::memcpy(b.input(i).data, data.data(), data.size());
      }
      Status sv = v.invoke();
      ASSERT_TRUE(sv) << sv.message();
      Status sb = b.invoke();
      ASSERT_TRUE(sb) << sb.message();
      EXPECT_TRUE(v.fallbacks().empty()) << fallbacks_text(v);
      for (size_t o = 0; o < v.output_count(); ++o) {
        ASSERT_EQ(v.output(o).shape, b.output(o).shape) << "output " << o;
        const double rel = relative_error(reinterpret_cast<const float*>(v.output(o).data),
                                          reinterpret_cast<const float*>(b.output(o).data), b.output(o).bytes / 4);
        EXPECT_LE(rel, bound) << what << " output " << o << " run " << run;
      }
    }
    EXPECT_EQ(env->validation_messages(log_mark), "");
  }
}

TEST(VulkanOps, Conv2d) {
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 3 /* RELU6 */, true, {1, 9, 11, 3}, 5, 3), "same, stride 2 on 9x11, 3 -> 5 channels, relu6");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 1, 1, 1 /* RELU */, false, {1, 9, 11, 3}, 5, 3), "valid, no bias, relu");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 1, 2, 0, true, {1, 9, 11, 3}, 5, 3), "same, dilation 2");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 2, 2, 2 /* RELU_N1_TO_1 */, true, {1, 9, 11, 3}, 5, 3), "valid, stride 2, dilation 2");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 1, 1, 0, true, {2, 1, 1, 7}, 10, 1), "1x1 spatial, 7 -> 10 channels, batch 2");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 1, 1, 1, true, {1, 6, 7, 20}, 18, 3), "20 -> 18 channels (tiles of 4 blocks, one short)");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 0, true, {1, 7, 5, 16}, 8, 5), "5x5 kernel, stride 2 on 7x5");
}

TEST(VulkanOps, Conv2dRebuildsForANewInputShape) {
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 0, true, {1, 9, 11, 3}, 5, 3), "conv resized", -1.0f, 1.0f, {{2, 14, 6, 3}});
}

OpGraph depthwise_graph(fb::Padding padding, int stride, int multiplier, std::vector<int32_t> in_shape, int activation = 1) {
  OpGraph g;
  const int32_t c = in_shape[3] * multiplier;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {1, 3, 3, c}, 3);
  const int32_t b = random_weights(g, {c}, 4);
  const int32_t out = g.output({in_shape[0], window_out(padding, in_shape[1], 3, stride, 1), window_out(padding, in_shape[2], 3, stride, 1), c});
  g.op(BATON_OP_DEPTHWISE_CONV_2D, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                          fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, multiplier, act(activation)).Union());
  });
  return g;
}

TEST(VulkanOps, DepthwiseConv2d) {
  for (int multiplier : {1, 2}) {
    for (auto padding : {fb::Padding_SAME, fb::Padding_VALID}) {
      expect_same_as_builtin(depthwise_graph(padding, 2, multiplier, {1, 10, 9, 4}),
                             "multiplier " + std::to_string(multiplier) + (padding == fb::Padding_SAME ? " same" : " valid"));
    }
  }
  expect_same_as_builtin(depthwise_graph(fb::Padding_SAME, 1, 1, {1, 7, 8, 3}, 3), "3 channels, relu6");
  expect_same_as_builtin(depthwise_graph(fb::Padding_SAME, 2, 3, {2, 5, 7, 3}), "multiplier 3 on 3 channels, stride 2 on 5x7");
  expect_same_as_builtin(depthwise_graph(fb::Padding_SAME, 1, 1, {1, 1, 1, 6}), "1x1 spatial");
}

OptionsFn fc_options(int activation, bool keep_dims) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                          fb::CreateFullyConnectedOptions(fbb, act(activation), fb::FullyConnectedOptionsWeightsFormat_DEFAULT, keep_dims).Union());
  };
}

TEST(VulkanOps, FullyConnected) {
  {
    OpGraph g;  // keep_num_dims, no bias
    const int32_t in = g.input({2, 3, 8});
    const int32_t w = random_weights(g, {6, 8}, 5);
    const int32_t out = g.output({2, 3, 6});
    g.op(BATON_OP_FULLY_CONNECTED, {in, w, -1}, {out}, fc_options(0, true));
    expect_same_as_builtin(g, "keep_num_dims");
  }
  {
    OpGraph g;  // rows of 16 across the input's last two dimensions: regrouped before the product
    const int32_t in = g.input({1, 2, 2, 8});
    const int32_t w = random_weights(g, {7, 16}, 6);
    const int32_t b = random_weights(g, {7}, 7);
    const int32_t out = g.output({2, 7});
    g.op(BATON_OP_FULLY_CONNECTED, {in, w, b}, {out}, fc_options(1, false));
    expect_same_as_builtin(g, "flattened rows, relu");
  }
  {
    OpGraph g;  // one long row: the depth is split over the workgroup
    const int32_t in = g.input({1, 1, 1, 1153});
    const int32_t w = random_weights(g, {5, 1153}, 8);
    const int32_t b = random_weights(g, {5}, 9);
    const int32_t out = g.output({1, 5});
    g.op(BATON_OP_FULLY_CONNECTED, {in, w, b}, {out}, fc_options(0, false));
    expect_same_as_builtin(g, "depth 1153");
  }
}

TEST(VulkanOps, BinaryWithBroadcastingAndActivations) {
  struct Case {
    int32_t code;
    OptionsFn options;
    const char* name;
  };
  const std::vector<Case> cases = {
      {BATON_OP_ADD, with_activation(fb::BuiltinOptions_AddOptions, add_options, 1), "ADD relu"},
      {BATON_OP_SUB, with_activation(fb::BuiltinOptions_SubOptions, sub_options, 3), "SUB relu6"},
      {BATON_OP_MUL, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 2), "MUL relu_n1_to_1"},
      {BATON_OP_MUL, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0), "MUL"},
      {BATON_OP_PRELU, nullptr, "PRELU"},
      {BATON_OP_DIV, with_activation(fb::BuiltinOptions_DivOptions, div_options, 1), "DIV relu"},
      {BATON_OP_SQUARED_DIFFERENCE, nullptr, "SQUARED_DIFFERENCE"},
      {BATON_OP_MAXIMUM, nullptr, "MAXIMUM"},
      {BATON_OP_MINIMUM, nullptr, "MINIMUM"},
  };
  for (const Case& c : cases) {
    {
      OpGraph g;  // [2,1,4,3] op [5,1,1]: both sides broadcast, b over the channels too
      const int32_t a = g.input({2, 1, 4, 3});
      const int32_t b = g.input({5, 1, 1});
      const int32_t out = g.output({2, 5, 4, 3});
      g.op(c.code, {a, b}, {out}, c.options);
      expect_same_as_builtin(g, std::string(c.name) + " broadcast both ways", -2.0f, 2.0f);
    }
    {
      OpGraph g;  // a constant operand of one value per channel
      const int32_t x = g.input({1, 3, 3, 5});
      const int32_t y = g.add({5}, floats({0.5f, -2.0f, 1.5f, 3.0f, -0.25f}));
      const int32_t z = g.output({1, 3, 3, 5});
      g.op(c.code, {x, y}, {z}, c.options);
      expect_same_as_builtin(g, std::string(c.name) + " constant operand", -2.0f, 2.0f);
    }
    {
      OpGraph g;  // same shapes, 6 channels
      const int32_t x = g.input({1, 2, 3, 6});
      const int32_t y = g.input({1, 2, 3, 6});
      const int32_t z = g.output({1, 2, 3, 6});
      g.op(c.code, {x, y}, {z}, c.options);
      expect_same_as_builtin(g, std::string(c.name) + " same shapes", -2.0f, 2.0f);
    }
  }
}

// POW as C computes it: a negative base with an integer exponent (a constant per channel, as a cube in a
// tanh GELU is), and a positive base with any exponent; 7 channels, so DIV's and POW's zero lanes (0 / 0,
// 0^0) must be zeroed again.
TEST(VulkanOps, Pow) {
  {
    OpGraph g;
    const int32_t x = g.input({1, 2, 3, 7});
    const int32_t e = g.add({7}, floats({3.0f, 2.0f, -1.0f, 1.0f, 0.0f, 4.0f, 3.0f}));
    const int32_t z = g.output({1, 2, 3, 7});
    g.op(BATON_OP_POW, {x, e}, {z});
    expect_same_as_builtin(g, "POW negative base, integer exponents", -2.0f, 2.0f);
  }
  {
    OpGraph g;
    const int32_t x = g.input({1, 3, 2, 7});
    const int32_t y = g.input({1, 3, 2, 7});
    const int32_t z = g.output({1, 3, 2, 7});
    g.op(BATON_OP_POW, {x, y}, {z});
    expect_same_as_builtin(g, "POW positive base", 0.25f, 2.0f);
  }
}

// FLOOR_MOD of float32 as TFLite computes it (fmod, then the divisor's sign): negative and positive operands,
// a broadcast divisor per channel, quotients that land on integers (a multiple of b leaves 0, not b). The
// remainder jumps by b where a / b crosses an integer, and rounding a random input to float16 moves it
// across: those cases run in float32 only; the exact multiples (float16 holds them) in both.
TEST(VulkanOps, FloorMod) {
  {
    OpGraph g;
    const int32_t x = g.input({1, 3, 4, 7});
    const int32_t y = g.add({7}, floats({0.75f, -1.5f, 2.0f, -0.3f, 3.0f, 1.0f, -2.5f}));
    const int32_t z = g.output({1, 3, 4, 7});
    g.op(BATON_OP_FLOOR_MOD, {x, y}, {z});
    expect_same_as_builtin(g, "FLOOR_MOD by constants per channel", -6.0f, 6.0f, {}, 1e-5, false);
  }
  {
    OpGraph g;
    const int32_t x = g.input({2, 5, 6});
    const int32_t y = g.input({2, 5, 6});
    const int32_t z = g.output({2, 5, 6});
    g.op(BATON_OP_FLOOR_MOD, {x, y}, {z});
    expect_same_as_builtin(g, "FLOOR_MOD same shapes", 0.5f, 3.0f, {}, 1e-5, false);
  }
  {
    OpGraph g;  // exact multiples: 4.5 mod 1.5, -3 mod 0.75, 6 mod -2, ... all give 0
    const int32_t x = g.add({1, 1, 1, 6}, floats({4.5f, -3.0f, 6.0f, -7.5f, 0.0f, 9.0f}));
    const int32_t in = g.input({1, 1, 1, 6});
    const int32_t s = g.add({1, 1, 1, 6});
    const int32_t z = g.output({1, 1, 1, 6});
    g.op(BATON_OP_ADD, {in, x}, {s}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
    const int32_t y = g.add({6}, floats({1.5f, 0.75f, -2.0f, 2.5f, 3.0f, -4.5f}));
    g.op(BATON_OP_FLOOR_MOD, {s, y}, {z});
    expect_same_as_builtin(g, "FLOOR_MOD of exact multiples", 0.0f, 0.0f);
  }
}

TEST(VulkanOps, Activations) {
  for (int32_t code : {BATON_OP_RELU, BATON_OP_RELU6, BATON_OP_RELU_N1_TO_1, BATON_OP_LOGISTIC, BATON_OP_TANH, BATON_OP_HARD_SWISH,
                       BATON_OP_EXP, BATON_OP_ABS, BATON_OP_NEG, BATON_OP_SQUARE, BATON_OP_GELU}) {
    OpGraph g;
    const int32_t in = g.input({1, 3, 5, 7});
    const int32_t out = g.output({1, 3, 5, 7});
    g.op(code, {in}, {out});
    expect_same_as_builtin(g, "op " + std::to_string(code), -8.0f, 8.0f);
  }
  for (int32_t code : {BATON_OP_LOGISTIC, BATON_OP_TANH}) {  // saturation: no inf / inf, no NaN
    OpGraph g;
    const int32_t in = g.input({2, 9});
    const int32_t out = g.output({2, 9});
    g.op(code, {in}, {out});
    expect_same_as_builtin(g, "op " + std::to_string(code) + " far from 0", -200.0f, 200.0f);
  }
  for (int32_t code : {BATON_OP_RSQRT, BATON_OP_SQRT}) {  // positive inputs; 7 channels for RSQRT's zero lanes
    OpGraph g;
    const int32_t in = g.input({1, 3, 5, 7});
    const int32_t out = g.output({1, 3, 5, 7});
    g.op(code, {in}, {out});
    expect_same_as_builtin(g, "op " + std::to_string(code), 0.01f, 8.0f);
  }
  {
    OpGraph g;  // GELU's tanh approximation (the option)
    const int32_t in = g.input({2, 3, 11});
    const int32_t out = g.output({2, 3, 11});
    g.op(BATON_OP_GELU, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_GeluOptions, fb::CreateGeluOptions(fbb, true).Union());
    });
    expect_same_as_builtin(g, "GELU approximate", -8.0f, 8.0f);
  }
}

OpGraph pool_graph(int32_t code, fb::Padding padding, int filter, int stride, std::vector<int32_t> in_shape, int activation = 0) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t out = g.output({in_shape[0], window_out(padding, in_shape[1], filter, stride, 1),
                                window_out(padding, in_shape[2], filter, stride, 1), in_shape[3]});
  g.op(code, {in}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                          fb::CreatePool2DOptions(fbb, padding, stride, stride, filter, filter, act(activation)).Union());
  });
  return g;
}

TEST(VulkanOps, Pooling) {
  for (int32_t code : {BATON_OP_AVERAGE_POOL_2D, BATON_OP_MAX_POOL_2D}) {
    const std::string name = code == BATON_OP_MAX_POOL_2D ? "max" : "average";
    expect_same_as_builtin(pool_graph(code, fb::Padding_SAME, 3, 2, {1, 7, 8, 3}), name + " same 3x3/2");
    expect_same_as_builtin(pool_graph(code, fb::Padding_VALID, 2, 2, {1, 7, 8, 3}), name + " valid 2x2/2");
    expect_same_as_builtin(pool_graph(code, fb::Padding_SAME, 3, 2, {2, 9, 9, 6}, 3), name + " same 3x3/2 on 9x9, relu6");
    expect_same_as_builtin(pool_graph(code, fb::Padding_VALID, 2, 2, {1, 2, 2, 5}), name + " to 1x1");
  }
}

TEST(VulkanOps, MeanOverSpatialAxes) {
  for (bool keep : {false, true}) {
    for (const std::vector<int32_t>& shape : {std::vector<int32_t>{2, 5, 6, 4}, std::vector<int32_t>{1, 7, 3, 5}, std::vector<int32_t>{1, 1, 1, 6}}) {
      OpGraph g;
      const int32_t in = g.input(shape);
      const int32_t axes = g.add({2}, ints({2, 1}), 2);
      const int32_t out = keep ? g.output({shape[0], 1, 1, shape[3]}) : g.output({shape[0], shape[3]});
      g.op(BATON_OP_MEAN, {in, axes}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, keep).Union());
      });
      expect_same_as_builtin(g, std::string(keep ? "keep_dims " : "") + std::to_string(shape[1]) + "x" + std::to_string(shape[2]));
    }
  }
}

std::string shape_text(const std::vector<int32_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(d[i]);  // appended apart: "," + to_string() trips a false -Wrestrict in GCC 12
  }
  return s + "]";
}

// A layer norm's MEAN: over the last axis with keep_dims, ranks 2 to 4, 7 and 130 channels; axis -1 too.
TEST(VulkanOps, MeanOverTheLastAxis) {
  for (const std::vector<int32_t>& shape : {std::vector<int32_t>{5, 7}, std::vector<int32_t>{1, 9, 130}, std::vector<int32_t>{2, 3, 4, 6}}) {
    for (int32_t axis : {static_cast<int32_t>(shape.size()) - 1, -1}) {
      OpGraph g;
      const int32_t in = g.input(shape);
      const int32_t axes = g.add({1}, ints({axis}), 2);
      std::vector<int32_t> kept = shape;
      kept.back() = 1;
      const int32_t out = g.output(kept);
      g.op(BATON_OP_MEAN, {in, axes}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, true).Union());
      });
      expect_same_as_builtin(g, "last axis " + std::to_string(axis) + " of rank " + std::to_string(shape.size()), -2.0f, 3.0f);
    }
  }
}

// A sequence pooled: MEAN over the middle axis of [N, S, C], with and without keep_dims.
TEST(VulkanOps, MeanOverTheSequenceAxis) {
  for (bool keep : {false, true}) {
    for (const std::vector<int32_t>& shape : {std::vector<int32_t>{1, 9, 7}, std::vector<int32_t>{3, 5, 12}}) {
      OpGraph g;
      const int32_t in = g.input(shape);
      const int32_t axes = g.add({1}, ints({1}), 2);
      const int32_t out = keep ? g.output({shape[0], 1, shape[2]}) : g.output({shape[0], shape[2]});
      g.op(BATON_OP_MEAN, {in, axes}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, keep).Union());
      });
      expect_same_as_builtin(g, std::string(keep ? "keep_dims " : "") + shape_text(shape));
    }
  }
}

// TRANSPOSE of the outer axes (attention's head split and merge), ranks 2 to 4, channels not a multiple of 4.
TEST(VulkanOps, TransposeOfTheOuterAxes) {
  struct Case {
    std::vector<int32_t> in, perm;
  };
  for (const Case& c : {Case{{1, 5, 3, 6}, {0, 2, 1, 3}}, Case{{2, 3, 4, 5}, {2, 0, 1, 3}}, Case{{4, 5, 7}, {1, 0, 2}},
                        Case{{3, 9}, {0, 1}}}) {
    OpGraph g;
    const int32_t in = g.input(c.in);
    std::vector<uint8_t> perm_bytes(c.perm.size() * sizeof(int32_t));
    std::memcpy(perm_bytes.data(), c.perm.data(), perm_bytes.size());
    const int32_t perm = g.add({static_cast<int32_t>(c.perm.size())}, perm_bytes, 2);
    std::vector<int32_t> out_shape;
    for (int32_t a : c.perm) out_shape.push_back(c.in[static_cast<size_t>(a)]);
    const int32_t out = g.output(out_shape);
    g.op(BATON_OP_TRANSPOSE, {in, perm}, {out});
    expect_same_as_builtin(g, "transpose of " + shape_text(c.in));
  }
}

// BATCH_MATMUL with and without adj_y, batches broadcast (either side, a rank-2 operand), sizes not a multiple
// of 4, a constant right operand.
TEST(VulkanOps, BatchMatmul) {
  struct Case {
    std::vector<int32_t> lhs, rhs, out;
    bool adj_y;
  };
  for (const Case& c : {Case{{1, 2, 13, 7}, {1, 2, 11, 7}, {1, 2, 13, 11}, true}, Case{{2, 9, 5}, {5, 6}, {2, 9, 6}, false},
                        Case{{3, 1, 4, 8}, {1, 2, 8, 3}, {3, 2, 4, 3}, false}, Case{{6, 10}, {2, 9, 10}, {2, 6, 9}, true}}) {
    OpGraph g;
    const int32_t a = g.input(c.lhs);
    const int32_t b = g.input(c.rhs);
    const int32_t out = g.output(c.out);
    const bool adj_y = c.adj_y;
    g.op(BATON_OP_BATCH_MATMUL, {a, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_BatchMatMulOptions, fb::CreateBatchMatMulOptions(fbb, false, adj_y).Union());
    });
    expect_same_as_builtin(g, "batch matmul " + shape_text(c.lhs) + " x " + shape_text(c.rhs) + (adj_y ? " adj_y" : ""), -2.0f, 2.0f);
  }
  OpGraph g;  // a constant right operand
  const int32_t a = g.input({1, 5, 6});
  const int32_t b = random_weights(g, {6, 7}, 5);
  const int32_t out = g.output({1, 5, 7});
  g.op(BATON_OP_BATCH_MATMUL, {a, b}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_BatchMatMulOptions, fb::CreateBatchMatMulOptions(fbb, false, false).Union());
  });
  expect_same_as_builtin(g, "batch matmul with a constant right operand");
}

// RESIZE_NEAREST_NEIGHBOR: a detector's 2x upsampling, an odd factor down and up, with each option.
TEST(VulkanOps, ResizeNearestNeighbor) {
  struct Case {
    std::vector<int32_t> in;
    int32_t oh, ow;
    bool align_corners, half_pixel;
  };
  for (const Case& c : {Case{{1, 4, 5, 6}, 8, 10, false, false}, Case{{2, 7, 5, 3}, 3, 9, false, true},
                        Case{{1, 5, 4, 9}, 7, 3, true, false}, Case{{1, 3, 3, 4}, 3, 3, false, false}}) {
    OpGraph g;
    const int32_t in = g.input(c.in);
    const int32_t size = g.add({2}, ints({c.oh, c.ow}), 2);
    const int32_t out = g.output({c.in[0], c.oh, c.ow, c.in[3]});
    const bool ac = c.align_corners, hp = c.half_pixel;
    g.op(BATON_OP_RESIZE_NEAREST_NEIGHBOR, {in, size}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_ResizeNearestNeighborOptions,
                            fb::CreateResizeNearestNeighborOptions(fbb, ac, hp).Union());
    });
    expect_same_as_builtin(g, "resize nearest " + shape_text(c.in) + " to " + std::to_string(c.oh) + "x" +
                                  std::to_string(c.ow) + (ac ? " align_corners" : "") + (hp ? " half_pixel" : ""));
  }
}

// STRIDED_SLICE: a detector's space-to-depth slices (stride 2 from 0 and 1), a channel range that starts
// inside a vec4, a negative stride, masks, a shrunk axis (also the last), rank 3.
TEST(VulkanOps, StridedSlice) {
  struct Case {
    std::vector<int32_t> in, begin, end, strides, out;
    int32_t begin_mask, end_mask, shrink;
  };
  const std::vector<Case> cases = {
      {{1, 8, 8, 3}, {0, 0, 0, 0}, {1, 8, 8, 3}, {1, 2, 2, 1}, {1, 4, 4, 3}, 0, 0, 0},
      {{1, 8, 8, 3}, {0, 1, 0, 0}, {1, 8, 8, 3}, {1, 2, 2, 1}, {1, 4, 4, 3}, 0, 0, 0},
      {{1, 4, 5, 9}, {0, 0, 0, 2}, {1, 4, 5, 7}, {1, 1, 1, 1}, {1, 4, 5, 5}, 0, 0, 0},
      {{2, 5, 6, 7}, {0, -1, 0, 1}, {2, 0, 6, 7}, {1, -2, 3, 2}, {2, 2, 2, 3}, 0, 0, 0},
      {{2, 5, 6, 7}, {1, 3, 2, 4}, {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 2, 4, 3}, 0, 15, 0},
      {{2, 5, 6, 7}, {1, 2, 0, 0}, {2, 3, 6, 7}, {1, 1, 1, 1}, {6, 7}, 0, 0, 3},
      {{2, 5, 6, 7}, {0, 0, 0, 3}, {2, 5, 6, 4}, {1, 1, 1, 1}, {2, 5, 6}, 0, 0, 8},
      {{5, 6, 7}, {4, 0, 1}, {0, 6, 7}, {-1, 2, 1}, {4, 3, 6}, 0, 0, 0},
  };
  auto bytes = [](const std::vector<int32_t>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(int32_t));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  for (const Case& c : cases) {
    OpGraph g;
    const int32_t in = g.input(c.in);
    const int32_t rank = static_cast<int32_t>(c.in.size());
    const int32_t b = g.add({rank}, bytes(c.begin), 2), e = g.add({rank}, bytes(c.end), 2), st = g.add({rank}, bytes(c.strides), 2);
    const int32_t out = g.output(c.out);
    const int32_t bm = c.begin_mask, em = c.end_mask, sm = c.shrink;
    g.op(BATON_OP_STRIDED_SLICE, {in, b, e, st}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_StridedSliceOptions, fb::CreateStridedSliceOptions(fbb, bm, em, 0, 0, sm).Union());
    });
    expect_same_as_builtin(g, "strided slice of " + shape_text(c.in) + " to " + shape_text(c.out));
  }
}

TEST(VulkanOps, Softmax) {
  for (auto [shape, beta] : {std::pair{std::vector<int32_t>{6, 10}, 1.0f}, std::pair{std::vector<int32_t>{2, 3, 1001}, 0.5f},
                            std::pair{std::vector<int32_t>{1, 5}, 2.0f}}) {
    OpGraph g;
    const int32_t in = g.input(shape);
    const int32_t out = g.output(shape);
    g.op(BATON_OP_SOFTMAX, {in}, {out}, [beta = beta](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_SoftmaxOptions, fb::CreateSoftmaxOptions(fbb, beta).Union());
    });
    expect_same_as_builtin(g, "softmax of " + std::to_string(shape.back()), -5.0f, 5.0f);
  }
}

TEST(VulkanOps, Pad) {
  struct Case {
    std::vector<int32_t> in;
    std::initializer_list<int32_t> pads;
    const char* name;
  };
  for (const Case& c : {Case{{1, 3, 4, 2}, {0, 0, 1, 2, 0, 1, 0, 0}, "spatial"},
                        Case{{1, 2, 3, 4}, {0, 0, 0, 0, 0, 0, 0, 4}, "channels after, whole vec4s"},
                        Case{{1, 2, 3, 5}, {0, 0, 1, 0, 0, 0, 1, 2}, "channels before and after"},
                        Case{{3, 5}, {1, 0, 2, 3}, "rank 2"}}) {
    OpGraph g;
    const int32_t in = g.input(c.in);
    const int32_t pads = g.add({static_cast<int32_t>(c.in.size()), 2}, ints(c.pads), 2);
    std::vector<int32_t> out_shape = c.in;
    const std::vector<int32_t> p(c.pads);
    for (size_t i = 0; i < out_shape.size(); ++i) out_shape[i] += p[2 * i] + p[2 * i + 1];
    const int32_t out = g.output(out_shape);
    g.op(BATON_OP_PAD, {in, pads}, {out});
    expect_same_as_builtin(g, std::string("pad ") + c.name);
  }
  OpGraph g;  // PADV2 with a value
  const int32_t in = g.input({1, 2, 2, 3});
  const int32_t pads = g.add({4, 2}, ints({0, 0, 1, 1, 0, 2, 0, 1}), 2);
  const int32_t value = g.add({}, floats({0.75f}));
  const int32_t out = g.output({1, 4, 4, 4});
  g.op(BATON_OP_PADV2, {in, pads, value}, {out});
  expect_same_as_builtin(g, "padv2");
}

TEST(VulkanOps, ReshapeAndConcatenation) {
  {
    OpGraph g;  // the last dimension changes (2 -> 4): a gather; then back to 3 columns
    const int32_t in = g.input({1, 3, 4, 2});
    const int32_t s1 = g.add({2}, ints({6, -1}), 2);
    const int32_t mid = g.add({6, 4});
    const int32_t s2 = g.add({2}, ints({8, 3}), 2);
    const int32_t out = g.output({8, 3});
    g.op(BATON_OP_RESHAPE, {in, s1}, {mid});
    g.op(BATON_OP_RESHAPE, {mid, s2}, {out});
    expect_same_as_builtin(g, "reshape changing the last dimension");
  }
  {
    OpGraph g;  // the same last dimension: a copy
    const int32_t in = g.input({1, 2, 2, 6});
    const int32_t s = g.add({3}, ints({1, 4, 6}), 2);
    const int32_t out = g.output({1, 4, 6});
    g.op(BATON_OP_RESHAPE, {in, s}, {out});
    expect_same_as_builtin(g, "reshape keeping the last dimension");
  }
  auto concat = [](int axis) {
    return [axis](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_ConcatenationOptions, fb::CreateConcatenationOptions(fbb, axis).Union());
    };
  };
  {
    OpGraph g;  // channels 3 + 5 + 2: offsets inside vec4s
    const int32_t a = g.input({1, 2, 3, 3});
    const int32_t b = g.input({1, 2, 3, 5});
    const int32_t c = g.input({1, 2, 3, 2});
    const int32_t out = g.output({1, 2, 3, 10});
    g.op(BATON_OP_CONCATENATION, {a, b, c}, {out}, concat(-1));
    expect_same_as_builtin(g, "concat channels 3+5+2");
  }
  {
    OpGraph g;  // channels 4 + 8 + 3, one constant: whole vec4s, the last one with a tail
    const int32_t a = g.input({1, 2, 2, 4});
    const int32_t b = random_weights(g, {1, 2, 2, 8}, 21);
    const int32_t c = g.input({1, 2, 2, 3});
    const int32_t out = g.output({1, 2, 2, 15});
    g.op(BATON_OP_CONCATENATION, {a, b, c}, {out}, concat(3));
    expect_same_as_builtin(g, "concat channels 4+8+3 with a constant");
  }
  {
    OpGraph g;  // along the height
    const int32_t a = g.input({1, 2, 3, 5});
    const int32_t b = g.input({1, 4, 3, 5});
    const int32_t out = g.output({1, 6, 3, 5});
    g.op(BATON_OP_CONCATENATION, {a, b}, {out}, concat(1));
    expect_same_as_builtin(g, "concat height");
  }
  {
    OpGraph g;  // rank 3, along the middle axis (the device's width)
    const int32_t a = g.input({2, 3, 7});
    const int32_t b = g.input({2, 1, 7});
    const int32_t out = g.output({2, 4, 7});
    g.op(BATON_OP_CONCATENATION, {a, b}, {out}, concat(1));
    expect_same_as_builtin(g, "concat rank 3");
  }
}

TEST(VulkanOps, DepthToSpaceAndResizeBilinear) {
  for (auto [in_shape, block] : {std::pair{std::vector<int32_t>{1, 3, 4, 8}, 2}, std::pair{std::vector<int32_t>{2, 2, 3, 16}, 2},
                                 std::pair{std::vector<int32_t>{1, 2, 2, 27}, 3}}) {
    OpGraph g;
    const int32_t in = g.input(in_shape);
    const int32_t out = g.output({in_shape[0], in_shape[1] * block, in_shape[2] * block, in_shape[3] / (block * block)});
    g.op(BATON_OP_DEPTH_TO_SPACE, {in}, {out}, [block = block](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_DepthToSpaceOptions, fb::CreateDepthToSpaceOptions(fbb, block).Union());
    });
    expect_same_as_builtin(g, "depth to space, " + std::to_string(in_shape[3]) + " channels, block " + std::to_string(block));
  }
  for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    for (auto [in_shape, size] : {std::pair{std::vector<int32_t>{1, 5, 7, 3}, std::pair{9, 12}},
                                  std::pair{std::vector<int32_t>{2, 8, 8, 4}, std::pair{3, 5}}}) {
      OpGraph g;
      const int32_t in = g.input(in_shape);
      const int32_t sz = g.add({2}, ints({size.first, size.second}), 2);
      const int32_t out = g.output({in_shape[0], size.first, size.second, in_shape[3]});
      g.op(BATON_OP_RESIZE_BILINEAR, {in, sz}, {out}, [align = align, half = half](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_ResizeBilinearOptions, fb::CreateResizeBilinearOptions(fbb, align, half).Union());
      }, 3);
      expect_same_as_builtin(g, std::string("resize bilinear to ") + std::to_string(size.first) + "x" + std::to_string(size.second) +
                                    (align ? " align_corners" : "") + (half ? " half_pixel_centers" : ""));
    }
  }
}

// A graph whose intermediate tensors die young: the arena reuses their memory (the partition's log line
// says how much), and the add reads the model input again after four other nodes.
TEST(VulkanOps, ChainReusesMemoryAndHasTwoOutputs) {
  OpGraph g;  // conv -> depthwise -> add(residual) -> mean -> fully connected; the add is also an output
  const int32_t in = g.input({1, 8, 8, 4});
  const int32_t f1 = random_weights(g, {4, 1, 1, 4}, 11);
  const int32_t b1 = random_weights(g, {4}, 12);
  const int32_t c1 = g.add({1, 8, 8, 4});
  const int32_t r1 = g.add({1, 8, 8, 4});
  const int32_t f2 = random_weights(g, {1, 3, 3, 4}, 13);
  const int32_t b2 = random_weights(g, {4}, 14);
  const int32_t c2 = g.add({1, 8, 8, 4});
  const int32_t r2 = g.add({1, 8, 8, 4});
  const int32_t sum = g.output({1, 8, 8, 4});
  const int32_t axes = g.add({2}, ints({1, 2}), 2);
  const int32_t pooled = g.add({1, 4});
  const int32_t w = random_weights(g, {3, 4}, 15);
  const int32_t out = g.output({1, 3});
  g.op(BATON_OP_CONV_2D, {in, f1, b1}, {c1}, conv_options(fb::Padding_SAME, 1, 1, 0));
  g.op(BATON_OP_RELU, {c1}, {r1});
  g.op(BATON_OP_DEPTHWISE_CONV_2D, {r1, f2, b2}, {c2}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions, fb::CreateDepthwiseConv2DOptions(fbb, fb::Padding_SAME, 1, 1, 1).Union());
  });
  g.op(BATON_OP_HARD_SWISH, {c2}, {r2});
  g.op(BATON_OP_ADD, {r2, in}, {sum}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
  g.op(BATON_OP_MEAN, {sum, axes}, {pooled}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, false).Union());
  });
  g.op(BATON_OP_FULLY_CONNECTED, {pooled, w, -1}, {out}, fc_options(0, false));
  expect_same_as_builtin(g, "chain");

  auto env = vulkan_env();
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), "chain.tflite");
  ASSERT_TRUE(model) << model.error();
  auto vi = Interpreter::create(env->env, model.value());
  ASSERT_TRUE(vi) << vi.error();
  // "arena A KiB (B KiB without reuse)": 1 KiB tensors, at most three alive at once.
  const std::string log = env->log_text();
  const size_t at = log.find("arena ");
  ASSERT_NE(at, std::string::npos) << log;
  int arena = 0, unshared = 0;
  ASSERT_EQ(std::sscanf(log.c_str() + at, "arena %d KiB (%d KiB without reuse)", &arena, &unshared), 2) << log;
  EXPECT_LT(arena, unshared) << log;
}

// A RELU whose input nothing else reads runs inside the node before it; a RELU6 whose input another
// node also reads stays a dispatch of its own. 5 nodes: ADD -> RELU (folded), MUL, RELU6, ADD; with the
// two inputs packed (5 channels) and the output unpacked, 7 dispatches.
TEST(VulkanOps, StandaloneActivationsFoldIntoTheNodeBefore) {
  OpGraph g;
  const int32_t a = g.input({1, 4, 4, 5});
  const int32_t b = g.input({1, 4, 4, 5});
  const int32_t s = g.add({1, 4, 4, 5});
  const int32_t r = g.add({1, 4, 4, 5});
  const int32_t t = g.add({1, 4, 4, 5});
  const int32_t u = g.add({1, 4, 4, 5});
  const int32_t out = g.output({1, 4, 4, 5});
  g.op(BATON_OP_ADD, {a, b}, {s}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
  g.op(BATON_OP_RELU, {s}, {r});
  g.op(BATON_OP_MUL, {r, a}, {t}, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0));
  g.op(BATON_OP_RELU6, {t}, {u});
  g.op(BATON_OP_ADD, {t, u}, {out}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
  expect_same_as_builtin(g, "folded activations", -4.0f, 4.0f);
  auto env = vulkan_env();
  ASSERT_TRUE(env);
  auto model = load_model_buffer(g.build(), "fold.tflite");
  ASSERT_TRUE(model);
  ASSERT_TRUE(Interpreter::create(env->env, model.value()));
  EXPECT_TRUE(env->logged("partition 0: 5 nodes in 7 dispatches")) << env->log_text();
}

// Float16 storage, values derived by hand from the format (1 sign, 5 exponent, 10 fraction bits): the input
// is rounded to the nearest float16 when it is packed (ties to even), computed in float32 (times 1), and
// stored as float16 again. With fp16 = false every value passes unchanged. Unset, the device's kind
// decides: float32 on a CPU implementation (lavapipe), float16 on a GPU.
constexpr float kOne = 1.0f;

TEST(VulkanFloat16, TensorsAreStoredAsFloat16) {
  const std::vector<float> in_values = {1.0f + 0x1p-12f, 2049.0f, 70000.0f, -70000.0f, 3e-8f, 0.1f, 65504.0f, 65519.0f};
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> want16 = {
      1.0f,             // a quarter of float16's step at 1 (2^-10): down
      2048.0f,          // halfway between 2048 and 2050 (the step is 2 there): to the even one
      inf, -inf,        // past the largest float16, 65504 (and 65520, where rounding reaches it)
      0x1p-24f,         // above half the smallest subnormal, 2^-24: up to it
      0.0999755859375f, // 0.1 = 1.6 * 2^-4, the fraction 0.6 * 1024 = 614.4 -> 614
      65504.0f, 65504.0f};
  OpGraph g;
  const int32_t x = g.input({1, 1, 1, 8});
  std::vector<uint8_t> ones(8 * 4);
  for (size_t i = 0; i < 8; ++i) std::memcpy(ones.data() + 4 * i, &kOne, 4);
  const int32_t one = g.add({8}, ones);
  const int32_t out = g.output({1, 1, 1, 8});
  g.op(BATON_OP_MUL, {x, one}, {out}, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0));
  for (const std::string setting : {"fp16 = true", "fp16 = false", "# fp16 = unset"}) {
    SCOPED_TRACE(setting);
    auto env = vulkan_env("vulkan", setting + "\n");  // a line naming fp16: vulkan_env adds no setting
    ASSERT_TRUE(env);
    const bool cpu_device = env->logged("[CPU, ");
    const bool f16 = setting == "fp16 = true" || (setting[0] == '#' && !cpu_device);
    if (setting[0] == '#' && cpu_device) {
      EXPECT_TRUE(env->logged("; float32 (a CPU implementation; fp16 = true for float16)")) << env->log_text();
    }
    const GraphRun opened = open_graph(*env, g, "f16");
    ASSERT_TRUE(opened.vulkan);
    Interpreter& v = *opened.vulkan;
    ASSERT_EQ(v.placement(0).kind, "delegate");
    ASSERT_TRUE(v.ensure_prepared());
    std::memcpy(v.input(0).data, in_values.data(), 8 * 4);
    ASSERT_TRUE(v.invoke());
    const auto* got = reinterpret_cast<const float*>(v.output(0).data);
    const std::vector<float>& want = f16 ? want16 : in_values;
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(got[i], want[i]) << "element " << i << " (" << in_values[i] << ")";
    EXPECT_TRUE(env->logged(f16 ? "float16 arena" : "float32 arena")) << env->log_text();
    EXPECT_EQ(env->validation_messages(), "");
  }
}

// GATHER: params of odd sizes along an axis before the channels, int32 indices given at invoke (a
// partition input, uploaded as they are) or constant, against the builtin pack in both precisions; an
// index out of range fails that run with the index, and the next run with good indices works.
OptionsFn gather_options(int32_t axis) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_GatherOptions, fb::CreateGatherOptions(fbb, axis, 0).Union());
  };
}

std::vector<uint8_t> int_bytes(const std::vector<int32_t>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct GatherCase {
  const char* what;
  std::vector<int32_t> params, indices;
  int32_t axis;
  bool constant_params, constant_indices;
};

TEST(VulkanOps, Gather) {
  const std::vector<GatherCase> cases = {
      {"embedding rows: [7, 5] by [2, 3] ids", {7, 5}, {2, 3}, 0, true, false},
      {"axis 1 of [2, 6, 3, 5] by 4 constant ids", {2, 6, 3, 5}, {4}, 1, false, true},
      {"axis -2 of [3, 9, 6] by [2, 2] ids", {3, 9, 6}, {2, 2}, -2, false, false},
  };
  for (const GatherCase& c : cases) {
    SCOPED_TRACE(c.what);
    const int32_t rank = static_cast<int32_t>(c.params.size());
    const int32_t axis = c.axis < 0 ? c.axis + rank : c.axis;
    const int32_t axis_size = c.params[static_cast<size_t>(axis)];
    int64_t count = 1;
    for (int32_t d : c.indices) count *= d;
    std::vector<int32_t> ids(static_cast<size_t>(count));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 5 + 3) % static_cast<size_t>(axis_size));
    ids.back() = axis_size - 1;
    OpGraph g;
    const int32_t params = c.constant_params ? random_weights(g, c.params, 3) : g.input(c.params);
    const int32_t indices = c.constant_indices ? g.add(c.indices, int_bytes(ids), 2) : g.input(c.indices, 2);
    std::vector<int32_t> out_shape(c.params.begin(), c.params.begin() + axis);
    out_shape.insert(out_shape.end(), c.indices.begin(), c.indices.end());
    out_shape.insert(out_shape.end(), c.params.begin() + axis + 1, c.params.end());
    const int32_t out = g.output(out_shape);
    g.op(BATON_OP_GATHER, {params, indices}, {out}, gather_options(c.axis));
    for (const bool f16 : {false, true}) {
      SCOPED_TRACE(f16 ? "float16 storage" : "float32");
      auto env = vulkan_env("vulkan", f16 ? "fp16 = true\n" : "");
      ASSERT_TRUE(env);
      const GraphRun opened = open_graph(*env, g, "gather");
      ASSERT_TRUE(opened.vulkan && opened.builtin);
      Interpreter& v = *opened.vulkan;
      Interpreter& b = *opened.builtin;
      ASSERT_EQ(v.placement(0).kind, "delegate") << (v.refusals(0).empty() ? "" : v.refusals(0).back().reason);
      ASSERT_TRUE(v.ensure_prepared());
      ASSERT_TRUE(b.ensure_prepared());
      auto feed = [&](const std::vector<int32_t>& id_values) {
        for (Interpreter* in : {&v, &b}) {
          for (size_t i = 0; i < in->input_count(); ++i) {
            Tensor& t = in->input(i);
            if (t.type == BATON_TYPE_INT32) {
              std::memcpy(t.data, id_values.data(), t.bytes);
            } else {
              const auto data = random_floats(t.bytes / 4, 29, -1.0f, 1.0f);
              std::memcpy(t.data, data.data(), data.size());
            }
          }
        }
      };
      feed(ids);
      ASSERT_TRUE(v.invoke());
      ASSERT_TRUE(b.invoke());
      ASSERT_EQ(v.output(0).shape, b.output(0).shape);
      const double rel = relative_error(reinterpret_cast<const float*>(v.output(0).data),
                                        reinterpret_cast<const float*>(b.output(0).data), b.output(0).bytes / 4);
      EXPECT_LE(rel, f16 ? kFloat16OpTolerance : 0.0) << "a gather moves values: float32 exactly";
      EXPECT_TRUE(v.fallbacks().empty()) << fallbacks_text(v);
      if (!c.constant_indices) {
        std::vector<int32_t> bad = ids;
        bad[1] = axis_size;
        feed(bad);
        const Status s = v.invoke();
        ASSERT_FALSE(s);
        EXPECT_NE(s.message().find("GATHER index outside [0, " + std::to_string(axis_size) + ") (" +
                                   std::to_string(axis_size) + ")"), std::string::npos) << s.message();
        feed(ids);
        const Status again = v.invoke();
        EXPECT_TRUE(again) << again.message();
      }
      EXPECT_EQ(env->validation_messages(), "");
    }
  }
}

// ---- refusals ----------------------------------------------------------------------------------------

// The reason vulkan gave for node 0 of `g` (empty if it took it). `chain` and `dirs` add a delegate that
// runs what neither vulkan nor the builtin pack can (deleg-a: any float32 ADD, activation ignored).
std::string vulkan_refusal(const OpGraph& g, const std::string& chain = "vulkan", std::vector<std::string> dirs = {}) {
  auto env = vulkan_env(chain, "", std::move(dirs));
  if (!env) return "no environment";
  auto model = load_model_buffer(g.build(), "refusal.tflite");
  if (!model) return model.error();
  auto in = Interpreter::create(env->env, model.value());
  if (!in) return in.error();
  for (const Refusal& r : in.value()->refusals(0)) {
    if (r.plugin == "vulkan") return r.reason;
  }
  return "";
}

// Only nodes something else can run are shown here: a model whose node no plugin runs does not load.
TEST(VulkanRefusals, SayWhy) {
  {
    TempDir plugins;
    plugins.add_plugin("deleg_a");
    OpGraph g;
    const int32_t a = g.input({1, 4});
    const int32_t b = g.input({1, 4});
    const int32_t out = g.output({1, 4});
    g.op(BATON_OP_ADD, {a, b}, {out}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 4));
    EXPECT_EQ(vulkan_refusal(g, "vulkan, deleg-a", {plugins.path()}), "fused TANH activation not supported");
  }
  {
    OpGraph g;
    const int32_t in = g.input({1, 3, 3, 4});
    const int32_t axes = g.add({1}, ints({3}), 2);
    const int32_t out = g.output({1, 3, 3});
    g.op(BATON_OP_MEAN, {in, axes}, {out});
    EXPECT_EQ(vulkan_refusal(g), "MEAN over the last axis without keep_dims");
  }
  {
    OpGraph g;
    const int32_t in = g.input({2, 3, 3, 4});
    const int32_t axes = g.add({1}, ints({0}), 2);
    const int32_t out = g.output({3, 3, 4});
    g.op(BATON_OP_MEAN, {in, axes}, {out});
    EXPECT_EQ(vulkan_refusal(g), "MEAN only over the spatial axes (1, 2) of a rank-4 input, the middle axis of a "
                                 "rank-3 one, or the last axis with keep_dims");
  }
  {
    OpGraph g;
    const int32_t in = g.input({2, 3, 5});
    const int32_t perm = g.add({3}, ints({0, 2, 1}), 2);
    const int32_t out = g.output({2, 5, 3});
    g.op(BATON_OP_TRANSPOSE, {in, perm}, {out});
    EXPECT_EQ(vulkan_refusal(g), "TRANSPOSE that moves the last axis (only the outer axes are permuted here)");
  }
  {
    OpGraph g;  // the filter is an input of the model: weights are uploaded once, they must be constant
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t f = g.input({3, 1, 1, 2});
    const int32_t out = g.output({1, 4, 4, 3});
    g.op(BATON_OP_CONV_2D, {in, f, -1}, {out}, conv_options(fb::Padding_SAME, 1, 1, 0));
    EXPECT_EQ(vulkan_refusal(g), "non-constant filter");
  }
  {
    OpGraph g;
    const int32_t in = g.input({2, 3});
    const int32_t w = g.input({4, 3});
    const int32_t out = g.output({2, 4});
    g.op(BATON_OP_FULLY_CONNECTED, {in, w, -1}, {out}, fc_options(0, false));
    EXPECT_EQ(vulkan_refusal(g), "non-constant weights");
  }
  {
    OpGraph g;
    const int32_t in = g.input({1, 2, 2, 2, 2});
    const int32_t out = g.output({1, 2, 2, 2, 2});
    g.op(BATON_OP_RELU, {in}, {out});
    EXPECT_EQ(vulkan_refusal(g), "output of rank 5 (at most 4)");
  }
}

// A tensor larger than one storage buffer binding may hold on this device is refused, naming the size.
TEST(VulkanRefusals, TensorsLargerThanTheDeviceBindsAreRefused) {
  int64_t range = 0;
  {
    vulkan::Gpu gpu({test_device(), false}, nullptr);
    range = gpu.limits().maxStorageBufferRange;
  }
  if (range > (int64_t{1} << 28)) GTEST_SKIP() << "the device binds " << range << " bytes: the test would need too much memory";
  // [1, H, 1024, 3]: four lanes of 4 bytes per pixel on the device, the first H with more than `range`.
  const int32_t h = static_cast<int32_t>(range / (1024 * 16) + 1);
  OpGraph g;
  const int32_t in = g.input({1, h, 1024, 3});
  const int32_t out = g.output({1, h, 1024, 3});
  g.op(BATON_OP_RELU, {in}, {out});
  EXPECT_EQ(vulkan_refusal(g), "an input of " + std::to_string(int64_t{h} * 1024 * 16) +
                                   " bytes on the device is larger than its storage buffer range (" + std::to_string(range) + ")");
}

}  // namespace
}  // namespace baton::test
