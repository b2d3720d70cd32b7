// NON_MAX_SUPPRESSION_V4 / V5 as TFLite 2.9 computes them: candidates above the score threshold in a
// max-heap by score (std::priority_queue, so equal scores leave in the same order as TFLite's); each
// popped candidate is compared with the boxes already selected, newest first, and dropped when an IoU
// reaches the threshold; with a positive soft-NMS sigma (V5) its score decays by exp(-0.5 / sigma *
// iou^2) per comparison instead, and it goes back on the heap while it stays above the threshold.
// Boxes are [y1, x1, y2, x2] in any corner order.
#ifndef BATON_BUILTIN_KERNELS_NON_MAX_SUPPRESSION_H
#define BATON_BUILTIN_KERNELS_NON_MAX_SUPPRESSION_H

#include <cstdint>

namespace baton::builtin {

// Writes up to max_output selected indices (and their scores when `selected_scores` is not null);
// returns how many. The caller zeroes the rest.
int non_max_suppression(const float* boxes, int num_boxes, const float* scores, int max_output, float iou_threshold,
                        float score_threshold, float soft_nms_sigma, int32_t* selected, float* selected_scores);

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_KERNELS_NON_MAX_SUPPRESSION_H
