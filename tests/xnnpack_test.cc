// The XNNPACK delegate (plugins/xnnpack): the real float models with the chain [xnnpack] and the builtin
// pack for the rest, against the committed reference outputs; small one-op (and a few chained) models
// run through xnnpack and through the builtin pack alone, compared; and the refusals `baton plan`
// shows. Each test runs in an isolated environment whose plugin folder holds copies of the two plugins.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <thread>

#include "cpu_budget.h"
#include "interpreter.h"
#include "npy.h"
#include "test_support.h"
#include "op_graph.h"
#include "reference_run.h"
#include "tflite_generated.h"
#include "tiny_model.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;
namespace fb = baton::tflite;

// ---- environments ------------------------------------------------------------------------------------

struct Envs {
  TempDir plugins, conf;
  std::shared_ptr<Environment> xnnpack;  // delegates = xnnpack, the builtin and mediapipe packs for the rest
  std::shared_ptr<Environment> builtin;  // the builtin and mediapipe op packs alone
};

std::unique_ptr<Envs> make_envs(int threads = 1, bool quantized = false) {
  auto e = std::make_unique<Envs>();
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", e->plugins.file("libbaton_xnnpack.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", e->plugins.file("libbaton_builtin.so"));
  fs::copy_file(std::string(MEDIAPIPE_PACK_DIR) + "/libbaton_mediapipe.so", e->plugins.file("libbaton_mediapipe.so"));
  e->conf.write("baton.conf", "delegates = xnnpack\n[plugin.xnnpack]\nthreads = " + std::to_string(threads) +
                                 (quantized ? "\nquantized = true\n" : "\n"));
  auto x = isolated_environment({e->plugins.path()}, e->conf.file("baton.conf"));
  EXPECT_TRUE(x) << x.error();
  auto b = isolated_environment({BUILTIN_PACK_DIR, MEDIAPIPE_PACK_DIR});
  EXPECT_TRUE(b) << b.error();
  if (!x || !b) return nullptr;
  e->xnnpack = x.value();
  e->builtin = b.value();
  return e;
}

std::string fallbacks_text(const Interpreter& in) {
  std::string s;
  for (const Fallback& f : in.fallbacks()) s += f.plugin + " lost " + std::to_string(f.nodes.size()) + " nodes at " + f.stage + ": " + f.reason + "\n";
  return s;
}


// ---- real models ---------------------------------------------------------------------------------------

std::string model_cache() {
  const char* c = std::getenv("BATON_MODEL_CACHE");
  return c ? c : "";
}

// Every reference case with float32 inputs (quantized models have no float path through xnnpack); the
// builtin and mediapipe packs run what xnnpack does not take.
std::vector<std::string> reference_cases() {
  return reference_case_names([](const ReferenceCase& c) { return c.float_input; });
}

class XnnpackRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(XnnpackRealModel, MatchesTheReference) {
  const std::string name = GetParam();
  const std::string path = model_cache() + "/" + name.substr(0, name.find('-')) + ".tflite";
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path << " (run tools/fetch-models.sh)";
    GTEST_SKIP() << "missing " << path;
  }
  auto envs = make_envs(2);  // two threads: the pthreadpool is exercised too
  ASSERT_TRUE(envs);
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  // Twice: the second run reuses the runtime's setup, the outputs must not change.
  ASSERT_TRUE(run_reference_inputs(in, name, 2));
  EXPECT_TRUE(in.fallbacks().empty()) << fallbacks_text(in);
  const size_t taken = delegated_nodes(in, "xnnpack");
  EXPECT_GT(taken, 0u);
  const double worst = compare_with_reference(in, name, 1e-3);
  const size_t running = in.nodes().size() - in.folded_nodes();
  // MediaPipe's Convolution2DTransposeBias is XNNPACK's deconvolution: selfie segmentation runs whole.
  if (name.rfind("selfie_segmentation", 0) == 0) {
    EXPECT_EQ(taken, running);
  }
  std::printf("[ xnnpack  ] %s: xnnpack took %zu of %zu running nodes in %zu partitions; worst |diff|/max|ref| = %.3g\n",
              name.c_str(), taken, running, in.partitions().size(), worst);
}

