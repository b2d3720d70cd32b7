// Ops that move data without arithmetic: RESHAPE, PAD, PADV2, CONCATENATION, PACK, UNPACK, SPLIT, SPLIT_V,
// DEPTH_TO_SPACE and TRANSPOSE, on float32, int32, int64 and 8-bit codes; shapes and chunk sizes are
// fixed in prepare, at load for constant shapes, axes, sizes and permutations, at invoke (the outputs
// dynamic) for computed ones. 8-bit PAD writes the zero point (0.0); an 8-bit CONCATENATION whose inputs have
// other scales than the output rescales them (glue/quantized_ops.cc).
#include <cstring>
#include <vector>

#include "glue/op_context.h"
#include "glue/string_output.h"
#include "glue/quantized_ops.h"
#include "kernels/concat.h"
#include "kernels/pad.h"
#include "kernels/transpose.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

constexpr std::initializer_list<baton_tensor_type> kMoveTypes = {BATON_TYPE_FLOAT32, BATON_TYPE_INT32,
                                                                  BATON_TYPE_INT64, BATON_TYPE_UINT8,
                                                                  BATON_TYPE_INT8, BATON_TYPE_INT16};

bool is_8bit(const OpContext& ctx, const baton_tensor* t) {
  return ctx.type(t) == BATON_TYPE_UINT8 || ctx.type(t) == BATON_TYPE_INT8;
}

// An 8-bit op that moves codes without rescaling needs the output to share the input's scale and
// zero point (as TFLite checks).
void require_same_quantization(const OpContext& ctx, const baton_tensor* in, const baton_tensor* out,
                               const char* in_role) {
  const ActQuant a = ctx.act_quant(in, in_role);
  const ActQuant b = ctx.act_quant(out, "output");
  ctx.require(a.scale == b.scale && a.zero_point == b.zero_point,
              std::string(in_role) + " (" + ctx.tensor_label(in) + ") has scale " + std::to_string(a.scale) +
                  " and zero point " + std::to_string(a.zero_point) + ", the output " + std::to_string(b.scale) +
                  " and " + std::to_string(b.zero_point) + "; this op does not rescale");
}

void require_same_type(const OpContext& ctx, const baton_tensor* a, const baton_tensor* b, const char* what) {
  ctx.require(ctx.type(a) == ctx.type(b), std::string(what) + " type " + type_name(ctx.type(b)) +
                                              " differs from the input's " + type_name(ctx.type(a)));
}

int64_t product(std::span<const int32_t> dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// ---- RESHAPE ----

void reshape_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require(reshape_element_size(ctx.type(input)) > 0 || ctx.type(input) == BATON_TYPE_STRING,
              std::string("input type ") + type_name(ctx.type(input)) + " not supported by the builtin pack");
  require_same_type(ctx, input, ctx.output(0), "output");  // the bytes move as they are
  std::vector<int64_t> requested;
  baton_tensor* shape = ctx.optional_input(1);
  const auto& o = ctx.options().u.reshape;
  // As TFLite: an int32 vector shape input decides, constant or computed (then known at invoke, when the
  // host prepares this node again with the values), even where the options also give a new_shape (which
  // a converter wrote for the shapes of its day: a resized input can make the two differ).
  if (shape && ctx.rank(shape) == 1 && ctx.type(shape) == BATON_TYPE_INT32) {
    auto values = ctx.shape_ints(shape, "shape (input 1)");
    if (!values) return;
    requested = std::move(*values);
  } else if (o.new_shape_count >= 0 && ctx.options().kind != 0) {
    requested.assign(o.new_shape, o.new_shape + o.new_shape_count);
  } else if (shape) {
    ctx.fail(BATON_UNSUPPORTED, "the shape (input 1) must be a vector of INT32");
  } else {
    ctx.fail(BATON_INVALID_ARGUMENT, "no shape given (neither a shape input nor a new_shape option)");
  }
  const int64_t count = ctx.element_count(input);
  int64_t known = 1;
  int unknown = -1;
  std::vector<int32_t> out(requested.size());
  for (size_t i = 0; i < requested.size(); ++i) {
    if (requested[i] == -1) {
      ctx.require(unknown < 0, "more than one -1 in the new shape");
      unknown = static_cast<int>(i);
    } else {
      ctx.require(requested[i] >= 0, "negative dimension " + std::to_string(requested[i]) + " in the new shape");
      known *= requested[i];
      out[i] = static_cast<int32_t>(requested[i]);
    }
  }
  if (unknown >= 0) {
    ctx.require(known > 0 && count % known == 0, "cannot infer the -1 dimension: " + std::to_string(count) +
                                                     " elements into blocks of " + std::to_string(known));
    out[unknown] = static_cast<int32_t>(count / known);
    known *= out[unknown];
  }
  ctx.require(known == count, "the new shape holds " + std::to_string(known) + " elements, the input " +
                                  std::to_string(count));
  ctx.set_output_shape(ctx.output(0), out);
  if (ctx.type(input) == BATON_TYPE_STRING) prepare_string_copy(ctx);
}

