// The custom-op packs: mediapipe (Convolution2DTransposeBias, Landmarks2TransformMatrix,
// TransformTensorBilinear, TransformLandmarks) and detection (TFLite_Detection_PostProcess).
//
//  - Their FlexBuffer reader (op-packs/mediapipe/common/flex_map.cc, compiled into this test too) against
//    blobs made by flatbuffers' own builder, and against truncated and mutated blobs: an error naming the
//    key, never a crash.
//  - Each op in a one-node model run by the real runtime with the pack loaded from its build folder, on
//    cases derived by hand from the op's definition (identity, translation, scale, 90° rotation; SSD boxes
//    decoded and suppressed by hand). Malformed options fail with the node and op named.
//  - Real models (fetched by tools/fetch-models.sh; skipped when missing unless BATON_REQUIRE_MODELS):
//    selfie_segmentation against LiteRT's reference outputs (tests/data/reference/selfie_segmentation*),
//    face_landmark_with_attention end to end on a face crop of the astronaut photo, the uint8 SSD model
//    against the native TFLite library (tests/data/reference/mobilenet_ssd_*), and the Edge TPU SSD
//    model still refused with a message naming its op.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>

#include "common/flex_map.h"
#include "flatbuffers/flexbuffers.h"
#include "interpreter.h"
#include "npy.h"
#include "test_support.h"
#include "tflite_generated.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;
namespace fb = baton::tflite;
using packkit::FlexError;
using packkit::FlexMap;

// ------------------------------------------------------------------------------------------------
// Helpers: one-node models with custom options and quantization, built here with the schema.

constexpr int8_t kF32 = 0, kU8 = 3;

struct MTensor {
  std::vector<int32_t> shape;
  int8_t type = kF32;
  std::vector<uint8_t> data;  // constant bytes; empty for activations
  float scale = 0;            // > 0: per-tensor quantization
  int64_t zero_point = 0;
};

struct MOp {
  std::string name;
  int32_t version = 1;
  std::vector<int32_t> inputs, outputs;
  std::vector<uint8_t> options;
};

struct MGraph {
  std::vector<MTensor> tensors;
  std::vector<MOp> ops;
  std::vector<int32_t> inputs, outputs;

  int act(std::vector<int32_t> shape) {  // a non-constant float32 tensor
    MTensor t;
    t.shape = std::move(shape);
    return add(std::move(t));
  }
  int add(MTensor t) {
    tensors.push_back(std::move(t));
    return static_cast<int>(tensors.size() - 1);
  }

  std::vector<uint8_t> build() const {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers = {fb::CreateBuffer(b)};
    std::vector<flatbuffers::Offset<fb::Tensor>> ts;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const MTensor& t = tensors[i];
      uint32_t buffer = 0;
      if (!t.data.empty()) {
        b.ForceVectorAlignment(t.data.size(), 1, 16);
        buffers.push_back(fb::CreateBuffer(b, b.CreateVector(t.data)));
        buffer = static_cast<uint32_t>(buffers.size() - 1);
      }
      flatbuffers::Offset<fb::QuantizationParameters> q = 0;
      if (t.scale > 0) {
        std::vector<float> scales = {t.scale};
        std::vector<int64_t> zps = {t.zero_point};
        q = fb::CreateQuantizationParametersDirect(b, nullptr, nullptr, &scales, &zps);
      }
      const std::string name = "t" + std::to_string(i);
      ts.push_back(fb::CreateTensorDirect(b, &t.shape, static_cast<fb::TensorType>(t.type), buffer, name.c_str(), q));
    }
    std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
    std::vector<flatbuffers::Offset<fb::Operator>> operators;
    for (const MOp& op : ops) {
      codes.push_back(fb::CreateOperatorCode(b, 32, b.CreateString(op.name), op.version, fb::BuiltinOperator_CUSTOM));
      operators.push_back(fb::CreateOperatorDirect(b, static_cast<uint32_t>(codes.size() - 1), &op.inputs, &op.outputs,
                                                   fb::BuiltinOptions_NONE, 0,
                                                   op.options.empty() ? nullptr : &op.options));
    }
    std::vector<flatbuffers::Offset<fb::SubGraph>> subgraphs = {
        fb::CreateSubGraphDirect(b, &ts, &inputs, &outputs, &operators, "main")};
    auto model = fb::CreateModelDirect(b, 3, &codes, &subgraphs, "custom ops test", &buffers);
    fb::FinishModelBuffer(b, model);
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
};

std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<uint8_t> le32(std::initializer_list<int32_t> values) {
  std::vector<uint8_t> out;
  for (int32_t v : values) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i)));
  }
  return out;
}

template <typename F>
std::vector<uint8_t> flex_map(F&& fill) {
  flexbuffers::Builder fbb;
  const size_t start = fbb.StartMap();
  fill(fbb);
  fbb.EndMap(start);
  fbb.Finish();
  return fbb.GetBuffer();
}

