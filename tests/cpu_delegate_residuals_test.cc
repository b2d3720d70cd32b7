// The cpu delegate's fused blocks through the runtime, against the builtin pack alone on the same random
// inputs: residual ADDs after a pair, a convolution or a depthwise convolution; BlazeNet's shortcuts (pool
// and PAD) joining the ADD; expansions joining the pair after them; and a partition's steps computing in
// its idle input and output.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "cpu_delegate_support.h"
#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {
namespace {

namespace fb = baton::tflite;

// The last op of `g` (its output a model output) gets a residual ADD of its output and `residual`
// (with `add_act` fused), and after it, when `relu_after` is a builtin code, that activation node.
OpGraph with_residual(OpGraph g, int32_t residual, int add_act, int32_t relu_after = -1) {
  const int32_t t = g.ops.back().outputs[0];
  const std::vector<int32_t> shape = g.tensors[static_cast<size_t>(t)].shape;
  g.outputs.clear();
  const int32_t sum = relu_after >= 0 ? g.add(shape) : g.output(shape);
  g.ops.push_back({BATON_OP_ADD, {t, residual}, {sum}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(add_act)).Union());
                   }});
  if (relu_after >= 0) g.ops.push_back({relu_after, {sum}, {g.output(shape)}, nullptr});
  return g;
}

// MobileNetV2's inverted residuals: the ADD after the 1x1 convolution runs in the same step, each block of
// output rows while it is still in cache.
TEST(CpuDelegate, AResidualAddJoinsThePattern) {
  const PairCase pair = {{1, 17, 15, 24}, 3, 1, fb::Padding_SAME, 3, 0, 24, true};
  const ConvCase pointwise = {{1, 20, 19, 16}, 1, 1, 1, fb::Padding_SAME, 0, 16, true};
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    OpGraph p = pair_graph(pair);
    EXPECT_EQ(run_against_builtin(with_residual(p, p.inputs[0], 0), "pair + ADD", threads), 3u);
    EXPECT_EQ(run_against_builtin(with_residual(p, p.inputs[0], 3), "pair + ADD with RELU6", threads), 3u);
    EXPECT_EQ(run_against_builtin(with_residual(p, p.inputs[0], 0, 19), "pair + ADD, then RELU", threads), 4u);
    OpGraph relu = with_activation_node(pair_graph(pair), 19, pair.in);
    EXPECT_EQ(run_against_builtin(with_residual(relu, relu.inputs[0], 0, 19), "pair, RELU, ADD, RELU", threads), 5u);
    OpGraph c = conv_graph(pointwise);
    EXPECT_EQ(run_against_builtin(with_residual(c, c.inputs[0], 1), "1x1 + ADD with RELU", threads), 2u);
    // The ADD's operands the other way round, batch 2.
    OpGraph b = conv_graph({{2, 9, 10, 40}, 1, 1, 1, fb::Padding_SAME, 0, 40, false});
    OpGraph swapped = with_residual(b, b.inputs[0], 0);
    std::swap(swapped.ops.back().inputs[0], swapped.ops.back().inputs[1]);
    EXPECT_EQ(run_against_builtin(swapped, "input + 1x1", threads), 2u);
  }
  // The residual made by the cpu delegate's own step before the pattern (a 1x1 convolution feeding both):
  // in -> 1x1 A -> x; x -> DW -> 1x1 -> y; ADD(y, x).
  OpGraph chain = conv_graph(pointwise);
  const int32_t x = chain.ops.back().outputs[0];
  chain.outputs.clear();
  chain.outputs.push_back(append_graph(chain, pair_graph({{1, 20, 19, 16}, 3, 1, fb::Padding_SAME, 0, 0, 16, true}), x));
  EXPECT_EQ(run_against_builtin(with_residual(chain, x, 0), "residual from an earlier step", 2), 4u);
  // The pair's output is a model output too: the ADD and the RELU after it run as steps of their own.
  OpGraph p = pair_graph(pair);
  const int32_t pair_out = p.ops.back().outputs[0];
  OpGraph split = with_residual(p, p.inputs[0], 0, 19);
  split.outputs.push_back(pair_out);
  EXPECT_EQ(run_against_builtin(split, "pair output read outside", 2), 4u);
  // A broadcasting ADD (a per-channel constant) is not a residual: the pattern ends at the convolution.
  OpGraph c = conv_graph(pointwise);
  const int32_t bias = random_weights(c, {16}, 51);
  EXPECT_EQ(run_against_builtin(with_residual(c, bias, 0), "broadcasting ADD", 1), 1u);
}

