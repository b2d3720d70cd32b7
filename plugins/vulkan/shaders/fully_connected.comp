// FULLY_CONNECTED. Bindings: 0 output, 1 input (rows of k4 vec4s), 2 weights (blocks of ops_conv.cc),
// 3 bias. P.p[0] = (k4, u4, rows, units). Defines: ACT.
// One workgroup per block of 4 units (y) and row (z); its LX invocations split the depth and add their
// partial sums in shared memory.
layout(std430, binding = 0) writeonly buffer Output { vec4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { vec4 src[]; };
layout(std430, binding = 2) readonly buffer Weights { vec4 wts[]; };
layout(std430, binding = 3) readonly buffer Bias { vec4 bias[]; };

shared vec4 partial[LX];

void main() {
  int k4 = P.p[0].x, u4 = P.p[0].y;
  int u = int(gl_WorkGroupID.y);
  int row = int(gl_WorkGroupID.z);
  int lid = int(gl_LocalInvocationID.x);
  vec4 acc = vec4(0.0);
  for (int k = lid; k < k4; k += LX) {
    vec4 v = src[row * k4 + k];
    int wi = (u * k4 + k) * 4;
    acc += v.x * wts[wi] + v.y * wts[wi + 1] + v.z * wts[wi + 2] + v.w * wts[wi + 3];
  }
  partial[lid] = acc;
  barrier();
  for (int s = LX / 2; s > 0; s /= 2) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  if (lid == 0) dst[row * u4 + u] = activate(partial[0] + bias[u]);
}
