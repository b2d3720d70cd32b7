#include "kernels/non_max_suppression.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <vector>

namespace baton::builtin {
namespace {

struct Candidate {
  int index;
  float score;
  int suppress_begin;  // selected boxes before this one were already compared with it
};

float intersection_over_union(const float* boxes, int i, int j) {
  const float* a = boxes + 4 * static_cast<int64_t>(i);
  const float* b = boxes + 4 * static_cast<int64_t>(j);
  const float a_ymin = std::min(a[0], a[2]), a_ymax = std::max(a[0], a[2]);
  const float a_xmin = std::min(a[1], a[3]), a_xmax = std::max(a[1], a[3]);
  const float b_ymin = std::min(b[0], b[2]), b_ymax = std::max(b[0], b[2]);
  const float b_xmin = std::min(b[1], b[3]), b_xmax = std::max(b[1], b[3]);
  const float area_a = (a_ymax - a_ymin) * (a_xmax - a_xmin);
  const float area_b = (b_ymax - b_ymin) * (b_xmax - b_xmin);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ih = std::max(std::min(a_ymax, b_ymax) - std::max(a_ymin, b_ymin), 0.0f);
  const float iw = std::max(std::min(a_xmax, b_xmax) - std::max(a_xmin, b_xmin), 0.0f);
  const float intersection = ih * iw;
  return intersection / (area_a + area_b - intersection);
}

}  // namespace

int non_max_suppression(const float* boxes, int num_boxes, const float* scores, int max_output, float iou_threshold,
                        float score_threshold, float soft_nms_sigma, int32_t* selected, float* selected_scores) {
  auto lower = [](const Candidate& a, const Candidate& b) { return a.score < b.score; };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
  for (int i = 0; i < num_boxes; ++i) {
    if (scores[i] > score_threshold) queue.push(Candidate{i, scores[i], 0});
  }
  int count = 0;
  const int wanted = std::min(static_cast<int>(queue.size()), max_output);
  const float scale = soft_nms_sigma > 0.0f ? -0.5f / soft_nms_sigma : 0.0f;
  while (count < wanted && !queue.empty()) {
    Candidate next = queue.top();
    const float original = next.score;
    queue.pop();
    bool hard_suppressed = false;
    for (int j = count - 1; j >= next.suppress_begin; --j) {
      const float iou = intersection_over_union(boxes, next.index, selected[j]);
      if (iou >= iou_threshold) {
        hard_suppressed = true;
        break;
      }
      if (soft_nms_sigma > 0.0f) next.score = next.score * std::exp(scale * iou * iou);
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin = count;
    if (hard_suppressed) continue;
    if (next.score == original) {
      selected[count] = next.index;
      if (selected_scores) selected_scores[count] = next.score;
      ++count;
    }
    if (next.score > score_threshold) queue.push(next);
  }
  return count;
}

}  // namespace baton::builtin
