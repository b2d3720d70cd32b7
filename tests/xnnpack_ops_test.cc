// The XNNPACK delegate's float ops: small one-op (and a few chained) models built here, run through
// xnnpack and through the builtin pack alone on the same random inputs and compared (or, for ops the
// builtin pack lacks, checked against values worked out by hand); dead nodes dropped at load; and the
// refusals `baton plan` shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"
#include "tiny_model.h"
#include "xnnpack_support.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

// ---- small models with options -------------------------------------------------------------------------

// Runs `g` through xnnpack and through builtin alone on the same random inputs; every node must go to
// xnnpack (unless `expect_all_delegated` is false) and the outputs must agree.
void expect_same_as_builtin(const Graph& g, const std::string& what, bool expect_all_delegated = true,
                            const std::vector<std::vector<int32_t>>& resize = {}) {
  SCOPED_TRACE(what);
  auto envs = shared_envs(2);
  ASSERT_TRUE(envs);
  auto model = load_model_buffer(g.build(), what + ".tflite");
  ASSERT_TRUE(model) << model.error();
  auto xi = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(xi) << xi.error();
  auto bi = Interpreter::create(envs->builtin, model.value());
  ASSERT_TRUE(bi) << bi.error();
  Interpreter& x = *xi.value();
  Interpreter& b = *bi.value();
  if (expect_all_delegated) {
    for (size_t i = 0; i < x.nodes().size(); ++i) {
      const auto& refusals = x.refusals(i);
      EXPECT_EQ(x.placement(i).kind, "delegate")
          << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason());
    }
  }
  for (size_t i = 0; i < resize.size(); ++i) {
    ASSERT_TRUE(x.resize_input(i, resize[i]));
    ASSERT_TRUE(b.resize_input(i, resize[i]));
  }
  ASSERT_TRUE(x.ensure_prepared());
  ASSERT_TRUE(b.ensure_prepared());
  for (size_t i = 0; i < x.input_count(); ++i) {
    const auto data = random_floats(x.input(i).bytes / 4, 17 + static_cast<uint32_t>(i));
    std::memcpy(x.input(i).data, data.data(), data.size());
    std::memcpy(b.input(i).data, data.data(), data.size());
  }
  Status sx = x.invoke();
  ASSERT_TRUE(sx) << sx.message();
  Status sb = b.invoke();
  ASSERT_TRUE(sb) << sb.message();
  EXPECT_TRUE(x.fallbacks().empty()) << fallbacks_text(x);
  for (size_t o = 0; o < x.output_count(); ++o) {
    ASSERT_EQ(x.output(o).shape, b.output(o).shape) << "output " << o;
    const double rel = relative_error(reinterpret_cast<const float*>(x.output(o).data),
                                      reinterpret_cast<const float*>(b.output(o).data), b.output(o).bytes / 4);
    EXPECT_LE(rel, 1e-5) << what << " output " << o;
  }
}

Graph conv_graph(fb::Padding padding, int stride, int dilation, int activation, bool bias, std::vector<int32_t> in_shape = {1, 9, 11, 3}) {
  Graph g;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {5, 3, 3, 3}, 1);
  const int32_t b = bias ? random_weights(g, {5}, 2) : -1;
  const int eff = 2 * dilation + 1;
  auto out_size = [&](int n) { return padding == fb::Padding_SAME ? (n + stride - 1) / stride : (n - eff) / stride + 1; };
  const int32_t out = g.output({in_shape[0], out_size(in_shape[1]), out_size(in_shape[2]), 5});
  g.ops.push_back({BATON_OP_CONV_2D, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, padding, stride, stride, act(activation),
                                                                   dilation, dilation)
                                               .Union());
                   }});
  return g;
}

TEST(XnnpackOps, Conv2d) {
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 3 /* RELU6 */, true), "conv same stride 2 relu6");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 1, 1, 1 /* RELU */, false), "conv valid no bias");
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 1, 2, 0, true), "conv same dilation 2");
  expect_same_as_builtin(conv_graph(fb::Padding_VALID, 2, 2, 2 /* RELU_N1_TO_1 */, true), "conv valid dilation 2");
}

