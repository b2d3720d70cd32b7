// Reductions other than MEAN (glue/pool_ops.cc): SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, REDUCE_ANY,
// REDUCE_ALL over a list of axes (negative and repeated axes allowed, keep_dims honoured), and ARG_MAX /
// ARG_MIN over one axis. Computed axes make the output dynamic, as in TFLite: prepare runs again at
// invoke with the values (OpContext::shape_ints). The input is walked once in row-major order and each element
// folded into its output, the order TFLite's reference reduction uses, so float sums round the same way.
// 8-bit REDUCE_MAX / REDUCE_MIN compare codes, which needs the output to share the input's quantization
// (as TFLite requires); 8-bit SUM sums codes when the output shares the input's quantization and
// rescales in float as TFLite does otherwise; int8 REDUCE_PROD multiplies codes (minus the zero point)
// in input order, rescaling each product by in_scale / out_scale^(1/n) (n = elements per output) with
// TFLite's int64 fixed-point multiply, and once more at the end. int16 (zero point 0) SUM, REDUCE_MAX and
// REDUCE_MIN work on codes and need the output's quantization to be the input's (TFLite 2.9 fails a
// rescaling int16 SUM at invoke); int16 MEAN takes the 8-bit paths below.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "glue/op_context.h"
#include "glue/quantized_ops.h"
#include "kernels/parallel.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

constexpr int kMaxRank = 8;

// The input's dimensions (size-1 ones dropped, neighbours of the same kind merged) with the stride of
// each in the output (0 along a reduced dimension).
struct FoldPlan {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};
  int64_t in_count = 0, out_count = 0;
};

FoldPlan plan_fold(std::span<const int32_t> shape, const std::vector<bool>& reduced) {
  FoldPlan p;
  p.in_count = 1;
  for (int32_t d : shape) p.in_count *= d;
  // Output strides over the kept dimensions.
  std::vector<int64_t> stride(shape.size(), 0);
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (reduced[d]) continue;
    stride[d] = s;
    s *= shape[d];
  }
  p.out_count = s;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (p.rank > 0 && p.out_strides[p.rank - 1] == stride[d] * shape[d] && (stride[d] == 0) == (p.out_strides[p.rank - 1] == 0)) {
      p.dims[p.rank - 1] *= shape[d];
      p.out_strides[p.rank - 1] = stride[d];
      continue;
    }
    p.dims[p.rank] = shape[d];
    p.out_strides[p.rank++] = stride[d];
  }
  if (p.rank == 0) {
    p.rank = 1;
    p.dims[0] = 1;
  }
  return p;
}

template <typename T, typename Acc, typename F>
void fold(const FoldPlan& p, const T* in, Acc* out, F f) {
  if (p.in_count == 0) return;
  const int last = p.rank - 1;
  const int64_t n = p.dims[last], step = p.out_strides[last];
  int64_t index[kMaxRank] = {};
  int64_t off = 0;
  for (int64_t i = 0; i < p.in_count; i += n) {
    for (int64_t k = 0; k < n; ++k) out[off + k * step] = f(out[off + k * step], in[i + k]);
    for (int d = last - 1; d >= 0; --d) {
      off += p.out_strides[d];
      if (++index[d] < p.dims[d]) break;
      off -= p.out_strides[d] * p.dims[d];
      index[d] = 0;
    }
  }
}

struct ReduceState : OpState {
  FoldPlan plan;
  // 8-bit SUM whose output is quantized differently from its input: TFLite sums the codes in int32,
  // then maps each sum s to int32(round(s * scale + bias)) + out_zero in float, scale = in_scale /
  // out_scale and bias = -in_zero * scale * count (count = elements summed per output), and narrows
  // the result to the output type without clamping (it wraps).
  bool rescale = false;
  float scale = 1.0f, bias = 0.0f;
  int32_t out_zero = 0;
  std::vector<int32_t> sums;
  // int8 REDUCE_PROD
  bool quantized_prod = false;
  QuantizedMultiplier prod_step;
  int32_t prod_in_zero = 0;
  std::vector<int64_t> products;
};

