// Window reductions of current LiteRT: REDUCE_WINDOW (TFLite's op; the reduction is an option, the window
// comes as constant int64 inputs) and STABLEHLO_REDUCE_WINDOW (the window, padding and dilations are
// options, the reduction is a body subgraph the host recognises). Each output element is the init value
// folded with every element of its window, in order; a window position in padding or between the operand's
// dilated elements reads the init value, as StableHLO pads with it.
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "glue/stablehlo_util.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// LiteRT's window kernels take ranks 1 to 6.
constexpr int kMaxWindowRank = 6;
static_assert(kMaxWindowRank <= kMaxStablehloRank);

struct WindowState : OpState {
  int32_t reduction = 0;  // baton_window_reduction
  std::vector<int64_t> in_dims, out_dims, window, stride, base_dilation, window_dilation, pad_low;
};

void require_operand(OpContext& ctx, WindowState& s) {
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "operand", {BATON_TYPE_FLOAT32, BATON_TYPE_FLOAT64, BATON_TYPE_INT8, BATON_TYPE_INT16,
                                   BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8, BATON_TYPE_UINT16,
                                   BATON_TYPE_UINT32, BATON_TYPE_UINT64});
  require_like_input(ctx, in, ctx.output(0));
  baton_tensor* init = ctx.input(1);
  ctx.require(ctx.type(init) == ctx.type(in), std::string(ctx.op_name()) + ": init value type " + type_name(ctx.type(init)) +
                                                  " differs from the operand's " + type_name(ctx.type(in)));
  ctx.require(ctx.element_count(init) == 1, std::string(ctx.op_name()) + ": the init value must be one value, its shape is " +
                                                shape_text(ctx.shape(init)));
  const int rank = ctx.rank(in);
  ctx.require(rank >= 1 && rank <= kMaxWindowRank, std::string(ctx.op_name()) + ": operand rank " + std::to_string(rank) +
                                                       " not supported (LiteRT's kernel takes ranks 1 to 6)");
  const auto shape = ctx.shape(in);
  s.in_dims.assign(shape.begin(), shape.end());
}

// The output shape from the window; every vector has one entry per dimension. `high` is the high padding.
void window_shape(OpContext& ctx, WindowState& s, const std::vector<int64_t>& high) {
  const size_t rank = s.in_dims.size();
  std::vector<int32_t> out;
  for (size_t d = 0; d < rank; ++d) {
    const std::string dim = " of dimension " + std::to_string(d);
    ctx.require(s.window[d] >= 1 && s.window[d] <= INT32_MAX, std::string(ctx.op_name()) + ": window size " +
                                                                  std::to_string(s.window[d]) + dim + " must be 1 or more");
    for (const auto* v : {&s.stride, &s.base_dilation, &s.window_dilation}) {
      ctx.require((*v)[d] >= 1 && (*v)[d] <= INT32_MAX, std::string(ctx.op_name()) + ": stride and dilations" + dim +
                                                            " must be 1 or more (" + std::to_string((*v)[d]) + ")");
    }
    ctx.require(s.pad_low[d] > -INT32_MAX && s.pad_low[d] < INT32_MAX && high[d] > -INT32_MAX && high[d] < INT32_MAX,
                std::string(ctx.op_name()) + ": padding" + dim + " out of range");
    const int64_t n = s.in_dims[d];
    const int64_t extent = (n == 0 ? 0 : (n - 1) * s.base_dilation[d] + 1) + s.pad_low[d] + high[d];
    const int64_t span = (s.window[d] - 1) * s.window_dilation[d] + 1;
    const int64_t size = extent < span ? 0 : (extent - span) / s.stride[d] + 1;
    out.push_back(static_cast<int32_t>(size));
  }
  s.out_dims.assign(out.begin(), out.end());
  ctx.set_output_shape(ctx.output(0), out);
}

// ---- REDUCE_WINDOW ----

std::vector<int64_t> window_input(OpContext& ctx, int index, const char* what, int rank) {
  baton_tensor* t = ctx.input(index);
  ctx.require_type(t, what, {BATON_TYPE_INT64});
  ctx.require(ctx.element_count(t) == rank, std::string("REDUCE_WINDOW: ") + what + " has " +
                                                std::to_string(ctx.element_count(t)) + " entries; the operand has rank " +
                                                std::to_string(rank));
  const int64_t* v = ctx.constant_data<int64_t>(t, what);  // LiteRT's kernel takes constants only
  return {v, v + rank};
}

