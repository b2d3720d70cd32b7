// GATHER along an axis before the last (batch_dims 0): output row (o, i, j) is params row (o, ids[i], j),
// where o runs over the axes before `axis`, i over the indices and j over the rows between `axis` and the
// channels; whole rows of vec4s move. An index outside [0, axis size) writes zeros and sets the check word
// (bad[0] = 1, bad[1] = the index), which fails the run.
// Bindings: 0 output, 1 check word, 2 params, 3 indices (int32, dense).
// P.p[0] = (output vec4s, channel vec4s per row, rows per index j, index count), P.p[1].x = axis size.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) buffer Check { int bad[]; };
layout(std430, binding = 2) readonly buffer Params { T4 params[]; };
layout(std430, binding = 3) readonly buffer Indices { int ids[]; };

void main() {
  int v = flat_id();
  if (v >= P.p[0].x) return;
  int c4n = P.p[0].y, inner = P.p[0].z, count = P.p[0].w, axis_size = P.p[1].x;
  int row = v / c4n;
  int c4 = v - row * c4n;
  int j = row % inner;
  int rest = row / inner;
  int i = rest % count;
  int o = rest / count;
  int id = ids[i];
  if (id < 0 || id >= axis_size) {
    bad[0] = 1;
    bad[1] = id;
    dst[v] = T4(vec4(0.0));
    return;
  }
  dst[v] = params[((o * axis_size + id) * inner + j) * c4n + c4];
}