TEST(XnnpackOps, Conv2dRebuildsForANewInputShape) {
  expect_same_as_builtin(conv_graph(fb::Padding_SAME, 2, 1, 0, true), "conv resized", true, {{2, 14, 6, 3}});
}

TEST(XnnpackOps, DepthwiseConv2d) {
  for (int multiplier : {1, 2}) {
    for (auto padding : {fb::Padding_SAME, fb::Padding_VALID}) {
      Graph g;
      const int32_t in = g.input({1, 10, 9, 4});
      const int32_t f = random_weights(g, {1, 3, 3, 4 * multiplier}, 3);
      const int32_t b = random_weights(g, {4 * multiplier}, 4);
      const int32_t out = padding == fb::Padding_SAME ? g.output({1, 5, 5, 4 * multiplier}) : g.output({1, 4, 4, 4 * multiplier});
      g.ops.push_back({BATON_OP_DEPTHWISE_CONV_2D, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                         return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                               fb::CreateDepthwiseConv2DOptions(fbb, padding, 2, 2, multiplier, act(1)).Union());
                       }});
      expect_same_as_builtin(g, "depthwise multiplier " + std::to_string(multiplier) +
                                    (padding == fb::Padding_SAME ? " same" : " valid"));
    }
  }
}

TEST(XnnpackOps, FullyConnected) {
  {
    Graph g;  // keep_num_dims, no bias
    const int32_t in = g.input({2, 3, 8});
    const int32_t w = random_weights(g, {6, 8}, 5);
    const int32_t out = g.output({2, 3, 6});
    g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w, -1}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                                             fb::CreateFullyConnectedOptions(fbb, act(0), fb::FullyConnectedOptionsWeightsFormat_DEFAULT, true).Union());
                     }});
    expect_same_as_builtin(g, "fully connected keep_num_dims");
  }
  {
    Graph g;  // flattened rows, bias, RELU
    const int32_t in = g.input({1, 2, 2, 8});
    const int32_t w = random_weights(g, {7, 16}, 6);
    const int32_t b = random_weights(g, {7}, 7);
    const int32_t out = g.output({2, 7});
    g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w, b}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions,
                                             fb::CreateFullyConnectedOptions(fbb, act(1)).Union());
                     }});
    expect_same_as_builtin(g, "fully connected 2d");
  }
}

TEST(XnnpackOps, TransposeConv) {
  for (auto padding : {fb::Padding_SAME, fb::Padding_VALID}) {
    for (bool bias : {false, true}) {
      Graph g;
      const int32_t in = g.input({1, 5, 4, 3});
      const std::vector<int32_t> out_shape =
          padding == fb::Padding_SAME ? std::vector<int32_t>{1, 10, 8, 2} : std::vector<int32_t>{1, 11, 9, 2};
      const int32_t shape = g.add({4}, ints({out_shape[0], out_shape[1], out_shape[2], out_shape[3]}), 2);
      const int32_t f = random_weights(g, {2, 3, 3, 3}, 8);
      const int32_t b = bias ? random_weights(g, {2}, 9) : -1;
      const int32_t out = g.output(out_shape);
      std::vector<int32_t> inputs = {shape, f, in};
      if (bias) inputs.push_back(b);
      g.ops.push_back({BATON_OP_TRANSPOSE_CONV, inputs, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                         return std::make_pair(fb::BuiltinOptions_TransposeConvOptions,
                                               fb::CreateTransposeConvOptions(fbb, padding, 2, 2).Union());
                       },
                       bias ? 3 : 1});
      expect_same_as_builtin(g, std::string("transpose conv ") + (padding == fb::Padding_SAME ? "same" : "valid") +
                                    (bias ? " bias" : ""));
    }
  }
}