void reduce_prepare(OpContext& ctx) {
  const int32_t code = ctx.op_code();
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  switch (code) {
    case BATON_OP_REDUCE_ANY: case BATON_OP_REDUCE_ALL: ctx.require_type(in, "input", {BATON_TYPE_BOOL}); break;
    case BATON_OP_REDUCE_MAX: case BATON_OP_REDUCE_MIN: case BATON_OP_SUM:
      ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8,
                                     BATON_TYPE_INT8, BATON_TYPE_INT16});
      break;
    default: ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT8}); break;
  }
  ctx.require(ctx.type(out) == ctx.type(in), std::string("output type ") + type_name(ctx.type(out)) +
                                                 " differs from the input's " + type_name(ctx.type(in)));
  auto& state = ctx.state<ReduceState>();
  state.rescale = false;
  state.quantized_prod = code == BATON_OP_REDUCE_PROD && ctx.type(in) == BATON_TYPE_INT8;
  if (state.quantized_prod) {
    state.prod_in_zero = ctx.act_quant(in, "input").zero_point;
  } else if (ctx.type(in) == BATON_TYPE_UINT8 || ctx.type(in) == BATON_TYPE_INT8) {
    const ActQuant a = ctx.act_quant(in, "input"), b = ctx.act_quant(out, "output");
    const bool same = a.scale == b.scale && a.zero_point == b.zero_point;
    ctx.require(same || code == BATON_OP_SUM,
                "the output's scale and zero point differ from the input's; this kernel does not rescale");
    state.rescale = !same;
    state.scale = a.scale / b.scale;
    state.out_zero = b.zero_point;
    state.bias = static_cast<float>(-a.zero_point);  // times scale and the count below
  } else if (ctx.type(in) == BATON_TYPE_INT16) {
    const float a = int16_scale(ctx, in, "input"), b = int16_scale(ctx, out, "output");
    ctx.require(a == b, "the output's scale differs from the input's; int16 reductions do not rescale (TFLite 2.9 "
                        "fails a rescaling int16 SUM)");
  }
  const auto shape = ctx.shape(in);
  const int rank = static_cast<int>(shape.size());
  ctx.require(rank <= kMaxRank, "rank above " + std::to_string(kMaxRank) + " not supported");
  const auto axes = ctx.shape_ints(ctx.input(1), "axes (input 1)");
  if (!axes) return;  // computed: prepared again at invoke with the values
  std::vector<bool> reduced(rank, false);
  for (int64_t a : *axes) {
    ctx.require(a >= -rank && a < rank, "axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    reduced[a < 0 ? a + rank : a] = true;
  }
  const bool keep = ctx.options().u.reducer.keep_dims != 0;
  std::vector<int32_t> out_shape;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) out_shape.push_back(shape[d]);
    else if (keep) out_shape.push_back(1);
  }
  ctx.set_output_shape(out, out_shape);
  state.plan = plan_fold(shape, reduced);
  if (state.quantized_prod) {
    ctx.require(state.plan.in_count > 0, "an empty input is not supported (TFLite leaves the output unset)");
    const double in_scale = ctx.act_quant(in, "input").scale, out_scale = ctx.act_quant(out, "output").scale;
    const int64_t count = state.plan.in_count / state.plan.out_count;
    state.prod_step = quantize_multiplier(in_scale / std::pow(out_scale, 1.0 / static_cast<double>(count)));
    state.out_zero = ctx.act_quant(out, "output").zero_point;
    state.products.assign(static_cast<size_t>(state.plan.out_count), 0);
  }
  if (state.rescale) {
    const int64_t count = state.plan.out_count > 0 ? state.plan.in_count / state.plan.out_count : 0;
    state.bias = state.bias * state.scale * static_cast<float>(count);
    state.sums.assign(static_cast<size_t>(state.plan.out_count), 0);
  }
}

template <typename T>
void rescaled_sum(ReduceState& s, const T* in, T* out) {
  std::fill(s.sums.begin(), s.sums.end(), 0);
  fold(s.plan, in, s.sums.data(), [](int32_t acc, T v) { return acc + static_cast<int32_t>(v); });
  if (s.plan.in_count == 0) return;  // TFLite leaves the output untouched when nothing is summed
  for (int64_t i = 0; i < s.plan.out_count; ++i) {
    const int32_t value = static_cast<int32_t>(std::round(static_cast<float>(s.sums[i]) * s.scale + s.bias)) + s.out_zero;
    out[i] = static_cast<T>(value);
  }
}

