// The Vulkan delegate's reductions over any axes (plugins/vulkan/ops_reduce.cc): SUM, MEAN, REDUCE_MAX,
// REDUCE_MIN and REDUCE_PROD with and without keep_dims, and ARG_MAX / ARG_MIN to int32, against the builtin
// pack in both storage precisions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_ops_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

OptionsFn reducer_options(bool keep_dims) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ReducerOptions, fb::CreateReducerOptions(fbb, keep_dims).Union());
  };
}

struct ReduceCase {
  std::vector<int32_t> in, axes;
};

// The input's dims with the reduced axes dropped, or one long with keep_dims.
std::vector<int32_t> reduced_shape(const std::vector<int32_t>& in, std::vector<int32_t> axes, bool keep) {
  for (int32_t& a : axes) a = a < 0 ? a + static_cast<int32_t>(in.size()) : a;
  std::vector<int32_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int32_t>(i)) != axes.end();
    if (!reduced) out.push_back(in[i]);
    if (reduced && keep) out.push_back(1);
  }
  return out;
}

// Each reduction over the batch, a middle axis, the channels (a detector's best class score), two axes at
// once (one of them negative, one repeated), and every axis (a scalar); channels not a multiple of 4.
TEST(VulkanReduceOps, OverAnyAxes) {
  const std::vector<ReduceCase> cases = {{{2, 3, 3, 5}, {0}},  {{2, 7, 6}, {1}},      {{1, 9, 85}, {2}},
                                         {{3, 4, 5, 6}, {1, -1}}, {{4, 6}, {0, 1, 0}}, {{2, 3, 5}, {0, 1, 2}}};
  for (const int32_t code : {BATON_OP_SUM, BATON_OP_MEAN, BATON_OP_REDUCE_MAX, BATON_OP_REDUCE_MIN, BATON_OP_REDUCE_PROD}) {
    for (const ReduceCase& c : cases) {
      for (const bool keep : {false, true}) {
        OpGraph g;
        const int32_t in = g.input(c.in);
        const int32_t axes = g.add({static_cast<int32_t>(c.axes.size())}, int_bytes(c.axes), 2);
        g.op(code, {in, axes}, {g.output(reduced_shape(c.in, c.axes, keep))}, reducer_options(keep));
        const std::string what = std::string(fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(code))) + " of " +
                                 shape_text(c.in) + " over " + shape_text(c.axes) + (keep ? ", keep_dims" : "");
        // Products of factors near 1, which neither overflow nor vanish over 120 of them.
        const bool product = code == BATON_OP_REDUCE_PROD;
        expect_same_as_builtin(g, what, product ? 0.9f : -2.0f, product ? 1.1f : 3.0f, {}, 1e-5);
      }
    }
  }
}

OptionsFn arg_options(int32_t code) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    if (code == BATON_OP_ARG_MAX) {
      return std::make_pair(fb::BuiltinOptions_ArgMaxOptions, fb::CreateArgMaxOptions(fbb, fb::TensorType_INT32).Union());
    }
    return std::make_pair(fb::BuiltinOptions_ArgMinOptions, fb::CreateArgMinOptions(fbb, fb::TensorType_INT32).Union());
  };
}

// ARG_MAX and ARG_MIN to int32 along the channels, a middle axis and the first (as -3), on values float16
// keeps apart, and on runs of equal values (the first position wins, as in TFLite).
TEST(VulkanReduceOps, ArgMaxAndArgMin) {
  for (const int32_t code : {BATON_OP_ARG_MAX, BATON_OP_ARG_MIN}) {
    for (const int32_t axis : {2, 1, -3}) {
      for (const bool ties : {false, true}) {
        const std::vector<int32_t> in{3, 5, 7};
        std::vector<int32_t> out = in;
        out.erase(out.begin() + (axis < 0 ? axis + 3 : axis));
        OpGraph g;
        const int32_t x = g.input(in);
        g.op(code, {x, g.add({1}, int_bytes({axis}), 2)}, {int_output(g, out)}, arg_options(code));
        const std::string what = std::string(code == BATON_OP_ARG_MAX ? "ARG_MAX" : "ARG_MIN") + " along " +
                                 std::to_string(axis) + (ties ? ", ties" : "");
        expect_like_builtin(g, what, [ties](size_t, Tensor& t) {
          // Steps of 0.01 (float16's are 0.001 near 1); with ties, three values only.
          write_floats(t, [ties](size_t k) { return ties ? static_cast<float>(k * 7 % 3) : static_cast<float>(k * 37 % 200) * 0.01f - 1.0f; });
        });
      }
    }
  }
}

}  // namespace
}  // namespace baton::test
