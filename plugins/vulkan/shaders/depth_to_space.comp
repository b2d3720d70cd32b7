// DEPTH_TO_SPACE: output (n, y, x, c) = input (n, y / b, x / b, ((y % b) * b + x % b) * C + c).
// Bindings: 0 output, 1 input. P.p[0] = output (n, h, w, c), P.p[1] = (in_h, in_w, in_c, block),
// P.p[2] = (-, output c4, input c4, -). Defines: VEC (output channels a multiple of 4).
// x: output channel block, y: output column, z: batch and output row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
#if VEC
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
#else
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };
#endif

void main() {
  ivec4 o = P.p[0];
  int in_h = P.p[1].x, in_w = P.p[1].y, b = P.p[1].w;
  int oc4 = P.p[2].y, ic4 = P.p[2].z;
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= oc4 || x >= o.z || n >= o.x) return;
  int pix = (n * in_h + y / b) * in_w + x / b;
  int first = ((y % b) * b + x % b) * o.w;
  int at = ((n * o.y + y) * o.z + x) * oc4 + c4;
#if VEC
  dst[at] = src[pix * ic4 + first / 4 + c4];
#else
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int c = 4 * c4 + l;
    if (c < o.w) v[l] = float(src[pix * ic4 * 4 + first + c]);
  }
  dst[at] = T4(v);
#endif
}