enum Packs : unsigned { kBuiltin = 1, kMediapipe = 2, kDetection = 4 };

std::shared_ptr<Environment> environment(unsigned packs) {
  std::vector<std::string> dirs;
  if (packs & kBuiltin) dirs.push_back(BUILTIN_PACK_DIR);
  if (packs & kMediapipe) dirs.push_back(MEDIAPIPE_PACK_DIR);
  if (packs & kDetection) dirs.push_back(DETECTION_PACK_DIR);
  auto env = isolated_environment(dirs);
  EXPECT_TRUE(env) << env.error();
  return env ? env.value() : nullptr;
}

Expected<std::unique_ptr<Interpreter>> interpreter(const MGraph& g, unsigned packs) {
  auto model = load_model_buffer(g.build(), "custom ops test");
  if (!model) return Status::error(model.error());
  return Interpreter::create(environment(packs), model.value());
}

// Runs a graph whose inputs are all float32; returns every output as floats.
std::vector<std::vector<float>> run(const MGraph& g, unsigned packs, const std::vector<std::vector<float>>& inputs,
                                    std::vector<std::vector<int32_t>>* shapes = nullptr) {
  auto interp = interpreter(g, packs);
  EXPECT_TRUE(interp) << interp.error();
  if (!interp) return {};
  Interpreter& in = *interp.value();
  EXPECT_EQ(in.input_count(), inputs.size());
  for (size_t i = 0; i < inputs.size() && i < in.input_count(); ++i) {
    EXPECT_EQ(in.input(i).bytes, inputs[i].size() * 4) << "input " << i;
    std::memcpy(in.input(i).data, inputs[i].data(), std::min(in.input(i).bytes, inputs[i].size() * 4));
  }
  Status s = in.invoke();
  EXPECT_TRUE(s) << s.message();
  std::vector<std::vector<float>> out;
  for (size_t o = 0; o < in.output_count(); ++o) {
    const Tensor& t = in.output(o);
    std::vector<float> v(t.bytes / 4);
    std::memcpy(v.data(), t.data, v.size() * 4);
    out.push_back(std::move(v));
    if (shapes) shapes->push_back(t.shape);
  }
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " [" << i << "]";
}

std::string model_cache() {
  const char* c = std::getenv("BATON_MODEL_CACHE");
  return c ? c : "";
}

// The path of a cached real model, or "" (and the test is skipped or failed) when it is missing.
std::string real_model(const std::string& name) {
  const std::string path = model_cache() + "/" + name;
  if (!fs::exists(path)) return "";
  return path;
}

#define REQUIRE_MODEL(var, name)                                                                     \
  const std::string var = real_model(name);                                                          \
  if (var.empty()) {                                                                                 \
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << name << " (tools/fetch-models.sh)"; \
    GTEST_SKIP() << "missing " << name;                                                              \
  }

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

// ------------------------------------------------------------------------------------------------
// TFLite_Detection_PostProcess
//
// Three anchors (yc, xc, h, w) and two classes plus background, scales y = x = 10, h = w = 5:
//   a0 = (0.5, 0.5,  0.2, 0.2), encoding (0, 0, 0, 0)  -> centre (0.5, 0.5),  0.2 x 0.2
//        box b0 = (0.4, 0.4, 0.6, 0.6)
//   a1 = (0.5, 0.55, 0.2, 0.2), encoding (1, 0, 0, 0)  -> yc = 1/10 * 0.2 + 0.5 = 0.52
//        box b1 = (0.42, 0.45, 0.62, 0.65)
//   a2 = (0.2, 0.2,  0.1, 0.1), encoding (0, -2, 5 ln 2, 0) -> xc = -2/10 * 0.1 + 0.2 = 0.18,
//        h = exp(ln 2) * 0.1 = 0.2, w = 0.1: box b2 = (0.1, 0.13, 0.3, 0.23)
// IoU(b0, b1): areas 0.04 each, overlap (0.6 - 0.42) x (0.6 - 0.45) = 0.18 x 0.15 = 0.027,
//   0.027 / (0.08 - 0.027) = 0.509 > 0.5: one suppresses the other. b2 overlaps neither.
// Scores [background, class 0, class 1]:
//   a0 = [0.1, 0.9, 0.3], a1 = [0.1, 0.8, 0.7], a2 = [0.1, 0.2, 0.6]; score threshold 0.25.
// Fast NMS, one class per anchor: best scores a0 0.9 (class 0), a1 0.8 (class 0), a2 0.6 (class 1);
//   a0 is selected, a1 suppressed by it, a2 selected: 2 detections, (b0, 0, 0.9), (b2, 1, 0.6).
// Fast NMS, two classes per anchor: the same anchors; each writes its two best classes:
//   (b0, 0, 0.9), (b0, 1, 0.3), (b2, 1, 0.6), (b2, 0, 0.2): 4 detections in 3 x 2 slots.
// Regular NMS, 2 per class: class 0 keeps a0 (0.9) and a1 (0.8; a2's 0.2 is under the threshold), then
//   a1 is suppressed by a0: {a0}. Class 1 in score order a1 0.7, a2 0.6, a0 0.3: a1 selected, a2 kept
//   (no overlap), a0 suppressed by a1: {a1, a2}. Merged by score: (b0, 0, 0.9), (b1, 1, 0.7), (b2, 1, 0.6).