// int8 REDUCE_PROD: the first element of each output is taken as is, each further one multiplies and
// rescales (kFirst marks an output not reached yet).
void quantized_prod(ReduceState& s, const int8_t* in, int8_t* out) {
  constexpr int64_t kFirst = std::numeric_limits<int64_t>::min();
  std::fill(s.products.begin(), s.products.end(), kFirst);
  const int32_t zero = s.prod_in_zero;
  const QuantizedMultiplier step = s.prod_step;
  fold(s.plan, in, s.products.data(), [zero, step](int64_t acc, int8_t v) -> int64_t {
    const int32_t x = static_cast<int32_t>(v) - zero;
    if (acc == kFirst) return x;
    return multiply_by_quantized_multiplier_64(acc * x, step);
  });
  for (int64_t i = 0; i < s.plan.out_count; ++i) {
    const int32_t v = multiply_by_quantized_multiplier_64(s.products[i], step) + s.out_zero;
    out[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
  }
}

template <typename T>
void reduce_typed(int32_t code, const FoldPlan& p, const T* in, T* out) {
  T init{};
  switch (code) {
    case BATON_OP_SUM: init = T(0); break;
    case BATON_OP_REDUCE_PROD: init = T(1); break;
    case BATON_OP_REDUCE_MAX: init = std::numeric_limits<T>::lowest(); break;
    case BATON_OP_REDUCE_MIN: init = std::numeric_limits<T>::max(); break;
    case BATON_OP_REDUCE_ANY: init = T(false); break;
    default: init = T(true); break;
  }
  std::fill(out, out + p.out_count, init);
  switch (code) {
    case BATON_OP_SUM: return fold(p, in, out, [](T acc, T v) { return static_cast<T>(acc + v); });
    case BATON_OP_REDUCE_PROD: return fold(p, in, out, [](T acc, T v) { return static_cast<T>(acc * v); });
    case BATON_OP_REDUCE_MAX: return fold(p, in, out, [](T acc, T v) { return v > acc ? v : acc; });
    case BATON_OP_REDUCE_MIN: return fold(p, in, out, [](T acc, T v) { return v < acc ? v : acc; });
    case BATON_OP_REDUCE_ANY: return fold(p, in, out, [](T acc, T v) { return static_cast<T>(acc || v); });
    default: return fold(p, in, out, [](T acc, T v) { return static_cast<T>(acc && v); });
  }
}

void reduce_invoke(OpContext& ctx) {
  auto& state = ctx.state<ReduceState>();
  const FoldPlan& p = state.plan;
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  if (state.quantized_prod) return quantized_prod(state, ctx.data<int8_t>(in), ctx.mutable_data<int8_t>(out));
  if (state.rescale) {
    if (ctx.type(in) == BATON_TYPE_UINT8) return rescaled_sum(state, ctx.data<uint8_t>(in), ctx.mutable_data<uint8_t>(out));
    return rescaled_sum(state, ctx.data<int8_t>(in), ctx.mutable_data<int8_t>(out));
  }
  const int32_t code = ctx.op_code();
  switch (ctx.type(in)) {
    case BATON_TYPE_FLOAT32: return reduce_typed(code, p, ctx.data<float>(in), ctx.mutable_data<float>(out));
    case BATON_TYPE_INT32: return reduce_typed(code, p, ctx.data<int32_t>(in), ctx.mutable_data<int32_t>(out));
    case BATON_TYPE_INT64: return reduce_typed(code, p, ctx.data<int64_t>(in), ctx.mutable_data<int64_t>(out));
    case BATON_TYPE_UINT8: return reduce_typed(code, p, ctx.data<uint8_t>(in), ctx.mutable_data<uint8_t>(out));
    case BATON_TYPE_INT8: return reduce_typed(code, p, ctx.data<int8_t>(in), ctx.mutable_data<int8_t>(out));
    case BATON_TYPE_INT16: return reduce_typed(code, p, ctx.data<int16_t>(in), ctx.mutable_data<int16_t>(out));
    case BATON_TYPE_BOOL: return reduce_typed(code, p, ctx.data<bool>(in), ctx.mutable_data<bool>(out));
    default: return;
  }
}

// ---- ARG_MAX, ARG_MIN ----

struct ArgState : OpState {
  int64_t outer = 0, axis = 0, inner = 0;
};

void arg_prepare(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_UINT8, BATON_TYPE_INT8, BATON_TYPE_BOOL});
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  const auto shape = ctx.shape(in);
  const int rank = static_cast<int>(shape.size());
  ctx.require(rank >= 1, "input must have rank >= 1");
  const auto axis = ctx.shape_ints(ctx.input(1), "axis (input 1)");
  if (!axis) return;  // computed: prepared again at invoke with the value
  ctx.require(axis->size() == 1, "axis must hold one value, has " + std::to_string(axis->size()));
  const int a = normalize_axis(ctx, (*axis)[0], rank);
  ctx.require(shape[a] > 0, "the reduced dimension is empty");
  auto& s = ctx.state<ArgState>();
  s.outer = s.inner = 1;
  std::vector<int32_t> out;
  for (int d = 0; d < rank; ++d) {
    if (d < a) s.outer *= shape[d];
    if (d > a) s.inner *= shape[d];
    if (d != a) out.push_back(shape[d]);
  }
  s.axis = shape[a];
  ctx.set_output_shape(ctx.output(0), out);
}

