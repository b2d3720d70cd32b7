// The mediapipe op pack (Convolution2DTransposeBias, Landmarks2TransformMatrix, TransformTensorBilinear,
// TransformLandmarks) and the FlexBuffer reader its ops and the detection pack's read options with.
//
//  - The reader (op-packs/mediapipe/common/flex_map.cc, compiled into this test too) against blobs made
//    by flatbuffers' own builder, and against truncated and mutated blobs: an error naming the key, never
//    a crash.
//  - Each op in a one-node model run by the real runtime with the pack loaded from its build folder, on
//    cases derived by hand from the op's definition (identity, translation, scale, 90° rotation).
//    Malformed options fail with the node and op named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/flex_map.h"
#include "custom_ops_support.h"
#include "flatbuffers/flexbuffers.h"
#include "interpreter.h"
#include "test_support.h"

namespace baton::test {
namespace {

using packkit::FlexError;
using packkit::FlexMap;

// ------------------------------------------------------------------------------------------------
// The FlexBuffer reader.

TEST(FlexMap, ReadsWhatFlatbuffersWrites) {
  const auto blob = flex_map([](flexbuffers::Builder& b) {
    b.Int("small", 7);
    b.Int("wide", -1234567890123LL);
    b.UInt("unsigned", 300);
    b.Float("f", 1.5f);
    b.Double("d", 0.6);
    b.Bool("yes", true);
    b.Bool("no", false);
    b.Vector("subset_idxs", [&] {
      for (int v : {61, 291, 0, 17, 300}) b.Int(static_cast<int64_t>(v));
    });
    b.TypedVector("typed", [&] {
      for (int v : {-3, 1000, 70000}) b.Int(v);
    });
    b.String("s", "text");
    b.Null("nothing");
  });
  const FlexMap m = FlexMap::parse(blob);
  EXPECT_EQ(m.size(), 11u);
  EXPECT_EQ(m.get_int("small"), 7);
  EXPECT_EQ(m.get_int("wide"), -1234567890123LL);
  EXPECT_EQ(m.get_int("unsigned"), 300);
  EXPECT_DOUBLE_EQ(*m.get_float("f"), 1.5);
  EXPECT_NEAR(*m.get_float("d"), 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(*m.get_float("small"), 7.0);  // ints read as floats, as flexbuffers' AsFloat does
  EXPECT_EQ(m.get_bool("yes"), true);
  EXPECT_EQ(m.get_bool("no"), false);
  EXPECT_EQ(*m.get_int_vector("subset_idxs"), (std::vector<int64_t>{61, 291, 0, 17, 300}));
  EXPECT_EQ(*m.get_int_vector("typed"), (std::vector<int64_t>{-3, 1000, 70000}));
  EXPECT_FALSE(m.get_int("absent").has_value());
  EXPECT_FALSE(m.get_int("nothing").has_value());  // an explicit null reads as absent
  EXPECT_EQ(m.int32_or("absent", 100), 100);
  EXPECT_THROW(m.get_int("s"), FlexError);
  EXPECT_THROW(m.get_int_vector("small"), FlexError);
  EXPECT_THROW(m.int32_or("wide", 0), FlexError);  // does not fit in 32 bits
  try {
    (void)m.get_float("s");
    ADD_FAILURE() << "a string read as a float";
  } catch (const FlexError& e) {
    EXPECT_NE(std::string(e.what()).find("key 's'"), std::string::npos) << e.what();
  }
  try {
    (void)m.require_int32("max_detections");
    ADD_FAILURE();
  } catch (const FlexError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'max_detections' is missing"), std::string::npos) << e.what();
  }
}

TEST(FlexMap, RejectsWhatIsNotAMap) {
  EXPECT_THROW(FlexMap::parse({}), FlexError);
  const std::vector<uint8_t> two = {1, 1};
  EXPECT_THROW(FlexMap::parse(two), FlexError);
  flexbuffers::Builder b;
  b.Int(5);
  b.Finish();
  try {
    (void)FlexMap::parse(b.GetBuffer());
    ADD_FAILURE();
  } catch (const FlexError& e) {
    EXPECT_NE(std::string(e.what()).find("not a map"), std::string::npos) << e.what();
  }
  // Convolution2DTransposeBias's raw struct is not a FlexBuffer either.
  EXPECT_THROW(FlexMap::parse(le32({1, 2, 2})), FlexError);
}

// Every truncation and thousands of random corruptions of a real-looking options blob: the reader either
// reads values or throws FlexError; it never reads outside the buffer (the ASan build checks that).
TEST(FlexMap, SurvivesTruncatedAndCorruptedBlobs) {
  const auto blob = flex_map([](flexbuffers::Builder& b) {
    b.Int("left_rotation_idx", 33);
    b.Int("right_rotation_idx", 133);
    b.Int("output_height", 16);
    b.Int("output_width", 16);
    b.Float("scale_x", 1.5f);
    b.Float("scale_y", 1.5f);
    b.Vector("subset_idxs", [&] {
      for (int v = 0; v < 71; ++v) b.Int(static_cast<int64_t>(v * 5));
    });
    b.Float("target_rotation_radians", 0.0f);
  });
  const char* keys[] = {"left_rotation_idx", "right_rotation_idx", "output_height", "output_width", "scale_x",
                        "scale_y", "subset_idxs", "target_rotation_radians", "absent"};
  auto exercise = [&](std::span<const uint8_t> bytes) {
    try {
      const FlexMap m = FlexMap::parse(bytes);
      (void)m.keys();
      for (const char* k : keys) {
        try {
          (void)m.get_int(k);
        } catch (const FlexError&) {
        }
        try {
          (void)m.get_float(k);
        } catch (const FlexError&) {
        }
        try {
          (void)m.get_int_vector(k);
        } catch (const FlexError&) {
        }
      }
    } catch (const FlexError&) {
    }
  };
  exercise(blob);
  for (size_t n = 0; n < blob.size(); ++n) {
    // A copy of exactly n bytes, so reading past it is a heap overflow ASan reports.
    std::vector<uint8_t> head(blob.begin(), blob.begin() + static_cast<std::ptrdiff_t>(n));
    exercise(head);
  }
  std::mt19937 rng(0);
  for (int round = 0; round < 20000; ++round) {
    std::vector<uint8_t> bad = blob;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    exercise(bad);
  }
}

// ------------------------------------------------------------------------------------------------
// Convolution2DTransposeBias

// x [1,H,W,Cin] -> Convolution2DTransposeBias(weights, bias) with the given raw options.
MGraph transpose_conv_graph(std::vector<int32_t> in_shape, std::vector<int32_t> w_shape, const std::vector<float>& w,
                            const std::vector<float>& bias, std::vector<uint8_t> options) {
  MGraph g;
  const int x = g.act(in_shape);
  const int wt = g.add({w_shape, kF32, bytes_of(w)});
  const int bt = g.add({{static_cast<int32_t>(bias.size())}, kF32, bytes_of(bias)});
  const int y = g.act({});
  g.ops.push_back({"Convolution2DTransposeBias", 1, {x, wt, bt}, {y}, std::move(options)});
  g.inputs = {x};
  g.outputs = {y};
  return g;
}

TEST(Convolution2DTransposeBias, Stride2SameLikeTheSelfieModel) {
  // The selfie model's options: SAME (1), stride 2x2; 2x2 kernel. pad_total = max(0, 2 - (2-1)%2 - 1) = 0,
  // so out = 2*(2-1) + 2 = 4 per axis and input pixel (y,x) paints the 2x2 block at (2y, 2x) with
  // x[y,x] * w[ky,kx] + bias.
  const MGraph g = transpose_conv_graph({1, 2, 2, 1}, {1, 2, 2, 1}, {1, 10, 100, 1000}, {0.5f}, le32({1, 2, 2}));
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(g, kMediapipe, {{1, 2, 3, 4}}, &shapes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, 4, 4, 1}));
  const std::vector<float> want = {
      1.5f,   10.5f,   2.5f,   20.5f,    //
      100.5f, 1000.5f, 200.5f, 2000.5f,  //
      3.5f,   30.5f,   4.5f,   40.5f,    //
      300.5f, 3000.5f, 400.5f, 4000.5f,
  };
  expect_near(out[0], want, 1e-4f, "output");
}

TEST(Convolution2DTransposeBias, Stride1SameCentresTheKernelAndMixesChannels) {
  // 3x3 input, 3x3 kernel, stride 1, SAME: pad_total = max(0, 3 - 0 - 1) = 2, out = 1*2 + 3 - 2 = 3, offset
  // pad = 1. A single 1 at the centre, channel 0, scatters the kernel unflipped: out[ky,kx,co] =
  // w[co,ky,kx,0] + bias[co]. Input channel 1 holds 2 at the top-left pixel: it adds 2*w[co,ky,kx,1] at
  // (ky-1, kx-1), i.e. only taps ky,kx >= 1 land, on out[0..1][0..1].
  std::vector<float> w(2 * 3 * 3 * 2);
  for (int co = 0; co < 2; ++co) {
    for (int k = 0; k < 9; ++k) {
      w[(co * 9 + k) * 2 + 0] = static_cast<float>(k + 1) * (co == 0 ? 1.0f : -1.0f);  // channel 0: +-(1..9)
      w[(co * 9 + k) * 2 + 1] = static_cast<float>(co == 0 ? 100 : 1000);             // channel 1: constant
    }
  }
  std::vector<float> x(3 * 3 * 2, 0.0f);
  x[(1 * 3 + 1) * 2 + 0] = 1.0f;
  x[(0 * 3 + 0) * 2 + 1] = 2.0f;
  const MGraph g = transpose_conv_graph({1, 3, 3, 2}, {2, 3, 3, 2}, w, {0.25f, -0.25f}, le32({1, 1, 1}));
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(g, kMediapipe, {x}, &shapes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, 3, 3, 2}));
  for (int oy = 0; oy < 3; ++oy) {
    for (int ox = 0; ox < 3; ++ox) {
      for (int co = 0; co < 2; ++co) {
        float want = (co == 0 ? 0.25f : -0.25f) + static_cast<float>(oy * 3 + ox + 1) * (co == 0 ? 1.0f : -1.0f);
        if (oy <= 1 && ox <= 1) want += 2.0f * (co == 0 ? 100.0f : 1000.0f);
        EXPECT_NEAR(out[0][(oy * 3 + ox) * 2 + co], want, 1e-4f) << oy << "," << ox << "," << co;
      }
    }
  }
}

