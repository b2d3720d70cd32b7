// Reductions over any axes of [N, H, W, C]: SUM and MEAN (OP 0, MEAN scaled by 1 / the count), REDUCE_MAX
// (1), REDUCE_MIN (2), REDUCE_PROD (3); ARG_MAX (ARG 1) and ARG_MIN (ARG 2) along one axis, the first
// position of the extreme winning, as TFLite's kernel (a NaN never does).
// A reduction writes one vec4 of the output (device layout) per invocation, an ARG one int (dense); each
// output element is element e (dense order) of the input's shape with the reduced axes one long, and
// reads the run of `extents` inputs from there.
// Bindings: 0 output, 1 input (read element by element).
// P.p[0] = (output vec4s or ints, output channels, output c4, MEAN's scale bits), P.p[1] = the kept dims
// (n, h, w, c), P.p[2] = the input's (h, w, c4, -), P.p[3] = the reduced extents (n, h, w, c).
#ifndef OP
#define OP 0
#endif
#ifndef ARG
#define ARG 0
#endif
#if ARG
layout(std430, binding = 0) writeonly buffer Output { int dst[]; };
#else
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
#endif
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };

int row_of(ivec4 at) { return (at.x * P.p[2].x + at.y) * P.p[2].y + at.z; }

// Reduces the run of element e; an ARG gives the position (as a float) along the reduced axis.
float reduce(int e) {
  ivec4 k = P.p[1], r = P.p[3];
  ivec4 at;
  at.w = e % k.w;
  int q = e / k.w;
  at.z = q % k.z;
  q /= k.z;
  at.y = q % k.y;
  at.x = q / k.y;
  int c4n = P.p[2].z;
#if ARG
  float best = float(src[row_of(at) * c4n * 4 + at.w]);
  int best_at = 0;
#elif OP == 1
  float acc = uintBitsToFloat(0xff800000u);
#elif OP == 2
  float acc = uintBitsToFloat(0x7f800000u);
#elif OP == 3
  float acc = 1.0;
#else
  float acc = 0.0;
#endif
  for (int n = 0; n < r.x; ++n) {
    for (int h = 0; h < r.y; ++h) {
      for (int w = 0; w < r.z; ++w) {
        int base = row_of(at + ivec4(n, h, w, 0)) * c4n * 4 + at.w;
        for (int c = 0; c < r.w; ++c) {
          float x = float(src[base + c]);
#if ARG == 1
          if (x > best) { best = x; best_at = n + h + w + c; }
#elif ARG == 2
          if (x < best) { best = x; best_at = n + h + w + c; }
#elif OP == 1
          acc = max(acc, x);
#elif OP == 2
          acc = min(acc, x);
#elif OP == 3
          acc *= x;
#else
          acc += x;
#endif
        }
      }
    }
  }
#if ARG
  return float(best_at);
#else
  return acc;
#endif
}

void main() {
  int v = flat_id();
  if (v >= P.p[0].x) return;
#if ARG
  dst[v] = int(reduce(v));
#else
  int oc = P.p[0].y, oc4 = P.p[0].z;
  int row = v / oc4;
  int c4 = v - row * oc4;
  vec4 out_v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    int ch = 4 * c4 + l;
    if (ch >= oc) break;
    out_v[l] = reduce(row * oc + ch);
  }
#if OP == 0
  out_v *= intBitsToFloat(P.p[0].w);
#endif
  dst[v] = T4(out_v);
#endif
}
