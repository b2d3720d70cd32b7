// A partition input whose channels are not a multiple of 4: the host's dense rows spread to whole vec4s
// with zero lanes. Bindings: 0 output (device layout), 1 input (dense, in the upload buffer).
// P.p[0] = (vec4s, channels, c4, -).
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { float src[]; };

void main() {
  int i = flat_id();
  if (i >= P.p[0].x) return;
  int c = P.p[0].y, c4n = P.p[0].z;
  int row = i / c4n;
  int c4 = i - row * c4n;
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    if (4 * c4 + l < c) v[l] = src[row * c + 4 * c4 + l];
  }
  dst[i] = T4(v);
}
