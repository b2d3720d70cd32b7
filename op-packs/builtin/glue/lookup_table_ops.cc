// TFLite's legacy text-model ops: HASHTABLE_LOOKUP (table rows by int32 key, any fixed-size value type or
// a vector of strings, with a hit flag per lookup), EMBEDDING_LOOKUP_SPARSE (float32 embeddings of a
// sparse tensor of ids, combined per row; its output shape comes from the dense_shape input, dynamic when
// that is computed) and LSH_PROJECTION (bits of locality-sensitive hashes of an input's rows; a string
// input is hashed as TFLite 2.9 hashes it, in equal slices of its packed bytes).
#include <algorithm>
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "glue/string_output.h"
#include "kernels/keyed_lookup.h"
#include "kernels/lsh_projection.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

int64_t row_count(const OpContext& ctx, const baton_tensor* t) { return ctx.shape(t).empty() ? 1 : ctx.shape(t)[0]; }

// Bytes of one row (the first dimension's slice) of a tensor of a fixed-size type.
size_t row_bytes(const OpContext& ctx, const baton_tensor* t) {
  size_t n = element_size(ctx.type(t));
  const auto dims = ctx.shape(t);
  for (size_t d = 1; d < dims.size(); ++d) n *= static_cast<size_t>(dims[d]);
  return n;
}

void require_fixed_size(const OpContext& ctx, const baton_tensor* t, const char* role) {
  ctx.require(element_size(ctx.type(t)) > 0, std::string(role) + " type " + type_name(ctx.type(t)) + " not supported");
}

struct StringLookupState : OpState {
  std::vector<uint8_t> hits;
};

// String values (a vector, as TFLite 2.9 takes them): the strings are found in prepare, where their size
// is known, with the numeric lookup run on the values' row numbers; a miss gives an empty string.
void prepare_string_lookup(OpContext& ctx) {
  baton_tensor* lookups = ctx.input(0);
  baton_tensor* keys = ctx.input(1);
  baton_tensor* values = ctx.input(2);
  baton_tensor* out = ctx.output(0);
  ctx.require_rank(values, "string values", 1);
  ctx.set_output_shape(out, {ctx.shape(lookups)[0]});
  ctx.set_output_shape(ctx.output(1), {ctx.shape(lookups)[0]});
  if (!ctx.inputs_have_values()) return ctx.set_dynamic(out);
  const int64_t count = ctx.shape(lookups)[0], rows = ctx.shape(keys)[0];
  std::vector<int32_t> row_numbers(static_cast<size_t>(rows)), found(static_cast<size_t>(count));
  for (int64_t r = 0; r < rows; ++r) row_numbers[static_cast<size_t>(r)] = static_cast<int32_t>(r);
  auto& hits = ctx.state<StringLookupState>().hits;
  hits.assign(static_cast<size_t>(count), 0);
  hashtable_lookup(ctx.data<int32_t>(lookups), count, ctx.data<int32_t>(keys), rows,
                   reinterpret_cast<const uint8_t*>(row_numbers.data()), sizeof(int32_t),
                   reinterpret_cast<uint8_t*>(found.data()), hits.data());
  const strings::PackedStrings source(ctx.data<void>(values));
  strings::PackedWriter writer;
  for (int64_t i = 0; i < count; ++i) writer.add(hits[static_cast<size_t>(i)] ? source.at(found[static_cast<size_t>(i)]) : "");
  set_string_output(ctx, out, writer);
}

void string_lookup_invoke(OpContext& ctx) {
  write_string_output(ctx, ctx.output(0));
  const auto& hits = ctx.state<StringLookupState>().hits;
  std::copy(hits.begin(), hits.end(), ctx.mutable_data<uint8_t>(ctx.output(1)));
}

// ---- HASHTABLE_LOOKUP: lookups [n] int32, keys [rows] int32 ascending, values [rows, ...] ----

