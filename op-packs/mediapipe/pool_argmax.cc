// MaxPoolingWithArgmax2D and MaxUnpooling2D (version 1): MediaPipe's max pooling that also says where
// each maximum was, and the unpooling that puts values back there (the older hair segmentation model).
// Semantics from MediaPipe's mediapipe/util/tflite/operations/max_pool_argmax.cc and max_unpooling.cc.
//
// Options: not a FlexBuffer. Both ops reinterpret custom_options as TFLite's C struct TfLitePoolParams,
// so the blob holds little-endian int32: padding (1 = SAME, 2 = VALID), stride_width, stride_height,
// filter_width, filter_height, activation, then the struct's computed padding (four ints the kernels
// recompute; converters write zeros, 40 bytes in all). The first six are required, the rest ignored.
//
// MaxPoolingWithArgmax2D: input [N,H,W,C] float32 -> values and indices, both [N,OH,OW,C] float32.
//   OH = ceil(H / stride_h) for SAME, (H - filter_h + stride_h) / stride_h for VALID (likewise OW);
//   pad_h = max(0, ((OH-1)*stride_h + filter_h - H) / 2). The window of (oy, ox) starts at
//   (oy*stride_h - pad_h, ox*stride_w - pad_w) and is clipped to the image. The first maximum in row-major
//   window order wins (a NaN never does). The index is the position inside the window, counted from the
//   unclipped window's corner and per channel: ky * filter_w + kx, with no batch, image row or channel in
//   it, stored as the float ky * filter_w + kx + 0.1 (the 0.1 lets a reader truncate it safely). The
//   values go through the fused activation (NONE, RELU, RELU_N1_TO_1, RELU6); the indices do not.
// MaxUnpooling2D: values and indices [N,H,W,C] float32 -> [N,H*filter_h,W*filter_w,C] float32 (the size
//   does not depend on the stride or the padding mode); pad = max(0, ((H-1)*stride_h + filter_h -
//   H*filter_h) / 2), 0 whenever stride equals filter. The output starts at zero; each value goes to
//   (y*stride_h - pad_h + k / filter_w, x*stride_w - pad_w + k % filter_w) with k its index truncated to
//   an integer; a position outside the output is skipped. Later values overwrite earlier ones.
//
// LiteRT runs both only through its XNNPACK delegate, which differs (tests/data/mediapipe-pool/README.md):
// it requires stride == filter, ignores the activation, breaks ties column-first and keeps the indices as
// uint32 bits of kx * filter_h + ky in the float32 tensors. Between a pooling and an unpooling node both
// encodings give the same result; baton follows MediaPipe's own kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops.h"