void copy_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const size_t bytes = static_cast<size_t>(ctx.element_count(input)) * reshape_element_size(ctx.type(input));
  if (bytes) std::memcpy(ctx.mutable_data<void>(ctx.output(0)), ctx.data<void>(input), bytes);
}

// ---- PAD / PADV2 ----

struct PadState : OpState {
  PadPlan plan;
  uint8_t pad_byte = 0;  // 8-bit PAD: the code of 0.0 (the zero point)
};

void pad_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", kMoveTypes);
  const auto in = ctx.shape(input);
  const int rank = static_cast<int>(in.size());
  ctx.require(rank <= kMaxPadRank, "rank above " + std::to_string(kMaxPadRank) + " not supported");
  baton_tensor* paddings = ctx.input(1);
  const auto pads_value = ctx.shape_ints(paddings, "paddings (input 1)");
  if (!pads_value) return;
  const std::vector<int64_t>& pads = *pads_value;
  ctx.require(static_cast<int>(pads.size()) == 2 * rank, "paddings has " + std::to_string(pads.size()) +
                                                             " values, needs 2 x rank = " + std::to_string(2 * rank));
  const bool has_value = ctx.op_code() == BATON_OP_PADV2 && ctx.optional_input(2);
  if (has_value) {
    baton_tensor* value = ctx.input(2);
    require_same_type(ctx, input, value, "constant_values");
    ctx.require(ctx.element_count(value) == 1, "constant_values must hold one value");
    if (is_8bit(ctx, input)) require_same_quantization(ctx, value, ctx.output(0), "constant_values");
  }
  auto& state = ctx.state<PadState>();
  state.pad_byte = 0;
  require_same_type(ctx, input, ctx.output(0), "output");
  if (is_8bit(ctx, input)) {
    require_same_quantization(ctx, input, ctx.output(0), "input");
    state.pad_byte = static_cast<uint8_t>(ctx.act_quant(ctx.output(0), "output").zero_point);
  }
  PadPlan& plan = state.plan;
  plan.rank = rank;
  std::vector<int32_t> out(rank);
  for (int d = 0; d < rank; ++d) {
    ctx.require(pads[2 * d] >= 0 && pads[2 * d + 1] >= 0, "negative padding in dimension " + std::to_string(d));
    plan.in_dims[d] = in[d];
    plan.before[d] = pads[2 * d];
    plan.after[d] = pads[2 * d + 1];
    out[d] = static_cast<int32_t>(in[d] + pads[2 * d] + pads[2 * d + 1]);
  }
  ctx.set_output_shape(ctx.output(0), out);
}

void pad_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const size_t size = element_size(ctx.type(input));
  const auto& state = ctx.state<PadState>();
  uint64_t zero = 0;
  const void* value = &zero;
  if (size == 1) value = &state.pad_byte;
  if (ctx.op_code() == BATON_OP_PADV2 && ctx.optional_input(2)) value = ctx.data<void>(ctx.input(2));
  pad(state.plan, ctx.data<void>(input), ctx.mutable_data<void>(ctx.output(0)), size, value);
}

// ---- CONCATENATION / PACK ----