TEST(Convolution2DTransposeBias, ValidPaddingGrowsTheOutput) {
  // VALID: pad 0, out = 1*(2-1) + 3 = 4. Input all ones, kernel all ones: each output counts the input
  // pixels whose 3x3 footprint covers it: rows/cols 0 and 3 are covered by one, 1 and 2 by two.
  const MGraph g = transpose_conv_graph({1, 2, 2, 1}, {1, 3, 3, 1}, std::vector<float>(9, 1.0f), {0.0f},
                                        le32({2, 1, 1}));
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(g, kMediapipe, {{1, 1, 1, 1}}, &shapes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, 4, 4, 1}));
  const float c[4] = {1, 2, 2, 1};
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) EXPECT_NEAR(out[0][y * 4 + x], c[y] * c[x], 1e-5f) << y << "," << x;
  }
}

TEST(Convolution2DTransposeBias, BadOptionsNameTheNodeAndOp) {
  const std::vector<float> w(4, 1.0f);
  struct Case {
    std::vector<uint8_t> options;
    const char* message;
  } cases[] = {
      {le32({1, 2}), "expected at least 12 bytes"},
      {{}, "expected at least 12 bytes"},
      {le32({3, 2, 2}), "padding 3 unknown"},
      {le32({1, 0, 2}), "strides must be positive"},
  };
  for (const Case& c : cases) {
    auto interp = interpreter(transpose_conv_graph({1, 2, 2, 1}, {1, 2, 2, 1}, w, {0.0f}, c.options), kMediapipe);
    ASSERT_FALSE(interp);
    EXPECT_NE(interp.error().find("node 0 Convolution2DTransposeBias: custom options"), std::string::npos)
        << interp.error();
    EXPECT_NE(interp.error().find(c.message), std::string::npos) << interp.error();
  }
  // Weights that do not match the input's channels.
  auto interp = interpreter(transpose_conv_graph({1, 2, 2, 2}, {1, 2, 2, 1}, w, {0.0f}, le32({1, 2, 2})), kMediapipe);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 Convolution2DTransposeBias: weights [1,2,2,1]"), std::string::npos)
      << interp.error();
}

