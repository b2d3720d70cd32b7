// op-models-random.mjs - the one-op cases of tools/op-models.mjs for the random ops (RANDOM_UNIFORM,
// RANDOM_STANDARD_NORMAL, MULTINOMIAL, seeded: TFLite 2.9's Philox numbers are the expected outputs) and
// TFLite's legacy lookup ops over numeric tensors (HASHTABLE_LOOKUP, EMBEDDING_LOOKUP_SPARSE,
// LSH_PROJECTION). tools/op-models.mjs calls the default export with its helpers; it returns the names of
// the cases whose outputs change from one invoke to the next (the random ones), which
// tools/make-op-cases.sh also runs several times in one interpreter for the expected outputs of the later
// invokes (tools/tflite-invokes.c).
import {f32, i32} from './testgen/bytes.mjs';

// `given(NAME, [[shape, values, kind], ...])`: the inputs given as .npy, in model-input order (kind 'f32',
// 'i32' or 'i64').
export default function randomCases({add, simple, model, T, C, given}) {
  const repeated = [];

  // ---- RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL: float32 of the shape input's dims ----
  // Seeds as the schema's int64s: only one of the two set, negative, and above 32 bits (the key's and the
  // counter's upper words). Sizes that end in the middle of a Philox block (its unused words are dropped);
  // an odd normal count (TFLite computes the last pair's second value past its output's end).
  const random = (seed, seed2) => ['RandomOptions', {seed, seed2}];
  const randomCase = (name, op, seeds, shape, outShape, computed) => {
    repeated.push(name);
    add(name, op, 1, (n, v) => computed
      ? simple(n, op, v, random(...seeds), [T([shape.length], 'INT32'), T(outShape)], given(n, [[[shape.length], shape, 'i32']]))
      : simple(n, op, v, random(...seeds), [C([shape.length], 'INT32', i32(shape)), T(outShape)]));
  };
  randomCase('random_uniform_seeded', 'RANDOM_UNIFORM', [42, 7], [2, 3, 4], [2, 3, 4]);
  randomCase('random_uniform_partial_block', 'RANDOM_UNIFORM', [1, 0], [3, 5], [3, 5]);
  randomCase('random_uniform_seed2_only', 'RANDOM_UNIFORM', [0, 123], [9], [9]);
  randomCase('random_uniform_wide_seeds', 'RANDOM_UNIFORM', [-5, 87654321987], [2, 2, 2, 2], [2, 2, 2, 2]);
  randomCase('random_uniform_computed_shape', 'RANDOM_UNIFORM', [3, 4], [3, 7], [1, 1], true);
  randomCase('random_uniform_empty', 'RANDOM_UNIFORM', [8, 9], [2, 0], [2, 0]);
  randomCase('random_standard_normal_seeded', 'RANDOM_STANDARD_NORMAL', [42, 7], [4, 6], [4, 6]);
  randomCase('random_standard_normal_odd', 'RANDOM_STANDARD_NORMAL', [11, 0], [7], [7]);
  randomCase('random_standard_normal_many', 'RANDOM_STANDARD_NORMAL', [-1, -2], [3, 100], [3, 100]);
  randomCase('random_standard_normal_computed_shape', 'RANDOM_STANDARD_NORMAL', [5, 6], [2, 1, 5], [1, 1, 1], true);

  // ---- MULTINOMIAL: logits [rows, classes] float32, num_samples int32; int64 or int32 samples ----
  // Logits given: a sine pattern, or with -inf and NaN classes (never drawn) and a row of equal logits.
  // Three samples a row: rows share the generator's blocks (two words a sample), so a row starts mid-block.
  const multinomial = (name, seeds, rows, classes, samples, outType, opts = {}) => {
    repeated.push(name);
    add(name, 'MULTINOMIAL', 1, (n, v) => {
      const count = opts.computed ? T([], 'INT32') : C([], 'INT32', i32([samples]));
      const inputs = [];
      if (opts.logits) inputs.push([[rows, classes], opts.logits, 'f32']);
      else inputs.push([[rows, classes], Array.from({length: rows * classes}, (_, i) => Math.sin(i * 1.7) * 3), 'f32']);
      if (opts.computed) inputs.push([[], [samples], 'i32']);
      simple(n, 'MULTINOMIAL', v, random(...seeds), [T([rows, classes]), count, T(opts.computed ? [1, 1] : [rows, samples], outType)], given(n, inputs));
    });
  };
  multinomial('multinomial_i64', [42, 7], 3, 5, 10, 'INT64');
  multinomial('multinomial_i32_odd_samples', [9, 1], 4, 6, 3, 'INT32');
  multinomial('multinomial_nonfinite_logits', [17, 0], 3, 4, 8, 'INT64',
              {logits: [-Infinity, 0.5, NaN, 1, 2, 2, 2, 2, -1e30, Infinity, 0, -Infinity]});
  multinomial('multinomial_computed_samples', [0, 5], 2, 3, 7, 'INT32', {computed: true});

  // ---- HASHTABLE_LOOKUP: int32 lookups and ascending keys; values of any fixed-size type ----
  // Keys far apart (TFLite's comparator is a wrapping int32 difference), lookups that miss, rows of rank 2.
  const lookup = (name, keys, values, lookups) => add(name, 'HASHTABLE_LOOKUP', 1, (n, v) => model(n, 'HASHTABLE_LOOKUP', v, null,
      [T([lookups.length], 'INT32'), C([keys.length], 'INT32', i32(keys)), values,
       T([lookups.length, ...values.shape.slice(1)], values.type, values.q ? {q: values.q} : {}), T([lookups.length], 'UINT8')],
      {inputs: [0], outputs: [3, 4], opInputs: [0, 1, 2]}, given(n, [[[lookups.length], lookups, 'i32']])));
  lookup('hashtable_lookup_f32', [-3, 0, 5, 100], C([4, 2], 'FLOAT32', f32([1, 2, 3, 4, 5, 6, 7, 8])), [5, 1, -3, 100, 101, 0]);
  lookup('hashtable_lookup_i32_wide_keys', [-2147483647, -5, 7, 2147483647], C([4], 'INT32', i32([10, 20, 30, 40])),
         [2147483647, -2147483647, 7, -5, 0, -2147483648, 2147483646]);
  lookup('hashtable_lookup_u8_rows', [1, 2, 3, 5, 8], C([5, 3], 'UINT8', Array.from({length: 15}, (_, i) => i * 17), {q: [0.5, 3]}),
         [8, 4, 1, 3]);
  lookup('hashtable_lookup_i64', [0, 10], C([2, 1, 2], 'INT64', Array.from(new Uint8Array(new BigInt64Array([1n, -2n, 3n, 1n << 40n]).buffer))),
         [10, 10, 5]);
  lookup('hashtable_lookup_empty_lookups', [1, 2], C([2], 'FLOAT32', f32([0.5, 1.5])), []);

  // ---- EMBEDDING_LOOKUP_SPARSE: float32 params; SUM, MEAN, SQRTN ----
  // ids, indices and dense_shape constant unless computed; weights from the PRNG or given. A row of the
  // sparse tensor with no ids stays zero; lookups that come back to a row after another are combined
  // again (TFLite 2.9 divides that row twice).
  const els = (name, combiner, ids, indices, denseShape, params, paramShape, outShape, weights, computedShape) =>
    add(name, 'EMBEDDING_LOOKUP_SPARSE', 1, (n, v) => {
      const r = denseShape.length;
      const inputs = [];
      if (computedShape) inputs.push([[r], denseShape, 'i32']);
      if (weights) inputs.push([[ids.length], weights, 'f32']);
      simple(n, 'EMBEDDING_LOOKUP_SPARSE', v, ['EmbeddingLookupSparseOptions', {combiner}],
             [C([ids.length], 'INT32', i32(ids)), C([ids.length, r], 'INT32', i32(indices)),
              computedShape ? T([r], 'INT32') : C([r], 'INT32', i32(denseShape)), T([ids.length]),
              C(paramShape, 'FLOAT32', f32(params)), T(outShape)], inputs.length ? given(n, inputs) : []);
    });
  const params43 = Array.from({length: 12}, (_, i) => (i - 5) * 0.375);
  els('embedding_lookup_sparse_sum', 'SUM', [0, 3, 1, 2, 2], [0, 0, 0, 1, 1, 0, 2, 1, 2, 3], [3, 4], params43, [4, 3], [3, 3]);
  els('embedding_lookup_sparse_mean', 'MEAN', [1, 3, 0], [0, 0, 0, 2, 2, 1], [3, 3], params43, [4, 3], [3, 3], [2, 0.5, 1.5]);
  els('embedding_lookup_sparse_sqrtn_rank3', 'SQRTN', [4, 0, 2, 1, 3], [0, 0, 0, 0, 1, 1, 1, 0, 4, 1, 1, 0, 1, 1, 2], [2, 2, 5],
      Array.from({length: 20}, (_, i) => Math.cos(i) * 2), [5, 2, 2], [2, 2, 2, 2], [0.5, -1.25, 2, 0.75, 1]);
  els('embedding_lookup_sparse_rows_revisited', 'MEAN', [0, 1, 2, 3], [0, 0, 1, 0, 0, 1, 1, 1], [2, 2], params43, [4, 3], [2, 3],
      [1, 2, 4, 0.5]);
  els('embedding_lookup_sparse_computed_shape', 'SQRTN', [2, 1, 0], [1, 0, 1, 3, 2, 0], [4, 5], params43, [4, 3], [1, 1],
      [1, 2, 3], true);
  els('embedding_lookup_sparse_one_coordinate', 'SUM', [3, 0, 1], [0, 1, 2], [3], params43, [4, 3], [3]);

  // ---- LSH_PROJECTION: float32 seeds [functions, bits]; input rows of any fixed-size type; optional
  // float32 weights; SPARSE (an int32 per function) or DENSE (an int32 bit each). Row sizes that take each
  // length class of the fingerprint (keys of 5, 8, 20, 44 and 164 bytes: the seed's 4 and a row's).
  const seeds = (count, at) => f32(Array.from({length: count}, (_, i) => Math.sin((i + at) * 2.3) * 0.8));
  const lsh = (name, type, functions, bits, input, weight, peerArgs = []) => add(name, 'LSH_PROJECTION', 1, (n, v) => {
    const out = T([type === 'SPARSE' ? functions : functions * bits], 'INT32');
    const tensors = [C([functions, bits], 'FLOAT32', seeds(functions * bits, functions)), input];
    if (weight) tensors.push(weight);
    simple(n, 'LSH_PROJECTION', v, ['LSHProjectionOptions', {type}], [...tensors, out], peerArgs);
  });
  lsh('lsh_projection_sparse_i32', 'SPARSE', 3, 4, T([5], 'INT32'));
  lsh('lsh_projection_dense_u8', 'DENSE', 2, 5, T([6], 'UINT8'));
  lsh('lsh_projection_sparse_f32_rows_weighted', 'SPARSE', 4, 3, T([4, 4]), C([4], 'FLOAT32', f32([0.5, -1, 2, 0.25])));
  lsh('lsh_projection_dense_f32_weighted', 'DENSE', 3, 2, T([3, 10]), T([3]));
  lsh('lsh_projection_sparse_long_rows', 'SPARSE', 2, 6, T([2, 40]));
  lsh('lsh_projection_sparse_32_bits', 'SPARSE', 2, 32, T([3], 'INT64'));

  return repeated;
}
