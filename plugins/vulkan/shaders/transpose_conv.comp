// TRANSPOSE_CONV (and MediaPipe's Convolution2DTransposeBias) as a gather: each invocation computes one
// output pixel's block of 4 channels from the input pixels whose window covers it (iy * SH - pad_top + ky
// = oy), with the weights in conv2d.comp's blocks.
// Bindings: 0 output, 1 input, 2 weights, 3 bias. P.p[0] = (in_h, in_w, in_c4, batch),
// P.p[1] = (out_h, out_w, out_c4, -), P.p[2] = (pad_top, pad_left, -, -).
// Defines: KH KW SH SW, ACT. x: output channel blocks, y: output column, z: batch and output row.
layout(std430, binding = 0) writeonly buffer Output { T4 dst[]; };
layout(std430, binding = 1) readonly buffer Input { T4 src[]; };
layout(std430, binding = 2) readonly buffer Weights { T4 wts[]; };
layout(std430, binding = 3) readonly buffer Bias { T4 bias[]; };

void main() {
  int in_h = P.p[0].x, in_w = P.p[0].y, in_c4 = P.p[0].z, batch = P.p[0].w;
  int out_h = P.p[1].x, out_w = P.p[1].y, out_c4 = P.p[1].z;
  int oc4 = int(gl_GlobalInvocationID.x), ox = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  int n = z / out_h;
  int oy = z - n * out_h;
  if (oc4 >= out_c4 || ox >= out_w || n >= batch) return;
  vec4 acc = vec4(bias[oc4]);
  for (int ky = 0; ky < KH; ++ky) {
    int ty = oy + P.p[2].x - ky;
    if (ty < 0 || ty % SH != 0) continue;
    int iy = ty / SH;
    if (iy >= in_h) continue;
    for (int kx = 0; kx < KW; ++kx) {
      int tx = ox + P.p[2].y - kx;
      if (tx < 0 || tx % SW != 0) continue;
      int ix = tx / SW;
      if (ix >= in_w) continue;
      int in_at = ((n * in_h + iy) * in_w + ix) * in_c4;
      int w_at = ((oc4 * KH + ky) * KW + kx) * in_c4 * 4;
      for (int ic4 = 0; ic4 < in_c4; ++ic4) {
        vec4 x = vec4(src[in_at + ic4]);
        int w = w_at + ic4 * 4;
        acc += x.x * vec4(wts[w]) + x.y * vec4(wts[w + 1]) + x.z * vec4(wts[w + 2]) + x.w * vec4(wts[w + 3]);
      }
    }
  }
  dst[((n * out_h + oy) * out_w + ox) * out_c4 + oc4] = T4(activate(acc));
}