// ------------------------------------------------------------------------------------------------
// Landmarks2TransformMatrix

struct MatrixOptions {
  int left = 0, right = 1;
  std::vector<int> subset = {0, 1, 2, 3};
  int out_h = 10, out_w = 10;
  float scale_x = 1, scale_y = 1;
  float target_rotation = 0;
};

std::vector<uint8_t> matrix_options(const MatrixOptions& o) {
  // Keys and value types as in face_landmark_with_attention (subset_idxs is a vector of ints there).
  return flex_map([&](flexbuffers::Builder& b) {
    b.Int("left_rotation_idx", o.left);
    b.Int("output_height", o.out_h);
    b.Int("output_width", o.out_w);
    b.Int("right_rotation_idx", o.right);
    b.Float("scale_x", o.scale_x);
    b.Float("scale_y", o.scale_y);
    b.TypedVector("subset_idxs", [&] {
      for (int v : o.subset) b.Int(v);
    });
    b.Float("target_rotation_radians", o.target_rotation);
  });
}

MGraph matrix_graph(int points, std::vector<uint8_t> options) {
  MGraph g;
  const int lm = g.act({1, points, 3});
  const int m = g.act({});
  g.ops.push_back({"Landmarks2TransformMatrix", 2, {lm}, {m}, std::move(options)});
  g.inputs = {lm};
  g.outputs = {m};
  return g;
}