enum : int32_t { kMaxPool2d = 17, kPad = 34, kRelu = 19, kTanh = 28 };

// Appends to `g` a 2x2 MAX_POOL_2D of stride 2 over `x` (padding `padding`); returns its output.
int32_t add_max_pool(OpGraph& g, int32_t x, fb::Padding padding, int size = 2) {
  std::vector<int32_t> shape = g.tensors[static_cast<size_t>(x)].shape;
  for (int i : {1, 2}) shape[i] = padding == fb::Padding_SAME ? (shape[i] + 1) / 2 : (shape[i] - size) / 2 + 1;
  const int32_t y = g.add(shape);
  g.ops.push_back({kMaxPool2d, {x}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Pool2DOptions,
                                           fb::CreatePool2DOptions(fbb, padding, 2, 2, size, size).Union());
                   }});
  return y;
}

// Appends a PAD of `x`'s channels, `before` zeros ahead of them and `after` behind; returns its output.
int32_t add_channel_pad(OpGraph& g, int32_t x, int before, int after) {
  std::vector<int32_t> shape = g.tensors[static_cast<size_t>(x)].shape;
  shape[3] += before + after;
  const int32_t paddings_values[8] = {0, 0, 0, 0, 0, 0, before, after};
  std::vector<uint8_t> bytes(sizeof paddings_values);
  std::memcpy(bytes.data(), paddings_values, bytes.size());
  const int32_t paddings = g.add({4, 2}, bytes, 2);  // INT32
  const int32_t y = g.add(shape);
  g.ops.push_back({kPad, {x, paddings}, {y}, nullptr});
  return y;
}

// ADD(a, b) -> RELU -> a model output (the only one).
void add_then_relu(OpGraph& g, int32_t a, int32_t b) {
  const std::vector<int32_t> shape = g.tensors[static_cast<size_t>(a)].shape;
  g.outputs.clear();
  const int32_t sum = g.add(shape);
  g.ops.push_back({BATON_OP_ADD, {a, b}, {sum}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_AddOptions, add_options(fbb, act(0)).Union());
                   }});
  g.ops.push_back({kRelu, {sum}, {g.output(shape)}, nullptr});
}

// BlazeNet's blocks: x -> depthwise (stride 1 or 2) -> 1x1 convolution -> ADD of the shortcut of x (a 2x2
// MAX_POOL_2D beside a stride-2 block, then a PAD of the channels the block adds) -> RELU.
OpGraph shortcut_block(const PairCase& p, fb::Padding pool_padding, bool pad_first = false) {
  OpGraph g = pair_graph(p);
  const int32_t x = g.inputs[0], y = g.ops.back().outputs[0];
  const int extra = p.out_channels - p.in[3];
  int32_t r = x;
  if (pad_first && extra > 0) r = add_channel_pad(g, r, 0, extra);
  if (p.stride == 2) r = add_max_pool(g, r, pool_padding);
  if (!pad_first && extra > 0) r = add_channel_pad(g, r, 0, extra);
  add_then_relu(g, y, r);
  return g;
}

