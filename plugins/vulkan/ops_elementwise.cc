// Elementwise ops on floats (int32 operands: ops_int.cc). ADD, SUB, MUL, DIV (with their fused activation), PRELU, SQUARED_DIFFERENCE, MAXIMUM,
// MINIMUM, POW, FLOOR_MOD and FLOOR_DIV broadcast like numpy, as TFLite does: each operand is read through its own strides, zero
// along a broadcast dimension, and an operand of one channel is spread over the four lanes. RELU, RELU6,
// RELU_N1_TO_1, LOGISTIC, TANH, HARD_SWISH, EXP, RSQRT, SQRT, ABS, NEG, SQUARE and GELU map one vec4 at a
// time. The lanes past the channels of a tensor whose channels are not a multiple of 4 hold zeros; an op
// that maps zeros to something else (LOGISTIC, EXP, RSQRT; DIV and POW of two zeros) zeroes them again.
#include <algorithm>

#include "op_common.h"
#include "ops.h"

namespace baton::vulkan {
namespace {

// The operand's strides in vec4s along n, h, w and channel blocks; zero where it is broadcast.
struct Operand {
  int32_t strides[4];
  bool splat;  // one channel, spread over the lanes
};

Operand operand(const Shape4& s, const Shape4& out) {
  Operand o;
  const int32_t c4 = s.c4();
  o.strides[0] = s.n == out.n ? s.h * s.w * c4 : 0;
  o.strides[1] = s.h == out.h ? s.w * c4 : 0;
  o.strides[2] = s.w == out.w ? c4 : 0;
  o.splat = s.c != out.c;
  o.strides[3] = o.splat ? 0 : 1;
  return o;
}

}  // namespace

void plan_binary(GraphBuilder& g, const NodeView& node) {
  if (node.int32_input(0)) return plan_int_binary(g, node);
  int op = 0;
  int act = 0;
  switch (node.code()) {
    case BATON_OP_ADD: op = 0; break;
    case BATON_OP_SUB: op = 1; break;
    case BATON_OP_MUL: op = 2; break;
    case BATON_OP_PRELU: op = 3; break;
    case BATON_OP_DIV: op = 4; break;
    case BATON_OP_SQUARED_DIFFERENCE: op = 5; break;
    case BATON_OP_MAXIMUM: op = 6; break;
    case BATON_OP_MINIMUM: op = 7; break;
    case BATON_OP_POW: op = 8; break;
    case BATON_OP_FLOOR_MOD: op = 9; break;
    case BATON_OP_FLOOR_DIV: op = 10; break;
    default: refuse("not a binary op");
  }
  const bool fused = op <= 2 || op == 4;  // the ops whose options carry a fused activation
  act = g.activation(node, fused ? node.options().u.elementwise.activation : BATON_ACT_NONE);
  const baton_tensor* output = node.float_output();
  const int a = g.value(node, node.float_input(0));
  const int b = g.value(node, node.float_input(1));
  const Dims out_dims = broadcast_dims(g.dims(a), g.dims(b));
  const int out = g.define(output, out_dims);
  const Shape4 s = g.shape(out);
  const Operand oa = operand(g.shape(a), s), ob = operand(g.shape(b), s);
  const bool same = g.dims(a) == out_dims && g.dims(b) == out_dims;
  const bool splat = oa.splat || ob.splat;
  Params p{};
  set4(p, 0, s.n, s.h, s.w, s.c4());
  set4(p, 1, oa.strides[0], oa.strides[1], oa.strides[2], oa.strides[3]);
  set4(p, 2, ob.strides[0], ob.strides[1], ob.strides[2], ob.strides[3]);
  set4(p, 3, s.c, static_cast<int32_t>(s.vec4s()));
  // Zero lanes stay zero through ADD, SUB, MUL, PRELU, SQUARED_DIFFERENCE, MAXIMUM and MINIMUM (unless a
  // splat fills them); 0 / 0, 0^0, 0 mod 0 and floor(0 / 0) do not.
  const bool zero_to_nonzero = op == 4 || op == 8 || op == 9 || op == 10;
  g.dispatch("binary",
             {{"OP", str(op)}, {"ACT", str(act)}, {"SAME", same ? "1" : "0"}, {"A_SPLAT", oa.splat ? "1" : "0"},
              {"B_SPLAT", ob.splat ? "1" : "0"}, {"MASK", (splat || zero_to_nonzero) && s.c % 4 != 0 ? "1" : "0"}},
             same ? grid_1d(s.vec4s()) : grid_3d(s.c4(), s.w, static_cast<int64_t>(s.n) * s.h), {out, a, b}, p);
}

void plan_unary(GraphBuilder& g, const NodeView& node) {
  int op = 0;
  switch (node.code()) {
    case BATON_OP_RELU: op = 1; break;
    case BATON_OP_RELU_N1_TO_1: op = 2; break;
    case BATON_OP_RELU6: op = 3; break;
    case BATON_OP_TANH: op = 4; break;
    case BATON_OP_LOGISTIC: op = 5; break;
    case BATON_OP_HARD_SWISH: op = 6; break;
    case BATON_OP_EXP: op = 7; break;
    case BATON_OP_RSQRT: op = 8; break;
    case BATON_OP_SQRT: op = 9; break;
    case BATON_OP_ABS: op = 10; break;
    case BATON_OP_NEG: op = 11; break;
    case BATON_OP_SQUARE: op = 12; break;
    case BATON_OP_GELU: op = node.options().u.gelu.approximate ? 14 : 13; break;
    default: refuse("not a unary op");
  }
  const baton_tensor* output = node.float_output();
  const int in = g.value(node, node.float_input(0));
  const int out = g.define(output, g.dims(in));
  const Shape4 s = g.shape(out);
  Params p{};
  set4(p, 0, static_cast<int32_t>(s.vec4s()), s.c4(), s.c);
  // Every op but LOGISTIC, EXP and RSQRT maps 0 to 0, so the zero lanes stay zero without a mask.
  const bool mask = (op == 5 || op == 7 || op == 8) && s.c % 4 != 0;
  g.dispatch("unary", {{"OP", str(op)}, {"MASK", mask ? "1" : "0"}}, grid_1d(s.vec4s()), {out, in}, p);
}

}  // namespace baton::vulkan
