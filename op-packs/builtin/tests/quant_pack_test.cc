// 8-bit and int8-weight nodes through the pack's C ABI (a fake host, as pack_test.cc): the glue turns
// the tensors' scales and zero points into the kernels' multipliers as TFLite's Prepare does, and
// refuses what it cannot run at prepare, with a message naming the node, the tensor and the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "baton/tflite_ops.h"
#include "tests/fake_host.h"

namespace baton::builtin::testing {
namespace {

class QuantPackTest : public ::testing::Test {
 protected:
  FakeHost host{BATON_BUILTIN_PACK_PATH};
  void SetUp() override { ASSERT_NE(host.desc(), nullptr) << host.load_error(); }
};

// A uint8 or int8 tensor with per-tensor parameters.
int quantized(FakeGraph& g, baton_tensor_type type, std::vector<int32_t> dims, float scale, int64_t zero,
              const std::vector<uint8_t>* data = nullptr, bool constant = false) {
  const int t = g.add_tensor(type, std::move(dims), data ? data->data() : nullptr, constant);
  g.tensors[t].scales = {scale};
  g.tensors[t].zero_points = {zero};
  return t;
}

std::vector<uint8_t> s8(std::initializer_list<int> values) {
  std::vector<uint8_t> out;
  for (int v : values) out.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
  return out;
}

TEST_F(QuantPackTest, DeclaresQuantize) {
  bool found = false;
  for (size_t i = 0; i < host.desc()->op_count; ++i) {
    const baton_op_decl& d = host.desc()->ops[i];
    if (d.builtin_code == BATON_OP_QUANTIZE) found = d.min_version == 1 && d.max_version >= 2;
  }
  EXPECT_TRUE(found);
}

TEST_F(QuantPackTest, Uint8Conv) {
  // QGemm.Uint8ZeroPointsAtTheRangeEnds as a 1x1 CONV_2D: input scale 0.5 and filter scale 0.5 give the
  // multiplier float(0.25) / output scale 1 = 0.25. Input (zero point 255) pixels [255, 254, 0] and
  // [10, 255, 128]; filter (zero point 0) [1, 2, 3] and [255, 0, 1]; bias [100, -100]; output zero point
  // 200 -> [34, 112] and [69, 0] (ties of the final shift upward, as TFLite's GEMM rounds them).
  FakeGraph g;
  const std::vector<uint8_t> in = {255, 254, 0, 10, 255, 128}, w = {1, 2, 3, 255, 0, 1};
  const std::vector<int32_t> bias = {100, -100};
  const int input = quantized(g, BATON_TYPE_UINT8, {1, 1, 2, 3}, 0.5f, 255, &in);
  const int filter = quantized(g, BATON_TYPE_UINT8, {2, 1, 1, 3}, 0.5f, 0, &w, true);
  const int b = g.constant(BATON_TYPE_INT32, {2}, bias);
  g.tensors[b].scales = {0.25f};
  const int out = quantized(g, BATON_TYPE_UINT8, {}, 1.0f, 200);
  FakeNode& conv = g.add_node(BATON_OP_CONV_2D, {input, filter, b}, {out});
  conv.options.u.conv = {BATON_PADDING_VALID, 1, 1, 1, 1, 1, BATON_ACT_NONE};
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.tensors[out].dims, (std::vector<int32_t>{1, 1, 2, 2}));
  EXPECT_EQ(g.values<uint8_t>(out), (std::vector<uint8_t>{34, 112, 69, 0}));
}

TEST_F(QuantPackTest, Int8PerChannelDepthwiseWithRelu6) {
  // QDepthwise.PaddingBiasAndTiesAwayFromZero through the glue: input scale 0.5, filter scales 0.5 per
  // channel, output scale 1: multipliers 0.5 * 0.5 / 1 = 0.25. Raw results [10, -10] and [7, -7]; RELU6
  // clamps to codes [round(0 / 1), round(6 / 1)] = [0, 6] around zero point 0: [6, 0] and [6, 0].
  FakeGraph g;
  const std::vector<uint8_t> in = {5, 5, 13, 13}, w = s8({1, -1, 2, -2, 3, -3});
  const std::vector<int32_t> bias = {4, -4};
  const int input = quantized(g, BATON_TYPE_INT8, {1, 1, 2, 2}, 0.5f, 3, &in);
  const int filter = g.add_tensor(BATON_TYPE_INT8, {1, 1, 3, 2}, w.data(), true);
  g.tensors[filter].scales = {0.5f, 0.5f};
  g.tensors[filter].zero_points = {0, 0};
  g.tensors[filter].quantized_dimension = 3;
  const int b = g.constant(BATON_TYPE_INT32, {2}, bias);
  const int out = quantized(g, BATON_TYPE_INT8, {}, 1.0f, 0);
  FakeNode& dw = g.add_node(BATON_OP_DEPTHWISE_CONV_2D, {input, filter, b}, {out}, 3);
  dw.options.u.conv = {BATON_PADDING_SAME, 1, 1, 1, 1, 1, BATON_ACT_NONE};
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<uint8_t>(out), s8({10, -10, 7, -7}));
  g.nodes[0].options.u.conv.activation = BATON_ACT_RELU6;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<uint8_t>(out), s8({6, 0, 6, 0}));
}

