// AVERAGE_POOL_2D and MAX_POOL_2D. Bindings: 0 output, 1 input.
// P.p[0] = (in_h, in_w, c4, channels), P.p[1] = (out_h, out_w, pad_top, pad_left), P.p[2] = (batch, -).
// Defines: KH KW SH SW, ACT, MAXPOOL (1 max, 0 average over the window's elements inside the input).
// x: channel blocks, y: output column, z: batch and output row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

void main() {
  int in_h = P.p[0].x, in_w = P.p[0].y, c4n = P.p[0].z;
  int out_h = P.p[1].x, out_w = P.p[1].y;
  int c4 = int(gl_GlobalInvocationID.x);
  int ox = int(gl_GlobalInvocationID.y);
  int z = int(gl_GlobalInvocationID.z);
  int n = z / out_h;
  int oy = z - n * out_h;
  if (c4 >= c4n || ox >= out_w || n >= P.p[2].x) return;
  int y0 = oy * SH - P.p[1].z, x0 = ox * SW - P.p[1].w;
  int fy0 = max(0, -y0), fy1 = min(KH, in_h - y0);
  int fx0 = max(0, -x0), fx1 = min(KW, in_w - x0);
#if MAXPOOL
  vec4 r = vec4(-3.402823466e38);
#else
  vec4 r = vec4(0.0);
#endif
  for (int fy = fy0; fy < fy1; ++fy) {
    int row = (n * in_h + y0 + fy) * in_w + x0;
    for (int fx = fx0; fx < fx1; ++fx) {
      vec4 v = vec4(src[(row + fx) * c4n + c4]);
#if MAXPOOL
      r = max(r, v);
#else
      r += v;
#endif
    }
  }
#if !MAXPOOL
  int count = max(0, fy1 - fy0) * max(0, fx1 - fx0);
  r = count > 0 ? r / float(count) : vec4(0.0);
#endif
  dst[((n * out_h + oy) * out_w + ox) * c4n + c4] = T4(mask_lanes(activate(r), c4, P.p[0].w));
}
