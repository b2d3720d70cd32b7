// Ops that move elements without computing on them, by element size: MATRIX_DIAG (a vector onto the
// diagonal of a zero matrix), MATRIX_SET_DIAG (a matrix's diagonal replaced), REVERSE_SEQUENCE (the first
// seq_lengths[b] elements along one axis reversed, per batch) and DYNAMIC_UPDATE_SLICE (a block written
// into a copy of the operand at start indices clamped so it fits). 8-bit codes move unchanged, so the
// output keeps the input's scale and zero point.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/element_copy.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

// TFLite 2.9's diagonal kernels: other types (bool) fall into their float32 branch and overrun buffers.
constexpr std::initializer_list<baton_tensor_type> kDiagTypes = {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64,
                                                                 BATON_TYPE_INT16,   BATON_TYPE_INT8,  BATON_TYPE_UINT8};

// ---- MATRIX_DIAG: [..., n] -> [..., n, n] ----

void matrix_diag_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  ctx.require_type(input, "input", kDiagTypes);
  require_like_input(ctx, input, ctx.output(0));
  const auto in = ctx.shape(input);
  ctx.require(!in.empty(), "input must have rank 1 or more");
  std::vector<int32_t> out(in.begin(), in.end());
  out.push_back(in.back());
  ctx.set_output_shape(ctx.output(0), out);
}

void matrix_diag_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  const int64_t n = ctx.shape(input).back();
  const int64_t batches = n == 0 ? 0 : ctx.element_count(input) / n;
  with_element_type(element_size(ctx.type(input)), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ctx.data<T>(input);
    T* out = ctx.mutable_data<T>(output);
    std::memset(out, 0, static_cast<size_t>(ctx.element_count(output)) * sizeof(T));
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < n; ++i) out[(b * n + i) * n + i] = in[b * n + i];
    }
  });
}

// ---- MATRIX_SET_DIAG: input [..., m, n], diagonal [..., min(m, n)] ----

void matrix_set_diag_prepare(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* diagonal = ctx.input(1);
  ctx.require_type(input, "input", kDiagTypes);
  ctx.require(ctx.type(diagonal) == ctx.type(input), "diagonal type differs from the input's");
  require_like_input(ctx, input, ctx.output(0));
  const auto in = ctx.shape(input);
  const auto d = ctx.shape(diagonal);
  const size_t rank = in.size();
  ctx.require(rank >= 2, "input must have rank 2 or more");
  ctx.require(d.size() == rank - 1, "diagonal must have rank " + std::to_string(rank - 1));
  for (size_t i = 0; i + 2 < rank; ++i) ctx.require(d[i] == in[i], "diagonal and input differ in dimension " + std::to_string(i));
  ctx.require(d.back() == std::min(in[rank - 2], in[rank - 1]),
              "diagonal's last dimension must be the smaller of the input's last two");
  ctx.set_output_shape(ctx.output(0), in);
}

void matrix_set_diag_invoke(OpContext& ctx) {
  baton_tensor* input = ctx.input(0);
  baton_tensor* output = ctx.output(0);
  const auto in = ctx.shape(input);
  const int64_t rows = in[in.size() - 2], cols = in[in.size() - 1], len = std::min(rows, cols);
  const int64_t count = ctx.element_count(input);
  const int64_t batches = rows * cols == 0 ? 0 : count / (rows * cols);
  with_element_type(element_size(ctx.type(input)), [&](auto zero) {
    using T = decltype(zero);
    const T* src = ctx.data<T>(input);
    const T* diag = ctx.data<T>(ctx.input(1));
    T* out = ctx.mutable_data<T>(output);
    if (out != src) std::memcpy(out, src, static_cast<size_t>(count) * sizeof(T));
    for (int64_t b = 0; b < batches; ++b) {
      for (int64_t i = 0; i < len; ++i) out[(b * rows + i) * cols + i] = diag[b * len + i];
    }
  });
}

// ---- REVERSE_SEQUENCE ----

struct ReverseSequenceState : OpState {
  int64_t seq_size = 0, seq_stride = 0, batch_size = 0, batch_stride = 0;
};

void reverse_sequence_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(3, "REVERSE_SEQUENCE's seq_dim and batch_dim");
  baton_tensor* input = ctx.input(0);
  baton_tensor* lengths = ctx.input(1);
  // TFLite 2.9 refuses int8 and bool.
  ctx.require_type(input, "input", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT16, BATON_TYPE_UINT8});
  ctx.require_type(lengths, "seq_lengths", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  require_like_input(ctx, input, ctx.output(0));
  const auto in = ctx.shape(input);
  const int rank = static_cast<int>(in.size());
  const auto& o = ctx.options().u.reverse_sequence;
  const int seq = normalize_axis(ctx, o.seq_dim, rank);
  const int batch = normalize_axis(ctx, o.batch_dim, rank);
  ctx.require(seq != batch, "seq_dim and batch_dim are the same axis");
  ctx.require_rank(lengths, "seq_lengths", 1);
  ctx.require(ctx.shape(lengths)[0] == in[batch], "seq_lengths has " + std::to_string(ctx.shape(lengths)[0]) +
                                                      " values, the batch axis " + std::to_string(in[batch]));
  auto& s = ctx.state<ReverseSequenceState>();
  auto stride = [&](int axis) {
    int64_t n = 1;
    for (int d = axis + 1; d < rank; ++d) n *= in[d];
    return n;
  };
  s.seq_size = in[seq];
  s.seq_stride = stride(seq);
  s.batch_size = in[batch];
  s.batch_stride = stride(batch);
  ctx.set_output_shape(ctx.output(0), in);
}

