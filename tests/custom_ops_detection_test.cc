// The detection op pack (TFLite_Detection_PostProcess) in one-node models run by the real runtime with
// the pack loaded from its build folder: SSD boxes decoded and suppressed by hand (fast and regular NMS,
// one or two classes per anchor, the IoU threshold, uint8 inputs); malformed options and shapes fail with
// the node and op named. The real SSD models: custom_ops_real_models_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "custom_ops_support.h"
#include "flatbuffers/flexbuffers.h"
#include "interpreter.h"

namespace baton::test {
namespace {

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

}  // namespace
}  // namespace baton::test