// The first index of the largest (smallest) value along the axis, as TFLite picks ties; rows
// [o0, o1) of the outer dimensions.
template <bool IsMax, typename T, typename I>
void arg_typed(const ArgState& s, const T* in, I* out, int64_t o0, int64_t o1) {
  if (s.inner == 1) {
    // The last axis: find the extreme value (a loop the compiler vectorises), then its first position.
    // Same answer as one pass keeping the first strict improvement, NaN included (nothing beats a NaN
    // at 0, and a NaN later never wins).
    for (int64_t o = o0; o < o1; ++o) {
      const T* p = in + o * s.axis;
      // Eight independent running extremes (all starting from p[0], so a NaN elsewhere never enters),
      // so the loop is elementwise and vectorises, then folded into one.
      constexpr int kLanes = 8;
      T lane[kLanes];
      for (T& l : lane) l = p[0];
      int64_t k = 0;
      for (; k + kLanes <= s.axis; k += kLanes) {
        for (int j = 0; j < kLanes; ++j) lane[j] = (IsMax ? p[k + j] > lane[j] : p[k + j] < lane[j]) ? p[k + j] : lane[j];
      }
      for (; k < s.axis; ++k) lane[0] = (IsMax ? p[k] > lane[0] : p[k] < lane[0]) ? p[k] : lane[0];
      T best = lane[0];
      for (int j = 1; j < kLanes; ++j) best = (IsMax ? lane[j] > best : lane[j] < best) ? lane[j] : best;
      int64_t at = 0;
      while (at < s.axis && !(p[at] == best)) ++at;
      out[o] = static_cast<I>(at == s.axis ? 0 : at);
    }
    return;
  }
  for (int64_t o = o0; o < o1; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const T* p = in + o * s.axis * s.inner + i;
      T best = p[0];
      int64_t at = 0;
      for (int64_t k = 1; k < s.axis; ++k) {
        const T v = p[k * s.inner];
        if (IsMax ? v > best : v < best) {
          best = v;
          at = k;
        }
      }
      out[o * s.inner + i] = static_cast<I>(at);
    }
  }
}

// Rows split across the host's workers when there are enough elements to repay it (a segmenter's
// per-pixel class: 262144 rows of 151 at 512x512).
template <bool IsMax, typename T, typename I>
void arg_rows(OpContext& ctx, const ArgState& s, const T* in, I* out) {
  // Up to four tasks a worker: rows can cost unevenly.
  parallel_ranges(ctx.parallel(), ctx.workers(), s.outer, s.axis * s.inner, 1 << 16,
                  [&](int64_t begin, int64_t end) { arg_typed<IsMax>(s, in, out, begin, end); }, 4 * ctx.workers());
}

void arg_invoke(OpContext& ctx) {
  const auto& s = ctx.state<ArgState>();
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  const bool is_max = ctx.op_code() == BATON_OP_ARG_MAX;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* x = ctx.data<T>(in);
    if (ctx.type(out) == BATON_TYPE_INT32) {
      if (is_max) arg_rows<true>(ctx, s, x, ctx.mutable_data<int32_t>(out));
      else arg_rows<false>(ctx, s, x, ctx.mutable_data<int32_t>(out));
    } else {
      if (is_max) arg_rows<true>(ctx, s, x, ctx.mutable_data<int64_t>(out));
      else arg_rows<false>(ctx, s, x, ctx.mutable_data<int64_t>(out));
    }
  };
  switch (ctx.type(in)) {
    case BATON_TYPE_FLOAT32: return run(float{});
    case BATON_TYPE_INT32: return run(int32_t{});
    case BATON_TYPE_UINT8: return run(uint8_t{});
    case BATON_TYPE_INT8: return run(int8_t{});
    case BATON_TYPE_BOOL: return run(bool{});
    default: return;
  }
}