TEST(XnnpackOps, BinaryWithBroadcastingAndActivations) {
  struct Case {
    int32_t code;
    OptionsFn options;
    const char* name;
  };
  const std::vector<Case> cases = {
      {BATON_OP_ADD, with_activation(fb::BuiltinOptions_AddOptions, add_options, 1), "ADD relu"},
      {BATON_OP_SUB, with_activation(fb::BuiltinOptions_SubOptions, sub_options, 3), "SUB relu6"},
      {BATON_OP_MUL, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 2), "MUL relu_n1_to_1"},
      {BATON_OP_DIV, with_activation(fb::BuiltinOptions_DivOptions, div_options, 0), "DIV"},
      {BATON_OP_MINIMUM, nullptr, "MINIMUM"},
      {BATON_OP_MAXIMUM, nullptr, "MAXIMUM"},
      {BATON_OP_SQUARED_DIFFERENCE, nullptr, "SQUARED_DIFFERENCE"},
  };
  for (const Case& c : cases) {
    Graph g;  // [2,1,4,3] op [4,1]: both sides broadcast
    const int32_t a = g.input({2, 1, 4, 3});
    const int32_t b = g.input({5, 1, 1});
    const int32_t out = g.output({2, 5, 4, 3});
    g.ops.push_back({c.code, {a, b}, {out}, c.options});
    expect_same_as_builtin(g, c.name);
    Graph k;  // with a constant operand
    const int32_t x = k.input({1, 3, 3, 4});
    const int32_t y = k.add({4}, floats({0.5f, -2.0f, 1.5f, 3.0f}));
    const int32_t z = k.output({1, 3, 3, 4});
    k.ops.push_back({c.code, {x, y}, {z}, c.options});
    expect_same_as_builtin(k, std::string(c.name) + " constant operand");
  }
}

Graph pool_graph(int32_t code, fb::Padding padding, int filter, int stride, std::vector<int32_t> out_shape) {
  Graph g;
  const int32_t in = g.input({1, 7, 8, 3});
  const int32_t out = g.output(std::move(out_shape));
  g.ops.push_back({code, {in}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                           fb::CreatePool2DOptions(fbb, padding, stride, stride, filter, filter).Union());
                   }});
  return g;
}

TEST(XnnpackOps, Pooling) {
  expect_same_as_builtin(pool_graph(BATON_OP_AVERAGE_POOL_2D, fb::Padding_SAME, 3, 2, {1, 4, 4, 3}), "average pool same 3x3/2");
  expect_same_as_builtin(pool_graph(BATON_OP_AVERAGE_POOL_2D, fb::Padding_VALID, 2, 2, {1, 3, 4, 3}), "average pool valid 2x2/2");
  expect_same_as_builtin(pool_graph(BATON_OP_MAX_POOL_2D, fb::Padding_SAME, 3, 2, {1, 4, 4, 3}), "max pool same 3x3/2");
  expect_same_as_builtin(pool_graph(BATON_OP_MAX_POOL_2D, fb::Padding_VALID, 2, 2, {1, 3, 4, 3}), "max pool valid 2x2/2");
  expect_same_as_builtin(pool_graph(BATON_OP_MAX_POOL_2D, fb::Padding_VALID, 1, 1, {1, 7, 8, 3}), "max pool 1x1");
}

TEST(XnnpackOps, MeanOverSpatialAxes) {
  for (bool keep : {false, true}) {
    Graph g;
    const int32_t in = g.input({2, 5, 6, 4});
    const int32_t axes = g.add({2}, ints({2, 1}), 2);
    const int32_t out = keep ? g.output({2, 1, 1, 4}) : g.output({2, 4});
    g.ops.push_back({BATON_OP_MEAN, {in, axes}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, keep).Union());
                     }});
    expect_same_as_builtin(g, keep ? "mean keep_dims" : "mean");
  }
}

