// The three face-landmark ops of MediaPipe's attention mesh model (face_landmark_with_attention), version 2
// only (version 1 has other keys and a 4-D input; no surveyed model uses it). Written from the
// descriptions in ../shared/models/SURVEY.md section 3 and MediaPipe's operations/*.cc (formulas only).
//
// Landmarks2TransformMatrix: landmarks [1,N,3] -> 4x4 row-major matrix [1,4,4] that maps crop pixel
//   coordinates (u, v, 0, 1) to landmark (input) coordinates. FlexBuffer keys: left_rotation_idx,
//   right_rotation_idx, subset_idxs (int vector; every entry is a landmark index), output_height,
//   output_width, scale_x, scale_y, target_rotation_radians (optional, 0).
//     r  = target_rotation - atan2(yR - yL, xR - xL)
//     rotate every subset landmark's (x, y) by r; the axis-aligned box of the rotated points has width w,
//     height h and centre c; (cx, cy) = c rotated by -r
//     M  = T(cx, cy) · Rz(-r) · S(scale_x*w/output_width, scale_y*h/output_height) · T(-output_width/2,
//          -output_height/2)
// TransformTensorBilinear: features [1,H,W,C] and the matrix -> [1,output_height,output_width,C]. With rows
//   a = (m00..m03), b = (m10..m13), version 2 first moves the translation by half a pixel (align-corners
//   correction): a3 += 0.5*(a0 + a1) - 0.5, b3 likewise. Output pixel (u, v) samples (sx, sy) =
//   (a·(u,v,0,1), b·(u,v,0,1)): 0 when outside [0, W-1] x [0, H-1], else bilinear between the four
//   neighbours (a neighbour outside the image reads as 0). FlexBuffer keys: output_height, output_width.
// TransformLandmarks: points [B,N,D] (D = 2 or 3) and the matrix -> same shape; x' = m00 x + m01 y + m03,
//   y' = m10 x + m11 y + m13; z is copied. No options.
#include <cmath>
#include <vector>

#include "common/flex_map.h"
#include "ops.h"

namespace baton::mediapipe {
namespace {

using packkit::Ctx;
using packkit::FlexMap;

// The matrix input of TransformTensorBilinear and TransformLandmarks: 16 floats, [1,4,4] in the models.
void check_matrix(const Ctx& ctx, const baton_tensor* m) {
  ctx.require_type(m, "matrix (input 1)", {BATON_TYPE_FLOAT32});
  ctx.require(ctx.element_count(m) == 16, "matrix (input 1) must hold 16 values (a 4x4 matrix), has shape " +
                                              ctx.shape_text(m));
}

// ---- Landmarks2TransformMatrix

struct MatrixState : packkit::OpState {
  int32_t left = 0, right = 0;
  float target_rotation = 0;
  int32_t out_h = 0, out_w = 0;
  float scale_x = 1, scale_y = 1;
  std::vector<int32_t> subset;  // landmark indices
};

void matrix_prepare(Ctx& ctx) {
  ctx.require_io(1, 1);
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "landmarks (input 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_FLOAT32});
  ctx.require_rank(in, "landmarks (input 0)", 3);
  const auto shape = ctx.shape(in);
  ctx.require(shape[0] == 1 && shape[2] == 3, "landmarks (input 0) must be [1,N,3], are " + ctx.shape_text(in));
  const int32_t n = shape[1];

  auto& s = ctx.state<MatrixState>();
  const FlexMap m = FlexMap::parse(ctx.custom_options());
  s.left = m.require_int32("left_rotation_idx");
  s.right = m.require_int32("right_rotation_idx");
  s.target_rotation = m.float_or("target_rotation_radians", 0.0f);
  s.out_h = m.require_int32("output_height");
  s.out_w = m.require_int32("output_width");
  s.scale_x = m.require_float("scale_x");
  s.scale_y = m.require_float("scale_y");
  const auto subset = m.get_int_vector("subset_idxs");
  ctx.require(subset.has_value(), "custom options: key 'subset_idxs' is missing");
  ctx.require(!subset->empty(), "custom options: key 'subset_idxs' is empty");
  auto check_index = [&](int64_t idx, const std::string& what) {
    ctx.require(idx >= 0 && idx < n, "custom options: " + what + " " + std::to_string(idx) +
                                         " is not a landmark index (the input has " + std::to_string(n) + ")");
  };
  check_index(s.left, "left_rotation_idx");
  check_index(s.right, "right_rotation_idx");
  s.subset.clear();
  for (int64_t idx : *subset) {
    check_index(idx, "subset_idxs entry");
    s.subset.push_back(static_cast<int32_t>(idx));
  }
  ctx.require(s.out_h > 0 && s.out_w > 0, "custom options: output_height and output_width must be positive, are " +
                                              std::to_string(s.out_h) + " and " + std::to_string(s.out_w));
  ctx.require(s.scale_x > 0 && s.scale_y > 0 && std::isfinite(s.scale_x) && std::isfinite(s.scale_y),
              "custom options: scale_x and scale_y must be positive");
  ctx.require(std::isfinite(s.target_rotation), "custom options: target_rotation_radians must be finite");
  ctx.set_output_shape(ctx.output(0), {1, 4, 4});
}

// out = a · b, 4x4 row-major.
void mat4_mul(const float* a, const float* b, float* out) {
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      float sum = 0;
      for (int k = 0; k < 4; ++k) sum += a[r * 4 + k] * b[k * 4 + c];
      out[r * 4 + c] = sum;
    }
  }
}

