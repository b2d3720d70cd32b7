#!/usr/bin/env node
// string-models.mjs - write the string cases: small TFLite models (as flatc JSON) whose tensors hold
// strings, each with its input files, for tools/make-string-cases.sh.
//
//   node tools/string-models.mjs OUT_DIR
//
// For each case NAME it writes OUT_DIR/NAME.json and OUT_DIR/NAME.inputs (the input files in order, one
// per line), and the input files OUT_DIR/NAME.in_I.str (a string input: TFLite's packed buffer, an int32
// count, count + 1 int32 offsets, the bytes) or NAME.in_I.npy (a numeric one). The ops are those of
// TFLite 2.9 that take or give strings: HASHTABLE_LOOKUP's string values, LSH_PROJECTION's string input,
// SKIP_GRAM, EQUAL / NOT_EQUAL, GATHER, GATHER_ND, FILL, SLICE, STRIDED_SLICE, TILE, the reshapes, SHAPE,
// RANK, and the hash tables of the lookup ops (HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND,
// HASHTABLE_SIZE). The others refuse strings in TFLite 2.9, as GATHER does params of rank 2 and
// HASHTABLE_LOOKUP string values of rank 2. The strings mix empty ones, spaces, bytes past ASCII and
// lengths that are not a multiple of 4. Everything is fixed here, so a rerun writes the same files.
import fs from 'node:fs';
import path from 'node:path';

import {f32, i32, i64} from './testgen/bytes.mjs';
import {npyBytes} from './testgen/npy.mjs';
import {OperatorCodes, model, operator, outDirArgs, tensor, writeJson} from './testgen/tflite-json.mjs';

let {outDir} = outDirArgs('string-models.mjs');

// TFLite's packed string buffer.
function packed(strings) {
  const texts = strings.map((s) => Buffer.from(s, 'utf8'));
  const header = 4 * (texts.length + 2);
  const out = [...i32([texts.length])];
  let offset = header;
  const offsets = [offset];
  for (const t of texts) offsets.push(offset += t.length);
  out.push(...i32(offsets));
  for (const t of texts) out.push(...t);
  return out;
}

// `tensors`: [{shape, type, data (constant bytes), value (an input's: strings, or [descr, bytes])}];
// `ops`: [[op, inputs, outputs, options]], options as [type, table]; inputs are the tensors with a
// value, in order; the outputs are given. `more`: further subgraphs [{tensors, ops}] (without inputs or
// outputs: what a CALL_ONCE runs).
function write(name, tensors, ops, outputs, more = []) {
  const buffers = [{}];
  const inputs = [];
  const files = [];
  const tensorsOf = (list) => list.map((t, i) => {
    if (t.value) {
      const k = inputs.length;
      inputs.push(i);
      if (t.type === 'STRING') {
        files.push(`${name}.in_${k}.str`);
        fs.writeFileSync(path.join(outDir, files.at(-1)), Buffer.from(packed(t.value)));
      } else {
        files.push(`${name}.in_${k}.npy`);
        fs.writeFileSync(path.join(outDir, files.at(-1)), npyBytes(t.value[0], t.shape, t.value[1]));
      }
    }
    return tensor(t, `t${i}`, buffers);
  });
  const ts = tensorsOf(tensors);
  const codes = new OperatorCodes();
  const operatorsOf = (list) => list.map(([op, opInputs, opOutputs, options]) =>
    operator(codes.index(op), opInputs, opOutputs, options));
  const subgraphs = [{tensors: ts, inputs, outputs, operators: operatorsOf(ops), name: 'main'}];
  more.forEach((g, k) => subgraphs.push({tensors: tensorsOf(g.tensors), inputs: [], outputs: [],
                                         operators: operatorsOf(g.ops), name: `init${k}`}));
  writeJson(path.join(outDir, `${name}.json`), model(`baton string case ${name}`, codes.list, subgraphs, buffers));
  fs.writeFileSync(path.join(outDir, `${name}.inputs`), files.join('\n') + '\n');
}