// ---- 8-bit MEAN (the float MEAN is glue/pool_ops.cc) ----
//
// TFLite 2.9 (x86, reference kernels) takes one of three paths:
//  - kSpatial: rank 4, keep_dims, axes given literally as [1, 2] or [2, 1]. uint8: the code sum times
//    the multiplier of in_scale / (count * out_scale) (formed in float), plus out_zero - round(in_zero *
//    in_scale / out_scale) (half away from zero, in float). int8: the sum of (code - in_zero) times the
//    multiplier of in_scale / out_scale, divided by count rounding half away from zero, plus out_zero.
//    Both clamped to the type.
//  - kSameQuantization (otherwise, same scale and zero point): the code sum divided by count in integers
//    (truncating toward zero).
//  - kRescale (otherwise): mean = float(sum) / count, then round(mean * in_scale / out_scale - in_zero *
//    scale) + out_zero in float, clamped.
//  - kZeros: the spatial shape of int8 tensors without quantization parameters (scale 0, zero point 0 to
//    TFLite), whose multiplier of 0 / 0 TFLite's kernel turns into zeros.
enum class QMeanPath { kSpatial, kSameQuantization, kRescale, kZeros };

struct QMeanState : OpState {
  FoldPlan plan;
  QMeanPath path = QMeanPath::kRescale;
  int32_t count = 1, in_zero = 0, out_zero = 0, bias = 0;
  QuantizedMultiplier m;
  float scale = 1.0f, float_bias = 0.0f;
  CodeRange range;
  std::vector<int32_t> sums;
  // int8 REDUCE_PROD
  bool quantized_prod = false;
  QuantizedMultiplier prod_step;
  int32_t prod_in_zero = 0;
  std::vector<int64_t> products;
};

template <typename T>
void quantized_mean(QMeanState& s, const T* in, T* out) {
  std::fill(s.sums.begin(), s.sums.end(), 0);
  fold(s.plan, in, s.sums.data(), [](int32_t acc, T v) { return acc + static_cast<int32_t>(v); });
  const bool is_signed = std::is_signed_v<T>;
  for (size_t i = 0; i < s.sums.size(); ++i) {
    int32_t v = s.sums[i];
    switch (s.path) {
      case QMeanPath::kSpatial:
        if (is_signed) {
          v = multiply_by_quantized_multiplier(v - s.count * s.in_zero, s.m);
          v = (v > 0 ? v + s.count / 2 : v - s.count / 2) / s.count + s.out_zero;
        } else {
          v = multiply_by_quantized_multiplier(v, s.m) + s.bias;
        }
        break;
      case QMeanPath::kSameQuantization: v /= s.count; break;
      case QMeanPath::kZeros: v = 0; break;
      case QMeanPath::kRescale: {
        const float mean = static_cast<float>(v) / static_cast<float>(s.count);
        v = static_cast<int32_t>(std::round(mean * s.scale + s.float_bias)) + s.out_zero;
        break;
      }
    }
    out[i] = static_cast<T>(std::clamp(v, s.range.lo, s.range.hi));
  }
}

void quantized_mean_invoke(OpContext& ctx) {
  auto& s = ctx.state<QMeanState>();
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  if (ctx.type(in) == BATON_TYPE_UINT8) return quantized_mean(s, ctx.data<uint8_t>(in), ctx.mutable_data<uint8_t>(out));
  if (ctx.type(in) == BATON_TYPE_INT16) return quantized_mean(s, ctx.data<int16_t>(in), ctx.mutable_data<int16_t>(out));
  quantized_mean(s, ctx.data<int8_t>(in), ctx.mutable_data<int8_t>(out));
}

}  // namespace

