// MEAN over the last axis with keep_dims (a layer norm's mean and variance). Bindings: 0 output (one
// channel: a vec4 per row, the mean in x), 1 input. P.p[0] = (rows, c4, channels, 1 / channels bits).
// One invocation per row; the lanes past the channels are zero, so whole vec4s are summed.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

void main() {
  int row = flat_id();
  if (row >= P.p[0].x) return;
  int c4n = P.p[0].y;
  vec4 s = vec4(0.0);
  for (int k = 0; k < c4n; ++k) s += vec4(src[row * c4n + k]);
  dst[row] = T4(vec4((s.x + s.y + s.z + s.w) * intBitsToFloat(P.p[0].w), 0.0, 0.0, 0.0));
}
