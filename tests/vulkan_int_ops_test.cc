// The Vulkan delegate's ops on int32 tensors (plugins/vulkan/ops_int.cc): the arithmetic of a detector's
// post-processing (ADD, SUB, MUL, MINIMUM, MAXIMUM, DIV, FLOOR_DIV, FLOOR_MOD, broadcast) and the moves of
// index tensors (CONCATENATION, STRIDED_SLICE, TRANSPOSE, PAD, PADV2), against the builtin pack in both
// storage precisions (ints are ints in either). A zero divisor fails that run with the divisor.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "interpreter.h"
#include "op_graph.h"
#include "test_support.h"
#include "vulkan_ops_support.h"
#include "vulkan_support.h"

namespace baton::test {
namespace {

std::string op_name(int32_t code) { return fb::EnumNameBuiltinOperator(static_cast<fb::BuiltinOperator>(code)); }

// Ints of both signs, none zero (divisors), from k.
int32_t nonzero_int(size_t k, int32_t range) {
  const int32_t v = static_cast<int32_t>((k * 7919 + 13) % static_cast<size_t>(2 * range + 1)) - range;
  return v == 0 ? range : v;
}

OptionsFn elementwise_options(int32_t code) {
  switch (code) {
    case BATON_OP_ADD: return with_activation(fb::BuiltinOptions_AddOptions, add_options, 0);
    case BATON_OP_SUB: return with_activation(fb::BuiltinOptions_SubOptions, sub_options, 0);
    case BATON_OP_MUL: return with_activation(fb::BuiltinOptions_MulOptions, mul_options, 0);
    case BATON_OP_DIV: return with_activation(fb::BuiltinOptions_DivOptions, div_options, 0);
    default: return nullptr;
  }
}

// Each int op with a second operand of the same shape, broadcast along rows and columns ([3, 1] against
// [2, 3, 5]), a constant scalar, and a broadcast first operand; operands of both signs, so that the
// floor ops round down where DIV truncates.
TEST(VulkanIntOps, ArithmeticBroadcastsAsTfLite) {
  struct Shapes {
    std::vector<int32_t> a, b, out;
    bool constant_b;
  };
  const std::vector<Shapes> shapes = {{{2, 3, 5}, {2, 3, 5}, {2, 3, 5}, false},
                                      {{2, 3, 5}, {3, 1}, {2, 3, 5}, false},
                                      {{4, 7}, {1}, {4, 7}, true},
                                      {{1, 6}, {5, 1}, {5, 6}, false}};
  for (const int32_t code : {BATON_OP_ADD, BATON_OP_SUB, BATON_OP_MUL, BATON_OP_MINIMUM, BATON_OP_MAXIMUM, BATON_OP_DIV,
                             BATON_OP_FLOOR_DIV, BATON_OP_FLOOR_MOD}) {
    for (const Shapes& s : shapes) {
      const std::string what = op_name(code) + " of " + shape_text(s.a) + " and " + shape_text(s.b);
      OpGraph g;
      const int32_t a = g.input(s.a, 2);
      const int32_t b = s.constant_b ? g.add(s.b, ints({-3}), 2) : g.input(s.b, 2);
      g.op(code, {a, b}, {int_output(g, s.out)}, elementwise_options(code));
      expect_like_builtin(g, what, [](size_t i, Tensor& t) {
        if (i == 0) write_ints(t, [](size_t k) { return static_cast<int32_t>((k * 337 + 5) % 201) - 100; });
        if (i == 1) write_ints(t, [](size_t k) { return nonzero_int(k, 9); });
      });
    }
  }
}

// A zero divisor (after a good first run) fails that run with the divisor, as the builtin pack's kernel
// fails, and so does INT32_MIN divided by -1; the next run with good divisors works.
TEST(VulkanIntOps, DivisionByZeroFailsTheRun) {
  for (const int32_t code : {BATON_OP_DIV, BATON_OP_FLOOR_DIV, BATON_OP_FLOOR_MOD}) {
    SCOPED_TRACE(op_name(code));
    OpGraph g;
    const int32_t a = g.input({3, 4}, 2);
    const int32_t b = g.input({3, 4}, 2);
    g.op(code, {a, b}, {int_output(g, {3, 4})}, elementwise_options(code));
    expect_bad_index_fails(g, op_name(code), [](size_t, Tensor& t) { write_ints(t, [](size_t k) { return nonzero_int(k, 5); }); },
                           1, 5, 0, "an int32 division by zero (or of INT32_MIN by -1), the divisor (0)");
    // INT32_MIN by -1: a quotient int32 cannot hold; FLOOR_MOD's remainder is 0.
    if (code == BATON_OP_FLOOR_MOD) continue;
    const Feed min_at_5 = [](size_t i, Tensor& t) {
      write_ints(t, [i](size_t k) { return i == 0 && k == 5 ? std::numeric_limits<int32_t>::min() : nonzero_int(k, 5); });
    };
    expect_bad_index_fails(g, op_name(code), min_at_5, 1, 5, -1, "an int32 division by zero (or of INT32_MIN by -1), the divisor (-1)");
  }
}

// Computed in the partition: float positions cast to ints, a grid cell's row and column by FLOOR_DIV and
// FLOOR_MOD, scaled and cast back to float, with no host round trip.
TEST(VulkanIntOps, ComputedInsideAFloatPartition) {
  OpGraph g;
  const int32_t pos = g.input({2, 9});
  const int32_t ids = g.add({2, 9}, {}, 2);
  const int32_t width = g.add({1}, ints({4}), 2);
  const int32_t row = g.add({2, 9}, {}, 2);
  const int32_t col = g.add({2, 9}, {}, 2);
  const int32_t stride = g.add({1}, ints({8}), 2);
  const int32_t x = g.add({2, 9}, {}, 2);
  const int32_t sum = g.add({2, 9}, {}, 2);
  g.op(BATON_OP_CAST, {pos}, {ids});
  g.op(BATON_OP_FLOOR_DIV, {ids, width}, {row});
  g.op(BATON_OP_FLOOR_MOD, {ids, width}, {col});
  g.op(BATON_OP_MUL, {col, stride}, {x}, elementwise_options(BATON_OP_MUL));
  g.op(BATON_OP_ADD, {x, row}, {sum}, elementwise_options(BATON_OP_ADD));
  g.op(BATON_OP_CAST, {sum}, {g.output({2, 9})});
  expect_like_builtin(g, "grid cells", [](size_t, Tensor& t) {
    write_floats(t, [](size_t k) { return static_cast<float>(static_cast<int32_t>(k * 5 % 37) - 18) + 0.25f; });
  });
}

OptionsFn concat_options(int32_t axis) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_ConcatenationOptions, fb::CreateConcatenationOptions(fbb, axis).Union());
  };
}

