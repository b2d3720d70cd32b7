// Ops on complex tensors, as TFLite 2.9 registers them: RFFT2D (float32 slices to their complex64
// spectra, kernels/fft.cc) and REAL, IMAG and COMPLEX_ABS (complex64 to float32, complex128 to float64).
// RFFT2D's fft_length must be int32 powers of two; a computed one makes the output dynamic, as in TFLite.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "glue/op_context.h"
#include "glue/scratch_buffer.h"
#include "kernels/fft.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// ---- RFFT2D ----

struct Rfft2dState : OpState {
  Rfft2dPlan plan;
  int64_t slices = 0;
  ScratchBuffer scratch;
};

bool is_power_of_two(int64_t v) { return v > 0 && v <= (int64_t{1} << 30) && (v & (v - 1)) == 0; }

void rfft2d_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* length = ctx.input(1);
  baton_tensor* output = ctx.output(0);
  ctx.require_float(input, "input");
  const auto in = ctx.shape(input);
  const int rank = static_cast<int>(in.size());
  ctx.require(rank >= 2, "the input has rank " + std::to_string(rank) +
                             "; RFFT2D transforms the innermost two dimensions, so it needs rank 2 or more");
  ctx.require_type(length, "fft_length (input 1)", {BATON_TYPE_INT32});
  ctx.require(ctx.rank(length) == 1 && ctx.shape(length)[0] == 2, "fft_length (input 1) must be a vector of 2 values");
  ctx.require_type(output, "output", {BATON_TYPE_COMPLEX64});
  const auto lengths = ctx.shape_ints(length, "fft_length (input 1)");
  if (!lengths) return;
  const int64_t h = (*lengths)[0], w = (*lengths)[1];
  for (int i = 0; i < 2; ++i) {
    ctx.require(is_power_of_two((*lengths)[i]), "fft_length[" + std::to_string(i) + "] = " +
                                                    std::to_string((*lengths)[i]) +
                                                    " is not a power of two (TFLite 2.9's FFT takes only those)");
  }
  ctx.require(w >= 2, "fft_length[1] = 1 is not supported: TFLite 2.9's FFT gives wrong values there (an "
                      "imaginary part of -x for the 1 x 1 transform of x), so there is no result to match");
  std::vector<int32_t> out(in.begin(), in.end());
  out[rank - 2] = static_cast<int32_t>(h);
  out[rank - 1] = static_cast<int32_t>(w / 2 + 1);
  ctx.set_output_shape(output, out);
  auto& s = ctx.state<Rfft2dState>();
  rfft2d_plan(in[rank - 2], in[rank - 1], static_cast<int>(h), static_cast<int>(w), s.plan);
  s.slices = 1;
  for (int d = 0; d < rank - 2; ++d) s.slices *= in[d];
  s.scratch.resize(rfft2d_scratch_floats(s.plan) * sizeof(float));
}

void rfft2d_invoke(OpContext& ctx) {
  auto& s = ctx.state<Rfft2dState>();
  rfft2d(s.plan, ctx.data<float>(ctx.input(0)), s.slices, ctx.mutable_data<float>(ctx.output(0)),
         reinterpret_cast<float*>(s.scratch.data()));
}

// ---- REAL, IMAG, COMPLEX_ABS ----

void complex_part_prepare(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(in, "input", {BATON_TYPE_COMPLEX64, BATON_TYPE_COMPLEX128});
  const baton_tensor_type want = ctx.type(in) == BATON_TYPE_COMPLEX64 ? BATON_TYPE_FLOAT32 : BATON_TYPE_FLOAT64;
  ctx.require(ctx.type(out) == want, std::string("output type ") + type_name(ctx.type(out)) + ": a " +
                                         type_name(ctx.type(in)) + " input gives " + type_name(want));
  ctx.set_output_shape(out, ctx.shape(in));
}

// Calls f(T{}) with the component type of the node's complex input: float (complex64) or double.
template <typename F>
void with_component_type(const OpContext& ctx, F&& f) {
  if (ctx.type(ctx.input(0)) == BATON_TYPE_COMPLEX64) {
    f(float{});
  } else {
    f(double{});
  }
}

// out[i] = part(in[2i], in[2i + 1]) over the node's input and output.
template <typename Part>
void complex_map(OpContext& ctx, Part part) {
  with_component_type(ctx, [&](auto zero) {
    using T = decltype(zero);
    const T* in = ctx.data<T>(ctx.input(0));
    T* out = ctx.mutable_data<T>(ctx.output(0));
    const int64_t n = ctx.element_count(ctx.input(0));
    for (int64_t i = 0; i < n; ++i) out[i] = part(in[2 * i], in[2 * i + 1]);
  });
}

void real_invoke(OpContext& ctx) {
  complex_map(ctx, [](auto re, auto) { return re; });
}

void imag_invoke(OpContext& ctx) {
  complex_map(ctx, [](auto, auto im) { return im; });
}

// TFLite takes std::abs, which is hypot: for floats glibc's hypotf, which sums the exact squares in
// double and rounds the root to float (an infinite part gives infinity, even beside a NaN); the same,
// written so that it vectorises.
void complex_abs_invoke(OpContext& ctx) {
  complex_map(ctx, [](auto re, auto im) {
    using T = decltype(re);
    if constexpr (std::is_same_v<T, float>) {
      const double r = re, i = im;
      if (std::isinf(re) || std::isinf(im)) return std::numeric_limits<float>::infinity();
      return static_cast<float>(std::sqrt(r * r + i * i));
    } else {
      return std::hypot(re, im);
    }
  });
}

constexpr OpDef kOps[] = {
    {BATON_OP_RFFT2D, "RFFT2D", 1, 1, rfft2d_prepare, rfft2d_invoke},
    {BATON_OP_REAL, "REAL", 1, 1, complex_part_prepare, real_invoke},
    {BATON_OP_IMAG, "IMAG", 1, 1, complex_part_prepare, imag_invoke},
    {BATON_OP_COMPLEX_ABS, "COMPLEX_ABS", 1, 1, complex_part_prepare, complex_abs_invoke},
};

}  // namespace

std::span<const OpDef> complex_ops() { return kOps; }

}  // namespace baton::builtin
