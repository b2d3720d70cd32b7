// GATHER_ND: output element e (dense order) is element j of the slice that index tuple b = e / slice picks,
// j = e % slice: params at sum over d < depth of ids[b * depth + d] * stride[d], plus j. Each invocation
// writes one vec4 of the output. An index outside [0, dims[d]) writes zero and sets the check word
// (bad[0] = 1, bad[1] = the index), which fails the run.
// Bindings: 0 output, 1 check word, 2 params, 3 indices (int32, dense).
// P.p[0] = (output vec4s, output channels, output c4, slice), P.p[1] = (depth, params channels, params c4, -),
// P.p[2] = the indexed params dimensions, P.p[3] = their strides in elements.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) buffer Check { int bad[]; };
layout(std430, binding = 2) readonly buffer Params { T1 params[]; };
layout(std430, binding = 3) readonly buffer Indices { int ids[]; };

void main() {
  int v = flat_id();
  if (v >= P.p[0].x) return;
  int oc = P.p[0].y, oc4 = P.p[0].z, slice = P.p[0].w;
  int depth = P.p[1].x, pc = P.p[1].y, pc4 = P.p[1].z;
  int row = v / oc4;
  int c4 = v - row * oc4;
  vec4 out_v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int ch = 4 * c4 + l;
    if (ch >= oc) break;
    int e = row * oc + ch;
    int b = e / slice;
    int f = e - b * slice;
    bool ok = true;
    for (int d = 0; d < depth; ++d) {
      int k = ids[b * depth + d];
      if (k < 0 || k >= P.p[2][d]) {
        bad[0] = 1;
        bad[1] = k;
        ok = false;
      }
      f += k * P.p[3][d];
    }
    if (ok) {
      int prow = f / pc;
      out_v[l] = float(params[prow * pc4 * 4 + (f - prow * pc)]);
    }
  }
  dst[v] = T4(out_v);
}
