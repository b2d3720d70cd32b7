// TRANSPOSE of [N, H, W, C]. Without LANES the last axis stays last (a head split or merge): each
// invocation copies a vec4 from the input row P.p[1] picks. With LANES any axis may move: each lane of the
// output vec4 is read on its own, at the sum of the output coordinates times the input strides (in
// elements) of the axes they come from.
// Bindings: 0 output, 1 input. P.p[0] = output (n, h, w, c4); without LANES P.p[1] = the input row strides
// of the output's n, h and w; with LANES P.p[1] = the input element strides of the output's n, h, w and c,
// P.p[2] = (output channels, -, -, -). The grid: x channel block, y w, z n * h.
#ifndef LANES
#define LANES 0
#endif
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
#if LANES
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };
#else
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
#endif

void main() {
  ivec4 o = P.p[0];
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= o.w || x >= o.z || n >= o.x) return;
  int out_at = ((n * o.y + y) * o.z + x) * o.w + c4;
#if LANES
  ivec4 s = P.p[1];
  int from = n * s.x + y * s.y + x * s.z;
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int ch = 4 * c4 + l;
    if (ch < P.p[2].x) v[l] = float(src[from + ch * s.w]);
  }
  dst[out_at] = T4(v);
#else
  int from = n * P.p[1].x + y * P.p[1].y + x * P.p[1].z;
  dst[out_at] = src[from * o.w + c4];
#endif
}