INSTANTIATE_TEST_SUITE_P(Reference, XnnpackRealModel, ::testing::ValuesIn(reference_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

// ---- small models with options -------------------------------------------------------------------------

// The graph builder of tests/op_graph.h under the names these tests use.
using Graph = OpGraph;
using Op = GraphOp;

// Runs `g` through xnnpack and through builtin alone on the same random inputs; every node must go to
// xnnpack (unless `expect_all_delegated` is false) and the outputs must agree.
void expect_same_as_builtin(const Graph& g, const std::string& what, bool expect_all_delegated = true,
                            const std::vector<std::vector<int32_t>>& resize = {}) {
  SCOPED_TRACE(what);
  auto envs = make_envs(2);
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
          << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason);
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

// TFLite op codes used below.
enum : int32_t {
  kAdd = 0, kAveragePool2d = 1, kConv2d = 3, kDepthwiseConv2d = 4, kDepthToSpace = 5, kFullyConnected = 9,
  kFloor = 8, kLogistic = 14, kMaxPool2d = 17, kMul = 18, kRelu = 19, kReluN1To1 = 20, kRelu6 = 21, kReshape = 22,
  kResizeBilinear = 23, kSoftmax = 25, kTanh = 28, kPad = 34, kMean = 40, kSub = 41, kDiv = 42, kPrelu = 54,
  kMaximum = 55, kMinimum = 57, kNeg = 59, kPadV2 = 60, kTransposeConv = 67, kSqrt = 75, kSquare = 92,
  kLeakyRelu = 98, kSquaredDifference = 99, kAbs = 101, kCeil = 104, kElu = 111, kQuantize = 114, kRound = 116,
  kHardSwish = 117, kDequantize = 6,
};

Graph conv_graph(fb::Padding padding, int stride, int dilation, int activation, bool bias, std::vector<int32_t> in_shape = {1, 9, 11, 3}) {
  Graph g;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {5, 3, 3, 3}, 1);
  const int32_t b = bias ? random_weights(g, {5}, 2) : -1;
  const int eff = 2 * dilation + 1;
  auto out_size = [&](int n) { return padding == fb::Padding_SAME ? (n + stride - 1) / stride : (n - eff) / stride + 1; };
  const int32_t out = g.output({in_shape[0], out_size(in_shape[1]), out_size(in_shape[2]), 5});
  g.ops.push_back({kConv2d, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
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
      g.ops.push_back({kDepthwiseConv2d, {in, f, b}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({kFullyConnected, {in, w, -1}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({kFullyConnected, {in, w, b}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
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
      g.ops.push_back({kTransposeConv, inputs, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
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
      {kAdd, with_activation(fb::BuiltinOptions_AddOptions, add_options, 1), "ADD relu"},
      {kSub, with_activation(fb::BuiltinOptions_SubOptions, sub_options, 3), "SUB relu6"},
      {kMul, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 2), "MUL relu_n1_to_1"},
      {kDiv, with_activation(fb::BuiltinOptions_DivOptions, div_options, 0), "DIV"},
      {kMinimum, nullptr, "MINIMUM"},
      {kMaximum, nullptr, "MAXIMUM"},
      {kSquaredDifference, nullptr, "SQUARED_DIFFERENCE"},
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
  expect_same_as_builtin(pool_graph(kAveragePool2d, fb::Padding_SAME, 3, 2, {1, 4, 4, 3}), "average pool same 3x3/2");
  expect_same_as_builtin(pool_graph(kAveragePool2d, fb::Padding_VALID, 2, 2, {1, 3, 4, 3}), "average pool valid 2x2/2");
  expect_same_as_builtin(pool_graph(kMaxPool2d, fb::Padding_SAME, 3, 2, {1, 4, 4, 3}), "max pool same 3x3/2");
  expect_same_as_builtin(pool_graph(kMaxPool2d, fb::Padding_VALID, 2, 2, {1, 3, 4, 3}), "max pool valid 2x2/2");
  expect_same_as_builtin(pool_graph(kMaxPool2d, fb::Padding_VALID, 1, 1, {1, 7, 8, 3}), "max pool 1x1");
}

TEST(XnnpackOps, MeanOverSpatialAxes) {
  for (bool keep : {false, true}) {
    Graph g;
    const int32_t in = g.input({2, 5, 6, 4});
    const int32_t axes = g.add({2}, ints({2, 1}), 2);
    const int32_t out = keep ? g.output({2, 1, 1, 4}) : g.output({2, 4});
    g.ops.push_back({kMean, {in, axes}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({kResizeBilinear, {in, size}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({kPad, {in, pads}, {padded}, nullptr});
    g.ops.push_back({kReshape, {padded, shape}, {flat}, nullptr});
    g.ops.push_back({kSoftmax, {flat}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({kDepthToSpace, {in}, {d2s}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_DepthToSpaceOptions, fb::CreateDepthToSpaceOptions(fbb, 2).Union());
                     }});
    g.ops.push_back({kHardSwish, {d2s}, {hs}, nullptr});
    g.ops.push_back({kLogistic, {hs}, {lg}, nullptr});
    g.ops.push_back({kRelu6, {lg}, {out}, nullptr});
    g.ops.push_back({kAbs, {in}, {ab}, nullptr});
    g.ops.push_back({kSqrt, {ab}, {sq}, nullptr});
    expect_same_as_builtin(g, "depth to space and activations");
  }
  {
    Graph g;  // PRELU with a [1,1,C] slope
    const int32_t in = g.input({1, 4, 5, 3});
    const int32_t slope = g.add({1, 1, 3}, floats({0.1f, -0.5f, 2.0f}));
    const int32_t out = g.output({1, 4, 5, 3});
    g.ops.push_back({kPrelu, {in, slope}, {out}, nullptr});
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
  g.ops.push_back({kLeakyRelu, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
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
  for (int32_t code : {kRelu, kReluN1To1, kNeg, kSquare}) {
    Graph g;
    const int32_t in = g.input({2, 5, 7});
    const int32_t three = g.add({1}, floats({3.0f}));
    const int32_t scaled = g.add({2, 5, 7});
    const int32_t out = g.output({2, 5, 7});
    g.ops.push_back({kMul, {in, three}, {scaled}, nullptr});
    g.ops.push_back({code, {scaled}, {out}, nullptr});
    expect_same_as_builtin(g, "unary op " + std::to_string(code));
  }
  {
    Graph g;  // PADV2 with a constant value of -7.5
    const int32_t in = g.input({1, 3, 2, 2});
    const int32_t pads = g.add({4, 2}, ints({0, 0, 2, 1, 0, 3, 1, 0}), 2);
    const int32_t value = g.add({}, floats({-7.5f}));
    const int32_t out = g.output({1, 6, 5, 3});
    g.ops.push_back({kPadV2, {in, pads, value}, {out}, nullptr});
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
      {kFloor, {-3, -2, -1, -1, 0, 0, 1, 2}},
      {kCeil, {-2, -1, -0.0f, -0.0f, 0, 1, 2, 3}},
      {kRound, {-2, -2, -0.0f, -0.0f, 0, 0, 2, 2}},
      {kElu, {std::exp(-2.5f) - 1, std::exp(-1.5f) - 1, 1 / std::sqrt(e) - 1, std::exp(-0.25f) - 1, 0, 0.5f, 1.5f, 2.5f}},
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
  g.ops.push_back({kConv2d, {in, f1, b1}, {c1}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(1)).Union());
                   }});
  g.ops.push_back({kDepthwiseConv2d, {c1, f2, b2}, {c2}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                           fb::CreateDepthwiseConv2DOptions(fbb, fb::Padding_SAME, 1, 1, 1).Union());
                   }});
  g.ops.push_back({kAdd, {c2, in}, {sum}, with_activation(fb::BuiltinOptions_AddOptions, add_options, 0)});
  g.ops.push_back({kMean, {sum, axes}, {pooled}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, false).Union());
                   }});
  g.ops.push_back({kFullyConnected, {pooled, w, -1}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_FullyConnectedOptions, fb::CreateFullyConnectedOptions(fbb).Union());
                   }});
  expect_same_as_builtin(g, "chain");
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
  g.ops.push_back({kFullyConnected, {in, w_dead, -1}, {dead}, fc});
  g.ops.push_back({kRelu, {dead}, {dead_relu}});
  g.ops.push_back({kFullyConnected, {in, w, -1}, {out}, fc});
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

// The reason xnnpack gave for node 0 of a one-op model (empty if it took it).
std::string xnnpack_refusal(const Graph& g) {
  auto envs = make_envs();
  if (!envs) return "no environment";
  auto model = load_model_buffer(g.build(), "refusal.tflite");
  if (!model) return model.error();
  auto in = Interpreter::create(envs->xnnpack, model.value());
  if (!in) return in.error();
  for (const Refusal& r : in.value()->refusals(0)) {
    if (r.plugin == "xnnpack") return r.reason;
  }
  return "";
}

TEST(XnnpackRefusals, SayWhy) {
  {
    Graph g;
    const int32_t in = g.input({1, 4});
    const int32_t out = g.output({1, 4});
    g.ops.push_back({kTanh, {in}, {out}, nullptr});
    EXPECT_EQ(xnnpack_refusal(g), "TANH is not in this XNNPACK version (Debian 0.0~git20220216)");
  }
  {
    Graph g;
    const int32_t in = g.input({2, 4});
    const int32_t out = g.output({2, 4});
    g.ops.push_back({kSoftmax, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_SoftmaxOptions, fb::CreateSoftmaxOptions(fbb, 2.0f).Union());
                     }});
    EXPECT_EQ(xnnpack_refusal(g), "softmax beta other than 1 not supported");
  }
  {
    Graph g;
    const int32_t in = g.input({1, 3, 3, 4});
    const int32_t axes = g.add({1}, ints({3}), 2);
    const int32_t out = g.output({1, 3, 3});
    g.ops.push_back({kMean, {in, axes}, {out}, nullptr});
    EXPECT_NE(xnnpack_refusal(g).find("MEAN only over the spatial axes"), std::string::npos);
  }
  {
    Graph g;  // the filter is an input of the model: XNNPACK packs weights once, it needs constants
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t f = g.input({3, 1, 1, 2});
    const int32_t out = g.output({1, 4, 4, 3});
    g.ops.push_back({kConv2d, {in, f, -1}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Conv2DOptions, fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1).Union());
                     }});
    EXPECT_EQ(xnnpack_refusal(g), "non-constant filter");
  }
  {
    Graph g;  // XNNPACK has no 1x1 pooling; only the stride-1 identity is taken
    const int32_t in = g.input({1, 4, 4, 2});
    const int32_t out = g.output({1, 2, 2, 2});
    g.ops.push_back({kMaxPool2d, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                             fb::CreatePool2DOptions(fbb, fb::Padding_VALID, 2, 2, 1, 1).Union());
                     }});
    EXPECT_EQ(xnnpack_refusal(g), "1x1 pooling with a stride other than 1");
  }
}

// ---- quantized nodes (option quantized = true) --------------------------------------------------------

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t& v : out) v = static_cast<uint8_t>(rng() >> 24);
  return out;
}

