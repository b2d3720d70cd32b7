// MIRROR_PAD on every type TFLite 2.9's kernel runs (float32, int32, int64, uint8, int8; it fails int16
// at invoke, so int16 is refused here). The codes of a
// quantized tensor are mirrored unchanged, so the output shares the input's quantization.
// REFLECT mirrors about the edge element (a b c -> c b a b c b a), SYMMETRIC repeats it (b a a b c c b),
// so a side may add at most dim - 1 (REFLECT) or dim (SYMMETRIC) elements. Prepare sets the output
// shape and one source index per output position of each dimension: at load for constant paddings, at
// invoke (the output dynamic) for computed ones.
#include <cstring>
#include <vector>

#include "glue/op_context.h"
#include "kernels/element_copy.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

constexpr int kMaxRank = 8;

struct MirrorPadState : OpState {
  int rank = 0;
  int64_t in_strides[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};
  std::vector<int32_t> source[kMaxRank];  // per dimension: output position -> input position
  size_t element = 0;
};

// The input position that output position `o` of a dimension of size `n` padded by `before` reads.
int32_t mirror_source(int64_t o, int64_t before, int64_t n, bool symmetric) {
  int64_t i = o - before;
  if (i < 0) i = symmetric ? -i - 1 : -i;
  else if (i >= n) i = symmetric ? 2 * n - 1 - i : 2 * n - 2 - i;
  return static_cast<int32_t>(i);
}

void mirror_pad_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(2, "MIRROR_PAD's mode");
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(in, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_UINT8,
                                 BATON_TYPE_INT8});
  require_like_input(ctx, in, out);
  const int32_t mode = ctx.options().u.mirror_pad.mode;
  ctx.require(mode == BATON_MIRROR_PAD_REFLECT || mode == BATON_MIRROR_PAD_SYMMETRIC,
              "unknown mode " + std::to_string(mode) + " (REFLECT or SYMMETRIC)");
  const bool symmetric = mode == BATON_MIRROR_PAD_SYMMETRIC;
  const auto shape = ctx.shape(in);
  const int rank = static_cast<int>(shape.size());
  ctx.require(rank >= 1 && rank <= kMaxRank, "input rank " + std::to_string(rank) + " not supported (1 to 8)");
  baton_tensor* paddings = ctx.input(1);
  ctx.require(ctx.rank(paddings) == 2 && ctx.shape(paddings)[0] == rank && ctx.shape(paddings)[1] == 2,
              "paddings must have shape [" + std::to_string(rank) + ", 2]");
  const auto pad_value = ctx.shape_ints(paddings, "paddings (input 1)");
  if (!pad_value) return;  // computed: prepared again at invoke with the values
  const std::vector<int64_t>& pad = *pad_value;
  auto& s = ctx.state<MirrorPadState>();
  s.rank = rank;
  s.element = element_size(ctx.type(in));
  std::vector<int32_t> out_shape(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t before = pad[2 * d], after = pad[2 * d + 1], n = shape[d];
    const int64_t most = symmetric ? n : n - 1;
    ctx.require(before >= 0 && after >= 0 && before <= most && after <= most,
                "paddings " + std::to_string(before) + ", " + std::to_string(after) + " of dimension " +
                    std::to_string(d) + " (size " + std::to_string(n) + ") out of range: " +
                    (symmetric ? "SYMMETRIC" : "REFLECT") + " pads at most " + std::to_string(most) + " a side");
    out_shape[d] = static_cast<int32_t>(n + before + after);
    s.source[d].resize(static_cast<size_t>(out_shape[d]));
    for (int64_t o = 0; o < out_shape[d]; ++o) s.source[d][o] = mirror_source(o, before, n, symmetric);
  }
  int64_t in_stride = 1, out_stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    s.in_strides[d] = in_stride;
    s.out_strides[d] = out_stride;
    in_stride *= shape[d];
    out_stride *= out_shape[d];
  }
  ctx.set_output_shape(out, out_shape);
}

// Output rows of dimension d read input rows through the dimension's source map; the last dimension
// copies elements.
template <typename T>
void mirror_rows(const MirrorPadState& s, int d, const T* in, T* out) {
  const std::vector<int32_t>& src = s.source[d];
  const int64_t n = static_cast<int64_t>(src.size());
  if (d == s.rank - 1) {
    for (int64_t o = 0; o < n; ++o) out[o] = in[src[o]];
    return;
  }
  for (int64_t o = 0; o < n; ++o) mirror_rows(s, d + 1, in + src[o] * s.in_strides[d], out + o * s.out_strides[d]);
}

void mirror_pad_invoke(OpContext& ctx) {
  const auto& s = ctx.state<MirrorPadState>();
  if (ctx.element_count(ctx.output(0)) == 0) return;
  const void* in = ctx.data<void>(ctx.input(0));
  void* out = ctx.mutable_data<void>(ctx.output(0));
  with_element_type(s.element, [&](auto zero) {
    using T = decltype(zero);
    mirror_rows(s, 0, static_cast<const T*>(in), static_cast<T*>(out));
  });
}

constexpr OpDef kOps[] = {
    {BATON_OP_MIRROR_PAD, "MIRROR_PAD", 1, 3, mirror_pad_prepare, mirror_pad_invoke},
};

}  // namespace

std::span<const OpDef> mirror_pad_ops() { return kOps; }

}  // namespace baton::builtin
