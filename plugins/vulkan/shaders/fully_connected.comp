// FULLY_CONNECTED. Bindings: 0 output, 1 input (rows of k4 vec4s), 2 weights (blocks of ops_conv.cc),
// 3 bias. P.p[0] = (k4, u4, rows, units). Defines: ACT.
// One workgroup per block of 4 units (y) and row (z); its LX invocations split the depth and add their
// partial sums in shared memory.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
layout(std430, binding = 2) readonly buffer Weights { T4 wts[]; };
layout(std430, binding = 3) readonly buffer Bias { T4 bias[]; };

shared H4 partial[LX];

void main() {
  int k4 = P.p[0].x, u4 = P.p[0].y;
  int u = int(gl_WorkGroupID.y);
  int row = int(gl_WorkGroupID.z);
  int lid = int(gl_LocalInvocationID.x);
  H4 acc = H4(0.0);
  for (int k = lid; k < k4; k += LX) {
    H4 v = H4(src[row * k4 + k]);
    int wi = (u * k4 + k) * 4;
    acc += v.x * H4(wts[wi]) + v.y * H4(wts[wi + 1]) + v.z * H4(wts[wi + 2]) + v.w * H4(wts[wi + 3]);
  }
  partial[lid] = acc;
  barrier();
  for (int s = LX / 2; s > 0; s /= 2) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  if (lid == 0) dst[row * u4 + u] = T4(activate_h(partial[0] + H4(bias[u])));
}