std::vector<uint8_t> int32s(const std::vector<int32_t>& values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// Runs `g` through xnnpack with quantized = true and through the builtin pack's integer kernels (which
// match TFLite's bit for bit) on the same random inputs. XNNPACK requantizes in float where TFLite uses
// fixed-point multipliers, so an 8-bit output may differ by `max_steps` quantization steps; a float
// output (after DEQUANTIZE) by `float_tolerance`. Every node must go to xnnpack.
void expect_quantized_close_to_builtin(const Graph& g, const std::string& what, int max_steps = 1,
                                       double float_tolerance = 0) {
  SCOPED_TRACE(what);
  auto envs = make_envs(2, true);
  ASSERT_TRUE(envs);
  auto model = load_model_buffer(g.build(), what + ".tflite");
  ASSERT_TRUE(model) << model.error();
  auto xi = Interpreter::create(envs->xnnpack, model.value());
  ASSERT_TRUE(xi) << xi.error();
  auto bi = Interpreter::create(envs->builtin, model.value());
  ASSERT_TRUE(bi) << bi.error();
  Interpreter& x = *xi.value();
  Interpreter& b = *bi.value();
  for (size_t i = 0; i < x.nodes().size(); ++i) {
    const auto& refusals = x.refusals(i);
    EXPECT_EQ(x.placement(i).kind, "delegate")
        << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason);
  }
  ASSERT_TRUE(x.ensure_prepared());
  ASSERT_TRUE(b.ensure_prepared());
  for (size_t i = 0; i < x.input_count(); ++i) {
    const auto data = x.input(i).type == BATON_TYPE_FLOAT32 ? random_floats(x.input(i).bytes / 4, 31 + static_cast<uint32_t>(i))
                                                            : random_bytes(x.input(i).bytes, 31 + static_cast<uint32_t>(i));
    std::memcpy(x.input(i).data, data.data(), data.size());
    std::memcpy(b.input(i).data, data.data(), data.size());
  }
  Status sx = x.invoke();
  ASSERT_TRUE(sx) << sx.message();
  Status sb = b.invoke();
  ASSERT_TRUE(sb) << sb.message();
  for (size_t o = 0; o < x.output_count(); ++o) {
    const Tensor& xt = x.output(o);
    const Tensor& bt = b.output(o);
    ASSERT_EQ(xt.shape, bt.shape) << "output " << o;
    const size_t n = bt.bytes / (xt.type == BATON_TYPE_FLOAT32 ? 4 : 1);
    double worst = 0;
    size_t differing = 0;
    for (size_t k = 0; k < n; ++k) {
      double a, c;
      if (xt.type == BATON_TYPE_FLOAT32) {
        a = reinterpret_cast<const float*>(xt.data)[k];
        c = reinterpret_cast<const float*>(bt.data)[k];
      } else if (xt.type == BATON_TYPE_UINT8) {
        a = xt.data[k];
        c = bt.data[k];
      } else {
        a = static_cast<int8_t>(xt.data[k]);
        c = static_cast<int8_t>(bt.data[k]);
      }
      worst = std::max(worst, std::abs(a - c));
      differing += a != c;
    }
    if (xt.type == BATON_TYPE_FLOAT32) {
      EXPECT_LE(worst, float_tolerance) << "output " << o;
    } else {
      EXPECT_LE(worst, max_steps) << "output " << o << ": " << differing << " of " << n << " differ";
    }
    std::printf("[ quant    ] %s output %zu: %zu of %zu values differ from the builtin kernels, by at most %g\n",
                what.c_str(), o, differing, n, worst);
  }
}

