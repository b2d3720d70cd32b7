// PAD and PADV2. Bindings: 0 output, 1 input.
// P.p[0] = output (n, h, w, c), P.p[1] = input (n, h, w, c), P.p[2] = padding before (n, h, w, c),
// P.p[3] = (value bits, -, output c4, input c4).
// Defines: CH_VEC (the input's channels start at a multiple of 4 and fill whole vec4s: vec4 copies;
// otherwise lane by lane). x: output channel block, y: output column, z: batch and output row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
#if CH_VEC
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
#else
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };
#endif

void main() {
  ivec4 o = P.p[0], d = P.p[1], before = P.p[2];
  int oc4 = P.p[3].z, ic4 = P.p[3].w;
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= oc4 || x >= o.z || n >= o.x) return;
  int in_n = n - before.x, iy = y - before.y, ix = x - before.z;
  bool inside = in_n >= 0 && in_n < d.x && iy >= 0 && iy < d.y && ix >= 0 && ix < d.z;
  int pix = (in_n * d.y + iy) * d.z + ix;
  vec4 v = vec4(intBitsToFloat(P.p[3].x));
#if CH_VEC
  int k = c4 - before.w / 4;
  if (inside && k >= 0 && k < ic4) v = vec4(src[pix * ic4 + k]);
#else
  for (int l = 0; l < 4; ++l) {
    int ic = 4 * c4 + l - before.w;
    if (inside && ic >= 0 && ic < d.w) v[l] = float(src[pix * ic4 * 4 + ic]);
  }
#endif
  dst[((n * o.y + y) * o.z + x) * oc4 + c4] = T4(mask_lanes(v, c4, o.w));
}