TEST(XnnpackOps, ResizeBilinearFlags) {
  for (auto [align, half] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    Graph g;
    const int32_t in = g.input({1, 5, 7, 3});
    const int32_t size = g.add({2}, ints({9, 12}), 2);
    const int32_t out = g.output({1, 9, 12, 3});
    g.ops.push_back({BATON_OP_RESIZE_BILINEAR, {in, size}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_ResizeBilinearOptions,
                                             fb::CreateResizeBilinearOptions(fbb, align, half).Union());
                     },
                     3});
    expect_same_as_builtin(g, std::string("resize bilinear") + (align ? " align_corners" : "") +
                                  (half ? " half_pixel_centers" : ""));
  }
}

TEST(XnnpackOps, MovementAndActivations) {
  {
    Graph g;  // PAD -> RESHAPE -> SOFTMAX
    const int32_t in = g.input({1, 3, 4, 2});
    const int32_t pads = g.add({4, 2}, ints({0, 0, 1, 2, 0, 1, 0, 0}), 2);
    const int32_t padded = g.add({1, 6, 5, 2});
    const int32_t shape = g.add({2}, ints({6, -1}), 2);
    const int32_t flat = g.add({6, 10});
    const int32_t out = g.output({6, 10});
    g.ops.push_back({BATON_OP_PAD, {in, pads}, {padded}, nullptr});
    g.ops.push_back({BATON_OP_RESHAPE, {padded, shape}, {flat}, nullptr});
    g.ops.push_back({BATON_OP_SOFTMAX, {flat}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_SoftmaxOptions, fb::CreateSoftmaxOptions(fbb, 1.0f).Union());
                     }});
    expect_same_as_builtin(g, "pad reshape softmax");
  }
  {
    Graph g;  // DEPTH_TO_SPACE -> HARD_SWISH -> LOGISTIC -> RELU6, and ABS -> SQRT on the side
    const int32_t in = g.input({1, 3, 4, 8});
    const int32_t d2s = g.add({1, 6, 8, 2});
    const int32_t hs = g.add({1, 6, 8, 2});
    const int32_t lg = g.add({1, 6, 8, 2});
    const int32_t out = g.output({1, 6, 8, 2});
    const int32_t ab = g.add({1, 3, 4, 8});
    const int32_t sq = g.output({1, 3, 4, 8});
    g.ops.push_back({BATON_OP_DEPTH_TO_SPACE, {in}, {d2s}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_DepthToSpaceOptions, fb::CreateDepthToSpaceOptions(fbb, 2).Union());
                     }});
    g.ops.push_back({BATON_OP_HARD_SWISH, {d2s}, {hs}, nullptr});
    g.ops.push_back({BATON_OP_LOGISTIC, {hs}, {lg}, nullptr});
    g.ops.push_back({BATON_OP_RELU6, {lg}, {out}, nullptr});
    g.ops.push_back({BATON_OP_ABS, {in}, {ab}, nullptr});
    g.ops.push_back({BATON_OP_SQRT, {ab}, {sq}, nullptr});
    expect_same_as_builtin(g, "depth to space and activations");
  }
  {
    Graph g;  // PRELU with a [1,1,C] slope
    const int32_t in = g.input({1, 4, 5, 3});
    const int32_t slope = g.add({1, 1, 3}, floats({0.1f, -0.5f, 2.0f}));
    const int32_t out = g.output({1, 4, 5, 3});
    g.ops.push_back({BATON_OP_PRELU, {in, slope}, {out}, nullptr});
    expect_same_as_builtin(g, "prelu");
  }
}