void reduce_window_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(9, "REDUCE_WINDOW's options");
  auto& s = ctx.state<WindowState>();
  require_operand(ctx, s);
  const auto& o = ctx.options();
  ctx.require(o.kind == BATON_OPTIONS_2_KIND + kReduceWindowOptionsType, "REDUCE_WINDOW has no ReduceWindowOptions");
  s.reduction = o.u.reduce_window.reduce_function;
  ctx.require(s.reduction >= BATON_WINDOW_REDUCTION_ADD && s.reduction <= BATON_WINDOW_REDUCTION_ANY,
              "REDUCE_WINDOW: reduce_function " + std::to_string(s.reduction) + " (UNSUPPORTED) is not a reduction");
  const int rank = static_cast<int>(s.in_dims.size());
  s.window = window_input(ctx, 2, "window dimensions (input 2)", rank);
  s.stride = window_input(ctx, 3, "window strides (input 3)", rank);
  s.window_dilation = window_input(ctx, 4, "window dilations (input 4)", rank);
  s.base_dilation.assign(rank, 1);
  s.pad_low.assign(rank, 0);
  // LiteRT's kernel has no padding and rounds the window count up: a window longer than the operand, or
  // strides that do not step evenly to its end, would make it read past the operand.
  for (int d = 0; d < rank; ++d) {
    if (s.window[d] < 1 || s.window_dilation[d] < 1 || s.stride[d] < 1) continue;  // window_shape refuses them
    const int64_t span = (s.window[d] - 1) * s.window_dilation[d] + 1;
    ctx.require(span <= s.in_dims[d], "REDUCE_WINDOW: the dilated window (" + std::to_string(s.window[d]) +
                                          " x dilation " + std::to_string(s.window_dilation[d]) + ") of dimension " +
                                          std::to_string(d) + " is longer than the operand (" +
                                          std::to_string(s.in_dims[d]) + ")");
    ctx.require((s.in_dims[d] - span) % s.stride[d] == 0,
                "REDUCE_WINDOW: stride " + std::to_string(s.stride[d]) + " of dimension " + std::to_string(d) +
                    " does not step evenly from the window's span " + std::to_string(span) + " to the operand's size " +
                    std::to_string(s.in_dims[d]) + " (LiteRT's kernel then computes a last window past the operand)");
  }
  window_shape(ctx, s, std::vector<int64_t>(rank, 0));
}

// ---- STABLEHLO_REDUCE_WINDOW ----

std::vector<int64_t> option_array(OpContext& ctx, const int64_t* v, int32_t count, int rank, int64_t absent,
                                  const char* what) {
  if (count == 0) return std::vector<int64_t>(rank, absent);  // StableHLO's default
  ctx.require(count == rank, std::string("STABLEHLO_REDUCE_WINDOW: ") + what + " has " + std::to_string(count) +
                                 " entries; the operand has rank " + std::to_string(rank));
  return {v, v + rank};
}