void hashtable_lookup_prepare(OpContext& ctx) {
  ctx.require(ctx.input_count() == 3 && ctx.output_count() == 2, "takes three inputs and gives two outputs");
  baton_tensor* lookups = ctx.input(0);
  baton_tensor* keys = ctx.input(1);
  baton_tensor* values = ctx.input(2);
  baton_tensor* out = ctx.output(0);
  baton_tensor* hits = ctx.output(1);
  ctx.require_type(lookups, "lookups", {BATON_TYPE_INT32});
  ctx.require_rank(lookups, "lookups", 1);
  ctx.require_type(keys, "keys", {BATON_TYPE_INT32});
  ctx.require_rank(keys, "keys", 1);
  ctx.require(ctx.rank(values) >= 1, "values must have rank 1 or more");
  ctx.require(ctx.shape(values)[0] == ctx.shape(keys)[0], "values have " + std::to_string(ctx.shape(values)[0]) +
                                                               " rows for " + std::to_string(ctx.shape(keys)[0]) + " keys");
  ctx.require(ctx.type(out) == ctx.type(values), "output type differs from the values'");
  ctx.require_type(hits, "hits (output 1)", {BATON_TYPE_UINT8});
  if (ctx.type(values) == BATON_TYPE_STRING) {
    ctx.set_invoke(string_lookup_invoke);
    return prepare_string_lookup(ctx);
  }
  require_fixed_size(ctx, values, "values");
  std::vector<int32_t> dims(ctx.shape(values).begin(), ctx.shape(values).end());
  dims[0] = ctx.shape(lookups)[0];
  ctx.set_output_shape(out, dims);
  ctx.set_output_shape(hits, {ctx.shape(lookups)[0]});
}

void hashtable_lookup_invoke(OpContext& ctx) {
  baton_tensor* lookups = ctx.input(0);
  baton_tensor* keys = ctx.input(1);
  baton_tensor* values = ctx.input(2);
  hashtable_lookup(ctx.data<int32_t>(lookups), ctx.shape(lookups)[0], ctx.data<int32_t>(keys), ctx.shape(keys)[0],
                   ctx.data<uint8_t>(values), row_bytes(ctx, values), ctx.mutable_data<uint8_t>(ctx.output(0)),
                   ctx.mutable_data<uint8_t>(ctx.output(1)));
}

// ---- EMBEDDING_LOOKUP_SPARSE: ids [n], indices [n, r], dense_shape [r] (int32), weights [n],
// params [rows, e1, ...] (float32); output [dense_shape[0..r-2], e1, ...] float32 ----

void embedding_lookup_sparse_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(5, "EMBEDDING_LOOKUP_SPARSE's combiner");
  ctx.require(ctx.input_count() == 5 && ctx.output_count() == 1, "takes five inputs and gives one output");
  baton_tensor* ids = ctx.input(0);
  baton_tensor* indices = ctx.input(1);
  baton_tensor* dense_shape = ctx.input(2);
  baton_tensor* weights = ctx.input(3);
  baton_tensor* params = ctx.input(4);
  ctx.require_type(ids, "ids", {BATON_TYPE_INT32});
  ctx.require_rank(ids, "ids", 1);
  ctx.require_type(indices, "indices", {BATON_TYPE_INT32});
  ctx.require_rank(indices, "indices", 2);
  ctx.require_type(dense_shape, "dense_shape", {BATON_TYPE_INT32});
  ctx.require_rank(dense_shape, "dense_shape", 1);
  ctx.require_float(weights, "weights");
  ctx.require_rank(weights, "weights", 1);
  ctx.require_float(params, "params");
  ctx.require(ctx.rank(params) >= 2, "params must have rank 2 or more");
  ctx.require_float(ctx.output(0), "output");
  const int32_t count = ctx.shape(ids)[0];
  ctx.require(ctx.shape(indices)[0] == count && ctx.shape(weights)[0] == count,
              "ids, indices and weights must have one row per lookup");
  const int32_t lookup_rank = ctx.shape(indices)[1];
  ctx.require(lookup_rank >= 1, "indices need at least one coordinate");
  ctx.require(ctx.shape(dense_shape)[0] == lookup_rank, "dense_shape has " + std::to_string(ctx.shape(dense_shape)[0]) +
                                                            " dimensions, indices " + std::to_string(lookup_rank));
  const int32_t combiner = ctx.options().u.embedding_lookup_sparse.combiner;
  ctx.require(combiner >= BATON_COMBINER_SUM && combiner <= BATON_COMBINER_SQRTN,
              "combiner " + std::to_string(combiner) + " not supported");
  const auto shape = ctx.shape_ints(dense_shape, "dense_shape (input 2)");
  if (!shape) return;
  std::vector<int32_t> dims;
  for (int32_t k = 0; k + 1 < lookup_rank; ++k) {
    const int64_t d = (*shape)[static_cast<size_t>(k)];
    ctx.require(d >= 0, "dense_shape dimension " + std::to_string(d) + " is negative");
    dims.push_back(static_cast<int32_t>(d));
  }
  for (size_t d = 1; d < ctx.shape(params).size(); ++d) dims.push_back(ctx.shape(params)[d]);
  ctx.set_output_shape(ctx.output(0), dims);
}