void reverse_sequence_invoke(OpContext& ctx) {
  const auto& s = ctx.state<ReverseSequenceState>();
  baton_tensor* input = ctx.input(0);
  baton_tensor* lengths = ctx.input(1);
  std::vector<int64_t> len(static_cast<size_t>(s.batch_size));
  for (int64_t b = 0; b < s.batch_size; ++b) {
    len[b] = ctx.type(lengths) == BATON_TYPE_INT32 ? ctx.data<int32_t>(lengths)[b] : ctx.data<int64_t>(lengths)[b];
    if (len[b] < 0 || len[b] > s.seq_size) {
      ctx.fail(BATON_INVALID_ARGUMENT, "seq_lengths[" + std::to_string(b) + "] = " + std::to_string(len[b]) +
                                           " is outside [0, " + std::to_string(s.seq_size) + "]");
    }
  }
  const int64_t count = ctx.element_count(input);
  with_element_type(element_size(ctx.type(input)), [&](auto zero) {
    using T = decltype(zero);
    const T* in = ctx.data<T>(input);
    T* out = ctx.mutable_data<T>(ctx.output(0));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t pos = (i / s.seq_stride) % s.seq_size;
      const int64_t n = len[(i / s.batch_stride) % s.batch_size];
      out[i] = pos < n ? in[i + (n - 1 - 2 * pos) * s.seq_stride] : in[i];
    }
  });
}

// ---- DYNAMIC_UPDATE_SLICE ----

void dynamic_update_slice_prepare(OpContext& ctx) {
  baton_tensor* operand = ctx.input(0);
  baton_tensor* update = ctx.input(1);
  baton_tensor* start = ctx.input(2);
  // TFLite 2.9 fails uint8, int16 and bool at invoke, and takes int32 start indices only.
  ctx.require_type(operand, "operand", {BATON_TYPE_FLOAT32, BATON_TYPE_INT32, BATON_TYPE_INT64, BATON_TYPE_INT8});
  ctx.require(ctx.type(update) == ctx.type(operand), "update type differs from the operand's");
  ctx.require_type(start, "start_indices", {BATON_TYPE_INT32});
  require_like_input(ctx, operand, ctx.output(0));
  const auto op = ctx.shape(operand);
  const auto up = ctx.shape(update);
  ctx.require(up.size() == op.size(), "update and operand differ in rank");
  for (size_t d = 0; d < op.size(); ++d) {
    ctx.require(up[d] <= op[d], "update is larger than the operand in dimension " + std::to_string(d));
  }
  ctx.require_rank(start, "start_indices", 1);
  ctx.require(ctx.shape(start)[0] == static_cast<int32_t>(op.size()), "start_indices must have one value per operand dimension");
  ctx.set_output_shape(ctx.output(0), op);
}

void dynamic_update_slice_invoke(OpContext& ctx) {
  baton_tensor* operand = ctx.input(0);
  baton_tensor* update = ctx.input(1);
  const auto op = ctx.shape(operand);
  const auto up = ctx.shape(update);
  const int rank = static_cast<int>(op.size());
  const int32_t* start = ctx.data<int32_t>(ctx.input(2));
  // Each start index clamped to [0, operand - update], as XLA's DynamicUpdateSlice does.
  std::vector<int64_t> origin(rank), stride(rank, 1);
  for (int d = 0; d < rank; ++d) origin[d] = std::clamp<int64_t>(start[d], 0, op[d] - up[d]);
  for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * op[d + 1];
  const int64_t count = ctx.element_count(operand), updates = ctx.element_count(update);
  with_element_type(element_size(ctx.type(operand)), [&](auto zero) {
    using T = decltype(zero);
    const T* src = ctx.data<T>(operand);
    const T* u = ctx.data<T>(update);
    T* out = ctx.mutable_data<T>(ctx.output(0));
    if (out != src) std::memcpy(out, src, static_cast<size_t>(count) * sizeof(T));
    std::vector<int64_t> at(rank, 0);  // position in the update, last dimension fastest
    for (int64_t i = 0; i < updates; ++i) {
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) offset += (origin[d] + at[d]) * stride[d];
      out[offset] = u[i];
      for (int d = rank - 1; d >= 0 && ++at[d] == up[d]; --d) at[d] = 0;
    }
  });
}

constexpr OpDef kOps[] = {
    {BATON_OP_MATRIX_DIAG, "MATRIX_DIAG", 1, 1, matrix_diag_prepare, matrix_diag_invoke},
    {BATON_OP_MATRIX_SET_DIAG, "MATRIX_SET_DIAG", 1, 1, matrix_set_diag_prepare, matrix_set_diag_invoke},
    {BATON_OP_REVERSE_SEQUENCE, "REVERSE_SEQUENCE", 1, 1, reverse_sequence_prepare, reverse_sequence_invoke},
    {BATON_OP_DYNAMIC_UPDATE_SLICE, "DYNAMIC_UPDATE_SLICE", 1, 6, dynamic_update_slice_prepare, dynamic_update_slice_invoke},
};

}  // namespace

std::span<const OpDef> movement_ops() { return kOps; }

}  // namespace baton::builtin
