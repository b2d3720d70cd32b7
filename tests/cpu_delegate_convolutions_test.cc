// The cpu delegate's convolutions through the runtime, against the builtin (and mediapipe) pack alone on
// the same random inputs, at one to three threads: depthwise + 1x1 pairs of many shapes, narrow and
// pointwise convolutions, MediaPipe's transposed heads; the activation nodes that join them; and the
// convolutions it leaves to the next delegate.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_delegate_support.h"
#include "interpreter.h"
#include "op_graph.h"
#include "reference_run.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

// ---- pairs through the delegate -----------------------------------------------------------------------

TEST(CpuDelegate, PairsMatchTheBuiltinPack) {
  const PairCase cases[] = {
      {{1, 9, 11, 19}, 3, 1, fb::Padding_SAME, 3, 0, 13, true},    // channels no multiple of a vector
      {{1, 13, 10, 33}, 3, 2, fb::Padding_SAME, 1, 3, 40, true},   // stride 2, odd rows
      {{1, 12, 12, 24}, 5, 1, fb::Padding_SAME, 0, 1, 7, false},   // 5x5, no biases
      {{1, 17, 15, 16}, 5, 2, fb::Padding_SAME, 2, 2, 48, true},   // RELU_N1_TO_1 on both
      {{1, 11, 9, 8}, 3, 2, fb::Padding_VALID, 0, 0, 5, true},     // VALID stride 2
      {{2, 7, 7, 20}, 3, 1, fb::Padding_SAME, 3, 3, 33, true},     // batch 2
      {{1, 64, 40, 32}, 3, 1, fb::Padding_SAME, 3, 0, 24, true},   // many row blocks
      {{3, 64, 40, 32}, 3, 1, fb::Padding_SAME, 0, 0, 24, true},   // a share that ends inside an image
  };
  // One thread, and the rows split in two and three shares (uneven, fewer blocks than threads).
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const PairCase& p : cases) {
      EXPECT_EQ(run_against_builtin(pair_graph(p), "pair case " + std::to_string(i), threads), 2u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
}

TEST(CpuDelegate, NarrowConvolutionsMatchTheBuiltinPack) {
  const ConvCase cases[] = {
      {{1, 64, 64, 8}, 3, 3, 1, fb::Padding_SAME, 0, 1, true},    // a segmentation head's shape
      {{1, 80, 72, 19}, 3, 3, 2, fb::Padding_SAME, 3, 2, true},   // channels past a vector, stride 2, RELU6
      {{2, 33, 35, 3}, 5, 5, 1, fb::Padding_SAME, 1, 4, false},   // batch 2, fewer channels than a vector
      {{1, 48, 48, 48}, 1, 1, 1, fb::Padding_SAME, 2, 1, true},   // 1x1 (face detection's head)
      {{1, 41, 37, 16}, 2, 2, 1, fb::Padding_VALID, 0, 3, true},  // even window, VALID
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const ConvCase& p : cases) {
      EXPECT_EQ(run_against_builtin(conv_graph(p), "conv case " + std::to_string(i), threads), 1u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  // Resized after load: the geometry follows the new shape.
  EXPECT_EQ(run_against_builtin(conv_graph(cases[1]), "conv resized", 2, {1, 51, 29, 19}), 1u);
}

// 1x1 convolutions on their own: one matrix product over the pixels, rows split over the pool.
TEST(CpuDelegate, PointwiseConvolutionsMatchTheBuiltinPack) {
  const ConvCase cases[] = {
      {{1, 32, 32, 16}, 1, 1, 1, fb::Padding_SAME, 0, 16, true},   // selfie_segmentation's first 1x1
      {{1, 13, 11, 19}, 1, 1, 1, fb::Padding_SAME, 3, 37, true},   // odd rows, channels past a vector, RELU6
      {{2, 9, 10, 40}, 1, 1, 1, fb::Padding_VALID, 1, 96, false},  // batch 2, no bias, RELU
      {{1, 8, 8, 120}, 1, 1, 1, fb::Padding_SAME, 2, 24, true},    // deep, few rows
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const ConvCase& p : cases) {
      EXPECT_EQ(run_against_builtin(conv_graph(p), "pointwise case " + std::to_string(i), threads), 1u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  EXPECT_EQ(run_against_builtin(conv_graph(cases[1]), "pointwise resized", 2, {1, 21, 6, 19}), 1u);
}

// in -> CONV_2D 1x1 (activation `act`) -> HARD_SWISH -> out.
OpGraph pointwise_hard_swish_graph(std::vector<int32_t> in_shape, int out_channels, int a) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t f = random_weights(g, {out_channels, 1, 1, in_shape[3]}, 41);
  const int32_t b = random_weights(g, {out_channels}, 42);
  const std::vector<int32_t> shape = {in_shape[0], in_shape[1], in_shape[2], out_channels};
  const int32_t mid = g.add(shape);
  const int32_t y = g.output(shape);
  g.ops.push_back({BATON_OP_CONV_2D, {in, f, b}, {mid}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(a)).Union());
                   }});
  g.ops.push_back({117 /* HARD_SWISH */, {mid}, {y}, nullptr});
  return g;
}

// MobileNetV3's expansions: a 1x1 convolution, then HARD_SWISH, run as one step.
TEST(CpuDelegate, AHardSwishAfterAPointwiseJoinsIt) {
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(pointwise_hard_swish_graph({1, 32, 32, 16}, 16, 0), "hard swish", threads), 2u);
    EXPECT_EQ(run_against_builtin(pointwise_hard_swish_graph({2, 17, 9, 24}, 72, 0), "hard swish, batch 2", threads), 2u);
  }
  // With a fused activation before it, the HARD_SWISH is not part of the pattern: the next delegate runs it.
  EXPECT_EQ(run_against_builtin(pointwise_hard_swish_graph({1, 16, 16, 16}, 16, 1), "relu then hard swish", 1), 1u);
  // The convolution's output is a model output too: the two run as two steps, both outputs written.
  OpGraph both = pointwise_hard_swish_graph({1, 16, 16, 16}, 16, 0);
  both.outputs.push_back(both.ops[0].outputs[0]);
  EXPECT_EQ(run_against_builtin(both, "convolution output read outside", 1), 2u);
}

