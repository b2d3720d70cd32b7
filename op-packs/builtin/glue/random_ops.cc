// RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL, as TFLite 2.9 runs them: each node owns a
// Philox4x32-10 generator (kernels/random.h), seeded from the node's seed and seed2 (their low 32 bits,
// as TFLite 2.9 reads them) when the interpreter prepares it at load (and again after an input resize,
// as TFLite's AllocateTensors prepares every node again); both seeds 0 seed it from the system's entropy.
// Every invoke draws on from where the last one left off, so a second invoke gives new numbers, the ones
// TFLite gives. A computed shape (or num_samples) makes the output dynamic: the prepare at invoke that
// reads it does not seed again. The runtime never folds these nodes (model.h, is_random_op).
#include <string>
#include <vector>

#include "glue/op_context.h"
#include "kernels/random.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {
namespace {

struct RandomState : OpState {
  Philox4x32 rng;
};

// Seeds the node's generator unless this prepare runs at invoke for values that only then exist (the host
// prepares a node with a dynamic output again before each run: the generator keeps its place).
void seed_unless_at_invoke(OpContext& ctx, std::initializer_list<baton_tensor*> value_inputs) {
  ctx.require_host_abi_minor(5, "the random ops' seeds");
  for (baton_tensor* t : value_inputs) {
    if (!ctx.is_constant(t) && ctx.data<void>(t)) return;
  }
  // TFLite 2.9 keeps the schema's int64 seeds in ints: only their low 32 bits count, sign-extended (so
  // seeds that are multiples of 2^32 read as 0).
  const baton_random_options& o = ctx.options().u.random;
  ctx.state<RandomState>().rng = seeded_philox(static_cast<int32_t>(o.seed), static_cast<int32_t>(o.seed2));
}

// ---- RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL: a float32 tensor of the shape the int32 input gives ----

void random_prepare(OpContext& ctx) {
  ctx.require(ctx.input_count() == 1 && ctx.output_count() == 1, "takes one input and gives one output");
  baton_tensor* shape = ctx.input(0);
  ctx.require_type(shape, "shape", {BATON_TYPE_INT32});
  ctx.require_rank(shape, "shape", 1);
  ctx.require_float(ctx.output(0), "output");
  seed_unless_at_invoke(ctx, {shape});
  const auto dims = ctx.shape_ints(shape, "shape (input 0)");
  if (!dims) return;
  std::vector<int32_t> out;
  for (int64_t d : *dims) {
    ctx.require(d >= 0, "dimension " + std::to_string(d) + " is negative");
    out.push_back(static_cast<int32_t>(d));
  }
  ctx.set_output_shape(ctx.output(0), out);
}

void random_uniform_invoke(OpContext& ctx) {
  baton_tensor* out = ctx.output(0);
  random_uniform(ctx.state<RandomState>().rng, ctx.mutable_data<float>(out), ctx.element_count(out));
}

void random_standard_normal_invoke(OpContext& ctx) {
  baton_tensor* out = ctx.output(0);
  random_standard_normal(ctx.state<RandomState>().rng, ctx.mutable_data<float>(out), ctx.element_count(out));
}

// ---- MULTINOMIAL: logits [rows, classes] float32, num_samples an int32 scalar; int32 or int64 out ----

void multinomial_prepare(OpContext& ctx) {
  ctx.require(ctx.input_count() == 2 && ctx.output_count() == 1, "takes two inputs and gives one output");
  baton_tensor* logits = ctx.input(0);
  baton_tensor* samples = ctx.input(1);
  ctx.require_float(logits, "logits");
  ctx.require_rank(logits, "logits", 2);
  ctx.require(ctx.shape(logits)[1] > 0, "logits need at least one class");
  ctx.require_type(samples, "num_samples", {BATON_TYPE_INT32});
  ctx.require_rank(samples, "num_samples", 0);
  ctx.require_type(ctx.output(0), "output", {BATON_TYPE_INT32, BATON_TYPE_INT64});
  seed_unless_at_invoke(ctx, {logits, samples});
  const auto count = ctx.shape_ints(samples, "num_samples (input 1)");
  if (!count) return;
  const int64_t n = (*count)[0];
  ctx.require(n >= 0, "num_samples " + std::to_string(n) + " is negative");
  ctx.set_output_shape(ctx.output(0), {ctx.shape(logits)[0], static_cast<int32_t>(n)});
}

void multinomial_invoke(OpContext& ctx) {
  baton_tensor* logits = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  const auto dims = ctx.shape(out);
  Philox4x32& rng = ctx.state<RandomState>().rng;
  const int classes = ctx.shape(logits)[1];
  if (ctx.type(out) == BATON_TYPE_INT64) {
    multinomial(rng, ctx.data<float>(logits), dims[0], classes, dims[1], ctx.mutable_data<int64_t>(out));
  } else {
    multinomial(rng, ctx.data<float>(logits), dims[0], classes, dims[1], ctx.mutable_data<int32_t>(out));
  }
}

constexpr OpDef kOps[] = {
    {BATON_OP_RANDOM_STANDARD_NORMAL, "RANDOM_STANDARD_NORMAL", 1, 1, random_prepare, random_standard_normal_invoke},
    {BATON_OP_RANDOM_UNIFORM, "RANDOM_UNIFORM", 1, 1, random_prepare, random_uniform_invoke},
    {BATON_OP_MULTINOMIAL, "MULTINOMIAL", 1, 1, multinomial_prepare, multinomial_invoke},
};

}  // namespace

std::span<const OpDef> random_ops() { return kOps; }

}  // namespace baton::builtin