void stablehlo_reduce_window_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(9, "STABLEHLO_REDUCE_WINDOW's options");
  ctx.require(ctx.input_count() == 2 && ctx.output_count() == 1,
              "STABLEHLO_REDUCE_WINDOW: only one operand and one init value are supported (the node has " +
                  std::to_string(ctx.input_count()) + " inputs)");
  auto& s = ctx.state<WindowState>();
  require_operand(ctx, s);
  const auto& o = ctx.options();
  ctx.require(o.kind == BATON_OPTIONS_2_KIND + kStablehloReduceWindowOptionsType,
              "STABLEHLO_REDUCE_WINDOW has no StablehloReduceWindowOptions");
  const auto& p = o.u.stablehlo_reduce_window;
  s.reduction = p.body;
  ctx.require(s.reduction >= BATON_WINDOW_REDUCTION_ADD && s.reduction <= BATON_WINDOW_REDUCTION_ANY,
              "STABLEHLO_REDUCE_WINDOW: body subgraph " + std::to_string(p.body_subgraph_index) +
                  " is not one ADD, MUL, MAXIMUM, MINIMUM, AND or OR (the reductions LiteRT's kernel recognises)");
  const int rank = static_cast<int>(s.in_dims.size());
  ctx.require(p.window_dimensions_count == rank, "STABLEHLO_REDUCE_WINDOW: window_dimensions has " +
                                                     std::to_string(p.window_dimensions_count) +
                                                     " entries; the operand has rank " + std::to_string(rank));
  s.window.assign(p.window_dimensions, p.window_dimensions + rank);
  s.stride = option_array(ctx, p.window_strides, p.window_strides_count, rank, 1, "window_strides");
  s.base_dilation = option_array(ctx, p.base_dilations, p.base_dilations_count, rank, 1, "base_dilations");
  s.window_dilation = option_array(ctx, p.window_dilations, p.window_dilations_count, rank, 1, "window_dilations");
  std::vector<int64_t> high(rank, 0);
  s.pad_low.assign(rank, 0);
  if (p.padding_count != 0) {
    ctx.require(p.padding_count == 2 * rank, "STABLEHLO_REDUCE_WINDOW: padding has " + std::to_string(p.padding_count) +
                                                 " entries; a (low, high) pair per dimension is " + std::to_string(2 * rank));
    for (int d = 0; d < rank; ++d) {
      s.pad_low[d] = p.padding[2 * d];
      high[d] = p.padding[2 * d + 1];
    }
  }
  window_shape(ctx, s, high);
}

// ---- both: the fold ----

template <typename T, typename Op>
void reduce_windows(OpContext& ctx, const WindowState& s, Op op) {
  const T* in = ctx.data<T>(ctx.input(0));
  const T init = *ctx.data<T>(ctx.input(1));
  T* out = ctx.mutable_data<T>(ctx.output(0));
  const size_t rank = s.in_dims.size();
  int64_t in_strides[kMaxWindowRank];
  row_major_strides(s.in_dims, in_strides);
  for_each_position(s.out_dims, [&](const int64_t* o, int64_t flat) {
    T acc = init;
    for_each_position(s.window, [&](const int64_t* w, int64_t) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t p = o[d] * s.stride[d] + w[d] * s.window_dilation[d] - s.pad_low[d];
        if (p < 0 || p % s.base_dilation[d] != 0 || p / s.base_dilation[d] >= s.in_dims[d]) {
          acc = op(acc, init);  // padding and the holes of base dilation hold the init value
          return;
        }
        src += p / s.base_dilation[d] * in_strides[d];
      }
      acc = op(acc, in[src]);
    });
    out[flat] = acc;
  });
}

void reduce_window_invoke(OpContext& ctx) {
  const auto& s = ctx.state<WindowState>();
  with_stablehlo_type(ctx.type(ctx.input(0)), [&](auto zero) {
    using T = decltype(zero);
    switch (s.reduction) {
      case BATON_WINDOW_REDUCTION_ADD: return reduce_windows<T>(ctx, s, [](T a, T b) { return wrapping_add(a, b); });
      case BATON_WINDOW_REDUCTION_MUL: return reduce_windows<T>(ctx, s, [](T a, T b) { return wrapping_mul(a, b); });
      // LiteRT's Max and Min keep the accumulator on ties and when a comparison is false (NaN).
      case BATON_WINDOW_REDUCTION_MAXIMUM: return reduce_windows<T>(ctx, s, [](T a, T b) { return a >= b ? a : b; });
      case BATON_WINDOW_REDUCTION_MINIMUM: return reduce_windows<T>(ctx, s, [](T a, T b) { return a <= b ? a : b; });
      case BATON_WINDOW_REDUCTION_ALL: return reduce_windows<T>(ctx, s, [](T a, T b) { return static_cast<T>(a && b); });
      default: return reduce_windows<T>(ctx, s, [](T a, T b) { return static_cast<T>(a || b); });
    }
  });
}

constexpr OpDef kOps[] = {
    {BATON_OP_REDUCE_WINDOW, "REDUCE_WINDOW", 1, 1, reduce_window_prepare, reduce_window_invoke},
    {BATON_OP_STABLEHLO_REDUCE_WINDOW, "STABLEHLO_REDUCE_WINDOW", 1, 1, stablehlo_reduce_window_prepare, reduce_window_invoke},
};

}  // namespace

std::span<const OpDef> window_ops() { return kOps; }

}  // namespace baton::builtin
