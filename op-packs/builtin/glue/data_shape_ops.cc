// Ops whose output shape depends on input values: WHERE (the coordinates of the true / non-zero
// elements), UNIQUE (the distinct values in order of first appearance, and each element's index among
// them), NON_MAX_SUPPRESSION_V4 / V5 (the selected boxes, padded to max_output_size, which must be known
// for the shape). A prepare without the values (a non-constant input: data() is null) marks such an
// output dynamic (tensor_set_dynamic, ABI 1.2); the host prepares the node again at invoke with them,
// and that prepare computes the result and sets the shape, which invoke then writes out.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/non_max_suppression.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// ---- WHERE ----

struct WhereState : OpState {
  std::vector<int64_t> coordinates;  // rank entries per true element, filled by the prepare with values
};

template <typename T>
void true_coordinates(const T* values, std::span<const int32_t> shape, std::vector<int64_t>& out) {
  out.clear();
  const int rank = static_cast<int>(shape.size());
  int64_t count = 1;
  for (int32_t d : shape) count *= d;
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    if (values[i] != T(0)) out.insert(out.end(), index.begin(), index.end());
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

void where_prepare(OpContext& ctx) {
  baton_tensor* cond = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(cond, "condition", {BATON_TYPE_BOOL, BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64,
                                       BATON_TYPE_UINT8, BATON_TYPE_INT8});
  ctx.require_type(out, "output", {BATON_TYPE_INT64});
  ctx.require(ctx.input_count() == 1, "WHERE with x and y (three inputs) is SELECT_V2's job; TFLite takes one input");
  ctx.require(ctx.rank(cond) >= 1, "a rank-0 condition has no coordinates to give");
  if (!ctx.data<void>(cond)) return ctx.set_dynamic(out);
  auto& s = ctx.state<WhereState>();
  const auto shape = ctx.shape(cond);
  switch (ctx.type(cond)) {
    case BATON_TYPE_BOOL: true_coordinates(ctx.data<bool>(cond), shape, s.coordinates); break;
    case BATON_TYPE_FLOAT32: true_coordinates(ctx.data<float>(cond), shape, s.coordinates); break;
    case BATON_TYPE_INT32: true_coordinates(ctx.data<int32_t>(cond), shape, s.coordinates); break;
    case BATON_TYPE_INT64: true_coordinates(ctx.data<int64_t>(cond), shape, s.coordinates); break;
    case BATON_TYPE_UINT8: true_coordinates(ctx.data<uint8_t>(cond), shape, s.coordinates); break;
    default: true_coordinates(ctx.data<int8_t>(cond), shape, s.coordinates); break;
  }
  const int32_t rank = static_cast<int32_t>(shape.size());
  const int32_t rows = static_cast<int32_t>(s.coordinates.size() / rank);
  ctx.set_output_shape(out, {rows, rank});
}

void where_invoke(OpContext& ctx) {
  const auto& s = ctx.state<WhereState>();
  std::copy(s.coordinates.begin(), s.coordinates.end(), ctx.mutable_data<int64_t>(ctx.output(0)));
}

// ---- UNIQUE ----

struct UniqueState : OpState {
  std::vector<int64_t> first;  // position in the input of each distinct value's first appearance
  std::vector<int64_t> index;  // per input element: its value's place among the distinct ones
};

template <typename T>
void find_unique(const T* values, int64_t n, UniqueState& s) {
  std::map<T, int64_t> seen;  // ordered by value; -0.0 and 0.0 are one value, as in TFLite
  s.first.clear();
  s.index.assign(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    auto [it, added] = seen.emplace(values[i], static_cast<int64_t>(s.first.size()));
    if (added) s.first.push_back(i);
    s.index[i] = it->second;
  }
}

void unique_prepare(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  baton_tensor* values = ctx.output(0);
  baton_tensor* index = ctx.output(1);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT16,
                                 BATON_TYPE_UINT8, BATON_TYPE_INT8});
  ctx.require_rank(in, "input", 1);
  require_like_input(ctx, in, values);
  ctx.require_type(index, "index output", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  const int32_t n = ctx.shape(in)[0];
  ctx.set_output_shape(index, {n});
  if (!ctx.data<void>(in)) return ctx.set_dynamic(values);
  auto& s = ctx.state<UniqueState>();
  switch (ctx.type(in)) {
    case BATON_TYPE_FLOAT32: find_unique(ctx.data<float>(in), n, s); break;
    case BATON_TYPE_INT32: find_unique(ctx.data<int32_t>(in), n, s); break;
    case BATON_TYPE_INT64: find_unique(ctx.data<int64_t>(in), n, s); break;
    case BATON_TYPE_INT16: find_unique(ctx.data<int16_t>(in), n, s); break;
    case BATON_TYPE_UINT8: find_unique(ctx.data<uint8_t>(in), n, s); break;
    default: find_unique(ctx.data<int8_t>(in), n, s); break;
  }
  ctx.set_output_shape(values, {static_cast<int32_t>(s.first.size())});
}