// Four landmarks (x, y, z) offset by (dx, dy): left/right at the middle of the left and right edges of a
// 10x10 square, then the middles of its top and bottom edges.
std::vector<float> square_landmarks(float dx, float dy) {
  return {0 + dx, 5 + dy, 0, 10 + dx, 5 + dy, 0, 5 + dx, 0 + dy, 0, 5 + dx, 10 + dy, 0};
}

TEST(Landmarks2TransformMatrix, LevelSquareOfTheOutputSizeGivesTheIdentity) {
  // r = 0 - atan2(0, 10) = 0; the box is x 0..10, y 0..10: w = h = 10, centre (5, 5). With a 10x10 output
  // and scale 1: M = T(5,5) · I · S(10/10) · T(-5,-5) = I.
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(matrix_graph(4, matrix_options({})), kMediapipe, {square_landmarks(0, 0)}, &shapes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, 4, 4}));
  expect_near(out[0], {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, 1e-5f, "matrix");
}

TEST(Landmarks2TransformMatrix, TranslationAndScale) {
  // The square moved by (100, 50): centre (105, 55), w = h = 10. Output 20x20 with scale 1.5:
  // s = 1.5 * 10 / 20 = 0.75. M = T(105,55) · S(0.75) · T(-10,-10): row 0 = (0.75, 0, 0, 105 - 7.5),
  // row 1 = (0, 0.75, 0, 55 - 7.5).
  MatrixOptions o;
  o.out_h = o.out_w = 20;
  o.scale_x = o.scale_y = 1.5f;
  const auto out = run(matrix_graph(4, matrix_options(o)), kMediapipe, {square_landmarks(100, 50)});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0], {0.75f, 0, 0, 97.5f, 0, 0.75f, 0, 47.5f, 0, 0, 1, 0, 0, 0, 0, 1}, 1e-4f, "matrix");
}

