// STRIDED_SLICE in the [N, H, W, C] view: input coordinate j = start[j] + step[j] * (the output coordinate
// of axis from[j]; 0 for an axis the slice shrinks away or a leading one), lane by lane, so any channel
// begin and stride work. Bindings: 0 output, 1 input. P.p[0] = output (n, h, w, c4), P.p[1] = (output
// channels, input h, input w, input c4), P.p[2] = start per input axis, P.p[3] = step, P.p[4] = from (an
// output axis 0..3, or -1). The grid: x channel block, y w, z n * h.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

void main() {
  ivec4 o = P.p[0];
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= o.w || x >= o.z || n >= o.x) return;
  ivec4 start = P.p[2], step = P.p[3], from = P.p[4];
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int c = 4 * c4 + l;
    if (c >= P.p[1].x) break;
    ivec4 out_at = ivec4(n, y, x, c);
    ivec4 at;
    for (int j = 0; j < 4; ++j) at[j] = start[j] + step[j] * (from[j] < 0 ? 0 : out_at[from[j]]);
    int row = (at.x * P.p[1].y + at.y) * P.p[1].z + at.z;
    v[l] = vec4(src[row * P.p[1].w + at.w / 4])[at.w % 4];
  }
  dst[((n * o.y + y) * o.z + x) * o.w + c4] = T4(v);
}
