// The Vulkan delegate's reductions and data movement, as vulkan_ops_test.cc does the arithmetic: MEAN over
// the last and the sequence axis (other reductions: vulkan_reduce_ops_test.cc), TRANSPOSE, BATCH_MATMUL, the resizes, STRIDED_SLICE, SOFTMAX, PAD,
// RESHAPE and CONCATENATION, DEPTH_TO_SPACE; a chain's memory reuse and fusion; float16 storage.
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

// TRANSPOSE of the outer axes (attention's head split and merge) and of the last axis too (a key transposed
// for its product, a detector's [N, C, A] head made [N, A, C]), ranks 2 to 4, channels not a multiple of 4.
TEST(VulkanOps, Transpose) {
  struct Case {
    std::vector<int32_t> in, perm;
  };
  for (const Case& c : {Case{{1, 5, 3, 6}, {0, 2, 1, 3}}, Case{{2, 3, 4, 5}, {2, 0, 1, 3}}, Case{{4, 5, 7}, {1, 0, 2}},
                        Case{{3, 9}, {0, 1}}, Case{{2, 3, 5, 6}, {0, 1, 3, 2}}, Case{{1, 85, 21}, {0, 2, 1}},
                        Case{{3, 9}, {1, 0}}, Case{{2, 3, 4, 5}, {3, 2, 0, 1}}}) {
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

// Float16 arithmetic, values derived by hand: a 1x1 CONV_2D of {2048, 1, 1} with weights {1, 1, 1}. In
// float32 the sum is 2050, which float16 holds (its step is 2 from 2048 to 4096). Added in float16, 2048 + 1
// is halfway between 2048 and 2050 and rounds to the even 2048, and so does the next + 1: 2048. The
// default on a device with shaderFloat16 (lavapipe has it) is float16 arithmetic; fp16-arithmetic = false
// keeps float32 sums with float16 storage; fp16 = false is float32 throughout.
TEST(VulkanFloat16, ConvolutionsComputeInFloat16WhereTheDeviceCan) {
  OpGraph g;
  const int32_t x = g.input({1, 1, 1, 3});
  const int32_t w = g.add({1, 1, 1, 3}, floats({1.0f, 1.0f, 1.0f}));
  const int32_t out = g.output({1, 1, 1, 1});
  g.op(BATON_OP_CONV_2D, {x, w, -1}, {out}, conv_options(fb::Padding_VALID, 1, 1, 0));
  const float in_values[3] = {2048.0f, 1.0f, 1.0f};
  for (const auto& [setting, want] : {std::pair<std::string, float>{"fp16 = true", 2048.0f},
                                      {"fp16 = true\nfp16-arithmetic = false", 2050.0f},
                                      {"fp16 = false", 2050.0f}}) {
    SCOPED_TRACE(setting);
    auto env = vulkan_env("vulkan", setting + "\n");
    ASSERT_TRUE(env);
    const GraphRun opened = open_graph(*env, g, "f16-sum");
    ASSERT_TRUE(opened.vulkan);
    Interpreter& v = *opened.vulkan;
    ASSERT_EQ(v.placement(0).kind, "delegate");
    ASSERT_TRUE(v.ensure_prepared());
    std::memcpy(v.input(0).data, in_values, sizeof in_values);
    ASSERT_TRUE(v.invoke());
    EXPECT_EQ(reinterpret_cast<const float*>(v.output(0).data)[0], want);
    EXPECT_EQ(env->validation_messages(), "");
  }
}

// A YOLOv5-style head in rank 5, as the converter writes it: the convolution's [1, 3 * 8, H, W] made
// [1, 3, 8, H, W], transposed to [1, 3, H, W, 8], LOGISTIC, the box centres and sizes sliced off the last
// axis and decoded with constant grids and anchors broadcast in rank 5, concatenated back along axis 4,
// the best score by REDUCE_MAX over axis 4, and the boxes flattened to [1, 3 * H * W, 8]. Every node on
// vulkan (the device stores [1, A, H, W, C] as its last four dims); a rank-5 tensor whose first dimension
// is not 1 is refused with the reason.
TEST(VulkanOps, RankFiveDetectorHead) {
  const int32_t h = 5, w = 7;
  auto ints_of = [](const std::vector<int32_t>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  auto slice = [&](OpGraph& g, int32_t in, int32_t from, int32_t to) {
    const int32_t out = g.add({1, 3, h, w, to - from});
    g.op(BATON_OP_STRIDED_SLICE, {in, g.add({5}, ints_of({0, 0, 0, 0, from}), 2), g.add({5}, ints_of({1, 3, h, w, to}), 2),
                                  g.add({5}, ints_of({1, 1, 1, 1, 1}), 2)},
         {out}, [](flatbuffers::FlatBufferBuilder& fbb) {
           return std::make_pair(fb::BuiltinOptions_StridedSliceOptions, fb::CreateStridedSliceOptions(fbb, 0, 0, 0, 0, 0).Union());
         });
    return out;
  };
  auto binary = [](OpGraph& g, int32_t code, int32_t a, int32_t b, std::vector<int32_t> shape) {
    const int32_t out = g.add(std::move(shape));
    g.op(code, {a, b}, {out}, code == BATON_OP_MUL ? with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0)
                                                   : with_activation(fb::BuiltinOptions_AddOptions, add_options, 0));
    return out;
  };
  OpGraph g;
  const int32_t in = g.input({1, 24, h, w});
  const int32_t split = g.add({1, 3, 8, h, w});
  g.op(BATON_OP_RESHAPE, {in, g.add({5}, ints_of({1, 3, 8, h, w}), 2)}, {split});
  const int32_t moved = g.add({1, 3, h, w, 8});
  g.op(BATON_OP_TRANSPOSE, {split, g.add({5}, ints_of({0, 1, 3, 4, 2}), 2)}, {moved});
  const int32_t act = g.add({1, 3, h, w, 8});
  g.op(BATON_OP_LOGISTIC, {moved}, {act});
  const int32_t xy = slice(g, act, 0, 2), wh = slice(g, act, 2, 4), rest = slice(g, act, 4, 8);
  const int32_t two = g.add({1}, floats({2.0f}));
  const int32_t grid = random_weights(g, {1, 1, h, w, 2}, 51);
  const int32_t anchors = random_weights(g, {1, 3, 1, 1, 2}, 52);
  const int32_t centres = binary(g, BATON_OP_ADD, binary(g, BATON_OP_MUL, xy, two, {1, 3, h, w, 2}), grid, {1, 3, h, w, 2});
  const int32_t doubled = binary(g, BATON_OP_MUL, wh, two, {1, 3, h, w, 2});
  const int32_t sizes = binary(g, BATON_OP_MUL, binary(g, BATON_OP_MUL, doubled, doubled, {1, 3, h, w, 2}), anchors, {1, 3, h, w, 2});
  const int32_t boxes = g.add({1, 3, h, w, 8});
  g.op(BATON_OP_CONCATENATION, {centres, sizes, rest}, {boxes}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ConcatenationOptions, fb::CreateConcatenationOptions(fbb, 4).Union());
  });
  const int32_t best = g.output({1, 3, h, w});
  g.op(BATON_OP_REDUCE_MAX, {boxes, g.add({1}, ints_of({4}), 2)}, {best}, [](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, false).Union());
  });
  const int32_t flat = g.output({1, 3 * h * w, 8});
  g.op(BATON_OP_RESHAPE, {boxes, g.add({3}, ints_of({1, 3 * h * w, 8}), 2)}, {flat});
  expect_same_as_builtin(g, "a rank-5 detector head", -3.0f, 3.0f);

  OpGraph wide;  // rank 5 with a first dimension of 2: the device has no place for it
  const int32_t x = wide.input({2, 2, 2, 2, 3});
  wide.op(BATON_OP_LOGISTIC, {x}, {wide.output({2, 2, 2, 2, 3})});
  const auto& env = shared_vulkan_env(false);
  ASSERT_TRUE(env);
  const GraphRun opened = open_graph(*env, wide, "wide rank 5");
  ASSERT_TRUE(opened.vulkan);
  ASSERT_FALSE(opened.vulkan->refusals(0).empty());
  EXPECT_EQ(opened.vulkan->refusals(0).back().reason(), "output of shape [2,2,2,2,3] (rank 5 only with a first dimension of 1)");
}

}  // namespace
}  // namespace baton::test