TEST(Landmarks2TransformMatrix, NinetyDegreeRotation) {
  // Left (5, 0), right (5, 10): atan2(10, 0) = pi/2, so r = -pi/2. Rotating by r maps (x, y) to (y, -x):
  // the points (5,0), (5,10), (0,5), (10,5) become (0,-5), (10,-5), (5,0), (5,-10): box x 0..10,
  // y -10..0, w = h = 10, centre (5,-5), which rotated back by +pi/2, (x, y) -> (-y, x), is (5, 5).
  // M = T(5,5) · Rz(pi/2) · S(1) · T(-5,-5), Rz(pi/2) = [[0,-1],[1,0]]: row 0 = (0, -1, 0, 5 + 5 = 10),
  // row 1 = (1, 0, 0, 5 - 5 = 0). The crop's u axis (left to right) runs along the input's +y, from the
  // left landmark to the right one.
  const std::vector<float> lm = {5, 0, 0, 5, 10, 0, 0, 5, 0, 10, 5, 0};
  const auto out = run(matrix_graph(4, matrix_options({})), kMediapipe, {lm});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0], {0, -1, 0, 10, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, 1e-5f, "matrix");
}

TEST(Landmarks2TransformMatrix, TargetRotationAndAnOddSubset) {
  // target_rotation = pi/2 on the level square: r = pi/2, rotation (x, y) -> (-y, x). Subset {0, 2, 3}
  // (odd: the last index pairs with itself): (0,5), (5,0), (5,10) -> (-5,0), (0,5), (-10,5): box x -10..0,
  // y 0..5, w = 10, h = 5, centre (-5, 2.5), rotated back by -pi/2, (x, y) -> (y, -x): (2.5, 5).
  // Output 10x5: S(10/10, 5/5) = I. M = T(2.5,5) · Rz(-pi/2) · T(-5,-2.5), Rz(-pi/2) = [[0,1],[-1,0]]:
  // row 0 = (0, 1, 0, 2.5 - 2.5 = 0), row 1 = (-1, 0, 0, 5 + 5 = 10).
  MatrixOptions o;
  o.subset = {0, 2, 3};
  o.out_h = 5;
  o.target_rotation = static_cast<float>(M_PI / 2);
  const auto out = run(matrix_graph(4, matrix_options(o)), kMediapipe, {square_landmarks(0, 0)});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0], {0, 1, 0, 0, -1, 0, 0, 10, 0, 0, 1, 0, 0, 0, 0, 1}, 1e-5f, "matrix");
}

TEST(Landmarks2TransformMatrix, BadOptionsNameTheNodeOpAndKey) {
  MatrixOptions bad_index;
  bad_index.subset = {0, 1, 9};
  MatrixOptions bad_size;
  bad_size.out_w = 0;
  const auto no_scale = flex_map([](flexbuffers::Builder& b) {
    b.Int("left_rotation_idx", 0);
    b.Int("right_rotation_idx", 1);
    b.Int("output_height", 16);
    b.Int("output_width", 16);
    b.Float("scale_y", 1.5f);
    b.TypedVector("subset_idxs", [&] { b.Int(0); });
  });
  const auto string_index = flex_map([](flexbuffers::Builder& b) {
    b.String("left_rotation_idx", "zero");
    b.Int("right_rotation_idx", 1);
  });
  struct Case {
    std::vector<uint8_t> options;
    const char* message;
  } cases[] = {
      {matrix_options(bad_index), "subset_idxs entry 9 is not a landmark index"},
      {matrix_options(bad_size), "output_height and output_width must be positive"},
      {no_scale, "key 'scale_x' is missing"},
      {string_index, "key 'left_rotation_idx': expected an integer, found string"},
      {{1, 2, 3, 4, 5}, "custom options: not a FlexBuffer"},
      {{}, "custom options: not a FlexBuffer"},
  };
  for (const Case& c : cases) {
    auto interp = interpreter(matrix_graph(4, c.options), kMediapipe);
    ASSERT_FALSE(interp);
    EXPECT_NE(interp.error().find("node 0 Landmarks2TransformMatrix: "), std::string::npos) << interp.error();
    EXPECT_NE(interp.error().find(c.message), std::string::npos) << interp.error();
  }
}

// ------------------------------------------------------------------------------------------------
// TransformTensorBilinear