namespace baton::mediapipe {
namespace {

using packkit::Ctx;

struct PoolParams {
  int32_t padding = 0;  // 1 = SAME, 2 = VALID
  int32_t stride_h = 1, stride_w = 1;
  int32_t filter_h = 1, filter_w = 1;
  int32_t activation = 0;
};

int32_t read_le32(const uint8_t* p) {
  return static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                              static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24);
}

PoolParams read_params(const Ctx& ctx) {
  const auto opts = ctx.custom_options();
  ctx.require(opts.size() >= 24,
              "custom options: expected at least 24 bytes (TfLitePoolParams: padding, stride_w, stride_h, filter_w, "
              "filter_h, activation as int32), got " + std::to_string(opts.size()));
  PoolParams p;
  p.padding = read_le32(opts.data());
  p.stride_w = read_le32(opts.data() + 4);
  p.stride_h = read_le32(opts.data() + 8);
  p.filter_w = read_le32(opts.data() + 12);
  p.filter_h = read_le32(opts.data() + 16);
  p.activation = read_le32(opts.data() + 20);
  ctx.require(p.padding == 1 || p.padding == 2,
              "custom options: padding " + std::to_string(p.padding) + " unknown (1 = SAME, 2 = VALID)");
  auto in_range = [](int32_t v) { return v > 0 && v <= 4096; };
  ctx.require(in_range(p.stride_h) && in_range(p.stride_w),
              "custom options: strides must be in 1..4096, are " + std::to_string(p.stride_h) + "x" +
                  std::to_string(p.stride_w));
  ctx.require(in_range(p.filter_h) && in_range(p.filter_w),
              "custom options: filter size must be in 1..4096, is " + std::to_string(p.filter_h) + "x" +
                  std::to_string(p.filter_w));
  return p;
}

// TFLite's padding for an output of `out` from `in`: half the excess, rounded down, never negative.
int padding_before(int in, int out, int filter, int stride) {
  const int64_t total = (int64_t{out} - 1) * stride + filter - in;
  return static_cast<int>(std::max<int64_t>(0, total / 2));
}

// ---- MaxPoolingWithArgmax2D

struct ArgmaxState : packkit::OpState {
  PoolParams p;
  int batch = 0, in_h = 0, in_w = 0, channels = 0;
  int out_h = 0, out_w = 0;
  int pad_h = 0, pad_w = 0;
  float act_min = 0, act_max = 0;
};

int pooled_size(const Ctx& ctx, int size, int filter, int stride, int32_t padding, const char* axis) {
  if (padding == 1) return static_cast<int>((int64_t{size} + stride - 1) / stride);
  ctx.require(filter <= size, std::string("input (input 0) ") + axis + " " + std::to_string(size) +
                                  " is smaller than the filter's " + std::to_string(filter) + " with VALID padding");
  return (size - filter + stride) / stride;
}

void argmax_prepare(Ctx& ctx) {
  ctx.require_io(1, 2);
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "input (input 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "values (output 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(1), "indices (output 1)", {BATON_TYPE_FLOAT32});
  ctx.require_rank(in, "input (input 0)", 4);
  auto& s = ctx.state<ArgmaxState>();
  s.p = read_params(ctx);
  switch (s.p.activation) {
    case 0: s.act_min = std::numeric_limits<float>::lowest(); s.act_max = std::numeric_limits<float>::max(); break;
    case 1: s.act_min = 0; s.act_max = std::numeric_limits<float>::max(); break;
    case 2: s.act_min = -1; s.act_max = 1; break;
    case 3: s.act_min = 0; s.act_max = 6; break;
    default:
      ctx.fail(BATON_UNSUPPORTED, "custom options: activation " + std::to_string(s.p.activation) +
                                      " not supported (0 = NONE, 1 = RELU, 2 = RELU_N1_TO_1, 3 = RELU6)");
  }
  const auto shape = ctx.shape(in);
  s.batch = shape[0];
  s.in_h = shape[1];
  s.in_w = shape[2];
  s.channels = shape[3];
  s.out_h = pooled_size(ctx, s.in_h, s.p.filter_h, s.p.stride_h, s.p.padding, "height");
  s.out_w = pooled_size(ctx, s.in_w, s.p.filter_w, s.p.stride_w, s.p.padding, "width");
  s.pad_h = padding_before(s.in_h, s.out_h, s.p.filter_h, s.p.stride_h);
  s.pad_w = padding_before(s.in_w, s.out_w, s.p.filter_w, s.p.stride_w);
  ctx.set_output_shape(ctx.output(0), {s.batch, s.out_h, s.out_w, s.channels});
  ctx.set_output_shape(ctx.output(1), {s.batch, s.out_h, s.out_w, s.channels});
}

void argmax_invoke(Ctx& ctx) {
  const auto& s = ctx.state<ArgmaxState>();
  const float* in = ctx.data<float>(ctx.input(0));
  float* values = ctx.mutable_data<float>(ctx.output(0));
  float* indices = ctx.mutable_data<float>(ctx.output(1));
  const int c_count = s.channels;
  size_t o = 0;
  for (int n = 0; n < s.batch; ++n) {
    const float* image = in + static_cast<size_t>(n) * s.in_h * s.in_w * c_count;
    for (int oy = 0; oy < s.out_h; ++oy) {
      const int y0 = oy * s.p.stride_h - s.pad_h;
      const int ky_begin = std::max(0, -y0), ky_end = std::min(s.p.filter_h, s.in_h - y0);
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int x0 = ox * s.p.stride_w - s.pad_w;
        const int kx_begin = std::max(0, -x0), kx_end = std::min(s.p.filter_w, s.in_w - x0);
        for (int c = 0; c < c_count; ++c, ++o) {
          float best = std::numeric_limits<float>::lowest();
          int best_k = 0;
          for (int ky = ky_begin; ky < ky_end; ++ky) {
            const float* row = image + (static_cast<size_t>(y0 + ky) * s.in_w + x0) * c_count + c;
            for (int kx = kx_begin; kx < kx_end; ++kx) {
              const float v = row[static_cast<size_t>(kx) * c_count];
              if (v > best) {
                best = v;
                best_k = ky * s.p.filter_w + kx;
              }
            }
          }
          values[o] = std::min(std::max(best, s.act_min), s.act_max);
          indices[o] = static_cast<float>(best_k) + 0.1f;
        }
      }
    }
  }
}