// MediaPipe's Convolution2DTransposeBias through XNNPACK's deconvolution against the mediapipe pack's
// kernel: SAME and VALID, strides 2 and 3, odd sizes (the SAME padding depends on (in-1) % stride).
TEST(XnnpackOps, Convolution2DTransposeBias) {
  struct Case {
    int padding, stride, in_h, in_w, kernel;
  };
  for (const Case& c : {Case{1, 2, 5, 4, 4}, Case{1, 3, 4, 5, 3}, Case{2, 2, 3, 3, 3}, Case{1, 2, 6, 6, 2}}) {
    Graph g;
    const int32_t in = g.input({1, c.in_h, c.in_w, 3});
    const int32_t f = random_weights(g, {5, c.kernel, c.kernel, 3}, 21);
    const int32_t bias = random_weights(g, {5}, 22);
    auto out_size = [&](int n) {
      const int total = c.padding == 1 ? std::max(0, c.kernel - (n - 1) % c.stride - 1) : 0;
      return c.stride * (n - 1) + c.kernel - total;
    };
    const int32_t out = g.output({1, out_size(c.in_h), out_size(c.in_w), 5});
    Op op{32, {in, f, bias}, {out}, nullptr};
    op.custom = "Convolution2DTransposeBias";
    for (int32_t v : {c.padding, c.stride, c.stride}) {
      for (int k = 0; k < 4; ++k) op.custom_options.push_back(static_cast<uint8_t>(v >> (8 * k)));
    }
    g.ops.push_back(op);
    expect_same_as_builtin(g, "transpose conv bias padding " + std::to_string(c.padding) + " stride " +
                                  std::to_string(c.stride) + " in " + std::to_string(c.in_h) + "x" + std::to_string(c.in_w));
  }
}

// The builtin pack has no LEAKY_RELU: checked against the formula.
TEST(XnnpackOps, LeakyRelu) {
  Graph g;
  const int32_t in = g.input({2, 3});
  const int32_t out = g.output({2, 3});
  g.ops.push_back({BATON_OP_LEAKY_RELU, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_LeakyReluOptions, fb::CreateLeakyReluOptions(fbb, 0.2f).Union());
                   }});
  auto envs = make_envs();
  ASSERT_TRUE(envs);
  auto model = load_model_buffer(g.build(), "leaky.tflite");
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& x = *interp.value();
  EXPECT_EQ(x.placement(0).kind, "delegate");
  const float values[6] = {-2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f};
  std::memcpy(x.input(0).data, values, sizeof values);
  ASSERT_TRUE(x.invoke());
  const float* got = reinterpret_cast<const float*>(x.output(0).data);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(got[i], values[i] < 0 ? 0.2f * values[i] : values[i]) << i;
}

TEST(XnnpackOps, UnaryOpsWithABuiltinKernel) {
  // RELU, RELU_N1_TO_1, NEG and SQUARE, each straight from a model input (random values in [-1, 1) and
  // scaled by 3 through MUL first, so the clamps at 0 and +-1 are all crossed).
  for (int32_t code : {BATON_OP_RELU, BATON_OP_RELU_N1_TO_1, BATON_OP_NEG, BATON_OP_SQUARE}) {
    Graph g;
    const int32_t in = g.input({2, 5, 7});
    const int32_t three = g.add({1}, floats({3.0f}));
    const int32_t scaled = g.add({2, 5, 7});
    const int32_t out = g.output({2, 5, 7});
    g.ops.push_back({BATON_OP_MUL, {in, three}, {scaled}, nullptr});
    g.ops.push_back({code, {scaled}, {out}, nullptr});
    expect_same_as_builtin(g, "unary op " + std::to_string(code));
  }
  {
    Graph g;  // PADV2 with a constant value of -7.5
    const int32_t in = g.input({1, 3, 2, 2});
    const int32_t pads = g.add({4, 2}, ints({0, 0, 2, 1, 0, 3, 1, 0}), 2);
    const int32_t value = g.add({}, floats({-7.5f}));
    const int32_t out = g.output({1, 6, 5, 3});
    g.ops.push_back({BATON_OP_PADV2, {in, pads, value}, {out}, nullptr});
    expect_same_as_builtin(g, "padv2");
  }
}