std::vector<uint8_t> warp_options(int h, int w) {
  return flex_map([&](flexbuffers::Builder& b) {
    b.Int("output_height", h);
    b.Int("output_width", w);
  });
}

MGraph warp_graph(std::vector<int32_t> in_shape, std::vector<uint8_t> options) {
  MGraph g;
  const int x = g.act(in_shape);
  const int m = g.act({1, 4, 4});
  const int y = g.act({});
  g.ops.push_back({"TransformTensorBilinear", 2, {x, m}, {y}, std::move(options)});
  g.inputs = {x, m};
  g.outputs = {y};
  return g;
}

// An HxWxC image whose value is linear in position, so bilinear sampling reproduces it exactly:
// f(y, x, c) = 10 y + x + 100 c.
std::vector<float> ramp(int h, int w, int c) {
  std::vector<float> v;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (int k = 0; k < c; ++k) v.push_back(10.0f * y + x + 100.0f * k);
    }
  }
  return v;
}

std::vector<float> mat(float m00, float m01, float m03, float m10, float m11, float m13) {
  return {m00, m01, 0, m03, m10, m11, 0, m13, 0, 0, 1, 0, 0, 0, 0, 1};
}

TEST(TransformTensorBilinear, IdentityCopiesAndZeroesOutside) {
  // Identity: the version-2 correction adds 0.5*(1 + 0) - 0.5 = 0, so output (u, v) samples (u, v)
  // exactly. A 5x5 output of a 4x4 image: row 4 and column 4 lie past W-1 = 3 and read 0.
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(warp_graph({1, 4, 4, 2}, warp_options(5, 5)), kMediapipe,
                       {ramp(4, 4, 2), mat(1, 0, 0, 0, 1, 0)}, &shapes);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, 5, 5, 2}));
  for (int v = 0; v < 5; ++v) {
    for (int u = 0; u < 5; ++u) {
      for (int c = 0; c < 2; ++c) {
        const float want = (u < 4 && v < 4) ? 10.0f * v + u + 100.0f * c : 0.0f;
        EXPECT_NEAR(out[0][(v * 5 + u) * 2 + c], want, 1e-4f) << v << "," << u << "," << c;
      }
    }
  }
}

TEST(TransformTensorBilinear, TranslationInterpolates) {
  // m03 = 1.5, m13 = 0.5: (sx, sy) = (u + 1.5, v + 0.5); the ramp gives 10 (v + 0.5) + u + 1.5 where
  // sx <= 3 and sy <= 3 (u <= 1, v <= 2), else 0.
  const auto out = run(warp_graph({1, 4, 4, 1}, warp_options(4, 4)), kMediapipe,
                       {ramp(4, 4, 1), mat(1, 0, 1.5f, 0, 1, 0.5f)});
  ASSERT_EQ(out.size(), 1u);
  for (int v = 0; v < 4; ++v) {
    for (int u = 0; u < 4; ++u) {
      const float want = (u <= 1 && v <= 2) ? 10.0f * (v + 0.5f) + u + 1.5f : 0.0f;
      EXPECT_NEAR(out[0][v * 4 + u], want, 1e-4f) << v << "," << u;
    }
  }
}

TEST(TransformTensorBilinear, ScaleTwoSamplesPixelCentres) {
  // m00 = m11 = 2: the correction adds 0.5*2 - 0.5 = 0.5, so (sx, sy) = (2u + 0.5, 2v + 0.5): output pixel
  // centre (u + 0.5) * 2 is input coordinate 2u + 1, i.e. index 2u + 0.5. A 2x2 output of the 4x4 ramp:
  // 10 (2v + 0.5) + 2u + 0.5.
  const auto out = run(warp_graph({1, 4, 4, 1}, warp_options(2, 2)), kMediapipe,
                       {ramp(4, 4, 1), mat(2, 0, 0, 0, 2, 0)});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0], {5.5f, 7.5f, 25.5f, 27.5f}, 1e-4f, "output");
}