Quantization per_tensor(float scale, int64_t zero_point) { return {{scale}, {zero_point}, 0}; }

// A convolution (or depthwise, `depthwise`) of 8-bit type `type` with bias; per-channel int8 weights
// when `per_channel`.
Graph quantized_conv(int8_t type, bool depthwise, bool per_channel, fb::Padding padding, int stride, int activation) {
  Graph g;
  const bool u8 = type == 3;
  const int32_t in = g.quantized({1, 7, 9, 6}, type, per_tensor(0.03f, u8 ? 131 : -7));
  const int cout = depthwise ? 6 : 5;
  const std::vector<int32_t> fshape = depthwise ? std::vector<int32_t>{1, 3, 3, 6} : std::vector<int32_t>{5, 3, 3, 6};
  Quantization fq;
  if (per_channel) {
    for (int c = 0; c < cout; ++c) {
      fq.scales.push_back(0.004f + 0.002f * c);
      fq.zero_points.push_back(0);
    }
    fq.dimension = depthwise ? 3 : 0;
  } else {
    fq = per_tensor(0.006f, u8 ? 117 : 0);
  }
  const int32_t f = g.quantized(fshape, type, fq, random_bytes(count_of(fshape), 41));
  Quantization bq;
  std::vector<int32_t> bias;
  for (int c = 0; c < cout; ++c) {
    bq.scales.push_back(0.03f * fq.scales[per_channel ? c : 0]);
    bq.zero_points.push_back(0);
    bias.push_back((c - 2) * 150);
  }
  if (!per_channel) {
    bq.scales.resize(1);
    bq.zero_points.resize(1);
  }
  const int32_t bb = g.quantized({cout}, 2, bq, int32s(bias));
  auto out_size = [&](int n) { return padding == fb::Padding_SAME ? (n + stride - 1) / stride : (n - 3) / stride + 1; };
  const int32_t out = g.quantized({1, out_size(7), out_size(9), cout}, type, per_tensor(0.05f, u8 ? 12 : 4));
  g.inputs = {in};
  g.outputs = {out};
  if (depthwise) {
    g.ops.push_back({kDepthwiseConv2d, {in, f, bb}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                             fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, 1, act(activation)).Union());
                     }, per_channel ? 3 : 1});
  } else {
    g.ops.push_back({kConv2d, {in, f, bb}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                             fb::CreateConv2DOptions(fbb, padding, stride, stride, act(activation)).Union());
                     }, per_channel ? 3 : 1});
  }
  return g;
}

