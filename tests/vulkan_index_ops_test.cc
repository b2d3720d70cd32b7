// The Vulkan delegate's ops on int32 tensors (plugins/vulkan/ops_index.cc): GATHER, GATHER_ND and
// SCATTER_ND by int32 indices that are constant, given at invoke or computed in the partition by a CAST,
// CAST between int32 and float32 and RESHAPE of ints, against the builtin pack in both storage
// precisions. An index out of range fails that run naming the op and the index.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "tiny_model.h"
#include "vulkan_ops_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

// GATHER: params of odd sizes along an axis before the channels, int32 indices given at invoke (a
// partition input, uploaded as they are) or constant, against the builtin pack in both precisions; an
// index out of range fails that run with the index, and the next run with good indices works.
OptionsFn gather_options(int32_t axis) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_GatherOptions, fb::CreateGatherOptions(fbb, axis, 0).Union());
  };
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
      ASSERT_EQ(v.placement(0).kind, "delegate") << (v.refusals(0).empty() ? "" : v.refusals(0).back().reason());
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


// CAST int32 -> float32 of a partition input, then a MUL in float: channels 3 (the device's vec4 lanes
// padded) and 8; ints within [-1000, 1000], which float16 holds exactly.
TEST(VulkanOps, CastIntToFloat) {
  for (const std::vector<int32_t>& shape : {std::vector<int32_t>{2, 5, 3}, std::vector<int32_t>{3, 8}}) {
    OpGraph g;
    const int32_t ids = g.input(shape, 2);
    const int32_t x = g.input(shape);
    const int32_t f = g.add(shape);
    const int32_t out = g.output(shape);
    g.op(BATON_OP_CAST, {ids}, {f});
    g.op(BATON_OP_MUL, {f, x}, {out}, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0));
    expect_like_builtin(g, "cast of rank " + std::to_string(shape.size()), [](size_t i, Tensor& t) {
      if (i == 0) {
        write_ints(t, [](size_t k) { return static_cast<int32_t>((k * 337 + 11) % 2001) - 1000; });
      } else {
        write_floats(t, [](size_t k) { return 0.25f + 0.125f * static_cast<float>(k % 7); });
      }
    });
  }
}

// CAST float32 -> int32 as a partition output: C++'s conversion, toward zero (-3.7 gives -3, not -4).
TEST(VulkanOps, CastFloatToIntTruncatesTowardZero) {
  OpGraph g;
  const int32_t x = g.input({3, 7});
  const int32_t scale = g.add({1}, floats({13.7f}));
  const int32_t scaled = g.add({3, 7});
  const int32_t out = int_output(g, {3, 7});
  g.op(BATON_OP_MUL, {x, scale}, {scaled}, with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0));
  g.op(BATON_OP_CAST, {scaled}, {out});
  // Float16 rounds x * 13.7 (at most 13.7) to 11 bits before the cast: a value near an integer may
  // truncate to the one below.
  expect_like_builtin(
      g, "cast to int32", [](size_t, Tensor& t) { write_floats(t, [](size_t k) { return -1.0f + 0.0973f * static_cast<float>(k); }); },
      0.0, 1);
}

// A float the host gives is cast from its float32 value even where the device stores floats as float16:
// k + 0.99 (up to 299.99) truncates to k, where float16 would hold k + 1 from 128 on.
TEST(VulkanOps, CastOfAHostFloatIsExactInFloat16Storage) {
  OpGraph g;
  const int32_t x = g.input({2, 3, 5});
  g.op(BATON_OP_CAST, {x}, {int_output(g, {2, 3, 5})});
  expect_like_builtin(g, "cast of an input", [](size_t, Tensor& t) {
    write_floats(t, [](size_t k) { return static_cast<float>(k * 10) + 0.99f; });
  });
}

