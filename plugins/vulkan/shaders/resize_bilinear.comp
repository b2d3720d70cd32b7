// RESIZE_BILINEAR as TFLite computes it: source = (y + 0.5) * scale - 0.5 with half-pixel centers, else
// y * scale; the neighbours are floor and ceil of it clamped to the input, weighted by its distance from
// the lower one. Bindings: 0 output, 1 input. P.p[0] = output (n, h, w, c4),
// P.p[1] = (in_h, in_w, -, -), P.p[2] = (scale_y bits, scale_x bits, -, -). Defines: HALF_PIXEL.
// x: channel block, y: output column, z: batch and output row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

void source_of(int dst_i, float scale, int size, out int lo, out int hi, out float frac) {
#if HALF_PIXEL
  float s = (float(dst_i) + 0.5) * scale - 0.5;
#else
  float s = float(dst_i) * scale;
#endif
  lo = clamp(int(floor(s)), 0, size - 1);
  hi = min(int(ceil(s)), size - 1);
  frac = s - float(lo);
}

void main() {
  ivec4 o = P.p[0];
  int in_h = P.p[1].x, in_w = P.p[1].y;
  int c4 = int(gl_GlobalInvocationID.x), x = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / o.y;
  int y = z - n * o.y;
  if (c4 >= o.w || x >= o.z || n >= o.x) return;
  int y0, y1, x0, x1;
  float dy, dx;
  source_of(y, intBitsToFloat(P.p[2].x), in_h, y0, y1, dy);
  source_of(x, intBitsToFloat(P.p[2].y), in_w, x0, x1, dx);
  int row0 = (n * in_h + y0) * in_w, row1 = (n * in_h + y1) * in_w;
  vec4 tl = vec4(src[(row0 + x0) * o.w + c4]), tr = vec4(src[(row0 + x1) * o.w + c4]);
  vec4 bl = vec4(src[(row1 + x0) * o.w + c4]), br = vec4(src[(row1 + x1) * o.w + c4]);
  dst[((n * o.y + y) * o.z + x) * o.w + c4] = T4(
      tl * (1.0 - dy) * (1.0 - dx) + bl * dy * (1.0 - dx) + tr * (1.0 - dy) * dx + br * dy * dx);
}