TEST(XnnpackQuantized, Convolutions) {
  expect_quantized_close_to_builtin(quantized_conv(3, false, false, fb::Padding_SAME, 2, 3), "uint8 conv same stride 2 relu6");
  expect_quantized_close_to_builtin(quantized_conv(9, false, true, fb::Padding_VALID, 1, 0), "int8 per-channel conv valid");
  expect_quantized_close_to_builtin(quantized_conv(3, true, false, fb::Padding_SAME, 1, 1), "uint8 depthwise relu");
  expect_quantized_close_to_builtin(quantized_conv(9, true, true, fb::Padding_SAME, 2, 0), "int8 per-channel depthwise");
}

TEST(XnnpackQuantized, FullyConnected) {
  for (int8_t type : {int8_t{3}, int8_t{9}}) {
    Graph g;
    const bool u8 = type == 3;
    const int32_t in = g.quantized({3, 10}, type, per_tensor(0.02f, u8 ? 100 : 3));
    const int32_t w = g.quantized({4, 10}, type, per_tensor(0.01f, u8 ? 140 : 0), random_bytes(40, 51));
    const int32_t bias = g.quantized({4}, 2, per_tensor(0.0002f, 0), int32s({300, -200, 0, 1000}));
    const int32_t out = g.quantized({3, 4}, type, per_tensor(0.04f, u8 ? 120 : -2));
    g.inputs = {in};
    g.outputs = {out};
    g.ops.push_back({kFullyConnected, {in, w, bias}, {out}, nullptr});
    expect_quantized_close_to_builtin(g, u8 ? "uint8 fully connected" : "int8 fully connected");
  }
}