struct ConcatState : OpState {
  int64_t outer = 1;
  std::vector<int64_t> chunks;
  std::vector<const void*> inputs;  // filled at invoke; sized here
  ActivationRange range;
  bool clamp = false;
};

void concat_prepare(OpContext& ctx) {
  const bool pack = ctx.op_code() == BATON_OP_PACK;
  const int count = ctx.input_count();
  ctx.require(count >= 1, "needs at least one input");
  baton_tensor* first = ctx.input(0);
  ctx.require_type(first, "input", kMoveTypes);
  const auto s0 = ctx.shape(first);
  const int rank = static_cast<int>(s0.size());
  auto& s = ctx.state<ConcatState>();
  s.chunks.assign(count, 0);
  s.inputs.assign(count, nullptr);
  std::vector<int32_t> out(s0.begin(), s0.end());
  int axis;
  if (pack) {
    const auto& o = ctx.options().u.pack;
    ctx.require(o.count == count, "values_count " + std::to_string(o.count) + " differs from the " +
                                      std::to_string(count) + " inputs");
    axis = normalize_axis(ctx, o.axis, rank + 1);
    out.insert(out.begin() + axis, count);
  } else {
    axis = normalize_axis(ctx, ctx.options().u.concat.axis, rank);
    out[axis] = 0;
  }
  for (int i = 0; i < count; ++i) {
    baton_tensor* t = ctx.input(i);
    require_same_type(ctx, first, t, ("input " + std::to_string(i)).c_str());
    const auto si = ctx.shape(t);
    ctx.require(static_cast<int>(si.size()) == rank, "input " + std::to_string(i) + " has rank " +
                                                         std::to_string(si.size()) + ", input 0 has " +
                                                         std::to_string(rank));
    for (int d = 0; d < rank; ++d) {
      ctx.require(pack ? si[d] == s0[d] : (d == axis || si[d] == s0[d]),
                  "input " + std::to_string(i) + " differs from input 0 in dimension " + std::to_string(d));
    }
    if (!pack) out[axis] += si[axis];
    s.chunks[i] = product(si, axis, si.size());
  }
  s.outer = product(s0, 0, axis);
  s.clamp = false;
  if (!pack) {
    s.range = ctx.activation(ctx.options().u.concat.activation);
    s.clamp = ctx.options().u.concat.activation != BATON_ACT_NONE;
    ctx.require(!s.clamp || ctx.type(first) == BATON_TYPE_FLOAT32, "a fused activation needs float32");
  }
  require_same_type(ctx, first, ctx.output(0), "output");
  ctx.set_output_shape(ctx.output(0), out);
  if (is_8bit(ctx, first)) {
    // TFLite reads an 8-bit tensor without quantization parameters as scale 0 and zero point 0: when no
    // tensor of the node has any, they all agree and the bytes are copied.
    bool unquantized = ctx.quant(ctx.output(0)).count == 0;
    for (int i = 0; i < count && unquantized; ++i) unquantized = ctx.quant(ctx.input(i)).count == 0;
    if (unquantized) return;
    if (!pack) return quantized_concat_prepare(ctx, s.outer, s.chunks);
    for (int i = 0; i < count; ++i) {
      require_same_quantization(ctx, ctx.input(i), ctx.output(0), ("input " + std::to_string(i)).c_str());
    }
  }
}

void concat_invoke(OpContext& ctx) {
  auto& s = ctx.state<ConcatState>();
  for (size_t i = 0; i < s.inputs.size(); ++i) s.inputs[i] = ctx.data<void>(ctx.input(static_cast<int>(i)));
  baton_tensor* output = ctx.output(0);
  const size_t size = element_size(ctx.type(output));
  concat(s.outer, s.chunks.data(), s.inputs.data(), static_cast<int>(s.inputs.size()), ctx.mutable_data<void>(output),
         size);
  if (s.clamp) {
    float* out = ctx.mutable_data<float>(output);
    const int64_t n = ctx.element_count(output);
    for (int64_t i = 0; i < n; ++i) out[i] = clamp_activation(out[i], s.range);
  }
}

// ---- SPLIT / UNPACK ----

struct SplitState : OpState {
  int64_t outer = 1;
  std::vector<int64_t> chunks;
  std::vector<void*> outputs;
  int data_input = 0;
};

