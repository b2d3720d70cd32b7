// CONCATENATION, one dispatch per input: the input's elements go to the output shifted along the axis.
// Bindings: 0 output, 1 input. P.p[0] = input (n, h, w, c), P.p[1] = output (n, h, w, c),
// P.p[2] = offset (n, h, w, c), P.p[3] = (-, input c4, output c4, -).
// Defines: VEC (the channel offset is a multiple of 4 and the input's zero lanes may land in the
// output: whole vec4s; otherwise lane by lane), ZERO_TAIL (lane by lane, the last input along the
// channels: also zero the output's lanes past its channels), ACT.
// x: input channel block, y: input column, z: batch and input row.
#if VEC
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
#else
layout(std430, binding = 0) writeonly buffer Output { T1 dst[]; };
#endif
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

void main() {
  ivec4 d = P.p[0], o = P.p[1], off = P.p[2];
  int ic4 = P.p[3].y, oc4 = P.p[3].z;
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / d.y;
  int y = z - n * d.y;
  if (c4 >= ic4 || x >= d.z || n >= d.x) return;
  int opix = ((n + off.x) * o.y + y + off.y) * o.z + x + off.z;
  vec4 v = activate(vec4(src[((n * d.y + y) * d.z + x) * ic4 + c4]));
#if VEC
  dst[opix * oc4 + off.w / 4 + c4] = T4(v);
#else
  int base = opix * oc4 * 4 + off.w;
  for (int l = 0; l < 4; ++l) {
    if (4 * c4 + l < d.w) dst[base + 4 * c4 + l] = T1(v[l]);
  }
#if ZERO_TAIL
  if (c4 == ic4 - 1) {
    for (int c = off.w + d.w; c < oc4 * 4; ++c) dst[opix * oc4 * 4 + c] = T1(0.0);
  }
#endif
#endif
}