// The shortcut is computed from the block's input while each block of output rows is in cache: the
// MAX_POOL_2D and PAD nodes join the pair with the ADD and the RELU, and their tensors never exist.
TEST(CpuDelegate, AShortcutOfPoolAndPadJoinsTheResidualAdd) {
  struct Case {
    PairCase pair;
    fb::Padding pool_padding;
    bool pad_first;
    size_t nodes;
    const char* what;
  };
  const Case cases[] = {
      {{{1, 12, 10, 16}, 3, 2, fb::Padding_SAME, 0, 0, 16, true}, fb::Padding_VALID, false, 5, "pool (hand_landmark's)"},
      {{{1, 13, 11, 24}, 3, 2, fb::Padding_SAME, 0, 0, 40, true}, fb::Padding_SAME, false, 6,
       "pool of odd sides (SAME), then PAD (face_detection's)"},
      {{{1, 9, 9, 8}, 3, 2, fb::Padding_VALID, 3, 0, 8, false}, fb::Padding_VALID, false, 5, "VALID pool of odd sides"},
      {{{1, 10, 9, 19}, 5, 1, fb::Padding_SAME, 0, 0, 35, true}, fb::Padding_SAME, false, 5, "PAD alone, stride 1"},
      {{{2, 8, 8, 16}, 5, 2, fb::Padding_SAME, 0, 0, 32, true}, fb::Padding_SAME, false, 6, "batch 2"},
      {{{1, 8, 6, 8}, 3, 2, fb::Padding_SAME, 0, 0, 21, true}, fb::Padding_SAME, true, 6, "PAD, then pool"},
      {{{1, 64, 40, 32}, 3, 2, fb::Padding_SAME, 0, 0, 48, true}, fb::Padding_VALID, false, 6, "many row blocks"},
  };
  for (int threads : {1, 2, 3}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      EXPECT_EQ(run_against_builtin(shortcut_block(c.pair, c.pool_padding, c.pad_first), c.what, threads), c.nodes);
    }
  }
  // The pair's output a model output too: the ADD (with its shortcut) and the RELU run as steps of their own.
  OpGraph split = shortcut_block({{1, 13, 11, 24}, 3, 2, fb::Padding_SAME, 0, 0, 40, true}, fb::Padding_SAME);
  split.outputs.push_back(split.ops[1].outputs[0]);
  EXPECT_EQ(run_against_builtin(split, "pair output read outside", 2), 6u);
  // Not shortcuts: a 3x3 pool, and a PAD ahead of the channels. They run on the op packs, before the
  // partition; the ADD takes their output as a residual of its own.
  OpGraph wide = pair_graph({{1, 12, 12, 16}, 3, 2, fb::Padding_SAME, 0, 0, 16, true});
  const int32_t wide_y = wide.ops.back().outputs[0];
  add_then_relu(wide, wide_y, add_max_pool(wide, wide.inputs[0], fb::Padding_SAME, 3));
  EXPECT_EQ(run_against_builtin(wide, "3x3 pool", 2), 4u);
  OpGraph ahead = pair_graph({{1, 8, 8, 8}, 3, 1, fb::Padding_SAME, 0, 0, 16, true});
  const int32_t ahead_y = ahead.ops.back().outputs[0];
  add_then_relu(ahead, ahead_y, add_channel_pad(ahead, ahead.inputs[0], 8, 0));
  EXPECT_EQ(run_against_builtin(ahead, "PAD ahead of the channels", 2), 4u);
}

// The tensors between a partition's steps lie in its idle host tensors (ABI 1.8): x -> TANH (op pack) -> a ->
// pair -> b -> pair -> d -> pair -> c. b lies in the output c until c is written, d in the input a once
// the first pair has read it; the arena holds x, a and c and the pairs' small working memory, where it
// held b and d beside them before.
TEST(CpuDelegate, APartitionComputesInItsIdleInputAndOutput) {
  const std::vector<int32_t> shape = {1, 40, 40, 16};
  const size_t tensor_bytes = 40 * 40 * 16 * sizeof(float);
  OpGraph g;
  const int32_t x = g.input(shape);
  int32_t t = g.add(shape);
  g.ops.push_back({kTanh, {x}, {t}, nullptr});
  for (int round = 0; round < 3; ++round) t = append_graph(g, pair_graph({shape, 3, 1, fb::Padding_SAME, 0, 0, 16, true}), t);
  g.outputs = {t};
  for (int threads : {1, 2}) {
    size_t arena = 0;
    EXPECT_EQ(run_against_builtin(g, "three pairs after an op pack's node", threads, {}, &arena), 6u);
    EXPECT_LT(arena, 4 * tensor_bytes) << threads << " threads";  // x, a, c and working memory
  }
}

// A shortcut whose source and ADD the host puts in two partitions (a node of another plugin between
// them: x -> pair -> a -> TANH -> pair -> ADD of pool(a)): the shortcut's nodes run as a step of their own.
TEST(CpuDelegate, AShortcutInAnotherPartitionThanItsAddRunsOnItsOwn) {
  OpGraph g = pair_graph({{1, 14, 12, 16}, 3, 1, fb::Padding_SAME, 0, 0, 16, true});
  const int32_t a = g.ops.back().outputs[0];
  g.outputs.clear();
  const int32_t b = g.add(g.tensors[static_cast<size_t>(a)].shape);
  g.ops.push_back({kTanh, {a}, {b}, nullptr});
  const int32_t y = append_graph(g, pair_graph({{1, 14, 12, 16}, 3, 2, fb::Padding_SAME, 0, 0, 24, true}), b);
  add_then_relu(g, y, add_channel_pad(g, add_max_pool(g, a, fb::Padding_SAME), 0, 8));
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(g, "pool and PAD in the first partition, ADD in the second", threads), 8u);
  }
}