// The builtin pack has no ELU, FLOOR, CEIL or ROUND: checked against values worked out by hand. TFLite's
// ROUND rounds half to even; ELU is x for x > 0, exp(x) - 1 otherwise.
TEST(XnnpackOps, UnaryOpsCheckedByHand) {
  const float values[8] = {-2.5f, -1.5f, -0.5f, -0.25f, 0.0f, 0.5f, 1.5f, 2.5f};
  struct Case {
    int32_t code;
    float want[8];
  };
  const float e = std::exp(1.0f);
  const Case cases[] = {
      {BATON_OP_FLOOR, {-3, -2, -1, -1, 0, 0, 1, 2}},
      {BATON_OP_CEIL, {-2, -1, -0.0f, -0.0f, 0, 1, 2, 3}},
      {BATON_OP_ROUND, {-2, -2, -0.0f, -0.0f, 0, 0, 2, 2}},
      {BATON_OP_ELU, {std::exp(-2.5f) - 1, std::exp(-1.5f) - 1, 1 / std::sqrt(e) - 1, std::exp(-0.25f) - 1, 0, 0.5f, 1.5f, 2.5f}},
  };
  auto envs = make_envs();
  ASSERT_TRUE(envs);
  for (const Case& c : cases) {
    SCOPED_TRACE("op " + std::to_string(c.code));
    Graph g;
    const int32_t in = g.input({8});
    const int32_t out = g.output({8});
    g.ops.push_back({c.code, {in}, {out}, nullptr});
    auto model = load_model_buffer(g.build(), "unary.tflite");
    ASSERT_TRUE(model) << model.error();
    auto interp = Interpreter::create(envs->xnnpack, model.value());
    ASSERT_TRUE(interp) << interp.error();
    Interpreter& x = *interp.value();
    EXPECT_EQ(x.placement(0).kind, "delegate");
    std::memcpy(x.input(0).data, values, sizeof values);
    ASSERT_TRUE(x.invoke());
    const float* got = reinterpret_cast<const float*>(x.output(0).data);
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(got[i], c.want[i], 1e-6f) << values[i];
  }
}

TEST(XnnpackOps, ChainWithInternalTensorsAndTwoOutputs) {
  Graph g;  // conv -> depthwise -> add(residual) -> mean -> fully connected; the add is also an output
  const int32_t in = g.input({1, 8, 8, 4});
  const int32_t f1 = random_weights(g, {4, 1, 1, 4}, 11);
  const int32_t b1 = random_weights(g, {4}, 12);
  const int32_t c1 = g.add({1, 8, 8, 4});
  const int32_t f2 = random_weights(g, {1, 3, 3, 4}, 13);
  const int32_t b2 = random_weights(g, {4}, 14);
  const int32_t c2 = g.add({1, 8, 8, 4});
  const int32_t sum = g.output({1, 8, 8, 4});
  const int32_t axes = g.add({2}, ints({1, 2}), 2);
  const int32_t pooled = g.add({1, 4});
  const int32_t w = random_weights(g, {3, 4}, 15);
  const int32_t out = g.output({1, 3});
  g.ops.push_back({BATON_OP_CONV_2D, {in, f1, b1}, {c1}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(1)).Union());
                   }});
  g.ops.push_back({BATON_OP_DEPTHWISE_CONV_2D, {c1, f2, b2}, {c2}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                           fb::CreateDepthwiseConv2DOptions(fbb, fb::Padding_SAME, 1, 1, 1).Union());
                   }});
  g.ops.push_back({BATON_OP_ADD, {c2, in}, {sum}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0)});
  g.ops.push_back({BATON_OP_MEAN, {sum, axes}, {pooled}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, false).Union());
                   }});
  g.ops.push_back({BATON_OP_FULLY_CONNECTED, {pooled, w, -1}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions, fb::CreateFullyConnectedOptions(fbb).Union());
                   }});
  expect_same_as_builtin(g, "chain");
}

