// Ops that put values at positions given by index tensors: ONE_HOT (int32 or int64 indices; float32,
// int32, int64, int8, uint8 or bool values, as TFLite 2.9's kernel runs them (it fails int16 at invoke);
// on / off read at invoke). The depth must be constant:
// prepare sets the output shape.
#include <cstring>
#include <vector>

#include "glue/op_context.h"
#include "kernels/element_copy.h"
#include "op_codes.h"

namespace baton::builtin {
namespace {

struct OneHotState : OpState {
  int64_t prefix = 1, depth = 0, suffix = 1;  // output [prefix, depth, suffix]
  size_t element = 0;
};

void one_hot_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(2, "ONE_HOT's axis");
  baton_tensor* indices = ctx.input(0);
  baton_tensor* depth = ctx.input(1);
  baton_tensor* on = ctx.input(2);
  baton_tensor* off = ctx.input(3);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(indices, "indices (input 0)", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  ctx.require_type(depth, "depth (input 1)", {BATON_TYPE_INT32});
  ctx.require_type(out, "output", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT8, BATON_TYPE_UINT8, BATON_TYPE_BOOL});
  for (baton_tensor* v : {on, off}) {
    ctx.require(ctx.type(v) == ctx.type(out), std::string(v == on ? "on_value" : "off_value") + " type " +
                                                  type_name(ctx.type(v)) + " differs from the output's " +
                                                  type_name(ctx.type(out)));
    ctx.require(ctx.element_count(v) == 1, std::string(v == on ? "on_value" : "off_value") + " must be a scalar");
  }
  const std::vector<int64_t> depth_value = ctx.constant_ints(depth, "depth (input 1)");
  ctx.require(depth_value.size() == 1, "depth (input 1) must be a scalar");
  ctx.require(depth_value[0] >= 0, "depth " + std::to_string(depth_value[0]) + " is negative");
  const auto shape = ctx.shape(indices);
  const int rank = static_cast<int>(shape.size());
  const int32_t axis_option = ctx.options().u.one_hot.axis;
  ctx.require(axis_option >= -1 && axis_option <= rank,
              "axis " + std::to_string(axis_option) + " out of range for an output of rank " + std::to_string(rank + 1) +
                  " (-1 to " + std::to_string(rank) + ")");
  const int axis = axis_option == -1 ? rank : axis_option;
  auto& s = ctx.state<OneHotState>();
  s.prefix = s.suffix = 1;
  for (int d = 0; d < axis; ++d) s.prefix *= shape[d];
  for (int d = axis; d < rank; ++d) s.suffix *= shape[d];
  s.depth = depth_value[0];
  s.element = element_size(ctx.type(out));
  std::vector<int32_t> out_shape(shape.begin(), shape.end());
  out_shape.insert(out_shape.begin() + axis, static_cast<int32_t>(s.depth));
  ctx.set_output_shape(out, out_shape);
}

template <typename T, typename I>
void one_hot(const OneHotState& s, const I* indices, T on, T off, T* out) {
  for (int64_t p = 0; p < s.prefix; ++p) {
    const I* row = indices + p * s.suffix;
    for (int64_t d = 0; d < s.depth; ++d) {
      for (int64_t i = 0; i < s.suffix; ++i) *out++ = static_cast<int64_t>(row[i]) == d ? on : off;
    }
  }
}

void one_hot_invoke(OpContext& ctx) {
  const auto& s = ctx.state<OneHotState>();
  baton_tensor* indices = ctx.input(0);
  const bool wide = ctx.type(indices) == BATON_TYPE_INT64;
  with_element_type(s.element, [&](auto zero) {
    using T = decltype(zero);
    T on, off;
    std::memcpy(&on, ctx.data<void>(ctx.input(2)), sizeof(T));
    std::memcpy(&off, ctx.data<void>(ctx.input(3)), sizeof(T));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    if (wide) one_hot(s, ctx.data<int64_t>(indices), on, off, out);
    else one_hot(s, ctx.data<int32_t>(indices), on, off, out);
  });
}

constexpr OpDef kOps[] = {
    {op::kOneHot, "ONE_HOT", 1, 1, one_hot_prepare, one_hot_invoke},
};

}  // namespace

std::span<const OpDef> index_ops() { return kOps; }

}  // namespace baton::builtin