TEST(XnnpackQuantized, BinaryOpsWithBroadcastingAndOwnScales) {
  for (int32_t code : {kAdd, kSub, kMul}) {
    for (int8_t type : {int8_t{3}, int8_t{9}}) {
      Graph g;
      const bool u8 = type == 3;
      const int32_t a = g.quantized({2, 3, 4}, type, per_tensor(0.05f, u8 ? 128 : 0));
      const int32_t c = g.quantized({1, 3, 1}, type, per_tensor(0.02f, u8 ? 90 : -20), random_bytes(3, 61));
      const int32_t out = g.quantized({2, 3, 4}, type, per_tensor(code == kMul ? 0.1f : 0.07f, u8 ? 140 : 5));
      g.inputs = {a};
      g.outputs = {out};
      g.ops.push_back({code, {a, c}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                         return std::make_pair(fb::BuiltinOptions_AddOptions, fb::CreateAddOptions(fbb).Union());
                       }});
      if (code == kSub) g.ops.back().options = [](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_SubOptions, fb::CreateSubOptions(fbb).Union());
      };
      if (code == kMul) g.ops.back().options = [](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_MulOptions, fb::CreateMulOptions(fbb).Union());
      };
      expect_quantized_close_to_builtin(g, "op " + std::to_string(code) + (u8 ? " uint8" : " int8"));
    }
  }
}

TEST(XnnpackQuantized, PoolingLogisticPadReshapeAndConversions) {
  {
    Graph g;  // MAX_POOL -> PAD -> RESHAPE, uint8, one scale throughout
    const Quantization q = per_tensor(0.1f, 77);
    const int32_t in = g.quantized({1, 6, 6, 3}, 3, q);
    const int32_t pooled = g.quantized({1, 3, 3, 3}, 3, q);
    const int32_t pads = g.add({4, 2}, ints({0, 0, 1, 0, 0, 2, 0, 0}), 2);
    const int32_t padded = g.quantized({1, 4, 5, 3}, 3, q);
    const int32_t shape = g.add({2}, ints({4, -1}), 2);
    const int32_t out = g.quantized({4, 15}, 3, q);
    g.inputs = {in};
    g.outputs = {out};
    g.ops.push_back({kMaxPool2d, {in}, {pooled}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                             fb::CreatePool2DOptions(fbb, fb::Padding_VALID, 2, 2, 2, 2).Union());
                     }, 2});
    g.ops.push_back({kPad, {pooled, pads}, {padded}, nullptr, 2});
    g.ops.push_back({kReshape, {padded, shape}, {out}, nullptr});
    expect_quantized_close_to_builtin(g, "max pool pad reshape", 0);  // no arithmetic: exact
  }
  {
    Graph g;  // LOGISTIC, int8: the output scale is 1/256 with zero point -128, as TFLite requires
    const int32_t in = g.quantized({4, 16}, 9, per_tensor(0.08f, 3));
    const int32_t out = g.quantized({4, 16}, 9, per_tensor(1.0f / 256, -128));
    g.inputs = {in};
    g.outputs = {out};
    g.ops.push_back({kLogistic, {in}, {out}, nullptr, 2});
    expect_quantized_close_to_builtin(g, "int8 logistic");
  }
  {
    Graph g;  // float -> QUANTIZE -> int8 per-channel conv -> DEQUANTIZE -> float
    Graph conv = quantized_conv(9, false, true, fb::Padding_SAME, 1, 0);
    g = conv;
    const int32_t q_in = g.inputs[0], q_out = g.outputs[0];
    const int32_t f_in = g.add({1, 7, 9, 6});
    const int32_t f_out = g.add({1, 7, 9, 5});
    g.inputs = {f_in};
    g.outputs = {f_out};
    g.ops.insert(g.ops.begin(), Op{kQuantize, {f_in}, {q_in}, nullptr, 2});
    g.ops.push_back({kDequantize, {q_out}, {f_out}, nullptr, 2});
    // One output step is 0.05: the float outputs may differ by that much.
    expect_quantized_close_to_builtin(g, "quantize conv dequantize", 1, 0.05 + 1e-6);
  }
}

