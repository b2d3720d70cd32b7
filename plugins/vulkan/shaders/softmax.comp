// SOFTMAX along the last axis. Bindings: 0 output, 1 input.
// P.p[0] = (c4, channels, rows, beta bits). One workgroup per row (folded over x and y); its LX
// invocations share the row: the maximum, then the sum of exp(beta * (x - max)), then the outputs.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

shared vec4 partial[LX];

void main() {
  int c4n = P.p[0].x, c = P.p[0].y, rows = P.p[0].z;
  float beta = intBitsToFloat(P.p[0].w);
  int row = int(gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x);
  if (row >= rows) return;  // the whole workgroup leaves together
  int lid = int(gl_LocalInvocationID.x);
  int base = row * c4n;
  const float lowest = -3.402823466e38;

  vec4 m = vec4(lowest);
  for (int k = lid; k < c4n; k += LX) {
    bvec4 real = lessThan(ivec4(4 * k) + ivec4(0, 1, 2, 3), ivec4(c));
    m = max(m, mix(vec4(lowest), vec4(src[base + k]), real));
  }
  partial[lid] = m;
  barrier();
  for (int s = LX / 2; s > 0; s /= 2) {
    if (lid < s) partial[lid] = max(partial[lid], partial[lid + s]);
    barrier();
  }
  vec4 pm = partial[0];
  float mx = max(max(pm.x, pm.y), max(pm.z, pm.w));
  barrier();

  vec4 sum = vec4(0.0);
  for (int k = lid; k < c4n; k += LX) sum += mask_lanes(exp((vec4(src[base + k]) - mx) * beta), k, c);
  partial[lid] = sum;
  barrier();
  for (int s = LX / 2; s > 0; s /= 2) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  float inv = 1.0 / dot(partial[0], vec4(1.0));
  for (int k = lid; k < c4n; k += LX) dst[base + k] = T4(mask_lanes(exp((vec4(src[base + k]) - mx) * beta) * inv, k, c));
}
