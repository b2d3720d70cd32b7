// CAST between int32 (dense ints) and float32: TO_INT 1 reads the device layout, TO_INT 2 the host's dense
// float32 values (a partition input's staged copy), and each invocation writes one int, converted as C++
// does (toward zero, as TFLite's kernel); TO_INT 0 reads ints and writes one vec4 of floats in the device
// layout, the lanes past the channels zero. Bindings: 0 output, 1 input.
// P.p[0] = (invocations, channels, c4, -).
#ifndef TO_INT
#define TO_INT 0
#endif
#if TO_INT == 2
layout(std430, binding = 0) writeonly buffer Output { int dst[]; };
layout(std430, binding = 1) readonly buffer Input { float src[]; };
#elif TO_INT == 1
layout(std430, binding = 0) writeonly buffer Output { int dst[]; };
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };
#else
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { int src[]; };
#endif

void main() {
  int i = flat_id();
  if (i >= P.p[0].x) return;
  int c = P.p[0].y, c4n = P.p[0].z;
#if TO_INT == 2
  dst[i] = int(src[i]);
#elif TO_INT == 1
  int row = i / c;
  dst[i] = int(float(src[row * c4n * 4 + (i - row * c)]));
#else
  int row = i / c4n;
  int c4 = i - row * c4n;
  vec4 v = vec4(0.0);
  for (int l = 0; l < 4; ++l) {
    if (4 * c4 + l < c) v[l] = float(src[row * c + 4 * c4 + l]);
  }
  dst[i] = T4(v);
#endif
}