void matrix_invoke(Ctx& ctx) {
  const auto& s = ctx.state<MatrixState>();
  const float* lm = ctx.data<float>(ctx.input(0));
  float* out = ctx.mutable_data<float>(ctx.output(0));
  const float lx = lm[s.left * 3], ly = lm[s.left * 3 + 1];
  const float rx = lm[s.right * 3], ry = lm[s.right * 3 + 1];
  const float r = s.target_rotation - std::atan2(ry - ly, rx - lx);
  const float cr = std::cos(r), sr = std::sin(r);
  // The box of the subset rotated by r.
  float min_x = 0, min_y = 0, max_x = 0, max_y = 0;
  for (size_t i = 0; i < s.subset.size(); ++i) {
    const float x = lm[s.subset[i] * 3], y = lm[s.subset[i] * 3 + 1];
    const float rx2 = cr * x - sr * y, ry2 = sr * x + cr * y;
    if (i == 0) {
      min_x = max_x = rx2;
      min_y = max_y = ry2;
    } else {
      min_x = std::min(min_x, rx2);
      max_x = std::max(max_x, rx2);
      min_y = std::min(min_y, ry2);
      max_y = std::max(max_y, ry2);
    }
  }
  const float w = max_x - min_x, h = max_y - min_y;
  const float mx = (min_x + max_x) / 2, my = (min_y + max_y) / 2;
  // The centre back in input coordinates: rotate by -r.
  const float cx = cr * mx + sr * my, cy = -sr * mx + cr * my;
  const float sx = s.scale_x * w / static_cast<float>(s.out_w);
  const float sy = s.scale_y * h / static_cast<float>(s.out_h);
  // M = T(cx, cy) · Rz(-r) · S(sx, sy) · T(-out_w/2, -out_h/2); Rz(-r) = [[cos r, sin r], [-sin r, cos r]].
  const float shift[16] = {1, 0, 0, cx, 0, 1, 0, cy, 0, 0, 1, 0, 0, 0, 0, 1};
  const float rot[16] = {cr, sr, 0, 0, -sr, cr, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const float scale[16] = {sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const float center[16] = {1, 0, 0, -static_cast<float>(s.out_w) / 2, 0, 1, 0, -static_cast<float>(s.out_h) / 2,
                            0, 0, 1, 0, 0, 0, 0, 1};
  float a[16], b[16];
  mat4_mul(shift, rot, a);
  mat4_mul(a, scale, b);
  mat4_mul(b, center, out);
}

// ---- TransformTensorBilinear

struct WarpState : packkit::OpState {
  int in_h = 0, in_w = 0, channels = 0;
  int out_h = 0, out_w = 0;
};

void warp_prepare(Ctx& ctx) {
  ctx.require_io(2, 1);
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "features (input 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_FLOAT32});
  ctx.require_rank(in, "features (input 0)", 4);
  check_matrix(ctx, ctx.input(1));
  const auto shape = ctx.shape(in);
  ctx.require(shape[0] == 1, "features (input 0) must have batch 1, shape is " + ctx.shape_text(in));
  const FlexMap m = FlexMap::parse(ctx.custom_options());
  auto& s = ctx.state<WarpState>();
  s.out_h = m.require_int32("output_height");
  s.out_w = m.require_int32("output_width");
  ctx.require(s.out_h > 0 && s.out_w > 0 && s.out_h <= (1 << 16) && s.out_w <= (1 << 16),
              "custom options: output_height and output_width must be in 1..65536, are " + std::to_string(s.out_h) +
                  " and " + std::to_string(s.out_w));
  s.in_h = shape[1];
  s.in_w = shape[2];
  s.channels = shape[3];
  ctx.set_output_shape(ctx.output(0), {1, s.out_h, s.out_w, s.channels});
}

void warp_invoke(Ctx& ctx) {
  const auto& s = ctx.state<WarpState>();
  const float* in = ctx.data<float>(ctx.input(0));
  const float* m = ctx.data<float>(ctx.input(1));
  float* out = ctx.mutable_data<float>(ctx.output(0));
  float a[4] = {m[0], m[1], m[2], m[3]};
  float b[4] = {m[4], m[5], m[6], m[7]};
  // Align-corners correction of version 2.
  a[3] += a[0] * 0.5f + a[1] * 0.5f - 0.5f;
  b[3] += b[0] * 0.5f + b[1] * 0.5f - 0.5f;
  const int c_count = s.channels;
  auto pixel = [&](int y, int x) -> const float* {
    if (y < 0 || x < 0 || y >= s.in_h || x >= s.in_w) return nullptr;
    return in + (static_cast<size_t>(y) * s.in_w + x) * c_count;
  };
  for (int v = 0; v < s.out_h; ++v) {
    for (int u = 0; u < s.out_w; ++u) {
      float* o = out + (static_cast<size_t>(v) * s.out_w + u) * c_count;
      const float fu = static_cast<float>(u), fv = static_cast<float>(v);
      const float sx = a[0] * fu + a[1] * fv + a[3];
      const float sy = b[0] * fu + b[1] * fv + b[3];
      // NaN fails every comparison, so test for "inside" and treat everything else as outside.
      const bool inside = sx >= 0.0f && sx <= static_cast<float>(s.in_w - 1) && sy >= 0.0f &&
                          sy <= static_cast<float>(s.in_h - 1);
      if (!inside) {
        for (int c = 0; c < c_count; ++c) o[c] = 0.0f;
        continue;
      }
      const float fx = std::floor(sx), fy = std::floor(sy);
      const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy);
      const float dx = sx - fx, dy = sy - fy;
      const float* q11 = pixel(y0, x0);
      const float* q21 = pixel(y0, x0 + 1);
      const float* q12 = pixel(y0 + 1, x0);
      const float* q22 = pixel(y0 + 1, x0 + 1);
      for (int c = 0; c < c_count; ++c) {
        const float v11 = q11 ? q11[c] : 0.0f, v21 = q21 ? q21[c] : 0.0f;
        const float v12 = q12 ? q12[c] : 0.0f, v22 = q22 ? q22[c] : 0.0f;
        const float upper = (1.0f - dx) * v11 + dx * v21;
        const float lower = (1.0f - dx) * v12 + dx * v22;
        o[c] = dy * lower + (1.0f - dy) * upper;
      }
    }
  }
}

// ---- TransformLandmarks

struct PointsState : packkit::OpState {
  int64_t points = 0;
  int dims = 2;
};

void points_prepare(Ctx& ctx) {
  ctx.require_io(2, 1);
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "landmarks (input 0)", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_FLOAT32});
  ctx.require_rank(in, "landmarks (input 0)", 3);
  check_matrix(ctx, ctx.input(1));
  const auto shape = ctx.shape(in);
  ctx.require(shape[2] == 2 || shape[2] == 3, "landmarks (input 0) must have 2 or 3 values per point, shape is " +
                                                  ctx.shape_text(in));
  auto& s = ctx.state<PointsState>();
  s.dims = shape[2];
  s.points = int64_t{shape[0]} * shape[1];
  ctx.set_output_shape(ctx.output(0), shape);
}

void points_invoke(Ctx& ctx) {
  const auto& s = ctx.state<PointsState>();
  const float* in = ctx.data<float>(ctx.input(0));
  const float* m = ctx.data<float>(ctx.input(1));
  float* out = ctx.mutable_data<float>(ctx.output(0));
  for (int64_t i = 0; i < s.points; ++i) {
    const float* p = in + i * s.dims;
    float* q = out + i * s.dims;
    const float x = p[0], y = p[1];
    q[0] = m[0] * x + m[1] * y + m[3];
    q[1] = m[4] * x + m[5] * y + m[7];
    if (s.dims == 3) q[2] = p[2];
  }
}

}  // namespace

const packkit::OpDef kLandmarks2TransformMatrix = {BATON_OP_CUSTOM, "Landmarks2TransformMatrix",
                                                   2, 2, matrix_prepare, matrix_invoke};
const packkit::OpDef kTransformTensorBilinear = {BATON_OP_CUSTOM, "TransformTensorBilinear",
                                                 2, 2, warp_prepare, warp_invoke};
const packkit::OpDef kTransformLandmarks = {BATON_OP_CUSTOM, "TransformLandmarks", 2, 2, points_prepare, points_invoke};

}  // namespace baton::mediapipe
