// The custom-op packs on real models (fetched by tools/fetch-models.sh; skipped when missing unless
// BATON_REQUIRE_MODELS): selfie_segmentation against LiteRT's reference outputs
// (tests/data/reference/selfie_segmentation*), face_landmark_with_attention end to end on a face crop of
// the astronaut photo, the uint8 SSD model against the native TFLite library
// (tests/data/reference/mobilenet_ssd_*), and the Edge TPU SSD model still refused with a message naming
// its op. The packs' ops one at a time: custom_ops_mediapipe_test.cc, custom_ops_detection_test.cc.
#include <gtest/gtest.h>
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "custom_ops_support.h"
#include "interpreter.h"
#include "npy.h"
#include "reference_run.h"
#include "test_support.h"

namespace baton::test {
namespace {

namespace fs = std::filesystem;

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
                         param_name);

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