struct DetectionOptions {
  int max_detections = 3;
  int max_classes_per_detection = 1;
  int detections_per_class = 2;
  bool regular = false;
  float score_threshold = 0.25f;
  float iou_threshold = 0.5f;
  int num_classes = 2;
  bool omit_num_classes = false;
};

std::vector<uint8_t> detection_options(const DetectionOptions& o) {
  // Keys and value types as in mobilenet_ssd_v2_coco_quant_postprocess, bookkeeping keys included.
  return flex_map([&](flexbuffers::Builder& b) {
    b.Bool("use_regular_nms", o.regular);
    b.Int("max_classes_per_detection", o.max_classes_per_detection);
    b.Float("y_scale", 10.0f);
    b.Bool("_output_quantized", true);
    b.Float("nms_score_threshold", o.score_threshold);
    b.Float("w_scale", 5.0f);
    b.Float("nms_iou_threshold", o.iou_threshold);
    b.Float("h_scale", 5.0f);
    if (!o.omit_num_classes) b.Int("num_classes", o.num_classes);
    b.Int("detections_per_class", o.detections_per_class);
    b.Bool("_support_output_type_float_in_quantized_op", true);
    b.Int("max_detections", o.max_detections);
    b.Float("x_scale", 10.0f);
  });
}

const std::vector<float> kAnchors = {0.5f, 0.5f, 0.2f, 0.2f, 0.5f, 0.55f, 0.2f, 0.2f, 0.2f, 0.2f, 0.1f, 0.1f};
const std::vector<float> kScores = {0.1f, 0.9f, 0.3f, 0.1f, 0.8f, 0.7f, 0.1f, 0.2f, 0.6f};
const float kB0[4] = {0.4f, 0.4f, 0.6f, 0.6f};
const float kB1[4] = {0.42f, 0.45f, 0.62f, 0.65f};

// Float inputs: encodings and scores are model inputs, anchors a constant.
MGraph detection_graph(const DetectionOptions& o, int score_columns = 3) {
  MGraph g;
  const int boxes = g.act({1, 3, 4});
  const int scores = g.act({1, 3, score_columns});
  const int anchors = g.add({{3, 4}, kF32, bytes_of(kAnchors)});
  std::vector<int> outs;
  for (int i = 0; i < 4; ++i) outs.push_back(g.act({}));
  g.ops.push_back({"TFLite_Detection_PostProcess", 1, {boxes, scores, anchors}, outs, detection_options(o)});
  g.inputs = {boxes, scores};
  g.outputs = outs;
  return g;
}

struct Detection {
  const float* box;
  float cls, score;
};

void expect_detections(const std::vector<std::vector<float>>& out, const std::vector<std::vector<int32_t>>& shapes,
                       int slots, const std::vector<Detection>& want, const std::string& what) {
  ASSERT_EQ(out.size(), 4u) << what;
  EXPECT_EQ(shapes[0], (std::vector<int32_t>{1, slots, 4})) << what;
  EXPECT_EQ(shapes[1], (std::vector<int32_t>{1, slots})) << what;
  EXPECT_EQ(shapes[2], (std::vector<int32_t>{1, slots})) << what;
  EXPECT_EQ(shapes[3], (std::vector<int32_t>{1})) << what;
  EXPECT_EQ(out[3][0], static_cast<float>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(out[0][i * 4 + k], want[i].box[k], 1e-5f) << what << " box " << i;
    EXPECT_EQ(out[1][i], want[i].cls) << what << " class " << i;
    EXPECT_NEAR(out[2][i], want[i].score, 1e-5f) << what << " score " << i;
  }
  for (size_t i = want.size(); i < static_cast<size_t>(slots); ++i) {
    EXPECT_EQ(out[2][i], 0.0f) << what << ": padding slot " << i;
  }
}

TEST(DetectionPostProcess, FastNmsOneClassPerAnchor) {
  const float b2[4] = {0.1f, 0.13f, 0.3f, 0.23f};
  const std::vector<float> enc = {0, 0, 0, 0, 1, 0, 0, 0, 0, -2, 5 * std::log(2.0f), 0};
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(detection_graph({}), kDetection, {enc, kScores}, &shapes);
  expect_detections(out, shapes, 3, {{kB0, 0, 0.9f}, {b2, 1, 0.6f}}, "fast, 1 class");
}