TEST(XnnpackQuantized, RefusalsSayWhy) {
  {
    Graph g = quantized_conv(3, false, false, fb::Padding_SAME, 1, 0);  // quantized option off
    EXPECT_EQ(xnnpack_refusal(g), "UINT8 input 0 (quantized nodes are taken only with the option quantized = true)");
  }
  auto refusal_with_quantized = [](const Graph& g) {
    auto envs = make_envs(1, true);
    auto model = load_model_buffer(g.build(), "refused.tflite");
    EXPECT_TRUE(model) << model.error();
    auto in = Interpreter::create(envs->xnnpack, model.value());
    EXPECT_TRUE(in) << in.error();
    for (const Refusal& r : in.value()->refusals(0)) {
      if (r.plugin == "xnnpack") return r.reason;
    }
    return std::string();
  };
  {
    Graph g;  // dynamic range: float activations, int8 weights
    const int32_t in = g.input({2, 8});
    const int32_t w = g.quantized({3, 8}, 9, per_tensor(0.01f, 0), random_bytes(24, 71));
    const int32_t out = g.output({2, 3});
    g.ops.push_back({kFullyConnected, {in, w, -1}, {out}, nullptr, 9});
    EXPECT_EQ(refusal_with_quantized(g), "INT8 weights with float32 activations (dynamic-range quantization is not in this XNNPACK)");
  }
  {
    Graph g;  // this XNNPACK has no quantized average pooling
    const int32_t in = g.quantized({1, 4, 4, 2}, 3, per_tensor(0.1f, 5));
    const int32_t out = g.quantized({1, 2, 2, 2}, 3, per_tensor(0.1f, 5));
    g.inputs = {in};
    g.outputs = {out};
    g.ops.push_back({kAveragePool2d, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                             fb::CreatePool2DOptions(fbb, fb::Padding_VALID, 2, 2, 2, 2).Union());
                     }, 2});
    EXPECT_EQ(refusal_with_quantized(g), "UINT8 input 0 (float32 only for this op in this XNNPACK)");
  }
}

