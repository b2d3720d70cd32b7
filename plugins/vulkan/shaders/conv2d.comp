// CONV_2D. Bindings: 0 output, 1 input, 2 weights (blocks of ops_conv.cc), 3 bias (vec4s).
// P.p[0] = (in_h, in_w, in_c4, batch), P.p[1] = (out_h, out_w, out_c4, out_c),
// P.p[2] = (pad_top, pad_left, oc_tiles, -).
// Defines: KH KW SH SW DH DW (kernel, strides, dilations), ACT, TILE_X (pixels of a row per invocation),
// TILE_OC (blocks of 4 output channels per invocation). x: pixel tiles, y: output row, z: batch and
// channel tiles.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
layout(std430, binding = 2) readonly buffer Weights { T4 wts[]; };
layout(std430, binding = 3) readonly buffer Bias { T4 bias[]; };

void main() {
  int in_h = P.p[0].x, in_w = P.p[0].y, in_c4 = P.p[0].z, batch = P.p[0].w;
  int out_h = P.p[1].x, out_w = P.p[1].y, out_c4 = P.p[1].z;
  int pad_top = P.p[2].x, pad_left = P.p[2].y, oc_tiles = P.p[2].z;
  int x0 = int(gl_GlobalInvocationID.x) * TILE_X;
  int oy = int(gl_GlobalInvocationID.y);
  int z = int(gl_GlobalInvocationID.z);
  int n = z / oc_tiles;
  int oc0 = (z - n * oc_tiles) * TILE_OC;
  if (x0 >= out_w || oy >= out_h || n >= batch) return;

  H4 acc[TILE_OC][TILE_X];
  int wbase[TILE_OC];
  for (int o = 0; o < TILE_OC; ++o) {
    int oc = min(oc0 + o, out_c4 - 1);  // a tile past the last block computes a copy it does not write
    wbase[o] = oc * KH * KW * in_c4 * 4;
    H4 b = H4(bias[oc]);
    for (int t = 0; t < TILE_X; ++t) acc[o][t] = b;
  }
  int iy0 = oy * SH - pad_top;
  for (int ky = 0; ky < KH; ++ky) {
    int iy = iy0 + ky * DH;
    if (iy < 0 || iy >= in_h) continue;
    int row = (n * in_h + iy) * in_w;
    for (int kx = 0; kx < KW; ++kx) {
      int pix[TILE_X];
      bool inside[TILE_X];
      for (int t = 0; t < TILE_X; ++t) {
        int ix = (x0 + t) * SW - pad_left + kx * DW;
        inside[t] = ix >= 0 && ix < in_w;
        pix[t] = (row + ix) * in_c4;
      }
      int tap = (ky * KW + kx) * in_c4 * 4;
      for (int ic = 0; ic < in_c4; ++ic) {
        H4 v[TILE_X];
        for (int t = 0; t < TILE_X; ++t) {
          v[t] = H4(0.0);
          if (inside[t]) v[t] = H4(src[pix[t] + ic]);
        }
        for (int o = 0; o < TILE_OC; ++o) {
          int wi = wbase[o] + tap + ic * 4;
          H4 w0 = H4(wts[wi]), w1 = H4(wts[wi + 1]), w2 = H4(wts[wi + 2]), w3 = H4(wts[wi + 3]);
          for (int t = 0; t < TILE_X; ++t) {
            acc[o][t] += v[t].x * w0 + v[t].y * w1 + v[t].z * w2 + v[t].w * w3;
          }
        }
      }
    }
  }
  for (int o = 0; o < TILE_OC; ++o) {
    int oc = oc0 + o;
    if (oc >= out_c4) break;
    for (int t = 0; t < TILE_X; ++t) {
      int ox = x0 + t;
      if (ox >= out_w) break;
      dst[((n * out_h + oy) * out_w + ox) * out_c4 + oc] = T4(activate_h(acc[o][t]));
    }
  }
}
