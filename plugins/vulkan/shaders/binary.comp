// ADD, SUB, MUL and PRELU with numpy broadcasting. Bindings: 0 output, 1 a, 2 b.
// P.p[0] = output (n, h, w, c4), P.p[1] = a's strides in vec4s along (n, h, w, channel block), zero
// where a is broadcast, P.p[2] = b's strides, P.p[3] = (output channels, output vec4s, -, -).
// Defines: OP (0 ADD, 1 SUB, 2 MUL, 3 PRELU: a >= 0 ? a : a * b), ACT, A_SPLAT / B_SPLAT (the operand
// has one channel, spread over the four lanes).
layout(std430, binding = 0) writeonly buffer Output { vec4 dst[]; };
layout(std430, binding = 1) readonly buffer A { vec4 a_data[]; };
layout(std430, binding = 2) readonly buffer B { vec4 b_data[]; };

void main() {
  int i = flat_id();
  if (i >= P.p[3].y) return;
  ivec4 o = P.p[0];
  int c4 = i % o.w;
  int r = i / o.w;
  int x = r % o.z;
  r /= o.z;
  int y = r % o.y;
  int n = r / o.y;
  ivec4 at = ivec4(n, y, x, c4);
  vec4 a = a_data[at.x * P.p[1].x + at.y * P.p[1].y + at.z * P.p[1].z + at.w * P.p[1].w];
  vec4 b = b_data[at.x * P.p[2].x + at.y * P.p[2].y + at.z * P.p[2].z + at.w * P.p[2].w];
#if A_SPLAT
  a = a.xxxx;
#endif
#if B_SPLAT
  b = b.xxxx;
#endif
#if OP == 0
  vec4 v = a + b;
#elif OP == 1
  vec4 v = a - b;
#elif OP == 2
  vec4 v = a * b;
#else
  vec4 v = mix(a * b, a, greaterThanEqual(a, vec4(0.0)));
#endif
  dst[i] = mask_lanes(activate(v), c4, P.p[3].x);
}
