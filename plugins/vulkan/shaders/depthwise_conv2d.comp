// DEPTHWISE_CONV_2D. Bindings: 0 output, 1 input, 2 weights (one vec4 of output channels per tap),
// 3 bias. P.p[0] = (in_h, in_w, in_c4, in_c), P.p[1] = (out_h, out_w, out_c4, batch),
// P.p[2] = (pad_top, pad_left, -, -).
// Defines: KH KW SH SW DH DW, ACT, TILE_X (pixels of a row per invocation), DM (depth multiplier; with
// DM > 1 output channel c reads input channel c / DM, lane by lane). x: channel blocks, y: pixel tiles,
// z: batch and output row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
#if DM == 1
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
#else
layout(std430, binding = 1) readonly buffer Input { T1 src[]; };
#endif
layout(std430, binding = 2) readonly buffer Weights { T4 wts[]; };
layout(std430, binding = 3) readonly buffer Bias { T4 bias[]; };

void main() {
  int in_h = P.p[0].x, in_w = P.p[0].y, in_c4 = P.p[0].z, in_c = P.p[0].w;
  int out_h = P.p[1].x, out_w = P.p[1].y, out_c4 = P.p[1].z, batch = P.p[1].w;
  int pad_top = P.p[2].x, pad_left = P.p[2].y;
  int c4 = int(gl_GlobalInvocationID.x);
  int x0 = int(gl_GlobalInvocationID.y) * TILE_X;
  int z = int(gl_GlobalInvocationID.z);
  int n = z / out_h;
  int oy = z - n * out_h;
  if (c4 >= out_c4 || x0 >= out_w || n >= batch) return;

  H4 acc[TILE_X];
  H4 b = H4(bias[c4]);
  for (int t = 0; t < TILE_X; ++t) acc[t] = b;
#if DM != 1
  // Lanes past the output channels have zero weights; their (clamped) input channel does not matter.
  ivec4 ich = min((ivec4(4 * c4) + ivec4(0, 1, 2, 3)) / DM, ivec4(in_c - 1));
#endif
  int iy0 = oy * SH - pad_top;
  for (int ky = 0; ky < KH; ++ky) {
    int iy = iy0 + ky * DH;
    if (iy < 0 || iy >= in_h) continue;
    int row = (n * in_h + iy) * in_w;
    for (int kx = 0; kx < KW; ++kx) {
      H4 w = H4(wts[(ky * KW + kx) * out_c4 + c4]);
      for (int t = 0; t < TILE_X; ++t) {
        int ix = (x0 + t) * SW - pad_left + kx * DW;
        if (ix < 0 || ix >= in_w) continue;
#if DM == 1
        acc[t] += H4(src[(row + ix) * in_c4 + c4]) * w;
#else
        int base = (row + ix) * in_c4 * 4;
        acc[t] += H4(H1(src[base + ich.x]), H1(src[base + ich.y]), H1(src[base + ich.z]), H1(src[base + ich.w])) * w;
#endif
      }
    }
  }
  for (int t = 0; t < TILE_X; ++t) {
    int ox = x0 + t;
    if (ox >= out_w) break;
    dst[((n * out_h + oy) * out_w + ox) * out_c4 + c4] = T4(activate_h(acc[t]));
  }
}