// in -> DEPTHWISE_CONV_2D (no 1x1 convolution after it; fused activation `dw_act`) -> out.
OpGraph depthwise_graph(const std::vector<int32_t>& in_shape, int kernel, int stride, fb::Padding padding, int dw_act) {
  OpGraph g;
  const int32_t in = g.input(in_shape);
  const int c = in_shape[3];
  const int32_t f = random_weights(g, {1, kernel, kernel, c}, 71);
  const int32_t b = random_weights(g, {c}, 72);
  auto out = [&](int n) { return padding == fb::Padding_SAME ? (n + stride - 1) / stride : (n - kernel) / stride + 1; };
  const int32_t y = g.output({in_shape[0], out(in_shape[1]), out(in_shape[2]), c});
  g.ops.push_back({BATON_OP_DEPTHWISE_CONV_2D, {in, f, b}, {y}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_DepthwiseConv2DOptions,
                                           fb::CreateDepthwiseConv2DOptions(fbb, padding, stride, stride, 1, act(dw_act)).Union());
                   }});
  return g;
}

// A depthwise convolution no 1x1 convolution reads joins the cpu delegate with the residual ADD after it
// (and its activation node, and the RELU after the ADD: selfie_segmentation's decoder), each block of rows
// clamped and added while in cache; without such an ADD it stays with the next delegate.
TEST(CpuDelegate, ADepthwiseWithAResidualAddRunsAsOneStep) {
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    OpGraph a = with_activation_node(depthwise_graph({1, 32, 32, 16}, 3, 1, fb::Padding_SAME, 0), 19, {1, 32, 32, 16});
    EXPECT_EQ(run_against_builtin(with_residual(a, a.inputs[0], 0), "depthwise, RELU, ADD", threads), 3u);
    OpGraph b = depthwise_graph({1, 17, 13, 19}, 5, 1, fb::Padding_SAME, 3);
    EXPECT_EQ(run_against_builtin(with_residual(b, b.inputs[0], 1), "5x5 depthwise RELU6, ADD with RELU", threads), 2u);
    OpGraph c = with_activation_node(depthwise_graph({2, 15, 16, 8}, 3, 2, fb::Padding_SAME, 0), 21, {2, 8, 8, 8});
    const int32_t other = c.input({2, 8, 8, 8});
    EXPECT_EQ(run_against_builtin(with_residual(c, other, 0, 19), "stride 2, RELU6, ADD, RELU; batch 2", threads), 4u);
  }
  OpGraph alone = with_activation_node(depthwise_graph({1, 32, 32, 16}, 3, 1, fb::Padding_SAME, 0), 19, {1, 32, 32, 16});
  EXPECT_EQ(run_against_builtin(alone, "depthwise and RELU without an ADD", 1), 0u);
  // A 1x1 convolution the depthwise alone reads (an expansion, had a 1x1 convolution followed): a step of
  // its own before it.
  OpGraph d = depthwise_graph({1, 24, 20, 16}, 3, 1, fb::Padding_SAME, 0);
  OpGraph e;
  const int32_t x = e.input({1, 24, 20, 12});
  const int32_t f = random_weights(e, {16, 1, 1, 12}, 81);
  const int32_t offset = static_cast<int32_t>(e.tensors.size());
  for (const TinyTensor& t : d.tensors) e.tensors.push_back(t);
  e.ops.push_back({BATON_OP_CONV_2D, {x, f, -1}, {d.inputs[0] + offset}, [](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(0)).Union());
                   }});
  for (GraphOp op : d.ops) {
    for (int32_t& i : op.inputs) i = i < 0 ? i : i + offset;
    for (int32_t& o : op.outputs) o += offset;
    e.ops.push_back(op);
  }
  e.outputs.push_back(d.outputs[0] + offset);
  const int32_t other = e.input({1, 24, 20, 16});
  for (int threads : {1, 2}) {
    EXPECT_EQ(run_against_builtin(with_residual(e, other, 0), "1x1, depthwise, ADD", threads), 3u);
  }
}