TEST(DetectionPostProcess, FastNmsTwoClassesPerAnchor) {
  const float b2[4] = {0.1f, 0.13f, 0.3f, 0.23f};
  const std::vector<float> enc = {0, 0, 0, 0, 1, 0, 0, 0, 0, -2, 5 * std::log(2.0f), 0};
  DetectionOptions o;
  o.max_classes_per_detection = 2;
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(detection_graph(o), kDetection, {enc, kScores}, &shapes);
  expect_detections(out, shapes, 6, {{kB0, 0, 0.9f}, {kB0, 1, 0.3f}, {b2, 1, 0.6f}, {b2, 0, 0.2f}}, "fast, 2 classes");
}

TEST(DetectionPostProcess, RegularNms) {
  const float b2[4] = {0.1f, 0.13f, 0.3f, 0.23f};
  const std::vector<float> enc = {0, 0, 0, 0, 1, 0, 0, 0, 0, -2, 5 * std::log(2.0f), 0};
  DetectionOptions o;
  o.regular = true;
  std::vector<std::vector<int32_t>> shapes;
  const auto out = run(detection_graph(o), kDetection, {enc, kScores}, &shapes);
  expect_detections(out, shapes, 3, {{kB0, 0, 0.9f}, {kB1, 1, 0.7f}, {b2, 1, 0.6f}}, "regular");
  // max_detections 2 cuts the merged list after the two best.
  o.max_detections = 2;
  shapes.clear();
  const auto two = run(detection_graph(o), kDetection, {enc, kScores}, &shapes);
  expect_detections(two, shapes, 2, {{kB0, 0, 0.9f}, {kB1, 1, 0.7f}}, "regular, 2 detections");
}

TEST(DetectionPostProcess, IouThresholdAndNoBackgroundColumn) {
  // With nms_iou_threshold 0.6 the 0.509 overlap no longer suppresses: fast NMS keeps a0, a1, a2 in score
  // order. Without a background column (2 score columns for 2 classes) the classes are read from column 0.
  const float b2[4] = {0.1f, 0.13f, 0.3f, 0.23f};
  const std::vector<float> enc = {0, 0, 0, 0, 1, 0, 0, 0, 0, -2, 5 * std::log(2.0f), 0};
  DetectionOptions o;
  o.iou_threshold = 0.6f;
  std::vector<std::vector<int32_t>> shapes;
  const std::vector<float> two_columns = {0.9f, 0.3f, 0.8f, 0.7f, 0.2f, 0.6f};
  const auto out = run(detection_graph(o, 2), kDetection, {enc, two_columns}, &shapes);
  expect_detections(out, shapes, 3, {{kB0, 0, 0.9f}, {kB1, 0, 0.8f}, {b2, 1, 0.6f}}, "iou 0.6");
}

TEST(DetectionPostProcess, Uint8InputsAreDequantized) {
  // As in the SSD model: all three inputs uint8, anchors constant, each with its own scale and zero point.
  //   encodings: scale 0.5, zero point 128: 0 -> 128, 1 -> 130, -2 -> 124 (th = 0 here: b2 = (0.15, 0.13,
  //   0.25, 0.23), 0.1 x 0.1 around (0.2, 0.18));
  //   scores: scale 0.05, zero point 0: 0.9 -> 18, 0.8 -> 16, 0.7 -> 14, 0.6 -> 12, 0.3 -> 6, 0.2 -> 4, 0.1 -> 2;
  //   anchors: scale 0.05, zero point 0: 0.5 -> 10, 0.55 -> 11, 0.2 -> 4, 0.1 -> 2.
  // The fast NMS result is that of the float test with b2 = (0.15, 0.13, 0.25, 0.23).
  const float b2[4] = {0.15f, 0.13f, 0.25f, 0.23f};
  MGraph g;
  const int boxes = g.add({{1, 3, 4}, kU8, {}, 0.5f, 128});
  const int scores = g.add({{1, 3, 3}, kU8, {}, 0.05f, 0});
  const int anchors = g.add({{3, 4}, kU8, {10, 10, 4, 4, 10, 11, 4, 4, 4, 4, 2, 2}, 0.05f, 0});
  std::vector<int> outs;
  for (int i = 0; i < 4; ++i) outs.push_back(g.act({}));
  g.ops.push_back({"TFLite_Detection_PostProcess", 1, {boxes, scores, anchors}, outs, detection_options({})});
  g.inputs = {boxes, scores};
  g.outputs = outs;
  auto interp = interpreter(g, kDetection);
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  const uint8_t enc[12] = {128, 128, 128, 128, 130, 128, 128, 128, 128, 124, 128, 128};
  const uint8_t sc[9] = {2, 18, 6, 2, 16, 14, 2, 4, 12};
  std::memcpy(in.input(0).data, enc, sizeof enc);
  std::memcpy(in.input(1).data, sc, sizeof sc);
  ASSERT_TRUE(in.invoke());
  std::vector<std::vector<float>> out;
  std::vector<std::vector<int32_t>> shapes;
  for (size_t o = 0; o < 4; ++o) {
    const Tensor& t = in.output(o);
    out.emplace_back(reinterpret_cast<const float*>(t.data), reinterpret_cast<const float*>(t.data) + t.bytes / 4);
    shapes.push_back(t.shape);
  }
  expect_detections(out, shapes, 3, {{kB0, 0, 0.9f}, {b2, 1, 0.6f}}, "uint8");
}