// MediaPipe's stride-2 blocks: PAD (zeros on H and W) -> DEPTHWISE_CONV_2D (VALID) -> CONV_2D, one partition.
// The padded tensor stays XNNPACK's own value, not a scratch tensor in the host's arena, so that XNNPACK
// folds the pad into the depthwise convolution's padding (it skips external values): the partition's
// scratch holds only the depthwise output. With the padded tensor in the scratch too, XNNPACK copied every
// padded image (pose_landmark_lite on the xnnpack delegate alone: 1.11x TFLite + XNNPACK's time, 1.01x
// with the pad folded).
TEST(XnnpackOps, APadBeforeAConvolutionStaysXnnpacksOwn) {
  Graph g;
  const int32_t in = g.input({1, 8, 8, 4});
  const int32_t pads = g.add({4, 2}, ints({0, 0, 0, 1, 0, 1, 0, 0}), 2);
  const int32_t padded = g.add({1, 9, 9, 4});
  const int32_t f1 = random_weights(g, {1, 3, 3, 4}, 31);
  const int32_t b1 = random_weights(g, {4}, 32);
  const int32_t dw = g.add({1, 4, 4, 4});
  const int32_t f2 = random_weights(g, {6, 1, 1, 4}, 33);
  const int32_t b2 = random_weights(g, {6}, 34);
  const int32_t out = g.output({1, 4, 4, 6});
  g.ops.push_back({BATON_OP_PAD, {in, pads}, {padded}, nullptr});
  g.ops.push_back({BATON_OP_DEPTHWISE_CONV_2D, {padded, f1, b1}, {dw}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                           fb::CreateDepthwiseConv2DOptions(fbb, fb::Padding_VALID, 2, 2, 1).Union());
                   }});
  g.ops.push_back({BATON_OP_CONV_2D, {dw, f2, b2}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(fbb, fb::Padding_VALID, 1, 1, act(3)).Union());
                   }});
  expect_same_as_builtin(g, "pad depthwise conv");
  auto envs = shared_envs();
  ASSERT_TRUE(envs);
  auto model = load_model_buffer(g.build(), "pad_conv.tflite");
  ASSERT_TRUE(model) << model.error();
  auto xi = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(xi) << xi.error();
  Interpreter& x = *xi.value();
  ASSERT_TRUE(x.ensure_prepared()) << "prepare";
  ASSERT_EQ(x.partitions().size(), 1u);
  ASSERT_EQ(x.partitions()[0]->nodes.size(), 3u);
  // The depthwise output (4x4x4 floats) and XNNPACK's read-past allowance, in 64-byte steps; not the
  // padded 9x9x4 floats (1296 bytes).
  EXPECT_LT(x.partitions()[0]->scratch_bytes, 9u * 9 * 4 * sizeof(float));
  EXPECT_GE(x.partitions()[0]->scratch_bytes, 4u * 4 * 4 * sizeof(float));
}

// A float FULLY_CONNECTED whose output nothing reads, feeding a RELU nothing reads either, beside one
// that feeds the model output. XNNPACK has no memory for a value that is neither read nor a partition
// output (it asserted in setup_fully_connected_operator); baton drops both dead nodes at load, to a fixed
// point, and the live one still runs in xnnpack and matches the builtin pack.
TEST(XnnpackOps, DeadNodesAreDroppedAtLoad) {
  Graph g;
  const int32_t in = g.input({2, 8});
  const int32_t w_dead = random_weights(g, {6, 8}, 21);
  const int32_t dead = g.add({2, 6});
  const int32_t dead_relu = g.add({2, 6});
  const int32_t w = random_weights(g, {3, 8}, 22);
  const int32_t out = g.output({2, 3});
  auto fc = [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions, fb::CreateFullyConnectedOptions(fbb).Union());
  };
  g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w_dead, -1}, {dead}, fc});
  g.ops.push_back({BATON_OP_RELU, {dead}, {dead_relu}});
  g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w, -1}, {out}, fc});
  expect_same_as_builtin(g, "dead fully connected", false);
  auto envs = make_envs(1);
  ASSERT_TRUE(envs);
  auto model = load_model_buffer(g.build(), "dead.tflite");
  ASSERT_TRUE(model) << model.error();
  auto xi = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(xi) << xi.error();
  const Interpreter& x = *xi.value();
  EXPECT_EQ(x.placement(0).kind, "dropped");
  EXPECT_EQ(x.placement(1).kind, "dropped");
  EXPECT_EQ(x.placement(2).kind, "delegate");
  EXPECT_EQ(delegated_nodes(x, "xnnpack"), 1u);
}