// A RELU, RELU6 or RELU_N1_TO_1 node that alone reads a convolution without a fused activation
// (selfie_segmentation's decoder has five) joins the convolution's step: clamped while still in cache. So
// does one after a pair's 1x1 convolution (face_detection_full_range's blocks: pair, RELU, pair, ADD of
// the block's input, RELU; the ADD after such a RELU in AResidualAddJoinsThePattern).
TEST(CpuDelegate, AnActivationNodeAfterAConvolutionJoinsIt) {
  const ConvCase pointwise = {{1, 32, 32, 16}, 1, 1, 1, fb::Padding_SAME, 0, 16, true};
  const ConvCase odd = {{1, 13, 11, 19}, 1, 1, 1, fb::Padding_SAME, 0, 37, false};
  const ConvCase narrow = {{1, 64, 64, 8}, 3, 3, 1, fb::Padding_SAME, 0, 1, true};
  const PairCase pair = {{1, 17, 15, 24}, 3, 1, fb::Padding_SAME, 3, 0, 24, true};
  const PairCase strided = {{1, 19, 14, 12}, 5, 2, fb::Padding_SAME, 0, 0, 20, false};
  for (int threads : {1, 2}) {
    OpGraph p = with_activation_node(pair_graph(pair), 19, {1, 17, 15, 24});
    EXPECT_EQ(run_against_builtin(p, "pair, RELU", threads), 3u);
    EXPECT_EQ(run_against_builtin(with_activation_node(pair_graph(strided), 21, {1, 10, 7, 20}), "pair, RELU6", threads),
              3u);
    EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(pointwise), 19, {1, 32, 32, 16}), "pointwise, RELU", threads), 2u);
    EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(odd), 21, {1, 13, 11, 37}), "pointwise, RELU6", threads), 2u);
    EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(narrow), 20, {1, 64, 64, 1}), "narrow, RELU_N1_TO_1", threads),
              2u);
  }
  // After a fused activation the node is not part of the pattern: the next delegate runs it.
  ConvCase fused = pointwise;
  fused.act = 3;  // RELU6
  EXPECT_EQ(run_against_builtin(with_activation_node(conv_graph(fused), 19, {1, 32, 32, 16}), "RELU6 then RELU", 1), 1u);
  // The convolution's output is a model output too: two steps, both outputs written.
  OpGraph both = with_activation_node(conv_graph(pointwise), 19, {1, 32, 32, 16});
  both.outputs.push_back(both.ops[0].outputs[0]);
  EXPECT_EQ(run_against_builtin(both, "convolution output read outside", 1), 2u);
}