void unique_invoke(OpContext& ctx) {
  const auto& s = ctx.state<UniqueState>();
  baton_tensor* in = ctx.input(0);
  const size_t size = element_size(ctx.type(in));
  const auto* from = ctx.data<uint8_t>(in);
  auto* to = ctx.mutable_data<uint8_t>(ctx.output(0));
  for (size_t k = 0; k < s.first.size(); ++k) std::memcpy(to + k * size, from + s.first[k] * size, size);
  baton_tensor* index = ctx.output(1);
  if (ctx.type(index) == BATON_TYPE_INT32) {
    std::transform(s.index.begin(), s.index.end(), ctx.mutable_data<int32_t>(index),
                   [](int64_t v) { return static_cast<int32_t>(v); });
  } else {
    std::copy(s.index.begin(), s.index.end(), ctx.mutable_data<int64_t>(index));
  }
}

// ---- NON_MAX_SUPPRESSION_V4 / V5 ----

float scalar_float(const OpContext& ctx, int input, const char* what) {
  baton_tensor* t = ctx.input(input);
  ctx.require_type(t, what, {BATON_TYPE_FLOAT32});
  ctx.require(ctx.element_count(t) == 1, std::string(what) + " must hold one value");
  return ctx.data<float>(t)[0];
}

void nms_prepare(OpContext& ctx) {
  const bool v5 = ctx.op_code() == BATON_OP_NON_MAX_SUPPRESSION_V5;
  baton_tensor* boxes = ctx.input(0);
  baton_tensor* scores = ctx.input(1);
  baton_tensor* max_size = ctx.input(2);
  ctx.require_type(boxes, "boxes", {BATON_TYPE_FLOAT32});
  ctx.require_type(scores, "scores", {BATON_TYPE_FLOAT32});
  ctx.require(ctx.rank(boxes) == 2 && ctx.shape(boxes)[1] == 4, "boxes must be [N, 4]");
  ctx.require(ctx.rank(scores) == 1 && ctx.shape(scores)[0] == ctx.shape(boxes)[0],
              "scores must be [N] for the N boxes");
  ctx.require_type(max_size, "max_output_size", {BATON_TYPE_INT32});
  ctx.require(ctx.element_count(max_size) == 1, "max_output_size must hold one value");
  for (int i = 3; i < (v5 ? 6 : 5); ++i) {
    ctx.require_type(ctx.input(i), i == 3 ? "iou_threshold" : i == 4 ? "score_threshold" : "soft_nms_sigma",
                     {BATON_TYPE_FLOAT32});
  }
  const int indices_out = 0, scores_out = v5 ? 1 : -1, count_out = v5 ? 2 : 1;
  ctx.require_type(ctx.output(indices_out), "selected indices", {BATON_TYPE_INT32});
  if (v5) ctx.require_type(ctx.output(scores_out), "selected scores", {BATON_TYPE_FLOAT32});
  ctx.require_type(ctx.output(count_out), "valid count", {BATON_TYPE_INT32});
  ctx.set_output_shape(ctx.output(count_out), std::span<const int32_t>());
  const int32_t* max = ctx.data<int32_t>(max_size);
  if (!max) {
    ctx.set_dynamic(ctx.output(indices_out));
    if (v5) ctx.set_dynamic(ctx.output(scores_out));
    return;
  }
  ctx.require(max[0] >= 0, "max_output_size " + std::to_string(max[0]) + " is negative");
  ctx.set_output_shape(ctx.output(indices_out), {max[0]});
  if (v5) ctx.set_output_shape(ctx.output(scores_out), {max[0]});
}

void nms_invoke(OpContext& ctx) {
  const bool v5 = ctx.op_code() == BATON_OP_NON_MAX_SUPPRESSION_V5;
  const int max = ctx.data<int32_t>(ctx.input(2))[0];
  const float iou = scalar_float(ctx, 3, "iou_threshold");
  const float score = scalar_float(ctx, 4, "score_threshold");
  const float sigma = v5 ? scalar_float(ctx, 5, "soft_nms_sigma") : 0.0f;
  ctx.require(iou >= 0.0f && iou <= 1.0f, "iou_threshold " + std::to_string(iou) + " is outside [0, 1]");
  ctx.require(sigma >= 0.0f, "soft_nms_sigma " + std::to_string(sigma) + " is negative");
  int32_t* selected = ctx.mutable_data<int32_t>(ctx.output(0));
  float* selected_scores = v5 ? ctx.mutable_data<float>(ctx.output(1)) : nullptr;
  const int count = non_max_suppression(ctx.data<float>(ctx.input(0)), ctx.shape(ctx.input(0))[0],
                                        ctx.data<float>(ctx.input(1)), max, iou, score, sigma, selected,
                                        selected_scores);
  std::fill(selected + count, selected + max, 0);
  if (selected_scores) std::fill(selected_scores + count, selected_scores + max, 0.0f);
  ctx.mutable_data<int32_t>(ctx.output(v5 ? 2 : 1))[0] = count;
}

constexpr OpDef kOps[] = {
    {BATON_OP_WHERE, "WHERE", 1, 2, where_prepare, where_invoke},
    {BATON_OP_UNIQUE, "UNIQUE", 1, 1, unique_prepare, unique_invoke},
    {BATON_OP_NON_MAX_SUPPRESSION_V4, "NON_MAX_SUPPRESSION_V4", 1, 1, nms_prepare, nms_invoke},
    {BATON_OP_NON_MAX_SUPPRESSION_V5, "NON_MAX_SUPPRESSION_V5", 1, 1, nms_prepare, nms_invoke},
};

}  // namespace

std::span<const OpDef> data_shape_ops() { return kOps; }

}  // namespace baton::builtin