// Indices computed in the partition: positions given as floats, cast to int32, then GATHER and GATHER_ND
// by them on the device, in one partition.
TEST(VulkanOps, IndicesCastInsideThePartition) {
  OpGraph g;
  const int32_t pos = g.input({2, 3});
  const int32_t ids = g.add({2, 3}, {}, 2);
  const int32_t table = random_weights(g, {6, 5}, 41);
  const int32_t rows = g.output({2, 3, 5});
  const int32_t pairs = g.input({4, 2});
  const int32_t pair_ids = g.add({4, 2}, {}, 2);
  const int32_t cells = g.output({4});
  g.op(BATON_OP_CAST, {pos}, {ids});
  g.op(BATON_OP_GATHER, {table, ids}, {rows}, gather_options(0));
  g.op(BATON_OP_CAST, {pairs}, {pair_ids});
  g.op(BATON_OP_GATHER_ND, {table, pair_ids}, {cells});
  expect_like_builtin(g, "computed indices", [](size_t i, Tensor& t) {
    // k + 0.25: an integer part float16 keeps.
    if (i == 0) write_floats(t, [](size_t k) { return static_cast<float>((k * 5 + 2) % 6) + 0.25f; });
    if (i == 1) write_floats(t, [](size_t k) { return static_cast<float>(k % 2 ? (k * 3) % 5 : (k * 7 + 1) % 6) + 0.25f; });
  });
}

struct GatherNdCase {
  const char* what;
  std::vector<int32_t> params, indices;
  bool constant_params, constant_indices;
};

// GATHER_ND: index depths 1 to 3 of params of odd sizes (rank 2 and 3), indices constant or given at
// invoke; an index out of range (after a first good run) fails that run with the index, and the next run
// with good indices works.
TEST(VulkanOps, GatherNd) {
  const std::vector<GatherNdCase> cases = {
      {"depth 2 of [4, 5, 6] by constant [3, 2]", {4, 5, 6}, {3, 2}, false, true},
      {"depth 3 of constant [4, 5, 6] by [2, 2, 3]", {4, 5, 6}, {2, 2, 3}, true, false},
      {"depth 1 of [7, 3] by [5, 1]", {7, 3}, {5, 1}, false, false},
  };
  for (const GatherNdCase& c : cases) {
    SCOPED_TRACE(c.what);
    const size_t depth = static_cast<size_t>(c.indices.back());
    int64_t tuples = 1;
    for (size_t i = 0; i + 1 < c.indices.size(); ++i) tuples *= c.indices[i];
    std::vector<int32_t> ids(static_cast<size_t>(tuples) * depth);
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int32_t>((k * 5 + 3) % static_cast<size_t>(c.params[k % depth]));
    OpGraph g;
    const int32_t params = c.constant_params ? random_weights(g, c.params, 5) : g.input(c.params);
    const int32_t indices = c.constant_indices ? g.add(c.indices, int_bytes(ids), 2) : g.input(c.indices, 2);
    std::vector<int32_t> out_shape(c.indices.begin(), c.indices.end() - 1);
    out_shape.insert(out_shape.end(), c.params.begin() + static_cast<std::ptrdiff_t>(depth), c.params.end());
    g.op(BATON_OP_GATHER_ND, {params, indices}, {g.output(out_shape)});
    const Feed feed = [&](size_t, Tensor& t) {
      if (t.type == BATON_TYPE_INT32) {
        write_ints(t, [&](size_t k) { return ids[k]; });
      } else {
        const auto data = random_floats(t.bytes / 4, 29, -1.0f, 1.0f);
        std::memcpy(t.data, data.data(), data.size());
      }
    };
    expect_like_builtin(g, c.what, feed);
    if (c.constant_indices) continue;
    // The last index of the first tuple one past its dimension.
    expect_bad_index_fails(g, c.what, feed, c.constant_params ? 0 : 1, depth - 1, c.params[depth - 1],
                           "GATHER_ND index outside its dimension (" + std::to_string(c.params[depth - 1]) + ")");
  }
}

