// baton-face-detect: the README's first job, and an example of baton's C++ application API.
// Runs MediaPipe's short-range face detector (BlazeFace, 128x128 input) on a photo (PNG, JPEG, ...;
// resized and scaled to [-1,1] as `baton run --image` does) or on a float32 .npy of shape [1,128,128,3],
// decodes its 896 anchor boxes and prints the best detection.
//
// Box decoding follows the model's published anchor layout: feature maps of stride 8 (16x16 cells, 2
// anchors each) and stride 16 (8x8 cells, 6 anchors each), anchors at cell centres with a fixed size, so
// a box is centre = anchor + offset / 128, size = regressed size / 128; the score is sigmoid(logit).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "baton/baton.hpp"
#include "image_input.h"
#include "npy.h"

namespace {

struct Anchor {
  float x, y;
};

std::vector<Anchor> blazeface_anchors() {
  std::vector<Anchor> anchors;
  const struct { int grid, per_cell; } layers[] = {{16, 2}, {8, 6}};
  for (const auto& layer : layers) {
    for (int y = 0; y < layer.grid; ++y) {
      for (int x = 0; x < layer.grid; ++x) {
        for (int k = 0; k < layer.per_cell; ++k) {
          anchors.push_back({(x + 0.5f) / layer.grid, (y + 0.5f) / layer.grid});
        }
      }
    }
  }
  return anchors;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: baton-face-detect face_detection_short_range.tflite IMAGE.{png,jpg,npy}\n");
    return 2;
  }
  try {
    const std::string path = argv[2];
    auto image = path.size() > 4 && path.substr(path.size() - 4) == ".npy"
                     ? baton::tool::read_npy(path)
                     : baton::tool::image_to_input(path, {1, 128, 128, 3}, BATON_TYPE_FLOAT32, {});
    if (!image) {
      std::fprintf(stderr, "baton-face-detect: %s\n", image.error().c_str());
      return 1;
    }
    baton::api::Environment env;
    const auto t0 = std::chrono::steady_clock::now();
    baton::api::Interpreter interp(env, argv[1]);
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<float> pixels(image->data.size() / sizeof(float));
    std::memcpy(pixels.data(), image->data.data(), image->data.size());
    interp.set_input(0, pixels);
    interp.invoke();  // first run
    const auto t2 = std::chrono::steady_clock::now();
    interp.set_input(0, pixels);
    interp.invoke();
    const auto t3 = std::chrono::steady_clock::now();
    const std::vector<float> boxes = interp.output_values<float>(0);   // [1,896,16]
    const std::vector<float> scores = interp.output_values<float>(1);  // [1,896,1]
    const std::vector<Anchor> anchors = blazeface_anchors();
    if (boxes.size() != anchors.size() * 16 || scores.size() != anchors.size()) {
      std::fprintf(stderr, "baton-face-detect: unexpected output sizes (is this face_detection_short_range?)\n");
      return 1;
    }
    size_t best = 0;
    for (size_t i = 1; i < scores.size(); ++i) {
      if (scores[i] > scores[best]) best = i;
    }
    const float score = 1.0f / (1.0f + std::exp(-std::clamp(scores[best], -100.0f, 100.0f)));
    const float* r = &boxes[best * 16];
    const float cx = anchors[best].x + r[0] / 128, cy = anchors[best].y + r[1] / 128;
    const float w = r[2] / 128, h = r[3] / 128;
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::printf("load %.1f ms, first run %.1f ms, second run %.1f ms\n", ms(t0, t1), ms(t1, t2), ms(t2, t3));
    std::printf("best face: score %.3f, box (normalised) xmin %.3f ymin %.3f xmax %.3f ymax %.3f (anchor %zu)\n",
                score, cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, best);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton-face-detect: %s\n", e.what());
    return 1;
  }
}