// ---- MaxUnpooling2D

struct UnpoolState : packkit::OpState {
  PoolParams p;
  int batch = 0, in_h = 0, in_w = 0, channels = 0;
  int out_h = 0, out_w = 0;
  int pad_h = 0, pad_w = 0;
};

void unpool_prepare(Ctx& ctx) {
  ctx.require_io(2, 1);
  baton_tensor* in = ctx.input(0);
  baton_tensor* idx = ctx.input(1);
  ctx.require_type(in, "values (input 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(idx, "indices (input 1)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_FLOAT32});
  ctx.require_rank(in, "values (input 0)", 4);
  ctx.require_rank(idx, "indices (input 1)", 4);
  const auto shape = ctx.shape(in);
  const auto ishape = ctx.shape(idx);
  ctx.require(std::equal(shape.begin(), shape.end(), ishape.begin(), ishape.end()),
              "indices (input 1) " + ctx.shape_text(idx) + " must have the values' shape " + ctx.shape_text(in));
  auto& s = ctx.state<UnpoolState>();
  s.p = read_params(ctx);  // the activation is read by MediaPipe but never applied
  s.batch = shape[0];
  s.in_h = shape[1];
  s.in_w = shape[2];
  s.channels = shape[3];
  const int64_t out_h = int64_t{s.in_h} * s.p.filter_h, out_w = int64_t{s.in_w} * s.p.filter_w;
  ctx.require(out_h < (1 << 24) && out_w < (1 << 24),
              "output size " + std::to_string(out_h) + "x" + std::to_string(out_w) + " out of range");
  s.out_h = static_cast<int>(out_h);
  s.out_w = static_cast<int>(out_w);
  s.pad_h = padding_before(s.out_h, s.in_h, s.p.filter_h, s.p.stride_h);
  s.pad_w = padding_before(s.out_w, s.in_w, s.p.filter_w, s.p.stride_w);
  ctx.set_output_shape(ctx.output(0), {s.batch, s.out_h, s.out_w, s.channels});
}

void unpool_invoke(Ctx& ctx) {
  const auto& s = ctx.state<UnpoolState>();
  const float* in = ctx.data<float>(ctx.input(0));
  const float* idx = ctx.data<float>(ctx.input(1));
  float* out = ctx.mutable_data<float>(ctx.output(0));
  const int c_count = s.channels;
  const size_t out_image = static_cast<size_t>(s.out_h) * s.out_w * c_count;
  std::memset(out, 0, sizeof(float) * out_image * s.batch);
  size_t i = 0;
  for (int n = 0; n < s.batch; ++n) {
    float* image = out + static_cast<size_t>(n) * out_image;
    for (int y = 0; y < s.in_h; ++y) {
      for (int x = 0; x < s.in_w; ++x) {
        for (int c = 0; c < c_count; ++c, ++i) {
          // MediaPipe converts the float to int; NaN and values beyond int range would be undefined
          // there and point outside every window, so they are skipped.
          const float k_f = idx[i];
          if (!(k_f > -2147483648.0f && k_f < 2147483648.0f)) continue;
          const int k = static_cast<int>(k_f);
          const int64_t oy = int64_t{y} * s.p.stride_h - s.pad_h + k / s.p.filter_w;
          const int64_t ox = int64_t{x} * s.p.stride_w - s.pad_w + k % s.p.filter_w;
          if (oy < 0 || oy >= s.out_h || ox < 0 || ox >= s.out_w) continue;
          image[(static_cast<size_t>(oy) * s.out_w + ox) * c_count + c] = in[i];
        }
      }
    }
  }
}

}  // namespace

const packkit::OpDef kMaxPoolingWithArgmax2D = {BATON_OP_CUSTOM, "MaxPoolingWithArgmax2D",
                                                1, 1, argmax_prepare, argmax_invoke};
const packkit::OpDef kMaxUnpooling2D = {BATON_OP_CUSTOM, "MaxUnpooling2D", 1, 1, unpool_prepare, unpool_invoke};

}  // namespace baton::mediapipe