TEST_F(QuantPackTest, HybridFullyConnectedQuantizesTheInputRow) {
  // Float input [-1, 0.5, 1, 0.25] quantized symmetrically (Hybrid.SymmetricRowQuantization): scale
  // 1/127, codes [-127, 64, 127, 32]. int8 weights (scale 0.5) [1, 2, 3, 4] and [-4, 0, 0, 4], float
  // bias [1, -1]:
  //   unit 0: -127 + 128 + 381 + 128 = 510 -> 510 * (1/127 * 0.5) + 1 = 3.007874
  //   unit 1: 508 + 128 = 636 -> 636 / 254 - 1 = 1.503937
  // (the float layer would give 3 and 1.5: the difference is the input's quantization, as in TFLite).
  // With asymmetric_quantize_inputs the row's range is [-1, 1]: scale 2/255 (stored as a float, a hair
  // below, so its inverse is 127.4999...), zero point -0.5 from either end, the maximum's error (254.5)
  // the smaller, rounded away from zero to -1; codes round(-1 + 127.4999 x) = [-128.4999 -> -128, 62.75
  // -> 63, 126.4999 -> 126, 30.87 -> 31], minus the zero point [-127, 64, 127, 32]:
  //   unit 0: -127 + 128 + 381 + 128 = 510 -> 510 * (2/255 * 0.5) + 1 = 3
  //   unit 1: 508 + 128 = 636 -> 636/255 - 1 = 1.494118
  FakeGraph g;
  const int input = g.floats({1, 4}, {-1.0f, 0.5f, 1.0f, 0.25f});
  const std::vector<uint8_t> w = s8({1, 2, 3, 4, -4, 0, 0, 4});
  const int weights = g.add_tensor(BATON_TYPE_INT8, {2, 4}, w.data(), true);
  g.tensors[weights].scales = {0.5f};
  g.tensors[weights].zero_points = {0};
  const int bias = g.floats({2}, {1.0f, -1.0f}, true);
  const int out = g.output();
  FakeNode& fc = g.add_node(BATON_OP_FULLY_CONNECTED, {input, weights, bias}, {out}, 9);
  fc.options.u.fully_connected = {BATON_ACT_NONE, 0, 0, 0};
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  const std::vector<float> got = g.values<float>(out);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], 1.0f + 510.0f / 254.0f, 1e-5f);
  EXPECT_NEAR(got[1], -1.0f + 636.0f / 254.0f, 1e-5f);
  g.nodes[0].options.u.fully_connected.asymmetric_quantize_inputs = 1;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  const std::vector<float> asym = g.values<float>(out);
  EXPECT_NEAR(asym[0], 3.0f, 1e-5f);
  EXPECT_NEAR(asym[1], -1.0f + 636.0f / 255.0f, 1e-5f);
}

TEST_F(QuantPackTest, Uint8AddMulAndConcat) {
  // ADD of QBinary.AddSubMulByHand: scales 0.5 / 0.25 / 1, zero points 128 / 0 / 200.
  FakeGraph g;
  const std::vector<uint8_t> a = {131, 129, 127, 255}, b = {2, 0, 0, 255};
  const int ta = quantized(g, BATON_TYPE_UINT8, {4}, 0.5f, 128, &a);
  const int tb = quantized(g, BATON_TYPE_UINT8, {4}, 0.25f, 0, &b);
  const int sum = quantized(g, BATON_TYPE_UINT8, {}, 1.0f, 200);
  g.add_node(BATON_OP_ADD, {ta, tb}, {sum});
  // CONCATENATION of the sum (scale 1, zero 200) and `a` (scale 0.5, zero 128) into scale 1 zero 200:
  // the sum is copied; a is rescaled in float: (x - 128) * 0.5 rounded half away from zero, + 200:
  // 131 -> 1.5 -> 2 -> 202, 129 -> 0.5 -> 1 -> 201, 127 -> -0.5 -> -1 -> 199, 255 -> 63.5 -> 64 -> 264 -> 255.
  const int cat = quantized(g, BATON_TYPE_UINT8, {}, 1.0f, 200);
  FakeNode& c = g.add_node(BATON_OP_CONCATENATION, {sum, ta}, {cat});
  c.options.u.concat = {0, BATON_ACT_NONE};
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<uint8_t>(sum), (std::vector<uint8_t>{202, 201, 199, 255}));
  EXPECT_EQ(g.values<uint8_t>(cat), (std::vector<uint8_t>{202, 201, 199, 255, 202, 201, 199, 255}));
}

