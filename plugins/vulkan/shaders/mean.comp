// MEAN over the spatial axes of NHWC. Bindings: 0 output ([N, C]), 1 input.
// P.p[0] = (h * w, c4, batch, -). One workgroup per channel block (x) and batch (y); its LX invocations
// split the pixels and add their partial sums in shared memory.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };

shared vec4 partial[LX];

void main() {
  int area = P.p[0].x, c4n = P.p[0].y;
  int c4 = int(gl_WorkGroupID.x);
  int n = int(gl_WorkGroupID.y);
  int lid = int(gl_LocalInvocationID.x);
  vec4 s = vec4(0.0);
  for (int i = lid; i < area; i += LX) s += vec4(src[(n * area + i) * c4n + c4]);
  partial[lid] = s;
  barrier();
  for (int k = LX / 2; k > 0; k /= 2) {
    if (lid < k) partial[lid] += partial[lid + k];
    barrier();
  }
  if (lid == 0) dst[n * c4n + c4] = T4(partial[0] / float(area));
}
