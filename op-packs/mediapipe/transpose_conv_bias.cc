// Convolution2DTransposeBias (version 1): MediaPipe's transposed convolution with a bias input.
//
// Inputs: x [N,H,W,Cin], weights [Cout,KH,KW,Cin] (OHWI), bias [Cout]; all float32. Output
// [N,OH,OW,Cout].
//
// Options: not a FlexBuffer. MediaPipe reinterprets custom_options as TFLite's C struct
// TfLiteTransposeConvParams and reads its first three fields, so the blob holds three little-endian
// int32: padding (TfLitePadding: 1 = SAME, 2 = VALID), stride_width, stride_height. The selfie models
// carry exactly these 12 bytes, 01000000 02000000 02000000 (SAME, stride 2x2); longer blobs (a newer
// struct with more fields) are accepted and the rest ignored.
//
// Size: for SAME, pad_total = max(0, K - (I-1) % stride - 1), for VALID 0; O = stride*(I-1) + K - pad_total
// per spatial axis; the offset applied is pad_total / 2 (rounded down). Every output starts at its bias;
// input pixel (y, x) adds x[y,x,:]·W[co,ky,kx,:] to output (y*stride_h - pad_h + ky, x*stride_w - pad_w + kx,
// co) when that lies inside the output.
#include <algorithm>
#include <cstring>

#include "ops.h"

namespace baton::mediapipe {
namespace {

using packkit::Ctx;

struct State : packkit::OpState {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int out_h = 0, out_w = 0, out_c = 0;
  int k_h = 0, k_w = 0;
  int stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0;
};

int32_t read_le32(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                              static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
}

void prepare(Ctx& ctx) {
  ctx.require_io(3, 1);
  baton_tensor* x = ctx.input(0);
  baton_tensor* w = ctx.input(1);
  baton_tensor* bias = ctx.input(2);
  ctx.require_type(x, "input", {BATON_TYPE_FLOAT32});
  ctx.require_type(w, "weights", {BATON_TYPE_FLOAT32});
  ctx.require_type(bias, "bias", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_FLOAT32});
  ctx.require_rank(x, "input", 4);
  ctx.require_rank(w, "weights", 4);

  const auto opts = ctx.custom_options();
  ctx.require(opts.size() >= 12, "custom options: expected at least 12 bytes (padding, stride_w, stride_h as int32), got " +
                                     std::to_string(opts.size()));
  const int32_t padding = read_le32(opts.data());
  const int32_t stride_w = read_le32(opts.data() + 4);
  const int32_t stride_h = read_le32(opts.data() + 8);
  ctx.require(padding == 1 || padding == 2,
              "custom options: padding " + std::to_string(padding) + " unknown (1 = SAME, 2 = VALID)");
  ctx.require(stride_w > 0 && stride_h > 0 && stride_w <= 4096 && stride_h <= 4096,
              "custom options: strides must be positive, are " + std::to_string(stride_h) + "x" + std::to_string(stride_w));

  const auto in = ctx.shape(x);
  const auto ws = ctx.shape(w);
  auto& s = ctx.state<State>();
  s.batch = in[0];
  s.in_h = in[1];
  s.in_w = in[2];
  s.in_c = in[3];
  s.out_c = ws[0];
  s.k_h = ws[1];
  s.k_w = ws[2];
  ctx.require(ws[3] == s.in_c, "weights " + ctx.shape_text(w) + " do not match the input's " + std::to_string(s.in_c) +
                                   " channels (OHWI expected)");
  ctx.require(s.in_h > 0 && s.in_w > 0 && s.k_h > 0 && s.k_w > 0 && s.out_c > 0,
              "empty input or weights (input " + ctx.shape_text(x) + ", weights " + ctx.shape_text(w) + ")");
  ctx.require(ctx.element_count(bias) == s.out_c, "bias " + ctx.shape_text(bias) + " must have " +
                                                      std::to_string(s.out_c) + " elements (the weights' output channels)");
  s.stride_h = stride_h;
  s.stride_w = stride_w;
  int pad_total_h = 0, pad_total_w = 0;
  if (padding == 1) {
    pad_total_h = std::max(0, s.k_h - (s.in_h - 1) % stride_h - 1);
    pad_total_w = std::max(0, s.k_w - (s.in_w - 1) % stride_w - 1);
  }
  const int64_t out_h = int64_t{stride_h} * (s.in_h - 1) + s.k_h - pad_total_h;
  const int64_t out_w = int64_t{stride_w} * (s.in_w - 1) + s.k_w - pad_total_w;
  ctx.require(out_h > 0 && out_w > 0 && out_h < (1 << 24) && out_w < (1 << 24),
              "output size " + std::to_string(out_h) + "x" + std::to_string(out_w) + " out of range");
  s.out_h = static_cast<int>(out_h);
  s.out_w = static_cast<int>(out_w);
  s.pad_h = pad_total_h / 2;
  s.pad_w = pad_total_w / 2;
  ctx.set_output_shape(ctx.output(0), {s.batch, s.out_h, s.out_w, s.out_c});
}

void invoke(Ctx& ctx) {
  const auto& s = ctx.state<State>();
  const float* x = ctx.data<float>(ctx.input(0));
  const float* w = ctx.data<float>(ctx.input(1));
  const float* bias = ctx.data<float>(ctx.input(2));
  float* out = ctx.mutable_data<float>(ctx.output(0));
  const size_t out_pixels = static_cast<size_t>(s.out_h) * s.out_w;
  for (int n = 0; n < s.batch; ++n) {
    float* o = out + static_cast<size_t>(n) * out_pixels * s.out_c;
    for (size_t p = 0; p < out_pixels; ++p) std::memcpy(o + p * s.out_c, bias, sizeof(float) * s.out_c);
    for (int iy = 0; iy < s.in_h; ++iy) {
      for (int ix = 0; ix < s.in_w; ++ix) {
        const float* xi = x + ((static_cast<size_t>(n) * s.in_h + iy) * s.in_w + ix) * s.in_c;
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int oy = iy * s.stride_h - s.pad_h + ky;
          if (oy < 0 || oy >= s.out_h) continue;
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ox = ix * s.stride_w - s.pad_w + kx;
            if (ox < 0 || ox >= s.out_w) continue;
            float* op = o + (static_cast<size_t>(oy) * s.out_w + ox) * s.out_c;
            for (int co = 0; co < s.out_c; ++co) {
              const float* wk = w + ((static_cast<size_t>(co) * s.k_h + ky) * s.k_w + kx) * s.in_c;
              float acc = 0.0f;
              for (int ci = 0; ci < s.in_c; ++ci) acc += xi[ci] * wk[ci];
              op[co] += acc;
            }
          }
        }
      }
    }
  }
}

}  // namespace

const packkit::OpDef kConvolution2DTransposeBias = {BATON_OP_CUSTOM, "Convolution2DTransposeBias",
                                                    1, 1, prepare, invoke};

}  // namespace baton::mediapipe
