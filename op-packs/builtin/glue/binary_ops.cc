// Broadcasting binary ops: ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MINIMUM, MAXIMUM and PRELU. The
// broadcast is planned in prepare; invoke is one kernel call. uint8 / int8 ADD, SUB and MUL go to
// glue/quantized_ops.cc with the same plan; int32 / int64 ADD, SUB, MUL, MINIMUM and MAXIMUM to
// binary_integer(); uint8 / int8 / int16 MINIMUM and MAXIMUM compare codes here; int16 ADD, SUB and MUL (16x8) to glue/q16x8_ops.cc; 8-bit PRELU and int8 SQUARED_DIFFERENCE to glue/quantized_activation_ops.cc.
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "kernels/binary.h"
#include "kernels/broadcast_index.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// MINIMUM / MAXIMUM on uint8, int8 or int16 codes: TFLite compares the codes as they are.
struct CodeMinMaxState : OpState {
  IndexPlan plan;
};

template <typename T>
void code_min_max(const IndexPlan& plan, bool maximum, const T* a, const T* b, T* out) {
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t j, int64_t) {
    out[o] = maximum ? std::max(a[i], b[j]) : std::min(a[i], b[j]);
  });
}

void code_min_max_invoke(OpContext& ctx) {
  const IndexPlan& plan = ctx.state<CodeMinMaxState>().plan;
  const bool maximum = ctx.op_code() == BATON_OP_MAXIMUM;
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  baton_tensor* out = ctx.output(0);
  switch (ctx.type(a)) {
    case BATON_TYPE_UINT8: return code_min_max(plan, maximum, ctx.data<uint8_t>(a), ctx.data<uint8_t>(b), ctx.mutable_data<uint8_t>(out));
    case BATON_TYPE_INT8: return code_min_max(plan, maximum, ctx.data<int8_t>(a), ctx.data<int8_t>(b), ctx.mutable_data<int8_t>(out));
    default: return code_min_max(plan, maximum, ctx.data<int16_t>(a), ctx.data<int16_t>(b), ctx.mutable_data<int16_t>(out));
  }
}

// int32 DIV: C++'s truncating division, as TFLite's kernel divides; a zero divisor (and INT32_MIN / -1,
// which overflows) fails at invoke where TFLite would crash.
struct IntDivState : OpState {
  IndexPlan plan;
};

void int_div_invoke(OpContext& ctx) {
  const IndexPlan& plan = ctx.state<IntDivState>().plan;
  const int32_t* a = ctx.data<int32_t>(ctx.input(0));
  const int32_t* b = ctx.data<int32_t>(ctx.input(1));
  int32_t* out = ctx.mutable_data<int32_t>(ctx.output(0));
  bool bad = false;
  for_each_index(plan, [&](int64_t o, int64_t i, int64_t j, int64_t) {
    if (b[j] == 0 || (b[j] == -1 && a[i] == INT32_MIN)) {
      bad = true;
      out[o] = 0;
      return;
    }
    out[o] = a[i] / b[j];
  });
  ctx.require(!bad, "int32 division by zero (or of INT32_MIN by -1)");
}

struct BinaryState : OpState {
  BroadcastPlan plan;
  ActivationRange range;
  baton_tensor_type type = BATON_TYPE_FLOAT32;  // FLOAT32, or INT32 / INT64 for the integer ops
};

// int32 and int64 ADD, SUB, MUL, MINIMUM and MAXIMUM (TFLite's integer kernels; no fused activation here).
bool integer_op(int32_t code, baton_tensor_type type) {
  return (type == BATON_TYPE_INT32 || type == BATON_TYPE_INT64) &&
         (code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL || code == BATON_OP_MINIMUM || code == BATON_OP_MAXIMUM);
}

BinaryOp binary_op_of(int32_t code) {
  switch (code) {
    case BATON_OP_ADD: return BinaryOp::kAdd;
    case BATON_OP_SUB: return BinaryOp::kSub;
    case BATON_OP_MUL: return BinaryOp::kMul;
    case BATON_OP_DIV: return BinaryOp::kDiv;
    case BATON_OP_SQUARED_DIFFERENCE: return BinaryOp::kSquaredDifference;
    case BATON_OP_MINIMUM: return BinaryOp::kMinimum;
    case BATON_OP_MAXIMUM: return BinaryOp::kMaximum;
    default: return BinaryOp::kPrelu;
  }
}

