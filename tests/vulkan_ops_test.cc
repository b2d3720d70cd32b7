// The Vulkan delegate's arithmetic and window ops, with the validation layer on: small graphs of each op,
// with odd sizes (channels not a multiple of 4, 1x1 spatial, stride 2 on odd inputs), through vulkan and
// through the builtin pack alone on the same random inputs, compared (two runs: the second replays the
// recorded command buffer): convolutions, fully connected, elementwise ops and activations, pools, MEAN
// over spatial axes. The data movement ops are in vulkan_data_ops_test.cc, refusals in
// vulkan_refusals_test.cc.
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
#include "vulkan_ops_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

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

// TRANSPOSE_CONV: SAME and VALID, strides 1 and 2, kernels 2 to 4, odd sizes, channels not a multiple of 4,
// with and without bias, a fused RELU6; and MediaPipe's Convolution2DTransposeBias (selfie segmentation's
// head, 2x2 of stride 2) against the mediapipe pack.
TEST(VulkanOps, TransposeConv) {
  struct Case {
    std::vector<int32_t> in;
    int32_t kernel, stride;
    bool same, bias;
    int32_t out_channels, activation;
  };
  for (const Case& c : {Case{{1, 5, 7, 3}, 3, 2, true, true, 5, 0}, Case{{2, 4, 4, 8}, 4, 2, false, false, 4, 0},
                        Case{{1, 6, 5, 6}, 3, 1, true, true, 7, 3}, Case{{1, 3, 3, 5}, 2, 2, true, false, 3, 0}}) {
    const int32_t ic = c.in[3];
    auto size = [&](int32_t n) { return c.same ? n * c.stride : (n - 1) * c.stride + c.kernel; };
    const std::vector<int32_t> out{c.in[0], size(c.in[1]), size(c.in[2]), c.out_channels};
    OpGraph g;
    const int32_t in = g.input(c.in);
    const int32_t shape = g.add({4}, int_bytes(out), 2);
    const int32_t w = random_weights(g, {c.out_channels, c.kernel, c.kernel, ic}, 7);
    const int32_t b = c.bias ? random_weights(g, {c.out_channels}, 8) : -1;
    const fb::Padding padding = c.same ? fb::Padding_SAME : fb::Padding_VALID;
    const int32_t stride = c.stride, activation = c.activation;
    g.op(BATON_OP_TRANSPOSE_CONV, {shape, w, in, b}, {g.output(out)}, [=](flatbuffers::FlatBufferBuilder& fbb) {
      return std::make_pair(fb::BuiltinOptions_TransposeConvOptions,
                            fb::CreateTransposeConvOptions(fbb, padding, stride, stride, act(activation)).Union());
    }, c.bias ? 3 : 1);
    expect_same_as_builtin(g, "transpose conv of " + shape_text(c.in) + " by " + std::to_string(c.kernel) + " stride " +
                                  std::to_string(c.stride) + (c.same ? " SAME" : " VALID"));
  }
  struct Custom {
    std::vector<int32_t> in;
    int32_t kernel, stride;
    bool same;
    int32_t out_channels;
  };
  for (const Custom& c : {Custom{{1, 8, 8, 16}, 2, 2, true, 1}, Custom{{1, 7, 9, 5}, 3, 2, true, 2}, Custom{{2, 5, 4, 8}, 4, 2, false, 6}}) {
    OpGraph g;
    const int32_t in = g.input(c.in);
    const int32_t w = random_weights(g, {c.out_channels, c.kernel, c.kernel, c.in[3]}, 31);
    const int32_t b = random_weights(g, {c.out_channels}, 32);
    auto size = [&](int32_t n) { return c.stride * (n - 1) + c.kernel - (c.same ? std::max(0, c.kernel - (n - 1) % c.stride - 1) : 0); };
    GraphOp op;
    op.code = BATON_OP_CUSTOM;
    op.custom = "Convolution2DTransposeBias";
    op.inputs = {in, w, b};
    op.outputs = {g.output({c.in[0], size(c.in[1]), size(c.in[2]), c.out_channels})};
    for (int32_t v : {c.same ? 1 : 2, c.stride, c.stride}) {
      for (int byte = 0; byte < 4; ++byte) op.custom_options.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * byte)));
    }
    g.ops.push_back(op);
    expect_same_as_builtin(g, "Convolution2DTransposeBias of " + shape_text(c.in));
  }
}

}  // namespace
}  // namespace baton::test
