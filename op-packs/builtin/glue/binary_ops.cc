// Broadcasting binary ops: ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MINIMUM, MAXIMUM and PRELU. The
// broadcast is planned in prepare; invoke is one kernel call. uint8 / int8 ADD, SUB and MUL go to
// glue/quantized_ops.cc with the same plan; int32 / int64 ADD, SUB, MUL, MINIMUM and MAXIMUM to
// binary_integer(); int16 ADD, SUB and MUL (16x8) to glue/q16x8_ops.cc; 8-bit PRELU and int8 SQUARED_DIFFERENCE to glue/quantized_activation_ops.cc.
#include <vector>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "kernels/binary.h"
#include "op_codes.h"

namespace baton::builtin {
namespace {

struct BinaryState : OpState {
  BroadcastPlan plan;
  ActivationRange range;
  baton_tensor_type type = BATON_TYPE_FLOAT32;  // FLOAT32, or INT32 / INT64 for the integer ops
};

// int32 and int64 ADD, SUB, MUL, MINIMUM and MAXIMUM (TFLite's integer kernels; no fused activation here).
bool integer_op(int32_t code, baton_tensor_type type) {
  return (type == BATON_TYPE_INT32 || type == BATON_TYPE_INT64) &&
         (code == op::kAdd || code == op::kSub || code == op::kMul || code == op::kMinimum || code == op::kMaximum);
}

BinaryOp binary_op_of(int32_t code) {
  switch (code) {
    case op::kAdd: return BinaryOp::kAdd;
    case op::kSub: return BinaryOp::kSub;
    case op::kMul: return BinaryOp::kMul;
    case op::kDiv: return BinaryOp::kDiv;
    case op::kSquaredDifference: return BinaryOp::kSquaredDifference;
    case op::kMinimum: return BinaryOp::kMinimum;
    case op::kMaximum: return BinaryOp::kMaximum;
    default: return BinaryOp::kPrelu;
  }
}

void binary_prepare(OpContext& ctx) {
  baton_tensor* a = ctx.input(0);
  baton_tensor* b = ctx.input(1);
  const bool prelu = ctx.op_code() == op::kPrelu;
  const int32_t code = ctx.op_code();
  const baton_tensor_type at = ctx.type(a);
  const bool eight_bit = at == BATON_TYPE_UINT8 || at == BATON_TYPE_INT8;
  const bool quantized = eight_bit && (code == op::kAdd || code == op::kSub || code == op::kMul);
  // 8-bit PRELU and int8 SQUARED_DIFFERENCE: their own kernels, after the broadcast check below.
  const bool quantized_other = eight_bit && (prelu || code == op::kSquaredDifference);
  const bool int16 = at == BATON_TYPE_INT16 && (code == op::kAdd || code == op::kSub || code == op::kMul);
  const bool integer = integer_op(code, at);
  if (integer) {
    ctx.require_type(b, "second input", {at});
    ctx.require_type(ctx.output(0), "output", {at});
    const bool fused = code == op::kAdd || code == op::kSub || code == op::kMul;
    ctx.require(!fused || ctx.options().u.elementwise.activation == 0,
                "a fused activation on integer inputs is not supported");
  } else if (!quantized && !quantized_other && !int16) {
    if (code == op::kAdd || code == op::kSub || code == op::kMul || prelu) {
      ctx.require_type(a, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
    }
    ctx.require_float(a, "input");
    ctx.require_float(b, prelu ? "alpha" : "second input");
  }
  const auto sa = ctx.shape(a);
  const auto sb = ctx.shape(b);
  ctx.require(static_cast<int>(sa.size()) <= kMaxBroadcastRank && static_cast<int>(sb.size()) <= kMaxBroadcastRank,
              "rank above " + std::to_string(kMaxBroadcastRank) + " not supported");
  std::vector<int32_t> out;
  if (!broadcast_shape(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size()), out)) {
    auto text = [](std::span<const int32_t> s) {
      std::string t = "[";
      for (size_t i = 0; i < s.size(); ++i) {
        if (i) t += ',';
        t += std::to_string(s[i]);
      }
      t += ']';
      return t;
    };
    ctx.fail(BATON_INVALID_ARGUMENT, "shapes " + text(sa) + " and " + text(sb) + " do not broadcast");
  }
  const BroadcastPlan plan =
      plan_broadcast(sa.data(), static_cast<int>(sa.size()), sb.data(), static_cast<int>(sb.size()));
  ctx.set_output_shape(ctx.output(0), out);
  if (quantized) return quantized_binary_prepare(ctx, plan);
  if (int16) return binary_16_prepare(ctx, out);
  if (quantized_other && prelu) return quantized_prelu_prepare(ctx, out);
  if (quantized_other) return quantized_squared_difference_prepare(ctx, out);
  auto& s = ctx.state<BinaryState>();
  s.plan = plan;
  s.type = integer ? at : BATON_TYPE_FLOAT32;
  const bool fused = code == op::kAdd || code == op::kSub || code == op::kMul || code == op::kDiv;
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
    {op::kAdd, "ADD", 1, 4, binary_prepare, binary_invoke},
    {op::kSub, "SUB", 1, 5, binary_prepare, binary_invoke},
    {op::kMul, "MUL", 1, 5, binary_prepare, binary_invoke},
    {op::kDiv, "DIV", 1, 2, binary_prepare, binary_invoke},
    {op::kSquaredDifference, "SQUARED_DIFFERENCE", 1, 2, binary_prepare, binary_invoke},
    {op::kMinimum, "MINIMUM", 1, 4, binary_prepare, binary_invoke},
    {op::kMaximum, "MAXIMUM", 1, 4, binary_prepare, binary_invoke},
    {op::kPrelu, "PRELU", 1, 1, binary_prepare, binary_invoke},
};

}  // namespace

std::span<const OpDef> binary_ops() { return kOps; }

}  // namespace baton::builtin