// in -> Convolution2DTransposeBias (MediaPipe's custom op, options as raw TfLiteTransposeConvParams) -> out.
OpGraph transpose_bias_graph(std::vector<int32_t> in_shape, int kernel, int stride, bool same, int out_channels) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int32_t w = random_weights(g, {out_channels, kernel, kernel, in_shape[3]}, 31);
  const int32_t b = random_weights(g, {out_channels}, 32);
  auto out = [&](int n) { return stride * (n - 1) + kernel - (same ? std::max(0, kernel - (n - 1) % stride - 1) : 0); };
  const int32_t y = g.output({in_shape[0], out(in_shape[1]), out(in_shape[2]), out_channels});
  GraphOp op;
  op.code = 32;
  op.custom = "Convolution2DTransposeBias";
  op.inputs = {in, w, b};
  op.outputs = {y};
  for (int32_t v : {same ? 1 : 2, stride, stride}) {
    for (int byte = 0; byte < 4; ++byte) op.custom_options.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * byte)));
  }
  g.ops.push_back(op);
  return g;
}

TEST(CpuDelegate, TransposedHeadsMatchTheMediapipePack) {
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(transpose_bias_graph({1, 32, 32, 16}, 2, 2, true, 1), "selfie's head", threads), 1u);
    EXPECT_EQ(run_against_builtin(transpose_bias_graph({1, 20, 23, 19}, 3, 2, true, 2), "overlapping, SAME", threads), 1u);
    EXPECT_EQ(run_against_builtin(transpose_bias_graph({2, 17, 16, 8}, 4, 2, false, 4), "VALID, batch 2", threads), 1u);
  }
}

TEST(CpuDelegate, WideOrSmallConvolutionsStayWithTheNextDelegate) {
  auto envs = make_envs(1, false);
  ASSERT_TRUE(envs);
  struct Refused {
    ConvCase c;
    const char* reason;
  };
  const Refused cases[] = {
      {{{1, 64, 64, 8}, 3, 3, 1, fb::Padding_SAME, 0, 5, true}, "more than 4 output channels"},
      {{{1, 16, 16, 8}, 3, 3, 1, fb::Padding_SAME, 0, 1, true}, "smaller than 1024 pixels"},
      {{{1, 64, 64, 8}, 9, 9, 1, fb::Padding_SAME, 0, 1, true}, "larger than 7x7"},
      {{{1, 4, 4, 64}, 1, 1, 1, fb::Padding_SAME, 0, 64, true}, "smaller than 64 output pixels"},
      {{{1, 16, 16, 8}, 1, 1, 1, fb::Padding_SAME, 0, 8, true}, "or 65536 multiply-adds"},
      {{{1, 32, 32, 8}, 1, 1, 2, fb::Padding_SAME, 0, 8, true}, "1x1 convolution with a stride"},
  };
  for (const Refused& r : cases) {
    SCOPED_TRACE(r.reason);
    auto model = load_model_buffer(conv_graph(r.c).build(), "refused.tflite");
    ASSERT_TRUE(model) << model.error();
    auto in = Interpreter::create(envs->cpu, model.value());
    ASSERT_TRUE(in) << in.error();
    EXPECT_EQ(delegated_nodes(*in.value(), "cpu"), 0u);
    ASSERT_FALSE(in.value()->refusals(0).empty());
    EXPECT_NE(in.value()->refusals(0).back().reason().find(r.reason), std::string::npos)
        << in.value()->refusals(0).back().reason();
  }
}

// MobileNetV3-style converters leave the depthwise activation as a node of its own: it joins the pair.
TEST(CpuDelegate, AnActivationNodeBetweenJoinsThePair) {
  const PairCase cases[] = {
      {{1, 17, 15, 16}, 3, 1, fb::Padding_SAME, 0, 0, 24, true, 19},  // RELU
      {{1, 13, 10, 33}, 5, 2, fb::Padding_SAME, 0, 3, 40, true, 21},  // RELU6, stride 2
      {{2, 9, 11, 19}, 3, 1, fb::Padding_VALID, 0, 0, 13, false, 20}, // RELU_N1_TO_1, batch 2
  };
  for (int threads : {1, 2}) {
    int i = 0;
    for (const PairCase& p : cases) {
      EXPECT_EQ(run_against_builtin(pair_graph(p), "activation case " + std::to_string(i), threads), 3u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  // A fused activation on the depthwise and another node after it: not a pattern the pair takes.
  const PairCase twice = {{1, 9, 9, 8}, 3, 1, fb::Padding_SAME, 1, 0, 8, true, 19};
  EXPECT_EQ(run_against_builtin(pair_graph(twice), "two activations", 1), 0u);
}

}  // namespace
}  // namespace baton::test