TEST_F(QuantPackTest, Uint8PadWritesTheZeroPoint) {
  FakeGraph g;
  const std::vector<uint8_t> in = {1, 2};
  const std::vector<int32_t> pads = {1, 2};
  const int input = quantized(g, BATON_TYPE_UINT8, {2}, 0.1f, 77, &in);
  const int p = g.constant(BATON_TYPE_INT32, {1, 2}, pads);
  const int out = quantized(g, BATON_TYPE_UINT8, {}, 0.1f, 77);
  g.add_node(BATON_OP_PAD, {input, p}, {out});
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<uint8_t>(out), (std::vector<uint8_t>{77, 1, 2, 77, 77}));
}

TEST_F(QuantPackTest, QuantizeAndDequantizeRoundTrip) {
  // float -> int8 (scale 0.5, zero -128): 0.25 -> 0.5 -> 1 -> -127; -0.25 -> -1 -> -129 -> -128; 3 -> 6
  // -> -122. Then back to float: (-127 + 128) * 0.5 = 0.5, 0, 3.
  FakeGraph g;
  const int input = g.floats({3}, {0.25f, -0.25f, 3.0f});
  const int q = quantized(g, BATON_TYPE_INT8, {}, 0.5f, -128);
  g.add_node(BATON_OP_QUANTIZE, {input}, {q}, 2);
  const int back = g.output();
  g.add_node(BATON_OP_DEQUANTIZE, {q}, {back}, 2);
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<uint8_t>(q), s8({-127, -128, -122}));
  EXPECT_EQ(g.values<float>(back), (std::vector<float>{0.5f, 0.0f, 3.0f}));
}

// ---- refusals ------------------------------------------------------------------------------------------

struct Refusal {
  const char* what;
  std::function<void(FakeGraph&)> build;
  const char* message;
};