void binary_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  const bool prelu = ctx.op_code() == BATON_OP_PRELU;
  const int32_t code = ctx.op_code();
  const baton_tensor_type at = ctx.type(a);
  const bool eight_bit = at == BATON_TYPE_UINT8 || at == BATON_TYPE_INT8;
  const bool quantized = eight_bit && (code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL);
  // 8-bit PRELU and int8 SQUARED_DIFFERENCE: their own kernels, after the broadcast check below.
  const bool quantized_other = eight_bit && (prelu || code == BATON_OP_SQUARED_DIFFERENCE || code == BATON_OP_DIV);
  const bool int16 = at == BATON_TYPE_INT16 && (code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL);
  const bool code_min_max = (eight_bit || at == BATON_TYPE_INT16) && (code == BATON_OP_MINIMUM || code == BATON_OP_MAXIMUM);
  const bool int_div = at == BATON_TYPE_INT32 && code == BATON_OP_DIV;
  const bool integer = integer_op(code, at);
  if (integer) {
    ctx.require_type(b, "second input", {at});
    ctx.require_type(ctx.output(0), "output", {at});
    const bool fused = code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL;
    ctx.require(!fused || ctx.options().u.elementwise.activation == 0,
                "a fused activation on integer inputs is not supported");
  } else if (int_div) {
    ctx.require_type(b, "second input", {at});
    ctx.require_type(ctx.output(0), "output", {at});
    ctx.require(ctx.options().u.elementwise.activation == 0, "a fused activation on integer inputs is not supported");
  } else if (code_min_max) {
    ctx.require_type(b, "second input", {at});
    ctx.require_type(ctx.output(0), "output", {at});
  } else if (!quantized && !quantized_other && !int16) {
    if (code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL || prelu) {
      ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
    }
    ctx.require_float(a, "input");
    ctx.require_float(b, prelu ? "alpha" : "second input");
    ctx.require_float(ctx.output(0), "output");  // the kernel writes floats
  }
  const auto sa = ctx.shape(a);
  const auto sb = ctx.shape(b);
  ctx.require(static_cast<int>(sa.size()) <= kMaxBroadcastRank && static_cast<int>(sb.size()) <= kMaxBroadcastRank,
              "rank above " + std::to_string(kMaxBroadcastRank) + " not supported");
  std::vector<int32_t> out;
  if (!broadcast_shape(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size()), out)) {
    ctx.fail(BATON_INVALID_ARGUMENT, "shapes " + shape_text(sa) + " and " + shape_text(sb) + " do not broadcast");
  }
  const BroadcastPlan plan =
      plan_broadcast(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size()));
  ctx.set_output_shape(ctx.output(0), out);
  if (quantized) return quantized_binary_prepare(ctx, plan);
  if (int16) return binary_16_prepare(ctx, plan);
  if (int_div) {
    const std::array<std::span<const int32_t>, 2> ins = {sa, sb};
    ctx.state<IntDivState>().plan = plan_index(out, ins);
    return ctx.set_invoke(int_div_invoke);
  }
  if (code_min_max) {
    const std::array<std::span<const int32_t>, 2> ins = {sa, sb};
    ctx.state<CodeMinMaxState>().plan = plan_index(out, ins);
    return ctx.set_invoke(code_min_max_invoke);
  }
  if (quantized_other && prelu) return quantized_prelu_prepare(ctx, out);
  if (quantized_other && code == BATON_OP_DIV) return quantized_div_prepare(ctx, out);
  if (quantized_other) return quantized_squared_difference_prepare(ctx, out);
  auto& s = ctx.state<BinaryState>();
  s.plan = plan;
  s.type = integer ? at : BATON_TYPE_FLOAT32;
  const bool fused = code == BATON_OP_ADD || code == BATON_OP_SUB || code == BATON_OP_MUL || code == BATON_OP_DIV;
  s.range = fused ? ctx.activation(ctx.options().u.elementwise.activation) : ActivationRange{};
}

void binary_invoke(OpContext& ctx) {
  const auto& s = ctx.state<BinaryState>();
  const BinaryOp op = binary_op_of(ctx.op_code());
  if (s.type == BATON_TYPE_INT32) {
    binary_integer(op, s.plan, ctx.data<int32_t>(ctx.input(0)), ctx.data<int32_t>(ctx.input(1)),
                   ctx.mutable_data<int32_t>(ctx.output(0)));
    return;
  }
  if (s.type == BATON_TYPE_INT64) {
    binary_integer(op, s.plan, ctx.data<int64_t>(ctx.input(0)), ctx.data<int64_t>(ctx.input(1)),
                   ctx.mutable_data<int64_t>(ctx.output(0)));
    return;
  }
  binary(op, s.plan, ctx.data<float>(ctx.input(0)), ctx.data<float>(ctx.input(1)),
         ctx.mutable_data<float>(ctx.output(0)), s.range);
}

constexpr OpDef kOps[] = {
    {BATON_OP_ADD, "ADD", 1, 6, binary_prepare, binary_invoke},
    {BATON_OP_SUB, "SUB", 1, 5, binary_prepare, binary_invoke},
    {BATON_OP_MUL, "MUL", 1, 8, binary_prepare, binary_invoke},
    {BATON_OP_DIV, "DIV", 1, 2, binary_prepare, binary_invoke},
    {BATON_OP_SQUARED_DIFFERENCE, "SQUARED_DIFFERENCE", 1, 2, binary_prepare, binary_invoke},
    {BATON_OP_MINIMUM, "MINIMUM", 1, 4, binary_prepare, binary_invoke},
    {BATON_OP_MAXIMUM, "MAXIMUM", 1, 4, binary_prepare, binary_invoke},
    {BATON_OP_PRELU, "PRELU", 1, 1, binary_prepare, binary_invoke},
};

}  // namespace

std::span<const OpDef> binary_ops() { return kOps; }

}  // namespace baton::builtin