// One op whose inputs are tensors 0..n-2 and whose output is the last.
function one(name, op, tensors, options, outputs) {
  const last = tensors.length - 1;
  const outs = outputs ?? [last];
  const ins = [...Array(tensors.length - outs.length).keys()];
  write(name, tensors, [[op, ins, outs, options]], outs);
}

const S = (shape, value) => ({shape, type: 'STRING', value});
const CS = (shape, strings) => ({shape, type: 'STRING', data: packed(strings)});
const OS = (shape) => ({shape, type: 'STRING'});
const I = (shape, values) => ({shape, type: 'INT32', value: ['<i4', i32(values)]});
const CI = (shape, values) => ({shape, type: 'INT32', data: i32(values)});
const T = (shape, type) => ({shape, type});
const I64 = (shape, values) => ({shape, type: 'INT64', value: ['<i8', i64(values)]});
const CI64 = (shape, values) => ({shape, type: 'INT64', data: i64(values)});

const words = ['alpha', '', 'beta gamma', 'zeta', 'ünïcödé', 'x', 'the end', 'ab'];

// ---- HASHTABLE_LOOKUP: string values; misses give an empty string and a 0 hit ----
one('hashtable_lookup_str', 'HASHTABLE_LOOKUP',
    [I([6], [3, 1, 9, -2, 7, 3]), CI([4], [1, 3, 5, 7]), CS([4], ['one', 'three', '', 'seven and a half']),
     OS([6]), T([6], 'UINT8')], null, [3, 4]);

// ---- LSH_PROJECTION: a string input is hashed as TFLite does it, in equal slices of its raw bytes ----
const hash = f32([0.1, -0.7, 0.33, 0.9, -0.25, 0.5, 0.77, -0.1]);
one('lsh_projection_str_sparse', 'LSH_PROJECTION',
    [{shape: [4, 2], type: 'FLOAT32', data: hash}, S([3], ['hello', 'world', 'again']), T([4], 'INT32')],
    ['LSHProjectionOptions', {type: 'SPARSE'}]);
one('lsh_projection_str_dense_weighted', 'LSH_PROJECTION',
    [{shape: [4, 2], type: 'FLOAT32', data: hash}, S([5], words.slice(0, 5)),
     {shape: [5], type: 'FLOAT32', data: f32([0.5, 1, -2, 0.25, 3])}, T([8], 'INT32')],
    ['LSHProjectionOptions', {type: 'DENSE'}]);

// ---- SKIP_GRAM: n-grams of a sentence's words, skipping up to max_skip_size words between them ----
const sentence = 'the  quick brown\tfox jumps over the lazy dog';
const skip = (n, s, all) => ['SkipGramOptions', {ngram_size: n, max_skip_size: s, include_all_ngrams: all}];
one('skip_gram_2_skip1', 'SKIP_GRAM', [S([1], [sentence]), OS([1])], skip(2, 1, false));
one('skip_gram_3_skip2_all', 'SKIP_GRAM', [S([1], [sentence]), OS([1])], skip(3, 2, true));
one('skip_gram_1_skip0', 'SKIP_GRAM', [S([1], [' leading and trailing  ']), OS([1])], skip(1, 0, false));
one('skip_gram_too_few_words', 'SKIP_GRAM', [S([1], ['two words']), OS([1])], skip(3, 1, true));
one('skip_gram_empty', 'SKIP_GRAM', [S([1], ['']), OS([1])], skip(2, 0, false));

// ---- comparisons of strings, broadcast ----
for (const op of ['EQUAL', 'NOT_EQUAL']) {
  one(`${op.toLowerCase()}_str_broadcast`, op,
      [S([2, 3], ['a', 'bb', '', 'a', 'b', 'bb ']), S([3], ['a', 'bb', '']), T([2, 3], 'BOOL')]);
}
one('equal_str_scalar', 'EQUAL', [S([4], ['x', 'x ', '', 'x']), S([], ['x']), T([4], 'BOOL')]);

// ---- movement of strings ----
one('gather_str', 'GATHER', [S([5], words.slice(0, 5)), I([2, 3], [4, 0, 1, 1, 3, 2]), OS([2, 3])],
    ['GatherOptions', {axis: 0}]);
