// TFLite_Detection_PostProcess (version 1): SSD box decoding and non-maximum suppression, the custom op
// stock TFLite implements in kernels/detection_postprocess.cc. Written from its documented behaviour
// (../shared/models/SURVEY.md section 3), not copied.
//
// Inputs:  box encodings [1,A,K] (K >= 4: ty, tx, th, tw, extra values ignored), class scores
//          [1,A,C+L] (L = 1 leading background column when the tensor has one more column than
//          num_classes, else 0), anchors [A,4] (yc, xc, h, w). Float32, or uint8/int8 dequantized with
//          each tensor's own scale and zero point.
// Outputs: boxes [1,D,4] (ymin, xmin, ymax, xmax), classes [1,D] (float class index, background
//          excluded), scores [1,D], count [1]; D = max_detections * max_classes_per_detection. All float32;
//          shapes set in prepare (the SSD model stores them empty). Slots past the count are zero.
// Options: a FlexBuffer map: max_detections, max_classes_per_detection, detections_per_class (default 100),
//          use_regular_nms (default false), nms_score_threshold, nms_iou_threshold, num_classes, y_scale,
//          x_scale, h_scale, w_scale. Other keys (_output_quantized, ...) are converter bookkeeping.
//
// Decoding: yc = ty/y_scale*ha + ya, xc = tx/x_scale*wa + xa, h = exp(th/h_scale)*ha, w = exp(tw/w_scale)*wa;
//           box = (yc - h/2, xc - w/2, yc + h/2, xc + w/2).
// Selection (one class's scores, at most `limit` boxes): keep boxes with score >= nms_score_threshold,
//           order them by score descending (ties: lower anchor first, as a stable sort), then walk the
//           list, selecting each box not yet suppressed and suppressing every later box whose IoU with it
//           is > nms_iou_threshold. IoU is 0 when either box has no area.
// Fast NMS: per anchor the best max_classes_per_detection classes (ties: lower class first); selection
//           on each anchor's best score with limit max_detections; each selected anchor writes one slot
//           per class it kept. count = selected anchors * classes per anchor.
// Regular:  selection per class with limit detections_per_class; the union is ordered by score
//           (ties: earlier class, then selection order) and cut to max_detections.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/flex_map.h"
#include "common/pack_kit.h"