// int32 tensors reshaped on the device: float positions cast to ints, reshaped, then both a partition output
// (as ints) and the indices of a GATHER.
TEST(VulkanOps, IntsReshapedOnTheDevice) {
  OpGraph g;
  const int32_t pos = g.input({2, 6});
  const int32_t ids = g.add({2, 6}, {}, 2);
  const int32_t flat = int_output(g, {12});
  const int32_t table = random_weights(g, {6, 5}, 43);
  const int32_t rows = g.output({12, 5});
  g.op(BATON_OP_CAST, {pos}, {ids});
  g.op(BATON_OP_RESHAPE, {ids, g.add({1}, ints({12}), 2)}, {flat});
  g.op(BATON_OP_GATHER, {table, flat}, {rows}, gather_options(0));
  expect_like_builtin(g, "reshaped ints", [](size_t, Tensor& t) {
    write_floats(t, [](size_t k) { return static_cast<float>((k * 5 + 1) % 6) + 0.5f; });
  });
}

struct ScatterNdCase {
  const char* what;
  std::vector<int32_t> indices, shape;
  std::vector<int32_t> ids;  // the index tuples, some of them repeated (their updates add up)
  bool constant_indices;
};

// SCATTER_ND of float updates: depths 1 and 2, repeated tuples summed in TFLite's order (so float32 is
// exact), indices constant or given at invoke; an index out of range (after a first good run) fails that
// run with the index.
TEST(VulkanOps, ScatterNd) {
  const std::vector<ScatterNdCase> cases = {
      {"depth 1: 4 rows of [6, 5], row 2 twice", {4, 1}, {6, 5}, {2, 0, 5, 2}, true},
      {"depth 2: [2, 3] tuples into [4, 3, 7]", {2, 3, 2}, {4, 3, 7}, {0, 1, 3, 2, 0, 1, 1, 0, 3, 2, 2, 2}, false},
  };
  for (const ScatterNdCase& c : cases) {
    SCOPED_TRACE(c.what);
    const size_t depth = static_cast<size_t>(c.indices.back());
    std::vector<int32_t> update_shape(c.indices.begin(), c.indices.end() - 1);
    update_shape.insert(update_shape.end(), c.shape.begin() + static_cast<std::ptrdiff_t>(depth), c.shape.end());
    OpGraph g;
    const int32_t indices = c.constant_indices ? g.add(c.indices, int_bytes(c.ids), 2) : g.input(c.indices, 2);
    const int32_t updates = g.input(update_shape);
    std::vector<uint8_t> shape_bytes = int_bytes(c.shape);
    const int32_t shape = g.add({static_cast<int32_t>(c.shape.size())}, shape_bytes, 2);
    g.op(BATON_OP_SCATTER_ND, {indices, updates, shape}, {g.output(c.shape)});
    const Feed feed = [&](size_t, Tensor& t) {
      if (t.type == BATON_TYPE_INT32) {
        write_ints(t, [&](size_t k) { return c.ids[k]; });
      } else {
        const auto data = random_floats(t.bytes / 4, 31, -1.0f, 1.0f);
        std::memcpy(t.data, data.data(), data.size());
      }
    };
    expect_like_builtin(g, c.what, feed);
    if (c.constant_indices) continue;
    expect_bad_index_fails(g, c.what, feed, 0, 1, -1, "SCATTER_ND index outside its dimension (-1)");
  }
}

// The casts vulkan leaves to other delegates, with the reason.
TEST(VulkanOps, CastOfOtherTypesIsRefused) {
  OpGraph g;
  const int32_t in = g.input({2, 3}, 6);  // BOOL
  const int32_t out = g.output({2, 3});
  g.op(BATON_OP_CAST, {in}, {out});
  const auto& env = shared_vulkan_env(false);
  ASSERT_TRUE(env);
  const GraphRun opened = open_graph(*env, g, "bool cast");
  ASSERT_TRUE(opened.vulkan);
  ASSERT_FALSE(opened.vulkan->refusals(0).empty());
  EXPECT_NE(opened.vulkan->refusals(0).back().reason().find("a cast from BOOL to FLOAT32 (float32 to int32 and back only)"),
            std::string::npos)
      << opened.vulkan->refusals(0).back().reason();
}

}  // namespace
}  // namespace baton::test