one('gather_str_const_params', 'GATHER', [CS([5], words.slice(0, 5)), I([4], [4, 4, 1, 0]), OS([4])],
    ['GatherOptions', {axis: 0}]);
one('gather_nd_str', 'GATHER_ND', [S([2, 3], words.slice(0, 6)), I([3, 2], [1, 2, 0, 0, 1, 1]), OS([3])]);
one('gather_nd_str_rows', 'GATHER_ND', [S([3, 2], words.slice(1, 7)), I([2, 1], [2, 0]), OS([2, 2])]);
one('fill_str', 'FILL', [CI([2], [2, 3]), S([], ['fill me']), OS([2, 3])]);
one('slice_str', 'SLICE', [S([3, 4], [...words, ...words.slice(0, 4)]), CI([2], [1, 1]), CI([2], [2, -1]), OS([2, 3])]);
one('tile_str', 'TILE', [S([2, 2], words.slice(3, 7)), CI([2], [2, 3]), OS([4, 6])]);
one('reshape_str', 'RESHAPE', [S([2, 3], words.slice(0, 6)), CI([2], [3, 2]), OS([3, 2])]);
one('squeeze_str', 'SQUEEZE', [S([1, 3, 1], words.slice(4, 7)), OS([3])], ['SqueezeOptions', {squeeze_dims: [0, 2]}]);
one('strided_slice_str', 'STRIDED_SLICE',
    [S([2, 4], words), CI([2], [1, 3]), CI([2], [0, 0]), CI([2], [-1, -2]), OS([1, 2])],
    ['StridedSliceOptions', {end_mask: 1}]);
one('shape_str', 'SHAPE', [S([2, 1, 3], words.slice(0, 6)), T([3], 'INT32')], ['ShapeOptions', {out_type: 'INT32'}]);
one('rank_str', 'RANK', [S([2, 1, 3], words.slice(0, 6)), T([], 'INT32')]);
one('expand_dims_str', 'EXPAND_DIMS', [S([3], words.slice(5, 8)), CI([], [-1]), OS([3, 1])]);

// ---- a chain: strings computed by one node and read by the next ----
write('chain_lookup_gather_equal',
      [I([4], [5, 1, 3, 8]), CI([3], [1, 3, 5]), CS([3], ['one', 'three', 'five']), OS([4]), T([4], 'UINT8'),
       I([3], [3, 0, 0]), OS([3]), S([3], ['one', 'five', 'five']), T([3], 'BOOL')],
      [['HASHTABLE_LOOKUP', [0, 1, 2], [3, 4]], ['GATHER', [3, 5], [6], ['GatherOptions', {axis: 0}]],
       ['EQUAL', [6, 7], [8]]],
      [8, 3]);

// ---- the hash tables of TFLite's lookup ops: string keys to int64 values, int64 keys to strings ----
const table = (id, key, value) => ['HashtableOptions', {table_id: id, key_dtype: key, value_dtype: value}];
const R = () => T([1], 'RESOURCE');
// One subgraph: the table is made, sized, filled (a duplicate key keeps its first value), sized again
// and looked up (the default for misses is the first element of a vector).
write('hashtable_str_to_int64',
      [S([2, 3], ['alpha', '', 'zeta', 'ünïcödé', 'beta gamma', 'beta']), R(),
       CS([5], ['alpha', 'beta gamma', '', 'ünïcödé', 'alpha']), CI64([5], [10, -20, 30, 2 ** 40, 99]),
       CI64([2], [-1, -2]), T([2, 3], 'INT64'), T([1], 'INT64'), T([1], 'INT64')],
      [['HASHTABLE', [], [1], table(3, 'STRING', 'INT64')], ['HASHTABLE_SIZE', [1], [6]],
       ['HASHTABLE_IMPORT', [1, 2, 3], []], ['HASHTABLE_FIND', [1, 0, 4], [5]], ['HASHTABLE_SIZE', [1], [7]]],
      [5, 6, 7]);
