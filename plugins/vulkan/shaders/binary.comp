// ADD, SUB, MUL, PRELU, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, POW, FLOOR_MOD and FLOOR_DIV with numpy
// broadcasting.
// Bindings: 0 output, 1 a, 2 b.
// P.p[0] = output (n, h, w, c4), P.p[1] = a's strides in vec4s along (n, h, w, channel block), zero
// where a is broadcast, P.p[2] = b's strides, P.p[3] = (output channels, output vec4s, -, -).
// Defines: OP (0 ADD, 1 SUB, 2 MUL, 3 PRELU: a >= 0 ? a : a * b, 4 DIV, 5 SQUARED_DIFFERENCE, 6 MAXIMUM,
// 7 MINIMUM, 8 POW, 9 FLOOR_MOD, 10 FLOOR_DIV: floor(a / b), as TFLite's), ACT, SAME (a, b and the output have one shape: a flat grid), A_SPLAT / B_SPLAT (the
// operand has one channel, spread over the four lanes), MASK (channels not a multiple of 4: a splat fills
// the lanes past them, and DIV, POW, FLOOR_MOD and FLOOR_DIV turn their zeros into NaN and 1; they are zeroed again). Without SAME the grid is x: channel block, y: column, z: batch and row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer A { T4 a_data[]; };
layout(std430, binding = 2) readonly buffer B { T4 b_data[]; };

vec4 apply(vec4 a, vec4 b) {
#if OP == 0
  return activate(a + b);
#elif OP == 1
  return activate(a - b);
#elif OP == 2
  return activate(a * b);
#elif OP == 3
  return mix(a * b, a, greaterThanEqual(a, vec4(0.0)));
#elif OP == 4
  return activate(a / b);
#elif OP == 5
  return (a - b) * (a - b);
#elif OP == 6
  return max(a, b);
#elif OP == 7
  return min(a, b);
#elif OP == 10
  return floor(a / b);
#elif OP == 9
  // The remainder with the divisor's sign, as TFLite's fmod-based FLOOR_MOD: a - floor(a / b) b, the product
  // subtracted in one rounding, then moved into [0, b) (or (b, 0]) where a / b rounded across an integer.
  vec4 r = fma(-floor(a / b), b, a);
  vec4 wrong_sign = vec4(notEqual(lessThan(r, vec4(0.0)), lessThan(b, vec4(0.0)))) * vec4(notEqual(r, vec4(0.0)));
  r = mix(r, r + b, bvec4(wrong_sign));
  return mix(r, r - b, greaterThanEqual(abs(r), abs(b)));
#else
  // GLSL's pow is undefined for a < 0; TFLite's is C's: a negative base with an integer exponent has the
  // exponent's parity as sign, with any other exponent NaN.
  vec4 m = pow(abs(a), b);
  vec4 odd = vec4(notEqual(mod(b, 2.0), vec4(0.0)));
  vec4 whole = vec4(equal(b, floor(b)));
  vec4 negative = mix(vec4(uintBitsToFloat(0x7fc00000u)), mix(m, -m, odd), whole);
  return mix(m, negative, lessThan(a, vec4(0.0)));
#endif
}

void main() {
  ivec4 o = P.p[0];
#if SAME
  int i = flat_id();
  if (i >= P.p[3].y) return;
#if MASK
  dst[i] = T4(mask_lanes(apply(vec4(a_data[i]), vec4(b_data[i])), i % o.w, P.p[3].x));
#else
  dst[i] = T4(apply(vec4(a_data[i]), vec4(b_data[i])));
#endif
#else
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= o.w || x >= o.z || n >= o.x) return;
  ivec4 at = ivec4(n, y, x, c4);
  vec4 a = vec4(a_data[at.x * P.p[1].x + at.y * P.p[1].y + at.z * P.p[1].z + at.w * P.p[1].w]);
  vec4 b = vec4(b_data[at.x * P.p[2].x + at.y * P.p[2].y + at.z * P.p[2].z + at.w * P.p[2].w]);
#if A_SPLAT
  a = a.xxxx;
#endif
#if B_SPLAT
  b = b.xxxx;
#endif
  vec4 v = apply(a, b);
#if MASK
  v = mask_lanes(v, c4, P.p[3].x);
#endif
  dst[((n * o.y + y) * o.z + x) * o.w + c4] = T4(v);
#endif
}