// in -> CONV_2D 1x1 (in[3] -> p.in[3] channels, activation `expand_act`) -> the pair of `p` -> out.
OpGraph expanded_pair_graph(const PairCase& p, int in_channels, int expand_act) {
  OpGraph pair = pair_graph(p);
  OpGraph g;
  const int32_t in = g.input({p.in[0], p.in[1], p.in[2], in_channels});
  const int32_t f = random_weights(g, {p.in[3], 1, 1, in_channels}, 61);
  const int32_t b = random_weights(g, {p.in[3]}, 62);
  const int32_t offset = static_cast<int32_t>(g.tensors.size());
  for (const TinyTensor& t : pair.tensors) g.tensors.push_back(t);
  const int32_t expanded = pair.inputs[0] + offset;
  g.ops.push_back({BATON_OP_CONV_2D, {in, f, b}, {expanded}, [=](flatbuffers::FlatBufferBuilder& fbb) {
                     return std::make_pair(fb::BuiltinOptions_Conv2DOptions,
                                           fb::CreateConv2DOptions(fbb, fb::Padding_SAME, 1, 1, act(expand_act)).Union());
                   }});
  for (GraphOp op : pair.ops) {
    for (int32_t& i : op.inputs) i = i < 0 ? i : i + offset;
    for (int32_t& o : op.outputs) o += offset;
    g.ops.push_back(op);
  }
  for (int32_t o : pair.outputs) g.outputs.push_back(o + offset);
  return g;
}

// MobileNetV2's inverted residual: expansion, depthwise and projection as one step, the expanded rows made
// block by block. Batches, both windows and strides, VALID, channels no multiple of a vector, blocks over
// many rows (rows shared by neighbouring blocks moved, not recomputed), one to three threads (with two or
// three, images of too few row blocks to share evenly run in whole-image phases: most cases here).
TEST(CpuDelegate, AnExpansionJoinsThePairAfterIt) {
  struct Case {
    PairCase pair;
    int in_channels, expand_act;
  };
  const Case cases[] = {
      {{{1, 17, 15, 48}, 3, 1, fb::Padding_SAME, 3, 0, 16, true}, 16, 3},   // RELU6, stride 1
      {{{1, 33, 29, 40}, 3, 2, fb::Padding_SAME, 3, 0, 24, true}, 24, 3},   // stride 2, odd rows
      {{{2, 20, 21, 72}, 5, 1, fb::Padding_SAME, 1, 0, 12, false}, 12, 1},  // 5x5, batch 2, RELU
      {{{1, 23, 19, 37}, 5, 2, fb::Padding_SAME, 0, 2, 9, true}, 7, 0},     // 5x5 stride 2, no activation
      {{{1, 26, 23, 24}, 3, 2, fb::Padding_VALID, 3, 0, 8, true}, 8, 2},    // VALID
      {{{1, 120, 64, 32}, 3, 1, fb::Padding_SAME, 3, 0, 16, true}, 16, 3},  // many blocks
  };
  for (int threads : {1, 2, 3}) {
    int i = 0;
    for (const Case& c : cases) {
      EXPECT_EQ(run_against_builtin(expanded_pair_graph(c.pair, c.in_channels, c.expand_act),
                                    "expanded pair " + std::to_string(i), threads),
                3u)
          << "case " << i << ", " << threads << " threads";
      ++i;
    }
  }
  // With the residual ADD of the block's input, as MobileNetV2 has it; and after a resize.
  const Case r = {{{1, 21, 18, 64}, 3, 1, fb::Padding_SAME, 3, 0, 16, true}, 16, 3};
  OpGraph g = expanded_pair_graph(r.pair, r.in_channels, r.expand_act);
  EXPECT_EQ(run_against_builtin(with_residual(g, g.inputs[0], 0), "expanded pair + ADD", 2), 4u);
  EXPECT_EQ(run_against_builtin(expanded_pair_graph(cases[1].pair, 24, 3), "expanded pair resized", 2, {1, 45, 17, 24}),
            3u);

  // The expanded tensor (96 x 96 x 48 floats, 1.77 MB) never exists: the arena holds the input, the output
  // and the step's working rows, less than it alone.
  const Case big = {{{1, 96, 96, 48}, 3, 2, fb::Padding_SAME, 3, 0, 16, true}, 8, 3};
  size_t arena = 0;
  EXPECT_EQ(run_against_builtin(expanded_pair_graph(big.pair, big.in_channels, big.expand_act), "large expansion", 1,
                                {}, &arena),
            3u);
  EXPECT_GT(arena, 0u);
  EXPECT_LT(arena, size_t{96} * 96 * 48 * sizeof(float));
  // The expansion's output read by a model output too: the convolution runs as a step of its own.
  OpGraph both = expanded_pair_graph(cases[0].pair, 16, 3);
  both.outputs.push_back(both.ops[0].outputs[0]);
  EXPECT_EQ(run_against_builtin(both, "expansion read outside", 2), 3u);
}

}  // namespace
}  // namespace baton::test