void split_prepare(OpContext& ctx) {
  const bool unpack = ctx.op_code() == BATON_OP_UNPACK;
  const bool split_v = ctx.op_code() == BATON_OP_SPLIT_V;
  auto& s = ctx.state<SplitState>();
  s.data_input = unpack || split_v ? 0 : 1;
  baton_tensor* input = ctx.input(s.data_input);
  ctx.require_type(input, "input", kMoveTypes);
  const auto in = ctx.shape(input);
  const int rank = static_cast<int>(in.size());
  int axis;
  int count;
  std::vector<int64_t> sizes;  // along the axis, per output
  if (unpack) {
    axis = normalize_axis(ctx, ctx.options().u.pack.axis, rank);
    count = in[axis];
    ctx.require(ctx.options().u.pack.count == count, "num " + std::to_string(ctx.options().u.pack.count) +
                                                         " differs from dimension " + std::to_string(axis) +
                                                         " of size " + std::to_string(count));
    sizes.assign(count, 1);
  } else {
    // Computed axis or sizes make every output dynamic: prepared again at invoke with the values.
    const auto axis_value = ctx.shape_ints(ctx.input(split_v ? 2 : 0), split_v ? "axis (input 2)" : "axis (input 0)");
    const auto sizes_value = split_v && axis_value ? ctx.shape_ints(ctx.input(1), "size_splits (input 1)") : std::nullopt;
    if (!axis_value || (split_v && !sizes_value)) return;
    ctx.require(axis_value->size() == 1, "axis must hold one value");
    axis = normalize_axis(ctx, (*axis_value)[0], rank);
    if (split_v) {
      // size_splits: one size per output, at most one -1 (the rest of the dimension).
      sizes = *sizes_value;
      count = static_cast<int>(sizes.size());
      int64_t known = 0;
      int unknown = -1;
      for (int i = 0; i < count; ++i) {
        if (sizes[i] == -1) {
          ctx.require(unknown < 0, "more than one -1 in size_splits");
          unknown = i;
        } else {
          ctx.require(sizes[i] >= 0, "negative size " + std::to_string(sizes[i]) + " in size_splits");
          known += sizes[i];
        }
      }
      if (unknown >= 0) {
        ctx.require(known <= in[axis], "size_splits add up to more than dimension " + std::to_string(axis));
        sizes[unknown] = in[axis] - known;
        known = in[axis];
      }
      ctx.require(known == in[axis], "size_splits add up to " + std::to_string(known) + ", dimension " +
                                         std::to_string(axis) + " has " + std::to_string(in[axis]));
    } else {
      count = ctx.options().u.split.num_splits;
      ctx.require(count > 0 && in[axis] % count == 0, "dimension " + std::to_string(axis) + " of size " +
                                                          std::to_string(in[axis]) + " does not split into " +
                                                          std::to_string(count));
      sizes.assign(count, in[axis] / count);
    }
  }
  ctx.require(ctx.output_count() == count, "has " + std::to_string(ctx.output_count()) + " outputs, needs " +
                                               std::to_string(count));
  const int64_t inner = product(in, axis + 1, in.size());
  s.outer = product(in, 0, axis);
  s.chunks.assign(count, 0);
  s.outputs.assign(count, nullptr);
  for (int i = 0; i < count; ++i) {
    std::vector<int32_t> out(in.begin(), in.end());
    if (unpack) out.erase(out.begin() + axis);
    else out[axis] = static_cast<int32_t>(sizes[i]);
    s.chunks[i] = sizes[i] * inner;
    require_same_type(ctx, input, ctx.output(i), ("output " + std::to_string(i)).c_str());
    ctx.set_output_shape(ctx.output(i), out);
  }
}

void split_invoke(OpContext& ctx) {
  auto& s = ctx.state<SplitState>();
  for (size_t i = 0; i < s.outputs.size(); ++i) s.outputs[i] = ctx.mutable_data<void>(ctx.output(static_cast<int>(i)));
  baton_tensor* input = ctx.input(s.data_input);
  split(s.outer, s.chunks.data(), ctx.data<void>(input), s.outputs.data(), static_cast<int>(s.outputs.size()),
        element_size(ctx.type(input)));
}