TEST(DetectionPostProcess, BadOptionsAndShapesNameTheNodeAndOp) {
  DetectionOptions no_classes;
  no_classes.omit_num_classes = true;
  DetectionOptions bad_iou;
  bad_iou.iou_threshold = 0.0f;
  DetectionOptions bad_max;
  bad_max.max_detections = 0;
  struct Case {
    MGraph g;
    const char* message;
  } cases[] = {
      {detection_graph(no_classes), "custom options: key 'num_classes' is missing"},
      {detection_graph(bad_iou), "custom options: nms_iou_threshold must be in (0, 1]"},
      {detection_graph(bad_max), "custom options: max_detections must be in 1..100000"},
      {detection_graph({}, 5), "class scores [1,3,5] must have num_classes (2) columns, or one more"},
  };
  for (const Case& c : cases) {
    auto interp = interpreter(c.g, kDetection);
    ASSERT_FALSE(interp);
    EXPECT_NE(interp.error().find("node 0 TFLite_Detection_PostProcess: "), std::string::npos) << interp.error();
    EXPECT_NE(interp.error().find(c.message), std::string::npos) << interp.error();
  }
  MGraph garbage = detection_graph({});
  garbage.ops[0].options = {0xff, 0xff, 0xff, 0xff, 0x24, 0x08};
  auto interp = interpreter(garbage, kDetection);
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("node 0 TFLite_Detection_PostProcess: custom options: "), std::string::npos)
      << interp.error();
}

// ------------------------------------------------------------------------------------------------
// Real models

// selfie_segmentation with the builtin and mediapipe packs against LiteRT (which runs
// Convolution2DTransposeBias itself): per output max |baton - ref| <= 1e-3 * max |ref|, as
// real_models_test.cc requires of the builtin-only models.
class SelfieReference : public ::testing::TestWithParam<std::string> {};

TEST_P(SelfieReference, MatchesLiteRT) {
  REQUIRE_MODEL(path, "selfie_segmentation.tflite");
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(environment(kBuiltin | kMediapipe), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + GetParam() + "/";
  auto arr = tool::read_npy(ref + "in_0.npy");
  ASSERT_TRUE(arr) << arr.error();
  ASSERT_EQ(arr->shape, in.input(0).shape);
  std::memcpy(in.input(0).data, arr->data.data(), arr->data.size());
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  auto want_arr = tool::read_npy(ref + "out_0.npy");
  ASSERT_TRUE(want_arr) << want_arr.error();
  const Tensor& t = in.output(0);
  ASSERT_EQ(want_arr->shape, t.shape);
  const float* want = reinterpret_cast<const float*>(want_arr->data.data());
  const float* got = reinterpret_cast<const float*>(t.data);
  double max_ref = 0, max_diff = 0;
  for (size_t k = 0; k < want_arr->data.size() / 4; ++k) {
    max_ref = std::max(max_ref, std::abs(static_cast<double>(want[k])));
    const double d = std::abs(static_cast<double>(got[k]) - want[k]);
    if (!(d <= max_diff)) max_diff = d;
  }
  EXPECT_LE(max_diff, 1e-3 * max_ref) << "max |diff| " << max_diff << " vs max |ref| " << max_ref;
  // The Convolution2DTransposeBias node ran on the mediapipe pack.
  bool on_pack = false;
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    if (in.nodes()[i].info->custom_name == "Convolution2DTransposeBias") on_pack = in.placement(i).plugin == "mediapipe";
  }
  EXPECT_TRUE(on_pack);
  std::printf("[ worst    ] %s: max |baton - ref| / max |ref| = %.3g\n", GetParam().c_str(),
              max_ref > 0 ? max_diff / max_ref : max_diff);
}