TEST_F(QuantPackTest, RefusesWhatItCannotRunNamingNodeTensorAndReason) {
  const std::vector<uint8_t> bytes(64, 1);
  auto conv = [&](FakeGraph& g, baton_tensor_type in_type, baton_tensor_type w_type) {
    const int input = quantized(g, in_type, {1, 2, 2, 2}, 0.5f, 0, &bytes);
    const int filter = quantized(g, w_type, {2, 1, 1, 2}, 0.5f, 0, &bytes, true);
    const int out = quantized(g, in_type, {}, 1.0f, 0);
    g.add_node(BATON_OP_CONV_2D, {input, filter, -1}, {out}).options.u.conv = {BATON_PADDING_VALID, 1, 1, 1, 1, 1, 0};
    return filter;
  };
  const Refusal cases[] = {
      {"uint8 input with an int8 filter",
       [&](FakeGraph& g) { conv(g, BATON_TYPE_UINT8, BATON_TYPE_INT8); },
       "node 0 CONV_2D: filter type INT8 not supported by the builtin pack (UINT8)"},
      {"per-channel scales on the wrong axis",
       [&](FakeGraph& g) {
         const int f = conv(g, BATON_TYPE_INT8, BATON_TYPE_INT8);
         g.tensors[f].scales = {0.5f, 0.5f};
         g.tensors[f].zero_points = {0, 0};
         g.tensors[f].quantized_dimension = 3;
       },
       "node 0 CONV_2D: filter (tensor 1 't') is quantized per channel along dimension 3; the output channels are "
       "dimension 0"},
      {"per-channel uint8 weights",
       [&](FakeGraph& g) {
         const int f = conv(g, BATON_TYPE_UINT8, BATON_TYPE_UINT8);
         g.tensors[f].scales = {0.5f, 0.5f};
         g.tensors[f].zero_points = {0, 0};
       },
       "node 0 CONV_2D: filter (tensor 1 't') has per-channel quantization (2 scales); this op takes one scale "
       "for the whole tensor"},
      {"an input without quantization",
       [&](FakeGraph& g) {
         conv(g, BATON_TYPE_UINT8, BATON_TYPE_UINT8);
         g.tensors[0].scales.clear();
       },
       "node 0 CONV_2D: input (tensor 0 't') has no quantization parameters"},
      {"a zero point outside the type",
       [&](FakeGraph& g) {
         conv(g, BATON_TYPE_UINT8, BATON_TYPE_UINT8);
         g.tensors[2].zero_points = {300};
       },
       "node 0 CONV_2D: output (tensor 2 't') has zero point 300, outside UINT8's range"},
      {"a zero scale",
       [&](FakeGraph& g) {
         conv(g, BATON_TYPE_INT8, BATON_TYPE_INT8);
         g.tensors[1].scales = {0.0f};
       },
       "node 0 CONV_2D: filter (tensor 1 't') has scale 0.000000 (must be positive and finite)"},
      {"a computed filter",
       [&](FakeGraph& g) {
         conv(g, BATON_TYPE_UINT8, BATON_TYPE_UINT8);
         g.tensors[1].constant = false;
       },
       "node 0 CONV_2D: filter must be a constant tensor"},
      {"int16 activations with a zero point",
       [&](FakeGraph& g) {
         const int a = quantized(g, BATON_TYPE_INT16, {4}, 0.5f, 3, &bytes);
         const int out = quantized(g, BATON_TYPE_INT16, {}, 0.5f, 0);
         g.add_node(BATON_OP_ADD, {a, a}, {out}, 3);
       },
       "node 0 ADD: input (tensor 0 't') has zero point 3 (int16 activations are symmetric: zero point 0)"},
      {"a softmax output that is not 1/256",
       [&](FakeGraph& g) {
         const int a = quantized(g, BATON_TYPE_UINT8, {1, 4}, 0.5f, 0, &bytes);
         const int out = quantized(g, BATON_TYPE_UINT8, {}, 0.5f, 0);
         g.add_node(BATON_OP_SOFTMAX, {a}, {out}).options.u.softmax = {1.0f};
       },
       "node 0 SOFTMAX: output must have scale 1/256 and zero point 0, has 0.500000 and 0"},
      {"int8 concatenation of different scales",
       [&](FakeGraph& g) {
         const int a = quantized(g, BATON_TYPE_INT8, {2}, 0.5f, 0, &bytes);
         const int b = quantized(g, BATON_TYPE_INT8, {2}, 0.25f, 0, &bytes);
         const int out = quantized(g, BATON_TYPE_INT8, {}, 0.5f, 0);
         g.add_node(BATON_OP_CONCATENATION, {a, b}, {out});
       },
       "node 0 CONCATENATION: input 1 (tensor 1 't') has scale 0.250000 and zero point 0, the output 0.500000 "
       "and 0; int8 concatenation does not rescale"},
      {"pooling that would have to rescale",
       [&](FakeGraph& g) {
         const int a = quantized(g, BATON_TYPE_UINT8, {1, 2, 2, 1}, 0.5f, 0, &bytes);
         const int out = quantized(g, BATON_TYPE_UINT8, {}, 0.25f, 0);
         g.add_node(BATON_OP_MAX_POOL_2D, {a}, {out}).options.u.pool = {BATON_PADDING_VALID, 1, 1, 2, 2, 0};
       },
       "8-bit pooling does not rescale"},
      {"int8 weights with a zero point under float activations",
       [&](FakeGraph& g) {
         const int a = g.floats({1, 2}, {1.0f, 2.0f});
         const int w = quantized(g, BATON_TYPE_INT8, {2, 2}, 0.5f, 3, &bytes, true);
         g.add_node(BATON_OP_FULLY_CONNECTED, {a, w, -1}, {g.output()}, 9);
       },
       "node 0 FULLY_CONNECTED: filter (tensor 1 't') has zero point 3; int8 weights with float activations "
       "must be symmetric (zero point 0)"},
      {"one weight scale for several channels under float activations in a depthwise convolution",
       [&](FakeGraph& g) {
         const int a = g.floats({1, 1, 1, 2}, {1.0f, 2.0f});
         const int w = quantized(g, BATON_TYPE_INT8, {1, 1, 1, 2}, 0.5f, 0, &bytes, true);
         g.add_node(BATON_OP_DEPTHWISE_CONV_2D, {a, w, -1}, {g.output()}).options.u.conv = {BATON_PADDING_VALID, 1, 1, 1, 1,
                                                                                      1, 0};
       },
       "node 0 DEPTHWISE_CONV_2D: filter (tensor 1 't') has one scale for 2 channels; dynamic-range "
       "DEPTHWISE_CONV_2D takes one per output channel"},
      {"requantizing int8 to int16 (TFLite 2.9 refuses it too)",
       [&](FakeGraph& g) {
         const int a = quantized(g, BATON_TYPE_INT8, {2}, 0.5f, 0, &bytes);
         const int out = quantized(g, BATON_TYPE_INT16, {}, 0.5f, 0);
         g.add_node(BATON_OP_QUANTIZE, {a}, {out}, 2);
       },
       "node 0 QUANTIZE: output of an 8-bit input type INT16 not supported by the builtin pack (UINT8, INT8)"},
  };
  for (const Refusal& c : cases) {
    FakeGraph g;
    c.build(g);
    std::string error;
    EXPECT_NE(host.run(g, &error), BATON_OK) << c.what;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.what << ": " << error;
  }
}

}  // namespace
}  // namespace baton::builtin::testing
