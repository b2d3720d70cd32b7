// STRIDED_SLICE and GATHER: the begin/end/strides of a slice decide the output shape (computed ones make
// it dynamic: prepared again at invoke with the values); GATHER's indices may be computed, only their
// shape matters in prepare. Both move strings too (glue/string_output.h).
#include <vector>

#include "glue/op_context.h"
#include "glue/string_output.h"
#include "kernels/gather.h"
#include "kernels/strided_slice.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// 8-bit and int16 codes move unchanged, as in TFLite.
constexpr std::initializer_list<baton_tensor_type> kMoveTypes = {BATON_TYPE_FLOAT32, BATON_TYPE_INT32,
                                                                  BATON_TYPE_INT64,   BATON_TYPE_UINT8,
                                                                  BATON_TYPE_INT8,    BATON_TYPE_INT16};
// STRIDED_SLICE and GATHER also move strings (GATHER a vector of them only, as TFLite 2.9).
constexpr std::initializer_list<baton_tensor_type> kMoveTypesOrString = {
    BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8,
    BATON_TYPE_INT8,    BATON_TYPE_INT16, BATON_TYPE_STRING};

struct StridedSliceState : OpState {
  StridedSlicePlan plan;
};

void strided_slice_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", kMoveTypesOrString);
  StridedSliceSpec spec;
  auto begin = ctx.shape_ints(ctx.input(1), "begin (input 1)");
  auto end = begin ? ctx.shape_ints(ctx.input(2), "end (input 2)") : std::nullopt;
  auto strides = end ? ctx.shape_ints(ctx.input(3), "strides (input 3)") : std::nullopt;
  if (!strides) return;
  spec.begin = std::move(*begin);
  spec.end = std::move(*end);
  spec.strides = std::move(*strides);
  ctx.require(spec.begin.size() == spec.end.size() && spec.begin.size() == spec.strides.size(),
              "begin, end and strides differ in length");
  const auto& o = ctx.options().u.strided_slice;
  spec.begin_mask = o.begin_mask;
  spec.end_mask = o.end_mask;
  spec.ellipsis_mask = o.ellipsis_mask;
  spec.new_axis_mask = o.new_axis_mask;
  spec.shrink_axis_mask = o.shrink_axis_mask;
  spec.offset = o.offset != 0;
  const auto in = ctx.shape(input);
  auto& s = ctx.state<StridedSliceState>();
  const std::string error = plan_strided_slice(in.data(), static_cast<int>(in.size()), spec, s.plan);
  ctx.require(error.empty(), error);
  ctx.require_type(ctx.output(0), "output", {ctx.type(input)});  // elements are moved as they are
  ctx.set_output_shape(ctx.output(0), s.plan.out_shape);
  if (ctx.type(input) == BATON_TYPE_STRING) {
    prepare_string_move(ctx, ctx.input(0), [&](const int32_t* from, int32_t* to) { strided_slice(s.plan, from, to, sizeof(int32_t)); });
  }
}

void strided_slice_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  strided_slice(ctx.state<StridedSliceState>().plan, ctx.data<void>(input), ctx.mutable_data<void>(ctx.output(0)),
                element_size(ctx.type(input)));
}

struct GatherState : OpState {
  GatherParams params;
};

void gather_elements(const OpContext& ctx, const void* from, void* to) {
  const auto& p = ctx.state<GatherState>().params;
  baton_tensor* indices = ctx.input(1);
  const size_t size = move_element_size(ctx.type(ctx.input(0)));
  int64_t bad = 0;
  const bool ok = ctx.type(indices) == BATON_TYPE_INT32 ? gather(p, from, ctx.data<int32_t>(indices), to, size, &bad)
                                                        : gather(p, from, ctx.data<int64_t>(indices), to, size, &bad);
  if (!ok) {
    ctx.fail(BATON_INVALID_ARGUMENT, "index " + std::to_string(bad) + " out of range [0, " +
                                         std::to_string(p.axis_size) + ")");
  }
}

void gather_prepare(OpContext& ctx) {
  baton_tensor* params = ctx.input(0);
  baton_tensor* indices = ctx.input(1);
  ctx.require_type(params, "params", kMoveTypesOrString);
  ctx.require_type(ctx.output(0), "output", {ctx.type(params)});  // elements are moved as they are
  ctx.require_type(indices, "indices", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  if (ctx.type(params) == BATON_TYPE_STRING) ctx.require_rank(params, "string params", 1);
  const auto ps = ctx.shape(params);
  const auto is = ctx.shape(indices);
  const int prank = static_cast<int>(ps.size()), irank = static_cast<int>(is.size());
  const auto& o = ctx.options().u.gather;
  int axis = o.axis, batch_dims = o.batch_dims;
  if (axis < 0) axis += prank;
  if (batch_dims < 0) batch_dims += irank;
  ctx.require(axis >= 0 && axis < prank, "axis " + std::to_string(o.axis) + " out of range for rank " +
                                             std::to_string(prank));
  ctx.require(batch_dims >= 0 && batch_dims <= axis && batch_dims <= irank,
              "batch_dims " + std::to_string(o.batch_dims) + " out of range");
  GatherParams& p = ctx.state<GatherState>().params;
  p = GatherParams{};
  std::vector<int32_t> out;
  for (int d = 0; d < batch_dims; ++d) {
    ctx.require(ps[d] == is[d], "params and indices differ in batch dimension " + std::to_string(d));
    p.batch *= ps[d];
    out.push_back(ps[d]);
  }
  for (int d = batch_dims; d < axis; ++d) {
    p.outer *= ps[d];
    out.push_back(ps[d]);
  }
  p.indices_per_batch = 1;
  for (int d = batch_dims; d < irank; ++d) {
    p.indices_per_batch *= is[d];
    out.push_back(is[d]);
  }
  p.axis_size = ps[axis];
  for (int d = axis + 1; d < prank; ++d) {
    p.inner *= ps[d];
    out.push_back(ps[d]);
  }
  ctx.set_output_shape(ctx.output(0), out);
  if (ctx.type(params) == BATON_TYPE_STRING) {
    prepare_string_move(ctx, ctx.input(0), [&](const int32_t* from, int32_t* to) { gather_elements(ctx, from, to); });
  }
}

void gather_invoke(OpContext& ctx) {
  gather_elements(ctx, ctx.data<void>(ctx.input(0)), ctx.mutable_data<void>(ctx.output(0)));
}

constexpr OpDef kOps[] = {
    {BATON_OP_STRIDED_SLICE, "STRIDED_SLICE", 1, 8, strided_slice_prepare, strided_slice_invoke},
    {BATON_OP_GATHER, "GATHER", 1, 7, gather_prepare, gather_invoke},
};

}  // namespace

std::span<const OpDef> slice_ops() { return kOps; }

}  // namespace baton::builtin