INSTANTIATE_TEST_SUITE_P(Reference, SelfieReference,
                         ::testing::Values("selfie_segmentation", "selfie_segmentation-astronaut"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

// A square crop of an RGB image resized to size x size (bilinear, half-pixel centres, like
// tools/baton/image_input.cc does for whole images) and scaled to [lo, hi].
std::vector<float> crop_image(const std::string& path, int x0, int y0, int side, int size, float lo, float hi) {
  int w = 0, h = 0, n = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> px(stbi_load(path.c_str(), &w, &h, &n, 3), stbi_image_free);
  EXPECT_TRUE(px) << path;
  if (!px) return {};
  std::vector<float> out;
  auto at = [&](int y, int x, int c) {
    y = std::clamp(y, 0, h - 1);
    x = std::clamp(x, 0, w - 1);
    return static_cast<double>(px.get()[(static_cast<size_t>(y) * w + x) * 3 + c]);
  };
  for (int y = 0; y < size; ++y) {
    const double sy = y0 + (y + 0.5) * side / size - 0.5;
    const int ya = static_cast<int>(std::floor(sy));
    const double fy = sy - ya;
    for (int x = 0; x < size; ++x) {
      const double sx = x0 + (x + 0.5) * side / size - 0.5;
      const int xa = static_cast<int>(std::floor(sx));
      const double fx = sx - xa;
      for (int c = 0; c < 3; ++c) {
        const double v = (1 - fy) * ((1 - fx) * at(ya, xa, c) + fx * at(ya, xa + 1, c)) +
                         fy * ((1 - fx) * at(ya + 1, xa, c) + fx * at(ya + 1, xa + 1, c));
        out.push_back(static_cast<float>(lo + v * (hi - lo) / 255.0));
      }
    }
  }
  return out;
}

struct Pt {
  float x, y;
};

// Even-odd rule.
bool inside_polygon(const std::vector<Pt>& poly, Pt p) {
  bool in = false;
  for (size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
    if ((poly[i].y > p.y) != (poly[j].y > p.y) &&
        p.x < (poly[j].x - poly[i].x) * (p.y - poly[i].y) / (poly[j].y - poly[i].y) + poly[i].x) {
      in = !in;
    }
  }
  return in;
}

TEST(FaceLandmarkWithAttention, FindsTheAstronautsFace) {
  REQUIRE_MODEL(path, "face_landmark_with_attention.tflite");
  const std::string photo = model_cache() + "/images/astronaut.png";
  if (!fs::exists(photo)) {
    if (std::getenv("BATON_REQUIRE_MODELS")) FAIL() << "missing " << photo << " (tools/fetch-images.sh)";
    GTEST_SKIP() << "missing " << photo;
  }
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(environment(kBuiltin | kMediapipe), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  ASSERT_EQ(in.input(0).shape, (std::vector<int32_t>{1, 192, 192, 3}));
  ASSERT_EQ(in.output_count(), 7u);
  // The face in the 512x512 photo spans about x 175..280, y 60..190 (eyes near y 100, mouth near y 145);
  // MediaPipe crops a square with a margin around it. Range [0, 1]: MediaPipe's face_landmark graphs
  // (face_landmark_cpu.pbtxt) convert the crop with output_tensor_float_range 0..1.
  const std::vector<float> crop = crop_image(photo, 130, 25, 190, 192, 0.0f, 1.0f);
  ASSERT_EQ(crop.size() * 4, in.input(0).bytes);
  std::memcpy(in.input(0).data, crop.data(), in.input(0).bytes);
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();

  // Outputs (SURVEY.md table 1b): 0 mesh 468 x (x, y, z), 1 lips 80 x (x, y), 2 left eye 71 x (x, y),
  // 3 right eye 71 x (x, y), 4 left iris 5 x (x, y), 5 right iris 5 x (x, y), 6 face flag (a logit), all in
  // pixels of the 192x192 crop. The lips, eyes and irises come out of the attention branches that run the
  // three custom ops.
  auto out = [&](size_t i) { return reinterpret_cast<const float*>(in.output(i).data); };
  auto points = [&](size_t i, int stride) {
    std::vector<Pt> p;
    for (size_t k = 0; k < in.output(i).bytes / 4 / stride; ++k) p.push_back({out(i)[k * stride], out(i)[k * stride + 1]});
    return p;
  };
  const float face_flag = 1.0f / (1.0f + std::exp(-out(6)[0]));
  EXPECT_GT(face_flag, 0.5f) << "face presence";
  const auto mesh = points(0, 3);
  const auto lips = points(1, 2);
  const auto left_eye = points(2, 2);
  const auto right_eye = points(3, 2);
  const auto left_iris = points(4, 2);
  const auto right_iris = points(5, 2);
  ASSERT_EQ(mesh.size(), 468u);
  ASSERT_EQ(lips.size(), 80u);
  ASSERT_EQ(left_eye.size(), 71u);
  ASSERT_EQ(left_iris.size(), 5u);
  for (const auto* set : {&mesh, &lips, &left_eye, &right_eye, &left_iris, &right_iris}) {
    for (const Pt& p : *set) {
      EXPECT_TRUE(p.x >= 0 && p.x <= 192 && p.y >= 0 && p.y <= 192) << "landmark (" << p.x << ", " << p.y << ")";
    }
  }
  auto mean = [](const std::vector<Pt>& v) {
    Pt m{0, 0};
    for (const Pt& p : v) {
      m.x += p.x / v.size();
      m.y += p.y / v.size();
    }
    return m;
  };
  // Image y grows downwards: both eyes above the mouth.
  EXPECT_LT(mean(left_eye).y, mean(lips).y);
  EXPECT_LT(mean(right_eye).y, mean(lips).y);
  EXPECT_LT(mean(left_iris).y, mean(lips).y);
  // Eye contours as rings of mesh indices. MediaPipe's tensors_to_face_landmarks_with_attention.pbtxt
  // refines mesh points 468..472 with output_left_iris and takes their depth from the contour 33, 7, 163,
  // 144, 145, 153, 154, 155, 133 (lower), 246, 161, 160, 159, 158, 157, 173 (upper); output_right_iris
  // goes with the contour of 263 and 362 (the same rings as FACEMESH_RIGHT_EYE / FACEMESH_LEFT_EYE in
  // face_mesh_connections.py, which name the eyes from the subject's side). So the model's "left" is the
  // eye on the left of the image: the subject's right eye.
  const int ring_33[] = {33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246};
  const int ring_263[] = {263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466};
  std::vector<Pt> left_contour, right_contour;  // the model's left and right
  for (int i : ring_33) left_contour.push_back(mesh[i]);
  for (int i : ring_263) right_contour.push_back(mesh[i]);
  // The subject faces the camera: the model's left eye is on the image's left.
  EXPECT_LT(mean(left_contour).x, mean(right_contour).x);
  // The iris centres (point 0 of each iris output) lie inside their eye's contour.
  EXPECT_TRUE(inside_polygon(left_contour, left_iris[0]))
      << "left iris (" << left_iris[0].x << ", " << left_iris[0].y << "), left eye centre (" << mean(left_contour).x
      << ", " << mean(left_contour).y << ")";
  EXPECT_TRUE(inside_polygon(right_contour, right_iris[0]))
      << "right iris (" << right_iris[0].x << ", " << right_iris[0].y << "), right eye centre ("
      << mean(right_contour).x << ", " << mean(right_contour).y << ")";
  // The iris edge points may hide under the eyelids, but stay near the eye: within the contour's bounding
  // box grown by a quarter of the eye's width on each side.
  auto near_box = [](const std::vector<Pt>& contour, Pt p) {
    float x0 = 1e9f, x1 = -1e9f, y0 = 1e9f, y1 = -1e9f;
    for (const Pt& q : contour) {
      x0 = std::min(x0, q.x);
      x1 = std::max(x1, q.x);
      y0 = std::min(y0, q.y);
      y1 = std::max(y1, q.y);
    }
    const float m = (x1 - x0) / 4;
    return p.x >= x0 - m && p.x <= x1 + m && p.y >= y0 - m && p.y <= y1 + m;
  };
  for (const Pt& p : left_iris) EXPECT_TRUE(near_box(left_contour, p)) << "left iris (" << p.x << ", " << p.y << ")";
  for (const Pt& p : right_iris) EXPECT_TRUE(near_box(right_contour, p)) << "right iris (" << p.x << ", " << p.y << ")";
  // The refined eye outputs (71 points: contours and halos around each eye) agree with the mesh: their
  // centres lie near the matching mesh eye.
  auto dist = [](Pt a, Pt b) { return std::hypot(a.x - b.x, a.y - b.y); };
  EXPECT_LT(dist(mean(left_eye), mean(left_contour)), 8.0f);
  EXPECT_LT(dist(mean(right_eye), mean(right_contour)), 8.0f);
  std::printf("[ face     ] flag %.3f, eyes (%.1f, %.1f) (%.1f, %.1f), irises (%.1f, %.1f) (%.1f, %.1f), lips (%.1f, %.1f)\n",
              face_flag, mean(left_eye).x, mean(left_eye).y, mean(right_eye).x, mean(right_eye).y, left_iris[0].x,
              left_iris[0].y, right_iris[0].x, right_iris[0].y, mean(lips).x, mean(lips).y);
}

TEST(RealModels, EdgeTpuOpStaysUnsupportedWithEveryPack) {
  REQUIRE_MODEL(path, "mobilenet_ssd_v2_coco_quant_postprocess_edgetpu.tflite");
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(environment(kBuiltin | kMediapipe | kDetection), model.value());
  ASSERT_FALSE(interp);
  EXPECT_NE(interp.error().find("no op pack supports custom op 'edgetpu-custom-op'"), std::string::npos)
      << interp.error();
}

// The uint8 SSD model (builtin pack's 8-bit kernels, then the detection pack's post-processing) against
// the native TFLite 2.9 library (tests/data/reference/mobilenet_ssd_*, made by
// tools/make-reference-native.sh): the same detection count, classes and scores bit for bit (the
// scores are dequantized uint8 codes, so one off-by-one rounding anywhere upstream shows), boxes within
// 1e-5. Once with one thread and once with two, so the GEMM's row and column split is covered too.
struct SsdCase {
  const char* name;
  int threads;
};

class SsdReference : public ::testing::TestWithParam<SsdCase> {};

TEST_P(SsdReference, MatchesNativeTfLite) {
  REQUIRE_MODEL(path, "mobilenet_ssd_v2_coco_quant_postprocess.tflite");
  TempDir conf;
  conf.write("baton.conf", "[plugin.builtin]\nthreads = " + std::to_string(GetParam().threads) + "\n");
  auto env = isolated_environment({BUILTIN_PACK_DIR, DETECTION_PACK_DIR}, conf.file("baton.conf"));
  ASSERT_TRUE(env) << env.error();
  auto model = load_model_file(path);
  ASSERT_TRUE(model) << model.error();
  auto interp = Interpreter::create(env.value(), model.value());
  ASSERT_TRUE(interp) << interp.error();
  Interpreter& in = *interp.value();
  const std::string ref = std::string(BATON_SOURCE_ROOT) + "/tests/data/reference/" + GetParam().name + "/";
  auto input = tool::read_npy(ref + "in_0.npy");
  ASSERT_TRUE(input) << input.error();
  ASSERT_EQ(input->type, BATON_TYPE_UINT8);
  ASSERT_EQ(input->data.size(), in.input(0).bytes);
  std::memcpy(in.input(0).data, input->data.data(), input->data.size());
  Status s = in.invoke();
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(in.output_count(), 4u);
  std::vector<std::vector<float>> want(4);
  for (size_t o = 0; o < 4; ++o) {
    auto arr = tool::read_npy(ref + "out_" + std::to_string(o) + ".npy");
    ASSERT_TRUE(arr) << arr.error();
    ASSERT_EQ(arr->shape, in.output(o).shape) << "output " << o;
    want[o].resize(arr->data.size() / 4);
    std::memcpy(want[o].data(), arr->data.data(), arr->data.size());
  }
  auto got = [&](size_t o) {
    std::vector<float> v(in.output(o).bytes / 4);
    std::memcpy(v.data(), in.output(o).data, in.output(o).bytes);
    return v;
  };
  const std::vector<float> boxes = got(0), classes = got(1), scores = got(2), count = got(3);
  ASSERT_EQ(count.size(), 1u);
  EXPECT_EQ(count[0], want[3][0]) << "detection count";
  ASSERT_GT(want[3][0], 0.0f) << "the reference must hold detections for this test to compare any";
  EXPECT_EQ(classes, want[1]) << "classes";
  EXPECT_EQ(scores, want[2]) << "scores";
  float worst = 0;
  for (size_t i = 0; i < boxes.size(); ++i) worst = std::max(worst, std::abs(boxes[i] - want[0][i]));
  EXPECT_LE(worst, 1e-5f) << "boxes";
  if (std::string(GetParam().name).find("astronaut") != std::string::npos) {
    // On the photo the detector sees the astronaut: the best detection is COCO class 0 (person, in the
    // label map of the TFLite SSD models) with a confident score.
    EXPECT_EQ(classes[0], 0.0f);
    EXPECT_GT(scores[0], 0.5f);
  }
  // Every node but the post-processing ran on the builtin pack.
  for (size_t i = 0; i < in.nodes().size(); ++i) {
    const bool post = in.nodes()[i].info->custom_name == "TFLite_Detection_PostProcess";
    EXPECT_EQ(in.placement(i).plugin, post ? "detection" : "builtin") << "node " << i;
  }
  std::printf("[ ssd      ] %s, %d thread(s): %g detections, best class %g score %g, boxes within %g\n",
              GetParam().name, GetParam().threads, count[0], classes[0], scores[0], worst);
}

INSTANTIATE_TEST_SUITE_P(Reference, SsdReference,
                         ::testing::Values(SsdCase{"mobilenet_ssd_v2_coco_quant_postprocess", 1},
                                           SsdCase{"mobilenet_ssd_v2_coco_quant_postprocess-astronaut", 1},
                                           SsdCase{"mobilenet_ssd_v2_coco_quant_postprocess-astronaut", 2}),
                         [](const ::testing::TestParamInfo<SsdCase>& info) {
                           std::string n = info.param.name;
                           for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n + "_" + std::to_string(info.param.threads) + "t";
                         });

}  // namespace
}  // namespace baton::test
