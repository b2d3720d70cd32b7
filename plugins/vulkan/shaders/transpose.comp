// TRANSPOSE of the three outer axes of [N, H, W, C] (the last axis stays last: a head split or merge).
// Bindings: 0 output, 1 input. P.p[0] = output (n, h, w, c4), P.p[1] = the input row strides of the
// output's n, h and w (the input axes they come from). The grid: x channel block, y w, z n * h.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

void main() {
  ivec4 o = P.p[0];
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= o.w || x >= o.z || n >= o.x) return;
  int from = n * P.p[1].x + y * P.p[1].y + x * P.p[1].z;
  dst[((n * o.y + y) * o.z + x) * o.w + c4] = src[from * o.w + c4];
}