// ---- DEPTH_TO_SPACE ----

void depth_to_space_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", kMoveTypes);
  require_same_type(ctx, input, ctx.output(0), "output");
  ctx.require_rank(input, "input", 4);
  const int block = ctx.options().u.block.block_size;
  const auto in = ctx.shape(input);
  ctx.require(block > 0 && in[3] % (block * block) == 0, "depth " + std::to_string(in[3]) +
                                                             " is not a multiple of block_size^2 (block_size " +
                                                             std::to_string(block) + ")");
  ctx.set_output_shape(ctx.output(0), {in[0], in[1] * block, in[2] * block, in[3] / (block * block)});
}

void depth_to_space_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  const auto in = ctx.shape(input);
  depth_to_space(in[0], in[1], in[2], in[3], ctx.options().u.block.block_size, ctx.data<void>(input),
                 ctx.mutable_data<void>(ctx.output(0)), element_size(ctx.type(input)));
}

// ---- TRANSPOSE ----

struct TransposeState : OpState {
  std::vector<int32_t> in_dims, perm;
};

void transpose_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", kMoveTypes);
  require_same_type(ctx, input, ctx.output(0), "output");
  const auto in = ctx.shape(input);
  const int rank = static_cast<int>(in.size());
  ctx.require(rank <= kMaxTransposeRank, "rank above " + std::to_string(kMaxTransposeRank) + " not supported");
  const auto perm_value = ctx.shape_ints(ctx.input(1), "perm (input 1)");
  if (!perm_value) return;  // computed: prepared again at invoke with the values
  const std::vector<int64_t>& perm = *perm_value;
  ctx.require(static_cast<int>(perm.size()) == rank, "perm has " + std::to_string(perm.size()) +
                                                         " values, the input rank is " + std::to_string(rank));
  auto& s = ctx.state<TransposeState>();
  s.in_dims.assign(in.begin(), in.end());
  s.perm.assign(rank, 0);
  std::vector<bool> seen(rank, false);
  std::vector<int32_t> out(rank);
  for (int d = 0; d < rank; ++d) {
    const int p = normalize_axis(ctx, perm[d], rank);
    ctx.require(!seen[p], "perm repeats dimension " + std::to_string(p));
    seen[p] = true;
    s.perm[d] = p;
    out[d] = in[p];
  }
  ctx.set_output_shape(ctx.output(0), out);
}

void transpose_invoke(OpContext& ctx) {
  const auto& s = ctx.state<TransposeState>();
  baton_tensor* input = ctx.input(0);
  transpose(s.in_dims.data(), s.perm.data(), static_cast<int>(s.perm.size()), ctx.data<void>(input),
            ctx.mutable_data<void>(ctx.output(0)), element_size(ctx.type(input)));
}

constexpr OpDef kOps[] = {
    {BATON_OP_RESHAPE, "RESHAPE", 1, 1, reshape_prepare, copy_invoke},
    {BATON_OP_PAD, "PAD", 1, 5, pad_prepare, pad_invoke},
    {BATON_OP_PADV2, "PADV2", 1, 5, pad_prepare, pad_invoke},
    {BATON_OP_CONCATENATION, "CONCATENATION", 1, 6, concat_prepare, concat_invoke},
    {BATON_OP_PACK, "PACK", 1, 4, concat_prepare, concat_invoke},
    {BATON_OP_UNPACK, "UNPACK", 1, 4, split_prepare, split_invoke},
    {BATON_OP_SPLIT, "SPLIT", 1, 4, split_prepare, split_invoke},
    {BATON_OP_SPLIT_V, "SPLIT_V", 1, 2, split_prepare, split_invoke},
    {BATON_OP_DEPTH_TO_SPACE, "DEPTH_TO_SPACE", 1, 2, depth_to_space_prepare, depth_to_space_invoke},
    {BATON_OP_TRANSPOSE, "TRANSPOSE", 1, 9, transpose_prepare, transpose_invoke},
};

}  // namespace

std::span<const OpDef> reshape_ops() { return kOps; }

}  // namespace baton::builtin