void quantized_mean_prepare(OpContext& ctx, const std::vector<int64_t>& axes) {
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  ctx.require(ctx.type(out) == ctx.type(in), std::string("output type ") + type_name(ctx.type(out)) +
                                                 " differs from the input's " + type_name(ctx.type(in)));
  // int16: zero points 0, the codes' whole range; summed in int32 as TFLite does.
  const bool wide = ctx.type(in) == BATON_TYPE_INT16;
  // TFLite reads an int8 tensor without quantization parameters as scale 0 and zero point 0: with neither
  // side quantized, its spatial kernel gives zeros and every other shape its same-quantization path.
  const bool unquantized = ctx.type(in) == BATON_TYPE_INT8 && ctx.quant(in).count == 0 && ctx.quant(out).count == 0;
  const ActQuant qi = wide ? ActQuant{int16_scale(ctx, in, "input"), 0, true}
                      : unquantized ? ActQuant{0.0f, 0, true} : ctx.act_quant(in, "input");
  const ActQuant qo = wide ? ActQuant{int16_scale(ctx, out, "output"), 0, true}
                      : unquantized ? ActQuant{0.0f, 0, true} : ctx.act_quant(out, "output");
  const auto shape = ctx.shape(in);
  const int rank = static_cast<int>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[normalize_axis(ctx, a, rank)] = true;
  auto& s = ctx.state<QMeanState>();
  s.plan = plan_fold(shape, reduced);
  ctx.require(s.plan.in_count > 0, "an empty 8-bit input is not supported");
  const int64_t count = s.plan.in_count / s.plan.out_count;
  ctx.require(count <= (wide ? int64_t{1} << 16 : int64_t{1} << 23),
              std::string("more than ") + (wide ? "2^16" : "2^23") + " elements averaged into one output not supported "
              "(the int32 sum could overflow)");
  s.count = static_cast<int32_t>(count);
  s.sums.assign(static_cast<size_t>(s.plan.out_count), 0);
  s.in_zero = qi.zero_point;
  s.out_zero = qo.zero_point;
  s.range = wide ? CodeRange{-32768, 32767} : code_range(qi.is_signed);
  const bool spatial = ctx.options().u.reducer.keep_dims && rank == 4 && axes.size() == 2 &&
                       ((axes[0] == 1 && axes[1] == 2) || (axes[0] == 2 && axes[1] == 1));
  if (spatial && unquantized) {
    s.path = QMeanPath::kZeros;
  } else if (spatial) {
    s.path = QMeanPath::kSpatial;
    if (qi.is_signed) {
      s.m = quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
    } else {
      const float n = static_cast<float>(shape[1] * shape[2]);
      float t = static_cast<float>(qi.zero_point) * qi.scale / qo.scale;
      t = t > 0 ? t + 0.5f : t - 0.5f;
      s.bias = qo.zero_point - static_cast<int32_t>(t);
      s.m = quantize_multiplier(static_cast<double>(qi.scale / (n * qo.scale)));
    }
  } else if (qi.scale == qo.scale && qi.zero_point == qo.zero_point) {
    s.path = QMeanPath::kSameQuantization;
  } else {
    s.path = QMeanPath::kRescale;
    s.scale = qi.scale / qo.scale;
    s.float_bias = static_cast<float>(-qi.zero_point) * s.scale;
  }
  ctx.set_invoke(quantized_mean_invoke);
}

namespace {

constexpr OpDef kOps[] = {
    {BATON_OP_SUM, "SUM", 1, 2, reduce_prepare, reduce_invoke},
    {BATON_OP_REDUCE_PROD, "REDUCE_PROD", 1, 2, reduce_prepare, reduce_invoke},
    {BATON_OP_REDUCE_MAX, "REDUCE_MAX", 1, 3, reduce_prepare, reduce_invoke},
    {BATON_OP_REDUCE_MIN, "REDUCE_MIN", 1, 3, reduce_prepare, reduce_invoke},
    {BATON_OP_REDUCE_ANY, "REDUCE_ANY", 1, 1, reduce_prepare, reduce_invoke},
    {BATON_OP_REDUCE_ALL, "REDUCE_ALL", 1, 1, reduce_prepare, reduce_invoke},
    {BATON_OP_ARG_MAX, "ARG_MAX", 1, 3, arg_prepare, arg_invoke},
    {BATON_OP_ARG_MIN, "ARG_MIN", 1, 3, arg_prepare, arg_invoke},
};

}  // namespace

std::span<const OpDef> reduce_ops() { return kOps; }

}  // namespace baton::builtin