namespace baton::detection {
namespace {

using packkit::Ctx;
using packkit::FlexMap;

struct Box {
  float ymin, xmin, ymax, xmax;
};

struct State : packkit::OpState {
  // Options.
  int max_detections = 0;
  int max_classes_per_detection = 0;
  int detections_per_class = 100;
  bool regular_nms = false;
  float score_threshold = 0;
  float iou_threshold = 0;
  int num_classes = 0;
  float y_scale = 0, x_scale = 0, h_scale = 0, w_scale = 0;
  // Geometry.
  int anchors = 0;
  int code_size = 4;
  int class_columns = 0;  // num_classes + label offset
  int label_offset = 0;
  int slots = 0;  // D
  int classes_per_anchor = 0;
  packkit::Quant box_q, score_q, anchor_q;
  baton_tensor_type box_type = BATON_TYPE_FLOAT32, score_type = BATON_TYPE_FLOAT32, anchor_type = BATON_TYPE_FLOAT32;
  bool anchors_ready = false;  // constant anchors are decoded once, in prepare
  // Buffers sized in prepare, used by invoke.
  std::vector<float> anchor_values;  // A*4
  std::vector<float> scores;         // A*(C+L), dequantized
  std::vector<Box> boxes;            // A
  std::vector<float> best_scores;    // A (fast) or one class's scores (regular)
  std::vector<int> best_classes;     // A*classes_per_anchor (fast)
  std::vector<int> candidates;       // A
  std::vector<unsigned char> active;  // A
  std::vector<int> selected;         // A
  // Regular NMS: the running top list and its merge buffer.
  std::vector<float> top_scores, merge_scores;
  std::vector<int> top_entries, merge_entries;  // anchor * class_columns + column
  std::vector<int> order;
};

// Dequantized (or plain float) element i of a tensor's data.
inline float value_at(const void* data, baton_tensor_type type, const packkit::Quant& q, size_t i) {
  switch (type) {
    case BATON_TYPE_UINT8: return q.scale * (static_cast<int32_t>(static_cast<const uint8_t*>(data)[i]) - q.zero_point);
    case BATON_TYPE_INT8: return q.scale * (static_cast<int32_t>(static_cast<const int8_t*>(data)[i]) - q.zero_point);
    default: return static_cast<const float*>(data)[i];
  }
}

void read_anchors(State& s, const void* data) {
  for (size_t i = 0; i < s.anchor_values.size(); ++i) s.anchor_values[i] = value_at(data, s.anchor_type, s.anchor_q, i);
}

packkit::Quant input_quant(Ctx& ctx, baton_tensor* t, const char* role) {
  ctx.require_type(t, role, {BATON_TYPE_FLOAT32, BATON_TYPE_UINT8, BATON_TYPE_INT8});
  if (ctx.type(t) == BATON_TYPE_FLOAT32) return {};
  return ctx.quantization(t, role);
}

void prepare(Ctx& ctx) {
  ctx.require_io(3, 4);
  auto& s = ctx.state<State>();

  const FlexMap m = FlexMap::parse(ctx.custom_options());
  s.max_detections = m.require_int32("max_detections");
  s.max_classes_per_detection = m.require_int32("max_classes_per_detection");
  s.detections_per_class = m.int32_or("detections_per_class", 100);
  s.regular_nms = m.get_bool("use_regular_nms").value_or(false);
  s.score_threshold = m.require_float("nms_score_threshold");
  s.iou_threshold = m.require_float("nms_iou_threshold");
  s.num_classes = m.require_int32("num_classes");
  s.y_scale = m.require_float("y_scale");
  s.x_scale = m.require_float("x_scale");
  s.h_scale = m.require_float("h_scale");
  s.w_scale = m.require_float("w_scale");
  auto bad_option = [&](bool ok, const std::string& message) { ctx.require(ok, "custom options: " + message); };
  bad_option(s.max_detections > 0 && s.max_detections <= 100000,
             "max_detections must be in 1..100000, is " + std::to_string(s.max_detections));
  bad_option(s.max_classes_per_detection > 0 && s.max_classes_per_detection <= 10000,
             "max_classes_per_detection must be in 1..10000, is " + std::to_string(s.max_classes_per_detection));
  bad_option(int64_t{s.max_detections} * s.max_classes_per_detection <= 1000000,
             "max_detections * max_classes_per_detection is too large");
  bad_option(!s.regular_nms || (s.detections_per_class > 0 && s.detections_per_class <= 100000),
             "detections_per_class must be in 1..100000 with use_regular_nms, is " + std::to_string(s.detections_per_class));
  bad_option(s.num_classes > 0, "num_classes must be positive, is " + std::to_string(s.num_classes));
  bad_option(s.iou_threshold > 0.0f && s.iou_threshold <= 1.0f,
             "nms_iou_threshold must be in (0, 1], is " + std::to_string(s.iou_threshold));
  bad_option(!std::isnan(s.score_threshold), "nms_score_threshold is NaN");
  for (float v : {s.y_scale, s.x_scale, s.h_scale, s.w_scale}) {
    bad_option(v > 0.0f && std::isfinite(v), "y_scale, x_scale, h_scale and w_scale must be positive");
  }

  baton_tensor* boxes = ctx.input(0);
  baton_tensor* scores = ctx.input(1);
  baton_tensor* anchors = ctx.input(2);
  s.box_q = input_quant(ctx, boxes, "box encodings (input 0)");
  s.score_q = input_quant(ctx, scores, "class scores (input 1)");
  s.anchor_q = input_quant(ctx, anchors, "anchors (input 2)");
  s.box_type = ctx.type(boxes);
  s.score_type = ctx.type(scores);
  s.anchor_type = ctx.type(anchors);
  ctx.require_rank(boxes, "box encodings (input 0)", 3);
  ctx.require_rank(scores, "class scores (input 1)", 3);
  ctx.require_rank(anchors, "anchors (input 2)", 2);
  const auto bs = ctx.shape(boxes), ss = ctx.shape(scores), as = ctx.shape(anchors);
  ctx.require(bs[0] == 1 && ss[0] == 1, "batch must be 1 (box encodings " + ctx.shape_text(boxes) +
                                            ", class scores " + ctx.shape_text(scores) + ")");
  ctx.require(bs[2] >= 4, "box encodings " + ctx.shape_text(boxes) + " need at least 4 values per box");
  ctx.require(as[1] == 4, "anchors " + ctx.shape_text(anchors) + " must have 4 values (yc, xc, h, w) per anchor");
  ctx.require(bs[1] == ss[1] && bs[1] == as[0], "box encodings " + ctx.shape_text(boxes) + ", class scores " +
                                                   ctx.shape_text(scores) + " and anchors " + ctx.shape_text(anchors) +
                                                   " disagree on the number of anchors");
  s.anchors = bs[1];
  s.code_size = bs[2];
  s.class_columns = ss[2];
  s.label_offset = s.class_columns - s.num_classes;
  ctx.require(s.label_offset == 0 || s.label_offset == 1,
              "class scores " + ctx.shape_text(scores) + " must have num_classes (" + std::to_string(s.num_classes) +
                  ") columns, or one more for the background");
  for (int i = 0; i < 4; ++i) {
    ctx.require_type(ctx.output(i), "output " + std::to_string(i), {BATON_TYPE_FLOAT32});
  }

  s.classes_per_anchor = std::min(s.max_classes_per_detection, s.num_classes);
  s.slots = s.max_detections * s.max_classes_per_detection;
  const size_t a = static_cast<size_t>(s.anchors);
  s.anchor_values.resize(a * 4);
  s.scores.resize(a * s.class_columns);
  s.boxes.resize(a);
  s.best_scores.resize(a);
  s.best_classes.resize(a * s.classes_per_anchor);
  s.candidates.resize(a);
  s.active.resize(a);
  s.selected.resize(a);
  if (s.regular_nms) {
    const size_t cap = static_cast<size_t>(s.max_detections) + static_cast<size_t>(std::min(s.detections_per_class, s.anchors));
    s.top_scores.resize(cap);
    s.top_entries.resize(cap);
    s.merge_scores.resize(cap);
    s.merge_entries.resize(cap);
    s.order.resize(cap);
  }
  s.anchors_ready = false;
  if (ctx.is_constant(anchors) && ctx.data<void>(anchors)) {
    read_anchors(s, ctx.data<void>(anchors));
    s.anchors_ready = true;
  }

  ctx.set_output_shape(ctx.output(0), {1, s.slots, 4});
  ctx.set_output_shape(ctx.output(1), {1, s.slots});
  ctx.set_output_shape(ctx.output(2), {1, s.slots});
  ctx.set_output_shape(ctx.output(3), {1});
}

float iou(const Box& a, const Box& b) {
  const float area_a = (a.ymax - a.ymin) * (a.xmax - a.xmin);
  const float area_b = (b.ymax - b.ymin) * (b.xmax - b.xmin);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ih = std::max(std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin), 0.0f);
  const float iw = std::max(std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin), 0.0f);
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

// Greedy NMS over one score per anchor (`scores`, A values). Writes the selected anchors, best first, to
// s.selected and returns how many; at most `limit`.
int select_boxes(State& s, const float* scores, int limit) {
  int kept = 0;
  for (int i = 0; i < s.anchors; ++i) {
    if (scores[i] >= s.score_threshold) s.candidates[kept++] = i;
  }
  // Descending score, ties by anchor index: the order of a stable sort, without its scratch allocation.
  std::sort(s.candidates.begin(), s.candidates.begin() + kept, [&](int a, int b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  const int out_limit = std::min(kept, limit);
  std::fill(s.active.begin(), s.active.begin() + kept, 1);
  int count = 0;
  for (int i = 0; i < kept && count < out_limit; ++i) {
    if (!s.active[i]) continue;
    const int chosen = s.candidates[i];
    s.selected[count++] = chosen;
    s.active[i] = 0;
    for (int j = i + 1; j < kept; ++j) {
      if (s.active[j] && iou(s.boxes[chosen], s.boxes[s.candidates[j]]) > s.iou_threshold) s.active[j] = 0;
    }
  }
  return count;
}

void invoke(Ctx& ctx) {
  auto& s = ctx.state<State>();
  const void* box_data = ctx.data<void>(ctx.input(0));
  const void* score_data = ctx.data<void>(ctx.input(1));
  if (!s.anchors_ready) read_anchors(s, ctx.data<void>(ctx.input(2)));
  float* out_boxes = ctx.mutable_data<float>(ctx.output(0));
  float* out_classes = ctx.mutable_data<float>(ctx.output(1));
  float* out_scores = ctx.mutable_data<float>(ctx.output(2));
  float* out_count = ctx.mutable_data<float>(ctx.output(3));
  const size_t slots = static_cast<size_t>(s.slots);
  std::fill(out_boxes, out_boxes + slots * 4, 0.0f);
  std::fill(out_classes, out_classes + slots, 0.0f);
  std::fill(out_scores, out_scores + slots, 0.0f);

  // Decode every box against its anchor.
  for (int i = 0; i < s.anchors; ++i) {
    const size_t e = static_cast<size_t>(i) * s.code_size;
    const float ty = value_at(box_data, s.box_type, s.box_q, e + 0);
    const float tx = value_at(box_data, s.box_type, s.box_q, e + 1);
    const float th = value_at(box_data, s.box_type, s.box_q, e + 2);
    const float tw = value_at(box_data, s.box_type, s.box_q, e + 3);
    const float* an = &s.anchor_values[static_cast<size_t>(i) * 4];
    const float yc = ty / s.y_scale * an[2] + an[0];
    const float xc = tx / s.x_scale * an[3] + an[1];
    const float half_h = 0.5f * std::exp(th / s.h_scale) * an[2];
    const float half_w = 0.5f * std::exp(tw / s.w_scale) * an[3];
    s.boxes[i] = {yc - half_h, xc - half_w, yc + half_h, xc + half_w};
  }
  const size_t score_count = static_cast<size_t>(s.anchors) * s.class_columns;
  for (size_t i = 0; i < score_count; ++i) s.scores[i] = value_at(score_data, s.score_type, s.score_q, i);

  auto write_slot = [&](size_t slot, int anchor, int cls, float score) {
    const Box& b = s.boxes[anchor];
    out_boxes[slot * 4 + 0] = b.ymin;
    out_boxes[slot * 4 + 1] = b.xmin;
    out_boxes[slot * 4 + 2] = b.ymax;
    out_boxes[slot * 4 + 3] = b.xmax;
    out_classes[slot] = static_cast<float>(cls);
    out_scores[slot] = score;
  };

  if (!s.regular_nms) {
    const int k = s.classes_per_anchor;
    for (int i = 0; i < s.anchors; ++i) {
      const float* row = &s.scores[static_cast<size_t>(i) * s.class_columns + s.label_offset];
      int* best = &s.best_classes[static_cast<size_t>(i) * k];
      // The k best classes by insertion (k is small: 1 in the SSD models); ties keep the lower class.
      int filled = 0;
      for (int c = 0; c < s.num_classes; ++c) {
        if (filled == k && !(row[c] > row[best[k - 1]])) continue;
        int pos = filled < k ? filled++ : k - 1;
        while (pos > 0 && row[c] > row[best[pos - 1]]) {
          best[pos] = best[pos - 1];
          --pos;
        }
        best[pos] = c;
      }
      s.best_scores[i] = row[best[0]];
    }
    const int count = select_boxes(s, s.best_scores.data(), s.max_detections);
    size_t written = 0;
    for (int r = 0; r < count; ++r) {
      const int anchor = s.selected[r];
      const float* row = &s.scores[static_cast<size_t>(anchor) * s.class_columns + s.label_offset];
      for (int c = 0; c < k; ++c) {
        const int cls = s.best_classes[static_cast<size_t>(anchor) * k + c];
        write_slot(static_cast<size_t>(r) * s.max_classes_per_detection + c, anchor, cls, row[cls]);
        ++written;
      }
    }
    *out_count = static_cast<float>(written);
    return;
  }

  // Regular NMS: per class, then merge into the running top list.
  int top = 0;
  for (int c = 0; c < s.num_classes; ++c) {
    const int column = c + s.label_offset;
    for (int i = 0; i < s.anchors; ++i) s.best_scores[i] = s.scores[static_cast<size_t>(i) * s.class_columns + column];
    const int count = select_boxes(s, s.best_scores.data(), s.detections_per_class);
    int n = top;
    for (int r = 0; r < count; ++r) {
      s.top_scores[n] = s.best_scores[s.selected[r]];
      s.top_entries[n] = s.selected[r] * s.class_columns + column;
      ++n;
    }
    for (int i = 0; i < n; ++i) s.order[i] = i;
    std::sort(s.order.begin(), s.order.begin() + n, [&](int a, int b) {
      return s.top_scores[a] > s.top_scores[b] || (s.top_scores[a] == s.top_scores[b] && a < b);
    });
    const int keep = std::min(n, s.max_detections);
    for (int i = 0; i < keep; ++i) {
      s.merge_scores[i] = s.top_scores[s.order[i]];
      s.merge_entries[i] = s.top_entries[s.order[i]];
    }
    std::copy(s.merge_scores.begin(), s.merge_scores.begin() + keep, s.top_scores.begin());
    std::copy(s.merge_entries.begin(), s.merge_entries.begin() + keep, s.top_entries.begin());
    top = keep;
  }
  for (int i = 0; i < top; ++i) {
    const int anchor = s.top_entries[i] / s.class_columns;
    const int cls = s.top_entries[i] - anchor * s.class_columns - s.label_offset;
    write_slot(static_cast<size_t>(i), anchor, cls, s.top_scores[i]);
  }
  *out_count = static_cast<float>(top);
}

const packkit::OpDef kOps[] = {
    {BATON_OP_CUSTOM, "TFLite_Detection_PostProcess", 1, 1, prepare, invoke},
};

const packkit::PackInfo kInfo = {
    "detection",
    "0.1.0",
    "TFLite_Detection_PostProcess: SSD box decoding and non-maximum suppression (float32, uint8, int8 inputs)",
    kOps,
};

}  // namespace
}  // namespace baton::detection

extern "C" BATON_PLUGIN_EXPORT const baton_plugin_desc* baton_plugin_entry(uint32_t host_abi_major,
                                                                         uint32_t host_abi_minor,
                                                                         const baton_host_api* api,
                                                                         baton_error* error) {
  return baton::packkit::pack_entry(baton::detection::kInfo, host_abi_major, host_abi_minor, api, error);
}
