// String outputs (ABI 1.7). A string tensor's byte size comes from its contents, so an op that writes
// one computes its strings in prepare: the host prepares such a node again at every invoke, once its
// inputs have their values (every non-constant string tensor is dynamic), and invoke copies the kept
// bytes out. At load, where an input has no value yet, the output is only marked dynamic.
//
// The ops that move strings (GATHER, GATHER_ND, SLICE, STRIDED_SLICE, TILE) keep their own plans: they
// run their move on the input's element indices (a string moves as its int32 index) and the strings
// follow the indices, so each op's shape and index rules are written once for every type.
#ifndef BATON_BUILTIN_GLUE_STRING_OUTPUT_H
#define BATON_BUILTIN_GLUE_STRING_OUTPUT_H

#include <cstdint>
#include <numeric>
#include <vector>

#include "baton/string_tensor.hpp"
#include "glue/op_context.h"

namespace baton::builtin {

// Element size for ops that move elements: a string moves as its int32 index.
inline size_t move_element_size(baton_tensor_type type) {
  return type == BATON_TYPE_STRING ? sizeof(int32_t) : element_size(type);
}

// Sets the byte size of string output `out` (its shape is set) to the writer's and keeps the bytes for
// invoke, which writes them with write_string_output; fails on a host older than ABI 1.7.
void set_string_output(OpContext& ctx, baton_tensor* out, const strings::PackedWriter& writer);
void write_string_output(OpContext& ctx, baton_tensor* out);
// The invoke of an op whose only output is a string tensor.
void string_output_invoke(OpContext& ctx);

// Ends the prepare of an op that gives string input 0 another shape (RESHAPE, SQUEEZE, EXPAND_DIMS): the
// output is the input's bytes.
void prepare_string_copy(OpContext& ctx);

// Ends the prepare of a movement op on string input `in` (after the output shape is set): move(from,
// to) moves int32 elements from `from` (the input's element count of them) to `to` (the output's) as the
// op moves any element. Without the inputs' values yet, marks the output dynamic.
template <typename Move>
void prepare_string_move(OpContext& ctx, baton_tensor* in, Move&& move) {
  baton_tensor* out = ctx.output(0);
  if (!ctx.inputs_have_values()) return ctx.set_dynamic(out);
  std::vector<int32_t> from(static_cast<size_t>(ctx.element_count(in)));
  std::iota(from.begin(), from.end(), 0);
  std::vector<int32_t> to(static_cast<size_t>(ctx.element_count(out)));
  move(from.data(), to.data());
  const strings::PackedStrings source(ctx.data<void>(in));
  strings::PackedWriter writer;
  for (int32_t i : to) writer.add(source.at(i));
  set_string_output(ctx, out, writer);
  ctx.set_invoke(string_output_invoke);
}

}  // namespace baton::builtin

#endif  // BATON_BUILTIN_GLUE_STRING_OUTPUT_H