// The uint8 SSD with the quantized option, against native TFLite 2.9's outputs on the photo: XNNPACK's
// float requantization moves some logits and box codes by a step, which reorders weak detections, so
// the strong ones are compared: each reference detection scoring 0.5 or more is found with the same class
// and score, its box within 0.02 (of the unit image).
TEST(XnnpackQuantized, SsdStrongDetectionsMatchTheReference) {
  const std::string name = "mobilenet_ssd_v2_coco_quant_postprocess";
  const std::string path = model_cache() + "/" + name + ".tflite";
  if (!fs::exists(path)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << path;
    GTEST_SKIP() << "missing " << path;
  }
  TempDir plugins, conf;
  for (const auto& [dir, file] : {std::pair{std::string(XNNPACK_PLUGIN_DIR), "libbaton_xnnpack.so"},
                                  std::pair{std::string(BUILTIN_PACK_DIR), "libbaton_builtin.so"},
                                  std::pair{std::string(DETECTION_PACK_DIR), "libbaton_detection.so"}}) {
    fs::copy_file(dir + "/" + file, plugins.file(file));
  }
  conf.write("baton.conf", "delegates = xnnpack\n[plugin.xnnpack]\nquantized = true\nthreads = 2\n");
  auto env = isolated_environment({plugins.path()}, conf.file("baton.conf"));
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  EXPECT_GT(delegated_nodes(in, "xnnpack"), 90u);
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + name + "-astronaut/";
  auto input = tool::read_npy(ref + "in_0.npy");
  ASSERT_TRUE(input) << input.error();
  ASSERT_EQ(input->data.size(), in.input(0).bytes);
  std::memcpy(in.input(0).data, input->data.data(), input->data.size());
  ASSERT_TRUE(in.invoke());
  std::vector<std::vector<float>> want(4);
  for (int o = 0; o < 4; ++o) {
    auto arr = tool::read_npy(ref + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    want[o].resize(arr->data.size() / 4);
    std::memcpy(want[o].data(), arr->data.data(), arr->data.size());
    ASSERT_EQ(in.output(o).bytes, arr->data.size());
  }
  const float* boxes = reinterpret_cast<const float*>(in.output(0).data);
  const float* classes = reinterpret_cast<const float*>(in.output(1).data);
  const float* scores = reinterpret_cast<const float*>(in.output(2).data);
  EXPECT_EQ(reinterpret_cast<const float*>(in.output(3).data)[0], want[3][0]);
  int strong = 0;
  for (size_t d = 0; d < want[2].size(); ++d) {
    if (want[2][d] < 0.5f) continue;
    ++strong;
    bool found = false;
    for (size_t e = 0; e < want[2].size() && !found; ++e) {
      if (classes[e] != want[1][d] || scores[e] != want[2][d]) continue;
      float worst = 0;
      for (int k = 0; k < 4; ++k) worst = std::max(worst, std::abs(boxes[4 * e + k] - want[0][4 * d + k]));
      found = worst <= 0.02f;
    }
    EXPECT_TRUE(found) << "reference detection " << d << " (class " << want[1][d] << ", score " << want[2][d] << ")";
  }
  EXPECT_GT(strong, 0);  // the photo has a person the reference finds
}

// --threads (EnvironmentOptions::threads) sets every plugin's thread count, except a plugin whose config
// section sets its own `threads`; without either, all cores.
TEST(XnnpackOptions, ThreadsFromTheRunUnlessThePluginSectionSetsThem) {
  TempDir plugins, conf;
  fs::copy_file(std::string(XNNPACK_PLUGIN_DIR) + "/libbaton_xnnpack.so", plugins.file("libbaton_xnnpack.so"));
  fs::copy_file(std::string(BUILTIN_PACK_DIR) + "/libbaton_builtin.so", plugins.file("libbaton_builtin.so"));
  auto threads_of = [&](const std::string& config, int run_threads, const std::string& plugin) {
    conf.write("baton.conf", config);
    EnvironmentOptions o;
    o.plugin_dirs = {plugins.path()};
    o.config_path = conf.file("baton.conf");
    o.use_environment_variables = false;
    o.use_default_dirs = false;
    o.threads = run_threads;
    o.state_dir = test_state_dir();
    o.log = [](baton_log_level, const std::string&) {};
    auto env = Environment::create(o);
    EXPECT_TRUE(env) << env.error();
    if (!env) return -1;
    const LoadedPlugin* p = env.value()->registry().find(plugin);
    return p ? p->threads : -1;
  };
  // Every count is capped at the CPUs the process may run on (cpu_budget.h).
  const int cpus = usable_cpus();
  EXPECT_EQ(threads_of("", 3, "xnnpack"), std::min(3, cpus));
  EXPECT_EQ(threads_of("", 3, "builtin"), std::min(3, cpus));
  EXPECT_EQ(threads_of("[plugin.xnnpack]\nthreads = 1\n", 3, "xnnpack"), 1);
  EXPECT_EQ(threads_of("[plugin.xnnpack]\nthreads = 1\n", 3, "builtin"), std::min(3, cpus));
  EXPECT_EQ(threads_of("threads = 2\n", 0, "xnnpack"), std::min(2, cpus));
  EXPECT_EQ(threads_of("", 0, "xnnpack"), cpus);
}

}  // namespace
}  // namespace baton::test