void embedding_lookup_sparse_invoke(OpContext& ctx) {
  baton_tensor* indices = ctx.input(1);
  baton_tensor* params = ctx.input(4);
  baton_tensor* out = ctx.output(0);
  const int64_t embedding = ctx.element_count(params) / std::max<int64_t>(1, ctx.shape(params)[0]);
  int64_t out_rows = 1;
  const int lookup_rank = ctx.shape(indices)[1];
  const int32_t* dense_shape = ctx.data<int32_t>(ctx.input(2));
  for (int k = 0; k + 1 < lookup_rank; ++k) out_rows *= dense_shape[k];
  const std::string error = embedding_lookup_sparse(
      ctx.data<int32_t>(ctx.input(0)), ctx.data<int32_t>(indices), ctx.shape(indices)[0], lookup_rank, dense_shape,
      ctx.data<float>(ctx.input(3)), ctx.data<float>(params), ctx.shape(params)[0], embedding,
      static_cast<Combiner>(ctx.options().u.embedding_lookup_sparse.combiner), ctx.mutable_data<float>(out), out_rows);
  if (!error.empty()) ctx.fail(BATON_INVALID_ARGUMENT, error);
}

// ---- LSH_PROJECTION: hash [functions, bits] float32, input [rows, ...] of any fixed-size type, optional
// weight [rows] float32; int32 output [functions] (SPARSE) or [functions * bits] (DENSE) ----

constexpr int32_t kLshSparse = 1;
constexpr int32_t kLshDense = 2;

void lsh_projection_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(5, "LSH_PROJECTION's type");
  ctx.require((ctx.input_count() == 2 || ctx.input_count() == 3) && ctx.output_count() == 1,
              "takes two or three inputs and gives one output");
  baton_tensor* hash = ctx.input(0);
  baton_tensor* input = ctx.input(1);
  ctx.require_float(hash, "hash");
  ctx.require_rank(hash, "hash", 2);
  const int32_t functions = ctx.shape(hash)[0], bits = ctx.shape(hash)[1];
  ctx.require(bits <= 32, "more than 32 bits per hash function (" + std::to_string(bits) + ")");
  ctx.require(ctx.rank(input) >= 1, "input must have rank 1 or more");
  if (ctx.type(input) != BATON_TYPE_STRING) require_fixed_size(ctx, input, "input");
  if (baton_tensor* weight = ctx.optional_input(2)) {
    ctx.require_float(weight, "weight");
    ctx.require_rank(weight, "weight", 1);
    ctx.require(ctx.shape(weight)[0] == ctx.shape(input)[0], "weight has " + std::to_string(ctx.shape(weight)[0]) +
                                                                 " values for " + std::to_string(ctx.shape(input)[0]) + " input rows");
  }
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_INT32});
  const int32_t type = ctx.options().u.lsh_projection.type;
  ctx.require(type == kLshSparse || type == kLshDense, "projection type " + std::to_string(type) +
                                                           " not supported (SPARSE or DENSE)");
  ctx.set_output_shape(ctx.output(0), {type == kLshSparse ? functions : functions * bits});
}

void lsh_projection_invoke(OpContext& ctx) {
  baton_tensor* hash = ctx.input(0);
  baton_tensor* input = ctx.input(1);
  baton_tensor* weight = ctx.optional_input(2);
  // Rows are equal slices of the input's bytes; a string input's are slices of its packed bytes (count,
  // offsets and all), as in TFLite 2.9. An input of no rows hashes no bytes, however wide its rows say
  // they are.
  const int64_t rows = row_count(ctx, input);
  const size_t bytes_per_row = rows > 0 ? ctx.api().tensor_byte_size(input) / static_cast<size_t>(rows) : 0;
  const LshInput in{ctx.data<uint8_t>(input), rows, bytes_per_row, weight ? ctx.data<float>(weight) : nullptr};
  const int functions = ctx.shape(hash)[0], bits = ctx.shape(hash)[1];
  int32_t* out = ctx.mutable_data<int32_t>(ctx.output(0));
  if (ctx.options().u.lsh_projection.type == kLshSparse) {
    lsh_projection_sparse(ctx.data<float>(hash), functions, bits, in, out);
  } else {
    lsh_projection_dense(ctx.data<float>(hash), functions, bits, in, out);
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_HASHTABLE_LOOKUP, "HASHTABLE_LOOKUP", 1, 1, hashtable_lookup_prepare, hashtable_lookup_invoke},
    {BATON_OP_EMBEDDING_LOOKUP_SPARSE, "EMBEDDING_LOOKUP_SPARSE", 1, 1, embedding_lookup_sparse_prepare,
     embedding_lookup_sparse_invoke},
    {BATON_OP_LSH_PROJECTION, "LSH_PROJECTION", 1, 1, lsh_projection_prepare, lsh_projection_invoke},
};

}  // namespace

std::span<const OpDef> lookup_table_ops() { return kOps; }

}  // namespace baton::builtin