// ---- refusals ----------------------------------------------------------------------------------------

// A ViT's patch embedding: 8x8 windows at stride 8 over 3 channels go to the op packs; 4x4 ones at stride 4
// (and a 16x16 filter at stride 8, whose windows overlap) stay on XNNPACK and compute as the builtin pack.
Graph patch_graph(int size, int patch, int stride) {
  Graph g;
  const int32_t in = g.input({1, size, size, 3});
  const int32_t f = random_weights(g, {6, patch, patch, 3}, 3);
  const int32_t b = random_weights(g, {6}, 4);
  const int side = (size - patch) / stride + 1;
  const int32_t out = g.output({1, side, side, 6});
  g.ops.push_back({BATON_OP_CONV_2D, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_VALID, stride, stride).Union());
                   }});
  return g;
}

TEST(XnnpackRefusals, PatchEmbeddingsGoToTheOpPacks) {
  EXPECT_EQ(xnnpack_refusal(patch_graph(32, 8, 8)),
            "a patch embedding (8x8 windows that do not overlap, on 3 channels): XNNPACK's indirect convolution "
            "reads each window a pixel at a time, slower than an op pack's im2col product");
  expect_same_as_builtin(patch_graph(32, 4, 4), "4x4 patches");
  expect_same_as_builtin(patch_graph(32, 16, 8), "overlapping 16x16 windows");
}

TEST(XnnpackRefusals, SayWhy) {
  {
    Graph g;
    const int32_t in = g.input({1, 4});
    const int32_t out = g.output({1, 4});
    g.ops.push_back({BATON_OP_TANH, {in}, {out}, nullptr});
    EXPECT_EQ(xnnpack_refusal(g), "TANH is not in this XNNPACK version (Debian 0.0~git20220216)");
  }
  {
    Graph g;
    const int32_t in = g.input({2, 4});
    const int32_t out = g.output({2, 4});
    g.ops.push_back({BATON_OP_SOFTMAX, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_SoftmaxOptions, fb::CreateSoftmaxOptions(fbb, 2.0f).Union());
                     }});
    EXPECT_EQ(xnnpack_refusal(g), "softmax beta other than 1 not supported");
  }
  {
    Graph g;
    const int32_t in = g.input({1, 3, 3, 4});
    const int32_t axes = g.add({1}, ints({3}), 2);
    const int32_t out = g.output({1, 3, 3});
    g.ops.push_back({BATON_OP_MEAN, {in, axes}, {out}, nullptr});
    EXPECT_NE(xnnpack_refusal(g).find("MEAN only over the spatial axes"), std::string::npos);
  }
  {
    Graph g;  // the filter is an input of the model: XNNPACK packs weights once, it needs constants
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t f = g.input({3, 1, 1, 2});
    const int32_t out = g.output({1, 4, 4, 3});
    g.ops.push_back({BATON_OP_CONV_2D, {in, f, -1}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1).Union());
                     }});
    EXPECT_EQ(xnnpack_refusal(g), "non-constant filter");
  }
  {
    Graph g;  // XNNPACK has no 1x1 pooling; only the stride-1 identity is taken
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t out = g.output({1, 2, 2, 2});
    g.ops.push_back({BATON_OP_MAX_POOL_2D, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                             fb::CreatePool2DOptions(fbb, fb::Padding_VALID, 2, 2, 1, 1).Union());
                     }});
    EXPECT_EQ(xnnpack_refusal(g), "1x1 pooling with a stride other than 1");
  }
}

}  // namespace
}  // namespace baton::test
