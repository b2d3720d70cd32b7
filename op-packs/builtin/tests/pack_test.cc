// The pack through its C ABI, loaded with dlopen into a fake host: the descriptor, output shapes set in
// prepare, results of small graphs, and the error messages a user sees.
#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <limits>
#include <set>

#include "baton/tflite_ops.h"
#include "kernels/quantize.h"
#include "kernels/unary.h"
#include "tests/fake_host.h"

namespace baton::builtin::testing {
namespace {

class PackTest : public ::testing::Test {
 protected:
  FakeHost host{BATON_BUILTIN_PACK_PATH};
  void SetUp() override { ASSERT_NE(host.desc(), nullptr) << host.load_error(); }
};

TEST_F(PackTest, DescribesItself) {
  const baton_plugin_desc* d = host.desc();
  EXPECT_STREQ(d->name, "builtin");
  EXPECT_EQ(d->kind, BATON_PLUGIN_OP_PACK);
  EXPECT_EQ(d->abi_major, static_cast<uint32_t>(BATON_ABI_VERSION_MAJOR));
  std::set<int32_t> codes;
  for (size_t i = 0; i < d->op_count; ++i) {
    EXPECT_TRUE(codes.insert(d->ops[i].builtin_code).second) << "duplicate op " << d->ops[i].builtin_code;
    EXPECT_LE(d->ops[i].min_version, d->ops[i].max_version);
  }
  for (int32_t code : {BATON_OP_CONV_2D, BATON_OP_DEPTHWISE_CONV_2D, BATON_OP_ADD, BATON_OP_FULLY_CONNECTED, BATON_OP_RESIZE_BILINEAR,
                       BATON_OP_STRIDED_SLICE, BATON_OP_DEQUANTIZE}) {
    EXPECT_TRUE(codes.count(code)) << code;
  }
  EXPECT_FALSE(codes.count(BATON_OP_DENSIFY));
  ASSERT_EQ(d->option_count, 1u);
  EXPECT_STREQ(d->options[0].name, "threads");
}

TEST_F(PackTest, ConvWithDequantizedFilterAndFusedRelu) {
  // DEQUANTIZE (f16 constant -> f32) feeds CONV_2D's filter, so the filter is not constant and the
  // conv packs it at invoke. 1x1 conv, 2 input channels -> 1 output: out = relu(x0 - x1 + bias).
  FakeGraph g;
  const std::vector<uint16_t> half_filter = {0x3C00, 0xBC00};  // {1, -1}
  const int f16 = g.constant(BATON_TYPE_FLOAT16, {1, 1, 1, 2}, half_filter);
  const int filter = g.output();
  g.add_node(BATON_OP_DEQUANTIZE, {f16}, {filter}, 2);
  const int input = g.floats({1, 1, 2, 2}, {5, 2, 1, 4});
  const int bias = g.floats({1}, {0.5f}, true);
  const int out = g.output();
  FakeNode& conv = g.add_node(BATON_OP_CONV_2D, {input, filter, bias}, {out});
  conv.options.kind = 1;
  conv.options.u.conv = {BATON_PADDING_VALID, 1, 1, 1, 1, 1, BATON_ACT_RELU};
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.tensors[out].dims, (std::vector<int32_t>{1, 1, 2, 1}));
  EXPECT_EQ(g.values<float>(out), (std::vector<float>{3.5f, 0.0f}));  // 5-2+.5, max(0, 1-4+.5)
}

TEST_F(PackTest, RefusesInt16WithNodeAndOpInMessage) {
  FakeGraph g;
  const std::vector<int16_t> q(16, 1);
  const int input = g.add_tensor(BATON_TYPE_INT16, {1, 4, 4, 1}, q.data());
  const int filter = g.floats({1, 1, 1, 1}, {1}, true);
  const int out = g.output(BATON_TYPE_INT16);
  const int dummy = g.output();
  // Node 0 is a RELU so the CONV is node 1.
  g.add_node(BATON_OP_RELU, {filter}, {dummy});
  FakeNode& conv = g.add_node(BATON_OP_CONV_2D, {input, filter, -1}, {out});
  conv.options.u.conv = {BATON_PADDING_SAME, 1, 1, 1, 1, 1, 0};
  std::string error;
  EXPECT_EQ(host.run(g, &error), BATON_UNSUPPORTED);
  // int16 activations take int8 weights (16x8), not float ones.
  EXPECT_EQ(error, "node 1 CONV_2D: filter type FLOAT32 not supported by the builtin pack (INT8)");
}

// A kernel that writes floats (or moves elements as they are) refuses an output of another type: the
// interpreter fuzzer found float ABS, HARD_SWISH, MEAN, PRELU and L2_POOL_2D writing 4-byte floats into
// an INT8 or INT16 output's buffer.
TEST_F(PackTest, RefusesAnOutputOfAnotherTypeThanItsKernelWrites) {
  struct Case {
    const char* what;
    std::function<void(FakeGraph&, int input, int out)> build;
  };
  const Case cases[] = {
      {"ABS", [](FakeGraph& g, int in, int out) { g.add_node(BATON_OP_ABS, {in}, {out}); }},
      {"HARD_SWISH", [](FakeGraph& g, int in, int out) { g.add_node(BATON_OP_HARD_SWISH, {in}, {out}); }},
      {"GELU", [](FakeGraph& g, int in, int out) { g.add_node(BATON_OP_GELU, {in}, {out}); }},
      {"LEAKY_RELU", [](FakeGraph& g, int in, int out) { g.add_node(BATON_OP_LEAKY_RELU, {in}, {out}); }},
      {"MEAN", [](FakeGraph& g, int in, int out) {
         const int axes = g.constant<int32_t>(BATON_TYPE_INT32, {1}, {1});
         g.add_node(BATON_OP_MEAN, {in, axes}, {out});
       }},
      {"PRELU", [](FakeGraph& g, int in, int out) {
         g.add_node(BATON_OP_PRELU, {in, g.floats({1}, {0.5f}, true)}, {out});
       }},
      {"L2_POOL_2D", [](FakeGraph& g, int in, int out) {
         g.add_node(BATON_OP_L2_POOL_2D, {in}, {out}).options.u.pool = {BATON_PADDING_VALID, 1, 1, 1, 1, 0};
       }},
      {"TRANSPOSE", [](FakeGraph& g, int in, int out) {
         g.add_node(BATON_OP_TRANSPOSE, {in, g.constant<int32_t>(BATON_TYPE_INT32, {4}, {0, 2, 1, 3})}, {out});
       }},
      {"GATHER", [](FakeGraph& g, int in, int out) {
         g.add_node(BATON_OP_GATHER, {in, g.constant<int32_t>(BATON_TYPE_INT32, {1}, {0})}, {out});
       }},
  };
  for (const Case& c : cases) {
    for (baton_tensor_type t : {BATON_TYPE_INT8, BATON_TYPE_INT16}) {
      FakeGraph g;
      const int in = g.floats({1, 2, 2, 1}, {1, -2, 3, -4});
      const int out = g.output(t);
      c.build(g, in, out);
      std::string error;
      EXPECT_NE(host.run(g, &error), BATON_OK) << c.what;
      EXPECT_NE(error.find(std::string("output type ") + baton_tensor_type_name(t)), std::string::npos) << c.what << ": " << error;
    }
  }
}

// MIRROR_PAD [3] by (2, 1) with the given mode, on a host of the given ABI minor.
baton_status run_mirror_pad(FakeHost& host, int32_t mode, std::vector<float>* result, std::string* error) {
  FakeGraph g;
  const int input = g.floats({3}, {1, 2, 3});
  const int paddings = g.constant<int32_t>(BATON_TYPE_INT32, {1, 2}, {2, 1});
  const int out = g.output();
  FakeNode& pad = g.add_node(BATON_OP_MIRROR_PAD, {input, paddings}, {out});
  pad.options.kind = 1;  // any non-zero kind: the options are set
  pad.options.u.mirror_pad.mode = mode;
  const baton_status status = host.run(g, error);
  *result = g.values<float>(out);
  return status;
}

TEST_F(PackTest, MirrorPadModes) {
  std::vector<float> y;
  std::string error;
  ASSERT_EQ(run_mirror_pad(host, BATON_MIRROR_PAD_REFLECT, &y, &error), BATON_OK) << error;
  EXPECT_EQ(y, (std::vector<float>{3, 2, 1, 2, 3, 2}));
  ASSERT_EQ(run_mirror_pad(host, BATON_MIRROR_PAD_SYMMETRIC, &y, &error), BATON_OK) << error;
  EXPECT_EQ(y, (std::vector<float>{2, 1, 1, 2, 3, 3}));
  EXPECT_EQ(run_mirror_pad(host, 7, &y, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 MIRROR_PAD: unknown mode 7 (REFLECT or SYMMETRIC)");
}

// A host older than ABI 1.2 leaves the MIRROR_PAD, CUMSUM, ONE_HOT and GELU options zero: the pack
// refuses those nodes instead of running them with zeros.
TEST(PackAbi, OptionsOfAbi12NeedAnAbi12Host) {
  FakeHost old_host{BATON_BUILTIN_PACK_PATH, 1, 1};
  ASSERT_NE(old_host.desc(), nullptr) << old_host.load_error();
  std::vector<float> y;
  std::string error;
  EXPECT_EQ(run_mirror_pad(old_host, BATON_MIRROR_PAD_SYMMETRIC, &y, &error), BATON_UNSUPPORTED);
  EXPECT_EQ(error, "node 0 MIRROR_PAD: the host (plugin ABI 1.1) does not pass MIRROR_PAD's mode; ABI 1.2 does");
}

// STABLEHLO_GATHER rows of a 3x4 operand (0..11) at start indices {2, -1}, one per index:
// index_vector_dim is the indices' rank, the spec's implicit one-entry vector (LiteRT 2.5 aborts on it,
// so the values are derived here). Row 2 is 8..11; -1 clamps to row 0.
struct GatherGraph {
  FakeGraph g;
  const int64_t offset_dims[1] = {1}, collapsed[1] = {0}, start_map[1] = {0};
  int64_t slice_sizes[2] = {1, 4};
  int out = 0;
  GatherGraph() {
    const int operand = g.floats({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
    const int indices = g.constant<int32_t>(BATON_TYPE_INT32, {2}, {2, -1});
    out = g.output();
    FakeNode& node = g.add_node(BATON_OP_STABLEHLO_GATHER, {operand, indices}, {out});
    node.options.kind = BATON_OPTIONS_2_KIND + 16;
    auto& o = node.options.u.stablehlo_gather;
    o.offset_dims_count = o.collapsed_slice_dims_count = o.start_index_map_count = 1;
    o.slice_sizes_count = 2;
    o.offset_dims = offset_dims;
    o.collapsed_slice_dims = collapsed;
    o.start_index_map = start_map;
    o.slice_sizes = slice_sizes;
    o.index_vector_dim = 1;
  }
};

TEST_F(PackTest, StablehloGatherWithTheImplicitIndexVectorByHand) {
  GatherGraph gg;
  std::string error;
  ASSERT_EQ(host.run(gg.g, &error), BATON_OK) << error;
  EXPECT_EQ(gg.g.tensors[gg.out].dims, (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(gg.g.values<float>(gg.out), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3}));
}

TEST_F(PackTest, StablehloGatherRefusesACollapsedDimensionWiderThanOne) {
  GatherGraph gg;
  gg.slice_sizes[0] = 2;
  std::string error;
  EXPECT_EQ(host.run(gg.g, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 STABLEHLO_GATHER: collapsed dimension 0 has slice size 2, not 1");
}

// STABLEHLO_SCATTER adding rows {10, 20} at start indices {2, -1, 2} into a 3x2 operand of zeros: row 2
// gets both of its updates, the update at -1 lies outside the operand and is skipped.
TEST_F(PackTest, StablehloScatterCombinesRepeatsAndSkipsOutsideUpdatesByHand) {
  FakeGraph g;
  const int operand = g.floats({3, 2}, {0, 0, 0, 0, 0, 0});
  const int indices = g.constant<int32_t>(BATON_TYPE_INT32, {3, 1}, {2, -1, 2});
  const int updates = g.floats({3, 2}, {10, 20, 1, 2, 100, 200});
  const int out = g.output();
  FakeNode& node = g.add_node(BATON_OP_STABLEHLO_SCATTER, {operand, indices, updates}, {out});
  node.options.kind = BATON_OPTIONS_2_KIND + 7;
  const int64_t window[1] = {1}, inserted[1] = {0}, to_operand[1] = {0};
  auto& o = node.options.u.stablehlo_scatter;
  o.update_window_dims_count = o.inserted_window_dims_count = o.scatter_dims_to_operand_dims_count = 1;
  o.update_window_dims = window;
  o.inserted_window_dims = inserted;
  o.scatter_dims_to_operand_dims = to_operand;
  o.index_vector_dim = 1;
  o.body = BATON_WINDOW_REDUCTION_ADD;
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<float>(out), (std::vector<float>{0, 0, 0, 0, 110, 220}));
  // A body LiteRT does not run (a logical and) is refused, naming its subgraph.
  o.body = BATON_WINDOW_REDUCTION_ALL;
  o.update_computation_subgraph_index = 3;
  EXPECT_EQ(host.run(g, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 STABLEHLO_SCATTER: its update computation (subgraph 3) is neither empty (the update "
                   "replaces) nor one STABLEHLO_ADD, MULTIPLY, MAXIMUM or MINIMUM, the computations LiteRT runs");
}

TEST(PackAbi, StablehloGatherNeedsAnAbi112Host) {
  FakeHost old_host{BATON_BUILTIN_PACK_PATH, 1, 11};
  ASSERT_NE(old_host.desc(), nullptr) << old_host.load_error();
  GatherGraph gg;
  std::string error;
  EXPECT_EQ(old_host.run(gg.g, &error), BATON_UNSUPPORTED);
  EXPECT_EQ(error, "node 0 STABLEHLO_GATHER: the host (plugin ABI 1.11) does not pass STABLEHLO_GATHER's options; ABI 1.12 does");
}

TEST_F(PackTest, MirrorPadRefusesPaddingBeyondTheMirror) {
  FakeGraph g;
  const int input = g.floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const int paddings = g.constant<int32_t>(BATON_TYPE_INT32, {2, 2}, {0, 0, 3, 0});
  FakeNode& pad = g.add_node(BATON_OP_MIRROR_PAD, {input, paddings}, {g.output()});
  pad.options.u.mirror_pad.mode = BATON_MIRROR_PAD_REFLECT;
  std::string error;
  EXPECT_EQ(host.run(g, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 MIRROR_PAD: paddings 3, 0 of dimension 1 (size 3) out of range: REFLECT pads at most 2 a side");
}

TEST_F(PackTest, OneHotRefusesAnAxisPastTheOutputRank) {
  FakeGraph g;
  const int indices = g.constant<int32_t>(BATON_TYPE_INT32, {2}, {0, 1});
  const int depth = g.constant<int32_t>(BATON_TYPE_INT32, {}, {3});
  const int on = g.floats({}, {1}, true), off = g.floats({}, {0}, true);
  FakeNode& node = g.add_node(BATON_OP_ONE_HOT, {indices, depth, on, off}, {g.output()});
  node.options.u.one_hot.axis = 2;
  std::string error;
  EXPECT_EQ(host.run(g, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 ONE_HOT: axis 2 out of range for an output of rank 2 (-1 to 1)");
}

TEST_F(PackTest, SegmentSumRefusesIdsTfLiteFails) {
  FakeGraph g;
  const int data = g.floats({3, 2}, {1, 2, 3, 4, 5, 6});
  const int ids = g.constant<int32_t>(BATON_TYPE_INT32, {3}, {0, 2, 2});
  g.add_node(BATON_OP_SEGMENT_SUM, {data, ids}, {g.output()});
  std::string error;
  EXPECT_EQ(host.run(g, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 SEGMENT_SUM: segment ids must start at 0 and grow by 0 or 1, as TFLite 2.9 requires (2 after 0)");
}

// Integer FLOOR_DIV and FLOOR_MOD round toward negative infinity (worked by hand); the type's minimum by -1
// has the remainder 0 and a quotient the type cannot hold, which fails the invoke (x86's division traps).
TEST_F(PackTest, IntegerFloorDivAndModByHandAndTheirOverflow) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> a{-7, 7, -7, 7, kMin, 6}, b{3, -3, -3, 3, -1, -1};
  for (const int32_t code : {BATON_OP_FLOOR_DIV, BATON_OP_FLOOR_MOD}) {
    FakeGraph g;
    const int x = g.add_tensor(BATON_TYPE_INT32, {6}, a.data());
    const int y = g.add_tensor(BATON_TYPE_INT32, {6}, b.data());
    const int out = g.output(BATON_TYPE_INT32);
    g.add_node(code, {x, y}, {out});
    std::string error;
    if (code == BATON_OP_FLOOR_MOD) {
      ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
      EXPECT_EQ(g.values<int32_t>(out), (std::vector<int32_t>{2, -2, -1, 1, 0, 0}));
    } else {
      EXPECT_EQ(host.run(g, &error), BATON_ERROR);
      EXPECT_EQ(error, "node 0 FLOOR_DIV: integer FLOOR_DIV of the type's minimum by -1 overflows");
    }
  }
  FakeGraph g;
  const std::vector<int32_t> fine{-7, 7, -7, 7, kMin + 1, 6};
  const int x = g.add_tensor(BATON_TYPE_INT32, {6}, fine.data());
  const int y = g.add_tensor(BATON_TYPE_INT32, {6}, b.data());
  const int out = g.output(BATON_TYPE_INT32);
  g.add_node(BATON_OP_FLOOR_DIV, {x, y}, {out});
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<int32_t>(out), (std::vector<int32_t>{-3, -3, 2, 2, -(kMin + 1), -6}));
}

TEST_F(PackTest, ScatterNdFailsTheInvokeOnAnIndexOutsideTheShape) {
  FakeGraph g;
  const int indices = g.add_tensor(BATON_TYPE_INT32, {2, 1}, std::vector<int32_t>{1, 4}.data());
  const int updates = g.floats({2}, {1, 2});
  const int shape = g.constant<int32_t>(BATON_TYPE_INT32, {1}, {4});
  g.add_node(BATON_OP_SCATTER_ND, {indices, updates, shape}, {g.output()});
  std::string error;
  EXPECT_EQ(host.run(g, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 SCATTER_ND: index 4 of tuple 1 outside dimension 0 (size 4)");
}

// LSTM's BASIC kernel type, float32, one batch row, one input and one cell, worked by hand: concat
// [x, h], gates W . concat + b in the order input, candidate, forget, output.
TEST_F(PackTest, LstmBasicKernelByHand) {
  FakeGraph g;
  const int x = g.floats({1, 1}, {0.5f});
  const int h = g.floats({1, 1}, {-0.25f});
  const int w = g.floats({4, 2}, {1, 0, 0, 1, 0, 0, 1, 1}, true);
  const int b = g.floats({4}, {0, 0.1f, 1.0f, 0}, true);
  const int c = g.floats({1, 1}, {2.0f});
  const int out = g.output(), state = g.output(), concat = g.output(), gates = g.output();
  FakeNode& node = g.add_node(BATON_OP_LSTM, {x, h, w, b, c}, {out, state, concat, gates}, 2);
  node.options.u.recurrent.kernel_type = 1;
  node.options.u.recurrent.activation = BATON_ACT_TANH;
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  const double i = sigmoid(0.5), cand = std::tanh(-0.25 + 0.1), f = sigmoid(1.0), o = sigmoid(0.25);
  const double next = i * cand + f * 2.0;
  EXPECT_EQ(g.values<float>(concat), (std::vector<float>{0.5f, -0.25f}));
  EXPECT_EQ(g.values<float>(gates), (std::vector<float>{0.5f, -0.15f, 1.0f, 0.25f}));
  ASSERT_EQ(g.values<float>(state).size(), 1u);
  EXPECT_NEAR(g.values<float>(state)[0], next, 1e-6);
  EXPECT_NEAR(g.values<float>(out)[0], o * std::tanh(next), 1e-6);
}

// The quantized BASIC cell has one state format (scale 2^-11) and one set of types; others are named.
TEST_F(PackTest, LstmBasicKernelRefusesOtherStateScalesAndTypes) {
  auto build = [](FakeGraph& g, float state_scale, baton_tensor_type bias_type) {
    const std::vector<uint8_t> codes(4, 128);
    const std::vector<int16_t> zeros(4, 0);
    const std::vector<int32_t> bias(8, 0);
    const int x = g.add_tensor(BATON_TYPE_UINT8, {1, 2}, codes.data());
    const int h = g.add_tensor(BATON_TYPE_UINT8, {1, 2}, codes.data());
    const int w = g.add_tensor(BATON_TYPE_UINT8, {8, 4}, std::vector<uint8_t>(32, 130).data(), true);
    const int b = g.add_tensor(bias_type, {8}, bias.data(), true);
    const int c = g.add_tensor(BATON_TYPE_INT16, {1, 2}, zeros.data());
    const int state = g.output(BATON_TYPE_INT16);
    for (int t : {x, h, w}) g.tensors[t].scales = {1 / 128.0f}, g.tensors[t].zero_points = {128};
    g.tensors[b].scales = {1 / 16384.0f};
    g.tensors[state].scales = {state_scale};
    g.tensors[c].scales = {state_scale};
    FakeNode& node = g.add_node(BATON_OP_LSTM, {x, h, w, b, c},
                                {g.output(BATON_TYPE_UINT8), state, g.output(BATON_TYPE_UINT8), g.output(BATON_TYPE_INT16)}, 2);
    node.options.u.recurrent.kernel_type = 1;
  };
  std::string error;
  FakeGraph ok;
  build(ok, 1 / 2048.0f, BATON_TYPE_INT32);
  EXPECT_EQ(host.run(ok, &error), BATON_OK) << error;
  FakeGraph wide;
  build(wide, 1 / 1024.0f, BATON_TYPE_INT32);
  EXPECT_EQ(host.run(wide, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 LSTM: state output scale 0.000977 is not 2^-11 (4 integer bits, the one state format of "
                   "TFLite's quantized cell)");
  FakeGraph float_bias;
  build(float_bias, 1 / 2048.0f, BATON_TYPE_FLOAT32);
  EXPECT_EQ(host.run(float_bias, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 LSTM: biases is FLOAT32; the BASIC kernel type takes all float32, or uint8 input, "
                   "activations and weights with int32 biases and int16 states and gate values");
}

TEST_F(PackTest, ReshapeInfersMinusOne) {
  FakeGraph g;
  const int input = g.floats({2, 3, 4}, std::vector<float>(24, 1.0f));
  const std::vector<int32_t> shape = {-1, 6};
  const int shape_t = g.constant(BATON_TYPE_INT32, {2}, shape);
  const int out = g.output();
  g.add_node(BATON_OP_RESHAPE, {input, shape_t}, {out});
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.tensors[out].dims, (std::vector<int32_t>{4, 6}));
}

TEST_F(PackTest, FullyConnectedKeepNumDimsAndNoBias) {
  // Input [1,2,3], weights [2,3] = {1,1,1 | 1,0,-1}: each row gives {sum, first - last}.
  FakeGraph g;
  const int input = g.floats({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const int weights = g.floats({2, 3}, {1, 1, 1, 1, 0, -1}, true);
  const int out = g.output();
  FakeNode& fc = g.add_node(BATON_OP_FULLY_CONNECTED, {input, weights, -1}, {out}, 9);
  fc.options.u.fully_connected.keep_num_dims = 1;
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.tensors[out].dims, (std::vector<int32_t>{1, 2, 2}));
  EXPECT_EQ(g.values<float>(out), (std::vector<float>{6, -2, 15, -2}));
}

TEST_F(PackTest, MeanKeepDimsAndSplitOutputs) {
  FakeGraph g;
  const int input = g.floats({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  const std::vector<int32_t> axes = {1, -2};  // H and W, one of them negative
  const int axes_t = g.constant(BATON_TYPE_INT32, {2}, axes);
  const int mean = g.output();
  FakeNode& m = g.add_node(BATON_OP_MEAN, {input, axes_t}, {mean});
  m.options.u.reducer.keep_dims = 1;
  const std::vector<int32_t> axis = {3};
  const int axis_t = g.constant(BATON_TYPE_INT32, {}, axis);
  const int a = g.output(), b = g.output();
  FakeNode& s = g.add_node(BATON_OP_SPLIT, {axis_t, mean}, {a, b});
  s.options.u.split.num_splits = 2;
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.tensors[mean].dims, (std::vector<int32_t>{1, 1, 1, 2}));
  EXPECT_EQ(g.values<float>(a), (std::vector<float>{2.5f}));
  EXPECT_EQ(g.values<float>(b), (std::vector<float>{25.0f}));
  EXPECT_EQ(g.tensors[b].dims, (std::vector<int32_t>{1, 1, 1, 1}));
}

TEST_F(PackTest, ConcatNegativeAxisAndPackUnpack) {
  FakeGraph g;
  const int a = g.floats({2, 1}, {1, 2});
  const int b = g.floats({2, 2}, {3, 4, 5, 6});
  const int cat = g.output();
  FakeNode& c = g.add_node(BATON_OP_CONCATENATION, {a, b}, {cat});
  c.options.u.concat.axis = -1;
  const int packed = g.output();
  FakeNode& p = g.add_node(BATON_OP_PACK, {a, a}, {packed});
  p.options.u.pack = {2, -1};  // [2,1] x2 on the last axis -> [2,1,2]
  const int u0 = g.output(), u1 = g.output();
  FakeNode& u = g.add_node(BATON_OP_UNPACK, {b}, {u0, u1});
  u.options.u.pack = {2, 1};  // columns of b
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.tensors[cat].dims, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(g.values<float>(cat), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(g.tensors[packed].dims, (std::vector<int32_t>{2, 1, 2}));
  EXPECT_EQ(g.values<float>(packed), (std::vector<float>{1, 1, 2, 2}));
  EXPECT_EQ(g.values<float>(u0), (std::vector<float>{3, 5}));
  EXPECT_EQ(g.values<float>(u1), (std::vector<float>{4, 6}));
}

// Computed shape inputs (TRANSPOSE's permutation here; axes, sizes, paddings and the like alike) make
// the output dynamic: the node is prepared again with the values, and a bad value fails that prepare
// naming the node and the value.
TEST_F(PackTest, ComputedPermutationIsReadWhenPreparedWithTheValues) {
  FakeGraph g;
  const int input = g.floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<int32_t> swap = {1, 0};
  const int perm = g.add_tensor(BATON_TYPE_INT32, {2}, swap.data());  // not constant
  const int out = g.output();
  g.add_node(BATON_OP_TRANSPOSE, {input, perm}, {out});
  std::string error;
  ASSERT_EQ(host.run(g, &error), BATON_OK) << error;
  EXPECT_TRUE(g.tensors[out].dynamic);
  EXPECT_EQ(g.tensors[out].dims, (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(g.values<float>(out), (std::vector<float>{1, 4, 2, 5, 3, 6}));

  FakeGraph bad;
  const int x = bad.floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const std::vector<int32_t> wrong = {2, 0};
  const int p = bad.add_tensor(BATON_TYPE_INT32, {2}, wrong.data());
  bad.add_node(BATON_OP_TRANSPOSE, {x, p}, {bad.output()});
  EXPECT_EQ(host.run(bad, &error), BATON_INVALID_ARGUMENT);
  EXPECT_EQ(error, "node 0 TRANSPOSE: axis 2 out of range for rank 2");
}

TEST_F(PackTest, ThreadedPackMatchesSerial) {
  // The same random 3x3 conv on 2 threads and on 1.
  auto run = [](int64_t threads) {
    FakeHost h(BATON_BUILTIN_PACK_PATH, threads);
    FakeGraph g;
    std::vector<float> in(1 * 20 * 20 * 8), f(16 * 3 * 3 * 8);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7919) % 13) - 6.0f;
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>((i * 104729) % 5) - 2.0f;
    const int x = g.floats({1, 20, 20, 8}, in);
    const int w = g.floats({16, 3, 3, 8}, f, true);
    const int y = g.output();
    FakeNode& conv = g.add_node(BATON_OP_CONV_2D, {x, w}, {y});
    conv.options.u.conv = {BATON_PADDING_SAME, 2, 2, 1, 1, 1, 0};
    std::string error;
    EXPECT_EQ(h.run(g, &error), BATON_OK) << error;
    return g.values<float>(y);
  };
  const auto serial = run(1);
  EXPECT_EQ(serial.size(), 10u * 10u * 16u);
  EXPECT_EQ(run(2), serial);  // integer-valued data: exact in any order
}

TEST_F(PackTest, ThreadedQuantizeMatchesTheKernelBitForBit) {
  // float32 -> int8 and int8 -> int8 (another scale) over 2 * 16384 + 5 elements on 2 threads: the codes of
  // one kernel call, ties and clamped values included.
  const int64_t n = 2 * 16384 + 5;
  std::vector<float> in(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 4001) / 100.0f - 20.0f;
  std::vector<uint8_t> want(n), want_requantized(n);
  quantize_floats(in.data(), n, 0.125f, -3, true, want.data());
  FakeHost h(BATON_BUILTIN_PACK_PATH, 2);
  FakeGraph g;
  const int x = g.floats({1, static_cast<int32_t>(n)}, in);
  const int q = g.output(BATON_TYPE_INT8);
  g.tensors[q].scales = {0.125f};
  g.tensors[q].zero_points = {-3};
  const int r = g.output(BATON_TYPE_INT8);
  g.tensors[r].scales = {0.3f};
  g.tensors[r].zero_points = {7};
  g.add_node(BATON_OP_QUANTIZE, {x}, {q});
  g.add_node(BATON_OP_QUANTIZE, {q}, {r}, 2);
  std::string error;
  ASSERT_EQ(h.run(g, &error), BATON_OK) << error;
  EXPECT_EQ(g.values<uint8_t>(q), want);
  requantize_codes(want.data(), n, true, -3, quantize_multiplier(0.125 / static_cast<double>(0.3f)), 7, true,
                   want_requantized.data());
  EXPECT_EQ(g.values<uint8_t>(r), want_requantized);
}

TEST_F(PackTest, ThreadedUnaryOpsMatchTheKernelBitForBit) {
  // Long enough to be split across two workers (in runs of 16), with a length that is not a multiple of
  // 16: TANH, GELU and SOFTMAX on 2 threads give exactly the floats the kernel gives in one call.
  const int64_t n = 3 * 8192 + 7;
  std::vector<float> in(n);
  for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7919) % 2001) / 200.0f - 5.0f;
  for (auto [code, op] : {std::pair{BATON_OP_TANH, UnaryOp::kTanh}, std::pair{BATON_OP_GELU, UnaryOp::kGelu}}) {
    FakeHost h(BATON_BUILTIN_PACK_PATH, 2);
    FakeGraph g;
    const int x = g.floats({1, static_cast<int32_t>(n)}, in);
    const int y = g.output();
    g.add_node(code, {x}, {y});
    std::string error;
    ASSERT_EQ(h.run(g, &error), BATON_OK) << error;
    std::vector<float> want(n);
    unary(op, in.data(), want.data(), n);
    EXPECT_EQ(g.values<float>(y), want) << "op " << code;
  }
  // SOFTMAX splits rows: [300, 67] on 2 threads gives the floats of one call over all rows.
  FakeHost h(BATON_BUILTIN_PACK_PATH, 2);
  FakeGraph g;
  const int x = g.floats({300, 67}, std::vector<float>(in.begin(), in.begin() + 300 * 67));
  const int y = g.output();
  g.add_node(BATON_OP_SOFTMAX, {x}, {y}).options.u.softmax.beta = 1.0f;
  std::string error;
  ASSERT_EQ(h.run(g, &error), BATON_OK) << error;
  std::vector<float> want(300 * 67);
  softmax(in.data(), want.data(), 300, 67, 1.0f);
  EXPECT_EQ(g.values<float>(y), want);
}

}  // namespace
}  // namespace baton::builtin::testing