OptionsFn slice_options(int32_t begin_mask, int32_t end_mask, int32_t shrink_mask) {
  return [=](flatbuffers::FlatBufferBuilder& fbb) {
    return std::make_pair(fb::BuiltinOptions_StridedSliceOptions,
                          fb::CreateStridedSliceOptions(fbb, begin_mask, end_mask, 0, 0, shrink_mask).Union());
  };
}

const Feed counting = [](size_t i, Tensor& t) {
  write_ints(t, [i](size_t k) { return static_cast<int32_t>(1000 * i + k) - 40; });
};

// CONCATENATION of ints given at invoke and a constant, along a middle axis and the last (-1).
TEST(VulkanIntOps, Concatenation) {
  {
    OpGraph g;
    const int32_t a = g.input({2, 3, 4}, 2);
    const int32_t b = g.input({2, 5, 4}, 2);
    const int32_t c = g.add({2, 1, 4}, int_bytes({9, 8, 7, 6, 5, 4, 3, 2}), 2);
    g.op(BATON_OP_CONCATENATION, {a, b, c}, {int_output(g, {2, 9, 4})}, concat_options(1));
    expect_like_builtin(g, "axis 1", counting);
  }
  {
    OpGraph g;
    const int32_t a = g.input({3, 5}, 2);
    const int32_t b = g.input({3, 2}, 2);
    g.op(BATON_OP_CONCATENATION, {a, b}, {int_output(g, {3, 7})}, concat_options(-1));
    expect_like_builtin(g, "axis -1", counting);
  }
}

// STRIDED_SLICE of ints: a step of 2, a reversed axis, masks, and a shrunk axis.
TEST(VulkanIntOps, StridedSlice) {
  struct Case {
    const char* what;
    std::vector<int32_t> in, begin, end, strides, out;
    int32_t begin_mask, end_mask, shrink_mask;
  };
  const std::vector<Case> cases = {
      {"steps of 2 and a reversed axis", {4, 6, 5}, {1, 0, 4}, {4, 6, 0}, {2, 1, -2}, {2, 6, 2}, 0, 0, 0},
      {"masks and a shrunk axis", {3, 4, 5}, {0, 2, 1}, {0, 0, -1}, {1, 1, 1}, {3, 3}, 1, 3, 2},
  };
  for (const Case& c : cases) {
    OpGraph g;
    const int32_t in = g.input(c.in, 2);
    const int32_t n = static_cast<int32_t>(c.in.size());
    g.op(BATON_OP_STRIDED_SLICE, {in, g.add({n}, int_bytes(c.begin), 2), g.add({n}, int_bytes(c.end), 2), g.add({n}, int_bytes(c.strides), 2)},
         {int_output(g, c.out)}, slice_options(c.begin_mask, c.end_mask, c.shrink_mask));
    expect_like_builtin(g, c.what, counting);
  }
}

// TRANSPOSE of ints, the last axis moved too.
TEST(VulkanIntOps, Transpose) {
  for (const auto& [in, perm] : std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>{
           {{2, 3, 5}, {2, 0, 1}}, {{4, 6}, {1, 0}}, {{2, 3, 4, 5}, {0, 3, 1, 2}}}) {
    OpGraph g;
    const int32_t x = g.input(in, 2);
    std::vector<int32_t> out;
    for (int32_t a : perm) out.push_back(in[static_cast<size_t>(a)]);
    g.op(BATON_OP_TRANSPOSE, {x, g.add({static_cast<int32_t>(perm.size())}, int_bytes(perm), 2)}, {int_output(g, out)});
    expect_like_builtin(g, "transpose of " + shape_text(in), counting);
  }
}

// PAD (zeros) and PADV2 (a value of its own) of ints.
TEST(VulkanIntOps, Pad) {
  {
    OpGraph g;
    const int32_t x = g.input({2, 3, 5}, 2);
    g.op(BATON_OP_PAD, {x, g.add({3, 2}, int_bytes({0, 1, 2, 0, 1, 3}), 2)}, {int_output(g, {3, 5, 9})});
    expect_like_builtin(g, "PAD", counting);
  }
  {
    OpGraph g;
    const int32_t x = g.input({3, 5}, 2);
    g.op(BATON_OP_PADV2, {x, g.add({2, 2}, int_bytes({1, 2, 0, 3}), 2), g.add({}, int_bytes({-7}), 2)},
         {int_output(g, {6, 8})});
    expect_like_builtin(g, "PADV2 by -7", counting);
  }
}

}  // namespace
}  // namespace baton::test
