// int32 elementwise ops on dense ints, broadcasting like numpy: each invocation writes one output int,
// reading each operand through its own strides (zero along a broadcast dimension). OP: 0 ADD, 1 SUB, 2 MUL,
// 3 MINIMUM, 4 MAXIMUM (wrapping as two's complement), 5 DIV (toward zero), 6 FLOOR_DIV, 7 FLOOR_MOD, as
// TFLite's integer kernels. A divisor of zero (or, for DIV and FLOOR_DIV, -1 under INT32_MIN, whose quotient
// int32 cannot hold) writes zero and sets the check word (bad[0] = 1, bad[1] = the divisor), which fails the run.
// Bindings: 0 output, 1 check word (OP >= 5 only), then a and b.
// P.p[0] = output dims (n, h, w, c), P.p[1] = a's strides, P.p[2] = b's strides, P.p[3] = (count, -, -, -).
#ifndef OP
#define OP 0
#endif
#define DIVIDES (OP >= 5)
layout(std430, binding = 0) writeonly buffer Output { int dst[]; };
#if DIVIDES
layout(std430, binding = 1) buffer Check { int bad[]; };
layout(std430, binding = 2) readonly buffer A { int a[]; };
layout(std430, binding = 3) readonly buffer B { int b[]; };
#else
layout(std430, binding = 1) readonly buffer A { int a[]; };
layout(std430, binding = 2) readonly buffer B { int b[]; };
#endif

// |v| as an unsigned int (INT32_MIN's too).
uint magnitude(int v) { return v < 0 ? uint(-(v + 1)) + 1u : uint(v); }

void main() {
  int i = flat_id();
  if (i >= P.p[3].x) return;
  ivec4 d = P.p[0];
  int c = i % d.w;
  int r = i / d.w;
  int w = r % d.z;
  r /= d.z;
  int h = r % d.y;
  int n = r / d.y;
  int x = a[n * P.p[1].x + h * P.p[1].y + w * P.p[1].z + c * P.p[1].w];
  int y = b[n * P.p[2].x + h * P.p[2].y + w * P.p[2].z + c * P.p[2].w];
#if OP == 0
  dst[i] = x + y;
#elif OP == 1
  dst[i] = x - y;
#elif OP == 2
  dst[i] = x * y;
#elif OP == 3
  dst[i] = min(x, y);
#elif OP == 4
  dst[i] = max(x, y);
#else
  if (y == 0 || (OP != 7 && y == -1 && x == -2147483647 - 1)) {
    bad[0] = 1;
    bad[1] = y;
    dst[i] = 0;
    return;
  }
  // The quotient toward zero from the magnitudes (no signed division's corner cases), then the floor.
  uint q = magnitude(x) / magnitude(y);
  int t = int((x < 0) != (y < 0) ? 0u - q : q);
  int rem = x - t * y;  // the sign of x, as C++'s %
#if OP == 5
  dst[i] = t;
#elif OP == 6
  dst[i] = rem != 0 && ((x < 0) != (y < 0)) ? t - 1 : t;
#else
  dst[i] = rem != 0 && ((rem < 0) != (y < 0)) ? rem + y : rem;
#endif
#endif
}
