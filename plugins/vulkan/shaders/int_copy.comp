// Moves of dense int32 tensors (CONCATENATION, STRIDED_SLICE, TRANSPOSE, PAD): each invocation writes one
// int of a region of the output, read from the input through its own strides (negative for a reversed
// slice). With PAD the region is the whole output and a position outside the input (its coordinates less
// `before`) gets the pad value.
// Bindings: 0 output, 1 input. P.p[0] = the region's dims (n, h, w, c), P.p[1] = the output's strides,
// P.p[2] = the input's, P.p[3] = (count, output offset, input offset, pad value); PAD: P.p[4] = before,
// P.p[5] = the input's dims.
#ifndef PAD
#define PAD 0
#endif
layout(std430, binding = 0) writeonly buffer Output { int dst[]; };
layout(std430, binding = 1) readonly buffer Input { int src[]; };

void main() {
  int i = flat_id();
  if (i >= P.p[3].x) return;
  ivec4 d = P.p[0];
  ivec4 at;
  at.w = i % d.w;
  int r = i / d.w;
  at.z = r % d.z;
  r /= d.z;
  at.y = r % d.y;
  at.x = r / d.y;
  ivec4 os = P.p[1], is = P.p[2];
  int o = P.p[3].y + at.x * os.x + at.y * os.y + at.z * os.z + at.w * os.w;
#if PAD
  ivec4 from = at - P.p[4];
  if (any(lessThan(from, ivec4(0))) || any(greaterThanEqual(from, P.p[5]))) {
    dst[o] = P.p[3].w;
    return;
  }
  at = from;
#endif
  dst[o] = src[P.p[3].z + at.x * is.x + at.y * is.y + at.z * is.z + at.w * is.w];
}
