// A partition output whose channels are not a multiple of 4: whole vec4s back to the host's dense rows.
// Bindings: 0 output (dense, in the download buffer), 1 input (device layout).
// P.p[0] = (elements, channels, c4, -). Each invocation writes four consecutive elements.
layout(std430, binding = 0) writeonly buffer Output { float dst[]; };
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };

void main() {
  int i = flat_id();
  int count = P.p[0].x, c = P.p[0].y, c4n = P.p[0].z;
  for (int l = 0; l < 4; ++l) {
    int e = 4 * i + l;
    if (e >= count) return;
    int row = e / c;
    dst[e] = float(src[row * c4n * 4 + (e - row * c)]);
  }
}