// As the converter writes it: a CALL_ONCE runs the subgraph that fills the table, which the main
// subgraph names by the same id; keys of rank 2, a scalar default.
write('hashtable_int64_to_str_call_once',
      [I64([5], [7, -3, 2 ** 35, 0, 7]), R(), CS([], ['<unk>']), OS([5]), T([1], 'INT64')],
      [['CALL_ONCE', [], [], ['CallOnceOptions', {init_subgraph_index: 1}]],
       ['HASHTABLE', [], [1], table(11, 'INT64', 'STRING')], ['HASHTABLE_FIND', [1, 0, 2], [3]],
       ['HASHTABLE_SIZE', [1], [4]]],
      [3, 4],
      [{tensors: [R(), CI64([2, 2], [7, 2 ** 35, 1, -3]), CS([2, 2], ['seven', 'big', 'one', 'minus three'])],
        ops: [['HASHTABLE', [], [0], table(11, 'INT64', 'STRING')], ['HASHTABLE_IMPORT', [0, 1, 2], []]]}]);
// Two tables, a vocabulary both ways: words to ids, and the ids (computed, so their shape comes at invoke)
// back to words.
write('hashtable_two_tables_round_trip',
      [S([4], ['the', 'cat', 'sat', 'on']), R(), R(), CS([3], ['the', 'cat', 'mat']), CI64([3], [1, 2, 3]),
       CI64([3], [1, 2, 3]), CS([3], ['THE', 'CAT', 'MAT']), CI64([], [0]), T([4], 'INT64'), CS([1], ['?']),
       OS([4])],
      [['HASHTABLE', [], [1], table(1, 'STRING', 'INT64')], ['HASHTABLE', [], [2], table(2, 'INT64', 'STRING')],
       ['HASHTABLE_IMPORT', [1, 3, 4], []], ['HASHTABLE_IMPORT', [2, 5, 6], []],
       ['HASHTABLE_FIND', [1, 0, 7], [8]], ['HASHTABLE_FIND', [2, 8, 9], [10]]],
      [10, 8]);

// ---- what TFLite 2.9 refuses (written to OUT_DIR/refused: tools/make-string-cases.sh checks that it does) ----
const refusedDir = path.join(outDir, 'refused');
fs.mkdirSync(refusedDir, {recursive: true});
const outDirOfCases = outDir;
function refused(fn) {
  outDir = refusedDir;
  fn();
  outDir = outDirOfCases;
}
refused(() => {
  one('gather_str_rank2', 'GATHER', [S([3, 2], words.slice(0, 6)), I([2], [2, 0]), OS([2, 2])],
      ['GatherOptions', {axis: 0}]);
  one('hashtable_lookup_str_rank2', 'HASHTABLE_LOOKUP',
      [I([3], [2, 0, 1]), CI([3], [0, 1, 2]), CS([3, 2], ['a', 'bb', 'ccc', 'dddd', 'e', '']), OS([3]), T([3], 'UINT8')],
      null, [3, 4]);
  one('less_str', 'LESS', [S([2], ['a', 'b']), S([2], ['b', 'a']), T([2], 'BOOL')]);
  write('hashtable_find_before_import',
        [S([2], ['a', 'b']), R(), CI64([1], [0]), T([2], 'INT64')],
        [['HASHTABLE', [], [1], table(1, 'STRING', 'INT64')], ['HASHTABLE_FIND', [1, 0, 2], [3]]], [3]);
  write('hashtable_int64_to_int64',
        [I64([2], [1, 2]), R(), CI64([1], [0]), T([2], 'INT64')],
        [['HASHTABLE', [], [1], table(1, 'INT64', 'INT64')], ['HASHTABLE_FIND', [1, 0, 2], [3]]], [3]);
  write('hashtable_import_shapes_differ',
        [S([2], ['a', 'b']), R(), CS([3], ['a', 'b', 'c']), CI64([2], [1, 2]), CI64([1], [0]), T([2], 'INT64')],
        [['HASHTABLE', [], [1], table(1, 'STRING', 'INT64')], ['HASHTABLE_IMPORT', [1, 2, 3], []],
         ['HASHTABLE_FIND', [1, 0, 4], [5]]], [5]);
});
