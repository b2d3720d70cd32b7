// BATCH_MATMUL: out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n] (ADJ_Y: rhs[b, n, k]), batches
// broadcast. Bindings: 0 output, 1 lhs, 2 rhs. Each operand's rows: lhs [batches, M] rows of K, rhs
// [batches, K] rows of N (ADJ_Y: [batches, N] rows of K), the output [batches, M] rows of N.
// P.p[0] = (n4, M, batches b1 * b2, b2), P.p[1] = (K, k4, N, -), P.p[2] = lhs row strides of the two batch
// axes (0: broadcast), P.p[3] = rhs's. One invocation per output vec4: x the column block, y the row m,
// z the batch. The lanes past K and N are zero in every operand, so they add nothing and stay zero.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Lhs { T4 lhs[]; };
layout(std430, binding = 2) readonly buffer Rhs { T4 rhs[]; };

void main() {
  int n4 = int(gl_GlobalInvocationID.x), m = int(gl_GlobalInvocationID.y), b = int(gl_GlobalInvocationID.z);
  int n4s = P.p[0].x, rows = P.p[0].y;
  if (n4 >= n4s || m >= rows || b >= P.p[0].z) return;
  int b1 = b / P.p[0].w, b2 = b - b1 * P.p[0].w;
  int k = P.p[1].x, k4s = P.p[1].y, n = P.p[1].z;
  int lrow = b1 * P.p[2].x + b2 * P.p[2].y + m;
  int rbase = b1 * P.p[3].x + b2 * P.p[3].y;
  vec4 acc = vec4(0.0);
#if ADJ_Y
  for (int k4 = 0; k4 < k4s; ++k4) {
    vec4 a = vec4(lhs[lrow * k4s + k4]);
    for (int j = 0; j < 4; ++j) {
      int col = n4 * 4 + j;
      if (col < n) acc[j] += dot(a, vec4(rhs[(rbase + col) * k4s + k4]));
    }
  }
#else
  for (int k4 = 0; k4 < k4s; ++k4) {
    vec4 a = vec4(lhs[lrow * k4s + k4]);
    for (int j = 0; j < 4; ++j) {
      int kk = k4 * 4 + j;
      if (kk < k) acc += a[j] * vec4(rhs[(rbase + kk) * n4s + n4]);
    }
  }
#endif
  dst[(b * rows + m) * n4s + n4] = T4(acc);
}
