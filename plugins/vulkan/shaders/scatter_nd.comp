// SCATTER_ND: output element e is the sum, in tuple order, of element j = e % slice of every update whose
// index tuple b points at the slice that holds e (sum over d < depth of ids[b * depth + d] * stride[d]
// equals e - j); zero where none does. Each invocation writes one vec4 of the output and reads every
// tuple. An index outside [0, dims[d]) sets the check word (bad[0] = 1, bad[1] = the index), which fails
// the run. Bindings: 0 output, 1 check word, 2 updates, 3 indices (int32, dense).
// P.p[0] = (output vec4s, output channels, output c4, slice), P.p[1] = (depth, updates channels,
// updates c4, tuples), P.p[2] = the indexed output dimensions, P.p[3] = their strides in elements.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) buffer Check { int bad[]; };
layout(std430, binding = 2) readonly buffer Updates { T1 updates[]; };
layout(std430, binding = 3) readonly buffer Indices { int ids[]; };

void main() {
  int v = flat_id();
  if (v >= P.p[0].x) return;
  int oc = P.p[0].y, oc4 = P.p[0].z, slice = P.p[0].w;
  int depth = P.p[1].x, uc = P.p[1].y, uc4 = P.p[1].z, tuples = P.p[1].w;
  int row = v / oc4;
  int c4 = v - row * oc4;
  vec4 out_v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int ch = 4 * c4 + l;
    if (ch >= oc) break;
    int e = row * oc + ch;
    int j = e % slice;
    int base = e - j;
    float sum = 0.0;
    for (int b = 0; b < tuples; ++b) {
      int at = 0;
      for (int d = 0; d < depth; ++d) {
        int k = ids[b * depth + d];
        if (k < 0 || k >= P.p[2][d]) {
          bad[0] = 1;
          bad[1] = k;
          at = -1;
          break;
        }
        at += k * P.p[3][d];
      }
      if (at == base) {
        int u = b * slice + j;
        int urow = u / uc;
        sum += float(updates[urow * uc4 * 4 + (u - urow * uc)]);
      }
    }
    out_v[l] = sum;
  }
  dst[v] = T4(out_v);
}