TEST(TransformTensorBilinear, NinetyDegreeRotation) {
  // The matrix of Landmarks2TransformMatrix's rotation case, (u, v) -> (10 - v, u). Corrected:
  // a3 = 10 + 0.5*(0 - 1) - 0.5 = 9, b3 = 0 + 0.5*(1 + 0) - 0.5 = 0, so (sx, sy) = (9 - v, u): on a 10x10
  // image a pure rotation, output (v, u) = input (y = u, x = 9 - v) = 10 u + 9 - v.
  const auto out = run(warp_graph({1, 10, 10, 1}, warp_options(10, 10)), kMediapipe,
                       {ramp(10, 10, 1), mat(0, -1, 10, 1, 0, 0)});
  ASSERT_EQ(out.size(), 1u);
  for (int v = 0; v < 10; ++v) {
    for (int u = 0; u < 10; ++u) EXPECT_NEAR(out[0][v * 10 + u], 10.0f * u + 9 - v, 1e-4f) << v << "," << u;
  }
}

TEST(TransformTensorBilinear, BadOptionsAndShapes) {
  const auto no_width = flex_map([](flexbuffers::Builder& b) { b.Int("output_height", 16); });
  auto interp = interpreter(warp_graph({1, 4, 4, 1}, no_width), kMediapipe);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 TransformTensorBilinear: custom options: key 'output_width' is missing"),
            std::string::npos)
      << interp.error();
  auto truncated = warp_options(16, 16);
  truncated.resize(truncated.size() - 5);
  interp = interpreter(warp_graph({1, 4, 4, 1}, truncated), kMediapipe);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 TransformTensorBilinear: custom options"), std::string::npos) << interp.error();
  interp = interpreter(warp_graph({1, 4, 4}, warp_options(2, 2)), kMediapipe);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 TransformTensorBilinear: features (input 0) must have rank 4"),
            std::string::npos)
      << interp.error();
}

// ------------------------------------------------------------------------------------------------
// TransformLandmarks

MGraph points_graph(std::vector<int32_t> shape) {
  MGraph g;
  const int p = g.act(shape);
  const int m = g.act({1, 4, 4});
  const int q = g.act({});
  g.ops.push_back({"TransformLandmarks", 2, {p, m}, {q}, {}});
  g.inputs = {p, m};
  g.outputs = {q};
  return g;
}

TEST(TransformLandmarks, IdentityTranslationScaleAndRotation) {
  const std::vector<float> pts = {0, 0, 1, 2, -3, 4};  // three 2-D points
  struct Case {
    std::vector<float> m;
    std::vector<float> want;
    const char* what;
  } cases[] = {
      {mat(1, 0, 0, 0, 1, 0), pts, "identity"},
      // x' = 0.75 x + 97.5, y' = 0.75 y + 47.5
      {mat(0.75f, 0, 97.5f, 0, 0.75f, 47.5f), {97.5f, 47.5f, 98.25f, 49.0f, 95.25f, 50.5f}, "translation and scale"},
      // (x, y) -> (10 - y, x)
      {mat(0, -1, 10, 1, 0, 0), {10, 0, 8, 1, 6, -3}, "90 degrees"},
  };
  for (const Case& c : cases) {
    std::vector<std::vector<int32_t>> shapes;
    const auto out = run(points_graph({1, 3, 2}), kMediapipe, {pts, c.m}, &shapes);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, 3, 2}));
    expect_near(out[0], c.want, 1e-5f, c.what);
  }
  // 3-D points: z passes through unchanged (and the matrix's z column is ignored).
  std::vector<float> m = mat(0, -1, 10, 1, 0, 0);
  m[2] = 7;
  m[6] = 7;
  const auto out = run(points_graph({1, 2, 3}), kMediapipe, {{1, 2, 5, -1, 0, -6}, m});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0], {8, 1, 5, 10, -1, -6}, 1e-5f, "3-D");
}

TEST(TransformLandmarks, RejectsFourValuesPerPoint) {
  auto interp = interpreter(points_graph({1, 3, 4}), kMediapipe);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 TransformLandmarks: landmarks (input 0) must have 2 or 3 values per point"),
            std::string::npos)
      << interp.error();
}

}  // namespace
}  // namespace baton::test
