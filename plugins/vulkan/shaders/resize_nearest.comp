// RESIZE_NEAREST_NEIGHBOR of NHWC: each output pixel copies the input pixel the tables name (made on the
// host with TFLite's arithmetic, so the choice at a tie is TFLite's). Bindings: 0 output, 1 input,
// 2 tables (the source row of each output row, then the source column of each output column, as floats).
// P.p[0] = output (n, h, w, c4), P.p[1] = input (h, w, -, -). The grid: x channel block, y w, z n * h.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
layout(std430, binding = 2) readonly buffer Tables { float table[]; };

void main() {
  ivec4 o = P.p[0];
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= o.w || x >= o.z || n >= o.x) return;
  int iy = int(table[y]), ix = int(table[o.y + x]);
  dst[((n * o.y + y) * o.z + x) * o.w + c4] = src[((n * P.p[1].x + iy) * P.p[1].y + ix) * o.w + c4];
}
