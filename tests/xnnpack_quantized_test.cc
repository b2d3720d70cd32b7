// The XNNPACK delegate's quantized nodes (the plugin option quantized = true): uint8 and int8 models built
// here, run through xnnpack and through the builtin pack's integer kernels (TFLite's bits) and compared
// within a quantization step; the refusals of what this XNNPACK does not quantize; and the uint8 SSD
// against native TFLite 2.9's detections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "interpreter.h"
#include "npy.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"
#include "xnnpack_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;
namespace fb = baton::tflite;

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
  auto envs = shared_envs(2, true);
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
        << "node " << i << " not delegated: " << (refusals.empty() ? "" : refusals.back().reason());
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
    g.ops.push_back({BATON_OP_DEPTHWISE_CONV_2D, {in, f, bb}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                             fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, 1, act(activation)).Union());
                     }, per_channel ? 3 : 1});
  } else {
    g.ops.push_back({BATON_OP_CONV_2D, {in, f, bb}, {out}, [=](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w, bias}, {out}, nullptr});
    expect_quantized_close_to_builtin(g, u8 ? "uint8 fully connected" : "int8 fully connected");
  }
}

TEST(XnnpackQuantized, BinaryOpsWithBroadcastingAndOwnScales) {
  for (int32_t code : {BATON_OP_ADD, BATON_OP_SUB, BATON_OP_MUL}) {
    for (int8_t type : {int8_t{3}, int8_t{9}}) {
      Graph g;
      const bool u8 = type == 3;
      const int32_t a = g.quantized({2, 3, 4}, type, per_tensor(0.05f, u8 ? 128 : 0));
      const int32_t c = g.quantized({1, 3, 1}, type, per_tensor(0.02f, u8 ? 90 : -20), random_bytes(3, 61));
      const int32_t out = g.quantized({2, 3, 4}, type, per_tensor(code == BATON_OP_MUL ? 0.1f : 0.07f, u8 ? 140 : 5));
      g.inputs = {a};
      g.outputs = {out};
      g.ops.push_back({code, {a, c}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
                         return std::make_pair(fb::BuiltinOptions_AddOptions, fb::CreateAddOptions(fbb).Union());
                       }});
      if (code == BATON_OP_SUB) g.ops.back().options = [](flatbuffers::FlatBufferBuilder& fbb) {
        return std::make_pair(fb::BuiltinOptions_SubOptions, fb::CreateSubOptions(fbb).Union());
      };
      if (code == BATON_OP_MUL) g.ops.back().options = [](flatbuffers::FlatBufferBuilder& fbb) {
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
    g.ops.push_back({BATON_OP_MAX_POOL_2D, {in}, {pooled}, [](flatbuffers::FlatBufferBuilder& fbb) {
                       return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                             fb::CreatePool2DOptions(fbb, fb::Padding_VALID, 2, 2, 2, 2).Union());
                     }, 2});
    g.ops.push_back({BATON_OP_PAD, {pooled, pads}, {padded}, nullptr, 2});
    g.ops.push_back({BATON_OP_RESHAPE, {padded, shape}, {out}, nullptr});
    expect_quantized_close_to_builtin(g, "max pool pad reshape", 0);  // no arithmetic: exact
  }
  {
    Graph g;  // LOGISTIC, int8: the output scale is 1/256 with zero point -128, as TFLite requires
    const int32_t in = g.quantized({4, 16}, 9, per_tensor(0.08f, 3));
    const int32_t out = g.quantized({4, 16}, 9, per_tensor(1.0f / 256, -128));
    g.inputs = {in};
    g.outputs = {out};
    g.ops.push_back({BATON_OP_LOGISTIC, {in}, {out}, nullptr, 2});
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
    g.ops.insert(g.ops.begin(), Op{BATON_OP_QUANTIZE, {f_in}, {q_in}, nullptr, 2});
    g.ops.push_back({BATON_OP_DEQUANTIZE, {q_out}, {f_out}, nullptr, 2});
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
    auto envs = shared_envs(1, true);
    auto model = load_model_buffer(g.build(), "refused.tflite");
    EXPECT_TRUE(model) << model.error();
    auto in = Interpreter::create(envs->xnnpack, model.value());
    EXPECT_TRUE(in) << in.error();
    for (const Refusal& r : in.value()->refusals(0)) {
      if (r.plugin == "xnnpack") return r.reason();
    }
    return std::string();
  };
  {
    Graph g;  // dynamic range: float activations, int8 weights
    const int32_t in = g.input({2, 8});
    const int32_t w = g.quantized({3, 8}, 9, per_tensor(0.01f, 0), random_bytes(24, 71));
    const int32_t out = g.output({2, 3});
    g.ops.push_back({BATON_OP_FULLY_CONNECTED, {in, w, -1}, {out}, nullptr, 9});
    EXPECT_EQ(refusal_with_quantized(g), "INT8 weights with float32 activations (dynamic-range quantization is not in this XNNPACK)");
  }
  {
    Graph g;  // this XNNPACK has no quantized average pooling
    const int32_t in = g.quantized({1, 4, 4, 2}, 3, per_tensor(0.1f, 5));
    const int32_t out = g.quantized({1, 2, 2, 2}, 3, per_tensor(0.1f, 5));
    g.inputs = {in};
    g.outputs = {out};
    g.ops.push_back({BATON_OP_AVERAGE_POOL_2D, {in}, {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
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

}  // namespace
}  // namespace baton::test
