// RESHAPE where the last dimension changes (otherwise the layouts agree and a buffer copy does it):
// each output lane takes the input element at the same position in row-major order.
// Bindings: 0 output, 1 input. P.p[0] = (output vec4s, output channels, output c4, input channels),
// P.p[1] = (input c4, -).
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };

void main() {
  int i = flat_id();
  if (i >= P.p[0].x) return;
  int oc = P.p[0].y, oc4 = P.p[0].z, ic = P.p[0].w, ic4 = P.p[1].x;
  int row = i / oc4;
  int c4 = i - row * oc4;
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int c = 4 * c4 + l;
    if (c >= oc) break;
    int at = row * oc + c;
    int in_row = at / ic;
    v[l] = float(src[in_row * ic4 * 4 + (at - in_row * ic)]);
  }
  dst[i] = T4(v);
}
