#!/usr/bin/env node
// op-models.mjs - write small one-op TFLite models (as flatc JSON) for the builtin pack's comparison,
// logic, selection, shape, movement, reduction and math ops: each op in the types TFLite 2.9's kernel
// takes, with the options that change the result (broadcast ranks, negative axes, keep_dims, rank-0
// scalars, empty tensors, align_corners / half_pixel_centers, ...).
//
//   node tools/op-models.mjs OUT_DIR            one-op cases: OUT_DIR/NAME.json and NAME.args
//   node tools/op-models.mjs --versions OUT_DIR  one model per op and version 1..16 (vNAME_V.json), for
//                                               finding the version range the native library registers
//   node tools/op-models.mjs --bench OUT_DIR     larger models (64K-256K elements) of common ops and
//                                               of int8 and 16x8 CONV_2D, FULLY_CONNECTED and ADD, for
//                                               timing against TFLite (tools/bench-vs-tflite.sh)
//
// The 8-bit and 16x8 cases live in tools/op-models-quantized.mjs, those whose output shapes depend on
// the data in tools/op-models-data-shape.mjs, those whose axes, permutations, sizes and the like are
// computed in tools/op-models-computed.mjs, the small array ops, FAKE_QUANT and the 3-D convolutions in
// tools/op-models-array.mjs, the complex tensors' (RFFT2D, REAL, IMAG, COMPLEX_ABS, complex CAST) in
// tools/op-models-complex.mjs, the random and legacy lookup ops in tools/op-models-random.mjs, what real models from the wild
// need (issue #35) in tools/op-models-wild.mjs, the STABLEHLO_* ops, DILATE and REDUCE_WINDOW in
// tools/op-models-stablehlo.mjs; all are called from here with the helpers below (the byte, .npy, model
// and PRNG helpers that every generator shares are in tools/testgen/). invokes.json lists the cases whose
// later invokes give other outputs (the random ops'), which tools/make-op-cases.sh also runs several times.
// NAME.args holds extra tflite-peer arguments (an --int-range for integer inputs where the full int32
// range would only overflow or divide by zero). tools/make-op-cases.sh turns the JSON into .tflite with
// flatc and runs the native TFLite library for the reference outputs. Constants are fixed here, so a
// rerun writes the same files.
import fs from 'node:fs';
import path from 'node:path';

import {b8, f32, i32, i64} from './testgen/bytes.mjs';
import {writeNpyOf} from './testgen/npy.mjs';
import {int8Weights, lcg31, lcg32} from './testgen/prng.mjs';
import {oneGraphModel, operator, operatorCode, outDirArgs, writeJson} from './testgen/tflite-json.mjs';
import arrayCases from './op-models-array.mjs';
import complexCases from './op-models-complex.mjs';
import computedCases from './op-models-computed.mjs';
import dataShapeCases from './op-models-data-shape.mjs';
import quantizedCases from './op-models-quantized.mjs';
import randomCases from './op-models-random.mjs';
import recurrentCases from './op-models-recurrent.mjs';
import stablehloCases from './op-models-stablehlo.mjs';
import wildCases from './op-models-wild.mjs';
import newTypeCases from './op-models-newtypes.mjs';

const {outDir, flag} = outDirArgs('op-models.mjs', ['--versions', '--bench']);
const versions = flag === '--versions';
const bench = flag === '--bench';

// Writes OUT_DIR/NAME.json (a one-subgraph model) and NAME.args (extra tflite-peer arguments).
// `tensors`: [{shape, type, data (constant bytes), q, variable}], where q is [scale, zero_point] or, per
// channel, [[scales], [zero_points], dimension]; `operators` as the schema has them.
function writeModel(name, operatorCodes, tensors, inputs, outputs, operators, peerArgs = []) {
  writeJson(path.join(outDir, `${name}.json`),
            oneGraphModel(`baton op case ${name}`, operatorCodes, tensors, inputs, outputs, operators));
  fs.writeFileSync(path.join(outDir, `${name}.args`), peerArgs.join(' ') + '\n');
}

// One case. `tensors` as writeModel takes them; `io`: the subgraph's inputs and outputs and the
// operator's inputs (tensor indices; -1 = omitted) and outputs.
function model(name, op, version, options, tensors, io, peerArgs = []) {
  writeModel(name, [operatorCode(op, version)], tensors, io.inputs, io.outputs,
             [operator(0, io.opInputs, io.opOutputs ?? io.outputs, options)], peerArgs);
}

// Shorthands: a graph whose non-constant tensors are inputs (in order) except the last, the output.
function simple(name, op, version, options, tensors, peerArgs) {
  const last = tensors.length - 1;
  const inputs = [];
  for (let i = 0; i < last; ++i) if (!tensors[i].data) inputs.push(i);
  model(name, op, version, options, tensors,
        {inputs, outputs: [last], opInputs: [...Array(last).keys()]}, peerArgs);
}
const T = (shape, type = 'FLOAT32', extra = {}) => ({shape, type, ...extra});
const C = (shape, type, data, extra = {}) => ({shape, type, data, ...extra});
// tflite-peer arguments feeding inputs given here, in the model's input order: NAME.in_K.npy for each
// [shape, values, kind], kind a TFLite type name or 'f32', 'i32', 'i64'.
const givenKinds = {f32: 'FLOAT32', i32: 'INT32', i64: 'INT64'};
const given = (n, inputs) => ['--inputs', inputs.map(([shape, values, kind], k) => {
  const file = path.resolve(outDir, `${n}.in_${k}.npy`);
  writeNpyOf(file, givenKinds[kind] ?? kind, shape, values);
  return file;
}).join(',')];

const cases = [];  // [name, fn(version)] so --versions can reuse one instance per op
const add = (name, op, version, fn) => cases.push({name, op, version, fn});

// ---- comparisons ----
const compareOps = ['EQUAL', 'NOT_EQUAL', 'LESS', 'LESS_EQUAL', 'GREATER', 'GREATER_EQUAL'];
for (const op of compareOps) {
  const l = op.toLowerCase();
  add(`${l}_f32_broadcast`, op, 1, (n, v) => simple(n, op, v, null, [T([2, 3]), T([3]), T([2, 3], 'BOOL')]));
  add(`${l}_i32_rank3`, op, 1, (n, v) => simple(n, op, v, null, [T([2, 1, 3], 'INT32'), T([4, 1], 'INT32'), T([2, 4, 3], 'BOOL')], ['--int-range', '-2:2']));
  add(`${l}_i64_scalar`, op, 1, (n, v) => simple(n, op, v, null, [T([5], 'INT64'), T([], 'INT64'), T([5], 'BOOL')], ['--int-range', '-2:2']));
  // Two scales, and codes narrowed so that equal real values happen: (a - 128) * 0.05 == (b - 128) * 0.1.
  add(`${l}_u8_scales`, op, 1, (n, v) => simple(n, op, v, null,
      [T([3, 4], 'UINT8', {q: [0.05, 128]}), T([4], 'UINT8', {q: [0.1, 128]}), T([3, 4], 'BOOL')], ['--int-range', '124:132']));
  add(`${l}_i8_scales`, op, 2, (n, v) => simple(n, op, v, null,
      [T([4, 4], 'INT8', {q: [0.05, 0]}), T([4, 4], 'INT8', {q: [0.025, 0]}), T([4, 4], 'BOOL')], ['--int-range', '-2:2']));
}
// Bool inputs get their own seeds: seed 0's first few bools are all false.
const seed = (s) => ['--seed', String(s)];
add('equal_bool', 'EQUAL', 1, (n, v) => simple(n, 'EQUAL', v, null, [T([2, 3], 'BOOL'), T([3], 'BOOL'), T([2, 3], 'BOOL')], seed(3)));
add('not_equal_empty', 'NOT_EQUAL', 1, (n, v) => simple(n, 'NOT_EQUAL', v, null, [T([0, 3]), T([3]), T([0, 3], 'BOOL')]));

// ---- logic ----
add('logical_and', 'LOGICAL_AND', 1, (n, v) => simple(n, 'LOGICAL_AND', v, null, [T([2, 3], 'BOOL'), T([3], 'BOOL'), T([2, 3], 'BOOL')], seed(3)));
add('logical_or', 'LOGICAL_OR', 1, (n, v) => simple(n, 'LOGICAL_OR', v, null, [T([2, 1, 3], 'BOOL'), T([4, 1], 'BOOL'), T([2, 4, 3], 'BOOL')], seed(5)));
add('logical_not', 'LOGICAL_NOT', 1, (n, v) => simple(n, 'LOGICAL_NOT', v, null, [T([7], 'BOOL'), T([7], 'BOOL')], seed(3)));

// ---- SELECT, SELECT_V2 ----
add('select_f32_same', 'SELECT', 1, (n, v) => simple(n, 'SELECT', v, null, [T([2, 3], 'BOOL'), T([2, 3]), T([2, 3]), T([2, 3])], seed(3)));
add('select_i32_rows', 'SELECT', 1, (n, v) => simple(n, 'SELECT', v, null, [T([3], 'BOOL'), T([3, 2], 'INT32'), T([3, 2], 'INT32'), T([3, 2], 'INT32')], seed(5)));
add('select_u8', 'SELECT', 1, (n, v) => simple(n, 'SELECT', v, null,
    [T([4], 'BOOL'), T([4], 'UINT8', {q: [0.1, 5]}), T([4], 'UINT8', {q: [0.1, 5]}), T([4], 'UINT8', {q: [0.1, 5]})], seed(3)));
add('select_v2_broadcast', 'SELECT_V2', 1, (n, v) => simple(n, 'SELECT_V2', v, null, [T([4, 1], 'BOOL'), T([2, 1, 3]), T([]), T([2, 4, 3])], seed(3)));
add('select_v2_i8', 'SELECT_V2', 1, (n, v) => simple(n, 'SELECT_V2', v, null,
    [T([2, 1], 'BOOL'), T([2, 3], 'INT8', {q: [0.1, 0]}), T([3], 'INT8', {q: [0.1, 0]}), T([2, 3], 'INT8', {q: [0.1, 0]})], seed(5)));
add('select_v2_i64', 'SELECT_V2', 1, (n, v) => simple(n, 'SELECT_V2', v, null, [T([2, 2], 'BOOL'), T([2, 2], 'INT64'), T([2, 2], 'INT64'), T([2, 2], 'INT64')], seed(3)));
// A contiguous condition with one value input a broadcast scalar (the kernel's branch-free runs).
add('select_v2_i16_scalar_else', 'SELECT_V2', 1, (n, v) => simple(n, 'SELECT_V2', v, null, [T([2, 17], 'BOOL'), T([2, 17], 'INT16'), T([], 'INT16'), T([2, 17], 'INT16')], seed(7)));
add('select_v2_bool_scalar_then', 'SELECT_V2', 1, (n, v) => simple(n, 'SELECT_V2', v, null, [T([3, 9], 'BOOL'), T([], 'BOOL'), T([3, 9], 'BOOL'), T([3, 9], 'BOOL')], seed(8)));

// ---- FLOOR_DIV, FLOOR_MOD, POW ----
add('floor_div_f32', 'FLOOR_DIV', 1, (n, v) => simple(n, 'FLOOR_DIV', v, null, [T([2, 3]), C([3], 'FLOAT32', f32([0.3, -0.25, 0.7])), T([2, 3])]));
add('floor_div_i32', 'FLOOR_DIV', 1, (n, v) => simple(n, 'FLOOR_DIV', v, null, [T([3, 4], 'INT32'), C([4], 'INT32', i32([3, -3, 2, -7])), T([3, 4], 'INT32')], ['--int-range', '-20:20']));
add('floor_mod_i32', 'FLOOR_MOD', 1, (n, v) => simple(n, 'FLOOR_MOD', v, null, [T([3, 4], 'INT32'), C([4], 'INT32', i32([3, -3, 2, -7])), T([3, 4], 'INT32')], ['--int-range', '-20:20']));
add('floor_mod_i64', 'FLOOR_MOD', 1, (n, v) => simple(n, 'FLOOR_MOD', v, null, [T([2, 3], 'INT64'), C([], 'INT64', i64([-4])), T([2, 3], 'INT64')], ['--int-range', '-20:20']));
add('floor_mod_f32', 'FLOOR_MOD', 1, (n, v) => simple(n, 'FLOOR_MOD', v, null, [T([2, 3]), C([3], 'FLOAT32', f32([0.3, -0.25, 0.7])), T([2, 3])]));
add('pow_f32', 'POW', 1, (n, v) => simple(n, 'POW', v, null, [T([2, 3]), C([3], 'FLOAT32', f32([2, 3, 0.5])), T([2, 3])]));
add('pow_i32', 'POW', 1, (n, v) => simple(n, 'POW', v, null, [T([2, 4], 'INT32'), C([4], 'INT32', i32([0, 1, 2, 3])), T([2, 4], 'INT32')], ['--int-range', '-6:6']));

// ---- CAST ----
const castPairs = [['FLOAT32', 'INT32'], ['INT32', 'FLOAT32'], ['UINT8', 'FLOAT32'], ['FLOAT32', 'BOOL'],
                   ['BOOL', 'FLOAT32'], ['INT32', 'INT64'], ['INT64', 'INT32'], ['INT8', 'INT32'], ['INT32', 'UINT8']];
for (const [from, to] of castPairs) {
  const range = from === 'FLOAT32' ? [] : ['--int-range', '-100:100'];
  const shape = to === 'INT32' && from === 'FLOAT32' ? [2, 3] : [6];
  add(`cast_${from.toLowerCase()}_${to.toLowerCase()}`, 'CAST', 1, (n, v) => simple(n, 'CAST', v, null, [T(shape, from), T(shape, to)],
      from === 'UINT8' || from === 'INT8' ? [] : (from === 'INT32' && to === 'UINT8' ? ['--int-range', '0:255'] : range)));
}

// ---- SQUEEZE, EXPAND_DIMS, SHAPE, ZEROS_LIKE ----
add('squeeze_all', 'SQUEEZE', 1, (n, v) => simple(n, 'SQUEEZE', v, null, [T([1, 3, 1, 2]), T([3, 2])]));
add('squeeze_negative_axis', 'SQUEEZE', 1, (n, v) => simple(n, 'SQUEEZE', v, ['SqueezeOptions', {squeeze_dims: [-2]}], [T([1, 3, 1, 2], 'INT32'), T([1, 3, 2], 'INT32')]));
add('expand_dims_negative', 'EXPAND_DIMS', 1, (n, v) => simple(n, 'EXPAND_DIMS', v, null, [T([2, 3]), C([1], 'INT32', i32([-1])), T([2, 3, 1])]));
add('expand_dims_scalar', 'EXPAND_DIMS', 1, (n, v) => simple(n, 'EXPAND_DIMS', v, null, [T([], 'INT32'), C([], 'INT32', i32([0])), T([1], 'INT32')]));
add('shape_i32', 'SHAPE', 1, (n, v) => simple(n, 'SHAPE', v, ['ShapeOptions', {out_type: 'INT32'}], [T([2, 1, 3]), T([3], 'INT32')]));
add('shape_i64', 'SHAPE', 1, (n, v) => simple(n, 'SHAPE', v, ['ShapeOptions', {out_type: 'INT64'}], [T([4, 5], 'UINT8', {q: [1, 0]}), T([2], 'INT64')]));
add('zeros_like_f32', 'ZEROS_LIKE', 1, (n, v) => simple(n, 'ZEROS_LIKE', v, null, [T([2, 3]), T([2, 3])]));
add('zeros_like_i64', 'ZEROS_LIKE', 1, (n, v) => simple(n, 'ZEROS_LIKE', v, null, [T([4], 'INT64'), T([4], 'INT64')]));

// ---- TILE, BROADCAST_TO, SLICE, REVERSE_V2 ----
add('tile_f32', 'TILE', 1, (n, v) => simple(n, 'TILE', v, null, [T([2, 3]), C([2], 'INT32', i32([2, 3])), T([4, 9])]));
add('tile_bool_i64_multiples', 'TILE', 1, (n, v) => simple(n, 'TILE', v, null, [T([5], 'BOOL'), C([1], 'INT64', i64([2])), T([10], 'BOOL')], seed(3)));
add('tile_u8', 'TILE', 1, (n, v) => simple(n, 'TILE', v, null, [T([1, 2, 2], 'UINT8', {q: [0.5, 3]}), C([3], 'INT32', i32([2, 1, 2])), T([2, 2, 4], 'UINT8', {q: [0.5, 3]})]));
add('broadcast_to_f32', 'BROADCAST_TO', 2, (n, v) => simple(n, 'BROADCAST_TO', v, null, [T([2, 1]), C([3], 'INT32', i32([2, 2, 3])), T([2, 2, 3])]));
add('broadcast_to_i32', 'BROADCAST_TO', 2, (n, v) => simple(n, 'BROADCAST_TO', v, null, [T([3], 'INT32'), C([2], 'INT64', i64([4, 3])), T([4, 3], 'INT32')]));
add('slice_f32', 'SLICE', 1, (n, v) => simple(n, 'SLICE', v, null, [T([3, 4]), C([2], 'INT32', i32([1, 1])), C([2], 'INT32', i32([2, -1])), T([2, 3])]));
add('slice_i64_begin_size', 'SLICE', 1, (n, v) => simple(n, 'SLICE', v, null, [T([2, 3, 4], 'INT32'), C([3], 'INT64', i64([1, 0, 2])), C([3], 'INT64', i64([1, 3, 2])), T([1, 3, 2], 'INT32')]));
add('slice_empty', 'SLICE', 1, (n, v) => simple(n, 'SLICE', v, null, [T([3, 4]), C([2], 'INT32', i32([1, 0])), C([2], 'INT32', i32([0, 4])), T([0, 4])]));
add('slice_u8', 'SLICE', 1, (n, v) => simple(n, 'SLICE', v, null, [T([4, 4], 'UINT8', {q: [0.1, 7]}), C([2], 'INT32', i32([2, 1])), C([2], 'INT32', i32([-1, 2])), T([2, 2], 'UINT8', {q: [0.1, 7]})]));
add('reverse_v2_f32', 'REVERSE_V2', 1, (n, v) => simple(n, 'REVERSE_V2', v, null, [T([2, 3, 2]), C([1], 'INT32', i32([1])), T([2, 3, 2])]));
add('reverse_v2_negative_axis', 'REVERSE_V2', 1, (n, v) => simple(n, 'REVERSE_V2', v, null, [T([3, 4], 'INT32'), C([1], 'INT32', i32([-2])), T([3, 4], 'INT32')]));

// ---- SPACE_TO_DEPTH, GATHER_ND, RESIZE_NEAREST_NEIGHBOR ----
add('space_to_depth_f32', 'SPACE_TO_DEPTH', 1, (n, v) => simple(n, 'SPACE_TO_DEPTH', v, ['SpaceToDepthOptions', {block_size: 2}], [T([1, 4, 6, 2]), T([1, 2, 3, 8])]));
add('space_to_depth_u8', 'SPACE_TO_DEPTH', 1, (n, v) => simple(n, 'SPACE_TO_DEPTH', v, ['SpaceToDepthOptions', {block_size: 3}],
    [T([2, 3, 3, 1], 'UINT8', {q: [0.2, 9]}), T([2, 1, 1, 9], 'UINT8', {q: [0.2, 9]})]));
add('gather_nd_rows', 'GATHER_ND', 1, (n, v) => simple(n, 'GATHER_ND', v, null, [T([3, 4]), C([2, 1], 'INT32', i32([2, 0])), T([2, 4])]));
add('gather_nd_elements', 'GATHER_ND', 1, (n, v) => simple(n, 'GATHER_ND', v, null, [T([3, 4], 'INT32'), C([3, 2], 'INT64', i64([1, 2, 0, 3, 2, 0])), T([3], 'INT32')]));
add('gather_nd_batched_i8', 'GATHER_ND', 1, (n, v) => simple(n, 'GATHER_ND', v, null,
    [T([2, 3, 2], 'INT8', {q: [0.1, 1]}), C([2, 2, 2], 'INT32', i32([0, 1, 1, 2, 1, 0, 0, 0])), T([2, 2, 2], 'INT8', {q: [0.1, 1]})]));
for (const [tag, align, half] of [['plain', false, false], ['align_corners', true, false], ['half_pixel', false, true]]) {
  add(`resize_nearest_${tag}`, 'RESIZE_NEAREST_NEIGHBOR', 1, (n, v) => simple(n, 'RESIZE_NEAREST_NEIGHBOR', v,
      ['ResizeNearestNeighborOptions', {align_corners: align, half_pixel_centers: half}],
      [T([1, 3, 4, 2]), C([2], 'INT32', i32([5, 7])), T([1, 5, 7, 2])]));
}
add('resize_nearest_u8_down', 'RESIZE_NEAREST_NEIGHBOR', 1, (n, v) => simple(n, 'RESIZE_NEAREST_NEIGHBOR', v,
    ['ResizeNearestNeighborOptions', {align_corners: false, half_pixel_centers: true}],
    [T([2, 5, 6, 1], 'UINT8', {q: [0.1, 0]}), C([2], 'INT32', i32([2, 4])), T([2, 2, 4, 1], 'UINT8', {q: [0.1, 0]})]));

// ---- reductions and ARG_MAX / ARG_MIN ----
const reducer = (keep) => ['ReducerOptions', {keep_dims: keep}];
for (const op of ['SUM', 'REDUCE_MAX', 'REDUCE_MIN', 'REDUCE_PROD']) {
  const l = op.toLowerCase();
  add(`${l}_f32_axis1`, op, 1, (n, v) => simple(n, op, v, reducer(false), [T([2, 3, 4]), C([1], 'INT32', i32([1])), T([2, 4])]));
  add(`${l}_f32_negative_keep`, op, 1, (n, v) => simple(n, op, v, reducer(true), [T([2, 3, 4]), C([2], 'INT32', i32([-1, 0])), T([1, 3, 1])]));
  add(`${l}_i32_all_axes`, op, 1, (n, v) => simple(n, op, v, reducer(false), [T([2, 3], 'INT32'), C([2], 'INT32', i32([0, 1])), T([], 'INT32')], ['--int-range', '-3:3']));
  add(`${l}_i64`, op, 1, (n, v) => simple(n, op, v, reducer(false), [T([3, 2], 'INT64'), C([1], 'INT32', i32([0])), T([2], 'INT64')], ['--int-range', '-9:9']));
}
for (const op of ['REDUCE_MAX', 'REDUCE_MIN']) {
  const l = op.toLowerCase();
  add(`${l}_u8`, op, 1, (n, v) => simple(n, op, v, reducer(false), [T([2, 5], 'UINT8', {q: [0.3, 11]}), C([1], 'INT32', i32([1])), T([2], 'UINT8', {q: [0.3, 11]})]));
  add(`${l}_i8`, op, 2, (n, v) => simple(n, op, v, reducer(true), [T([3, 4], 'INT8', {q: [0.3, -5]}), C([1], 'INT32', i32([0])), T([1, 4], 'INT8', {q: [0.3, -5]})]));
}
// 8-bit SUM: rescaled in float when the output's quantization differs, summed in codes otherwise.
add('sum_u8_rescale', 'SUM', 1, (n, v) => simple(n, 'SUM', v, reducer(false),
    [T([3, 5, 16], 'UINT8', {q: [0.02, 120]}), C([1], 'INT32', i32([1])), T([3, 16], 'UINT8', {q: [0.09, 40]})]));
add('sum_i8_rescale_keep', 'SUM', 2, (n, v) => simple(n, 'SUM', v, reducer(true),
    [T([3, 40, 6], 'INT8', {q: [0.05, -7]}), C([2], 'INT32', i32([0, -1])), T([1, 40, 1], 'INT8', {q: [0.3, 3]})]));
add('sum_i8_same_quantization', 'SUM', 2, (n, v) => simple(n, 'SUM', v, reducer(false),
    [T([4, 3], 'INT8', {q: [0.1, 0]}), C([1], 'INT32', i32([0])), T([3], 'INT8', {q: [0.1, 0]})]));
// 8-bit MEAN: TFLite's three paths (rank 4 keep_dims over literal axes [1, 2]; same quantization;
// rescaled in float), each in uint8 and int8.
const mean = (name, version, keep, inShape, axes, outShape, type, qIn, qOut) => add(name, 'MEAN', version,
    (n, v) => simple(n, 'MEAN', v, reducer(keep), [T(inShape, type, {q: qIn}), C([axes.length], 'INT32', i32(axes)), T(outShape, type, {q: qOut})]));
mean('mean_u8_spatial', 1, true, [2, 5, 6, 8], [1, 2], [2, 1, 1, 8], 'UINT8', [0.05, 120], [0.03, 100]);
mean('mean_i8_spatial', 2, true, [2, 4, 7, 5], [2, 1], [2, 1, 1, 5], 'INT8', [0.04, -10], [0.02, 5]);
mean('mean_u8_same_quantization', 1, false, [3, 4, 5], [1], [3, 5], 'UINT8', [0.1, 128], [0.1, 128]);
mean('mean_i8_same_quantization', 2, false, [4, 6], [-1], [4], 'INT8', [0.1, -3], [0.1, -3]);
mean('mean_u8_rescale', 1, false, [2, 3, 4], [0, 2], [3], 'UINT8', [0.07, 10], [0.02, 200]);
mean('mean_i8_negative_spatial_axes', 2, true, [1, 4, 4, 3], [-3, -2], [1, 1, 1, 3], 'INT8', [0.04, 3], [0.01, -20]);
mean('mean_u8_spatial_no_keep', 1, false, [2, 4, 4, 3], [1, 2], [2, 3], 'UINT8', [0.04, 130], [0.015, 128]);
// int16 (zero points 0): the same three paths, summed in int32. int16 SUM sums codes (TFLite 2.9 fails
// a rescaling one at invoke).
mean('mean_i16_spatial', 3, true, [2, 3, 5, 4], [1, 2], [2, 1, 1, 4], 'INT16', [0.002, 0], [0.0007, 0]);
mean('mean_i16_same_quantization', 3, false, [3, 7], [-1], [3], 'INT16', [0.01, 0], [0.01, 0]);
mean('mean_i16_rescale', 3, false, [2, 3, 4], [0, 2], [3], 'INT16', [0.003, 0], [0.0011, 0]);
add('sum_i16_same_quantization', 'SUM', 2, (n, v) => simple(n, 'SUM', v, reducer(true),
    [T([4, 3], 'INT16', {q: [0.1, 0]}), C([1], 'INT32', i32([0])), T([1, 3], 'INT16', {q: [0.1, 0]})], ['--int-range', '-5000:5000']));
// int16 REDUCE_MAX / REDUCE_MIN compare codes; TFLite 2.9 refuses int16 REDUCE_PROD.
for (const op of ['REDUCE_MAX', 'REDUCE_MIN']) {
  add(`${op.toLowerCase()}_i16`, op, 3, (n, v) => simple(n, op, v, reducer(false),
      [T([2, 5, 3], 'INT16', {q: [0.1, 0]}), C([2], 'INT32', i32([0, -1])), T([5], 'INT16', {q: [0.1, 0]})], ['--int-range', '-9:9']));
}
for (const op of ['REDUCE_ANY', 'REDUCE_ALL']) {
  const l = op.toLowerCase();
  add(`${l}_axis1`, op, 1, (n, v) => simple(n, op, v, reducer(false), [T([6, 2], 'BOOL'), C([1], 'INT32', i32([1])), T([6], 'BOOL')], seed(op === 'REDUCE_ALL' ? 9 : 3)));
  add(`${l}_keep`, op, 1, (n, v) => simple(n, op, v, reducer(true), [T([4, 2, 1], 'BOOL'), C([2], 'INT32', i32([1, -1])), T([4, 1, 1], 'BOOL')], seed(op === 'REDUCE_ALL' ? 9 : 3)));
}
for (const op of ['ARG_MAX', 'ARG_MIN']) {
  const l = op.toLowerCase();
  const opt = (t) => [op === 'ARG_MAX' ? 'ArgMaxOptions' : 'ArgMinOptions', {output_type: t}];
  add(`${l}_f32`, op, 1, (n, v) => simple(n, op, v, opt('INT32'), [T([2, 5]), C([], 'INT32', i32([1])), T([2], 'INT32')]));
  add(`${l}_negative_axis_i64`, op, 1, (n, v) => simple(n, op, v, opt('INT64'), [T([3, 2, 4]), C([1], 'INT32', i32([-3])), T([2, 4], 'INT64')]));
  add(`${l}_i32_ties`, op, 1, (n, v) => simple(n, op, v, opt('INT32'), [T([4, 6], 'INT32'), C([1], 'INT64', i64([1])), T([4], 'INT32')], ['--int-range', '-1:1']));
  add(`${l}_u8`, op, 1, (n, v) => simple(n, op, v, opt('INT32'), [T([3, 4], 'UINT8', {q: [0.1, 0]}), C([], 'INT32', i32([0])), T([4], 'INT32')]));
  add(`${l}_i8`, op, 2, (n, v) => simple(n, op, v, opt('INT32'), [T([3, 4], 'INT8', {q: [0.1, 0]}), C([], 'INT32', i32([1])), T([3], 'INT32')]));
}

// ---- SPLIT_V ----
add('split_v_negative_axis', 'SPLIT_V', 1, (n, v) => model(n, 'SPLIT_V', v, ['SplitVOptions', {num_splits: 3}],
    [T([2, 6]), C([3], 'INT32', i32([1, -1, 2])), C([], 'INT32', i32([-1])), T([2, 1]), T([2, 3]), T([2, 2])],
    {inputs: [0], outputs: [3, 4, 5], opInputs: [0, 1, 2]}));
add('split_v_u8_axis0', 'SPLIT_V', 1, (n, v) => model(n, 'SPLIT_V', v, ['SplitVOptions', {num_splits: 2}],
    [T([5, 2], 'UINT8', {q: [0.1, 2]}), C([2], 'INT64', i64([3, 2])), C([1], 'INT32', i32([0])),
     T([3, 2], 'UINT8', {q: [0.1, 2]}), T([2, 2], 'UINT8', {q: [0.1, 2]})],
    {inputs: [0], outputs: [3, 4], opInputs: [0, 1, 2]}));

// ---- L2_NORMALIZATION (float) ----
add('l2_normalization_2d', 'L2_NORMALIZATION', 1, (n, v) => simple(n, 'L2_NORMALIZATION', v, ['L2NormOptions', {fused_activation_function: 'NONE'}], [T([3, 5]), T([3, 5])]));
add('l2_normalization_4d', 'L2_NORMALIZATION', 1, (n, v) => simple(n, 'L2_NORMALIZATION', v, ['L2NormOptions', {fused_activation_function: 'NONE'}], [T([1, 2, 2, 3]), T([1, 2, 2, 3])]));

add('l2_normalization_u8', 'L2_NORMALIZATION', 1, (n, v) => simple(n, 'L2_NORMALIZATION', v, ['L2NormOptions', {fused_activation_function: 'NONE'}],
    [T([6, 24], 'UINT8', {q: [0.05, 120]}), T([6, 24], 'UINT8', {q: [1 / 128, 128]})]));
add('l2_normalization_i8_4d', 'L2_NORMALIZATION', 2, (n, v) => simple(n, 'L2_NORMALIZATION', v, ['L2NormOptions', {fused_activation_function: 'NONE'}],
    [T([1, 3, 2, 40], 'INT8', {q: [0.1, -6]}), T([1, 3, 2, 40], 'INT8', {q: [1 / 128, 0]})]));
add('l2_normalization_i8_short_rows', 'L2_NORMALIZATION', 2, (n, v) => simple(n, 'L2_NORMALIZATION', v, ['L2NormOptions', {fused_activation_function: 'NONE'}],
    [T([16, 2], 'INT8', {q: [0.1, 0]}), T([16, 2], 'INT8', {q: [1 / 128, 0]})], ['--int-range', '-2:2']));

// ---- ADD_N, LEAKY_RELU, FILL, RANGE ----
add('add_n_f32', 'ADD_N', 1, (n, v) => simple(n, 'ADD_N', v, null, [T([2, 3]), T([2, 3]), T([2, 3]), T([2, 3])]));
add('add_n_i32', 'ADD_N', 1, (n, v) => simple(n, 'ADD_N', v, null, [T([5], 'INT32'), T([5], 'INT32'), T([5], 'INT32')], ['--int-range', '-1000:1000']));
add('leaky_relu_u8', 'LEAKY_RELU', 1, (n, v) => simple(n, 'LEAKY_RELU', v, ['LeakyReluOptions', {alpha: 0.3}],
    [T([4, 8], 'UINT8', {q: [0.05, 120]}), T([4, 8], 'UINT8', {q: [0.04, 90]})]));
add('leaky_relu_i8', 'LEAKY_RELU', 2, (n, v) => simple(n, 'LEAKY_RELU', v, ['LeakyReluOptions', {alpha: 0.15}],
    [T([4, 8], 'INT8', {q: [0.03, -5]}), T([4, 8], 'INT8', {q: [0.025, 7]})]));
add('leaky_relu_f32', 'LEAKY_RELU', 1, (n, v) => simple(n, 'LEAKY_RELU', v, ['LeakyReluOptions', {alpha: 0.2}], [T([3, 5]), T([3, 5])]));
add('fill_f32', 'FILL', 1, (n, v) => simple(n, 'FILL', v, null, [C([2], 'INT32', i32([2, 3])), T([]), T([2, 3])]));
add('fill_i64_dims64', 'FILL', 1, (n, v) => simple(n, 'FILL', v, null, [C([3], 'INT64', i64([1, 2, 2])), T([], 'INT64'), T([1, 2, 2], 'INT64')]));
add('fill_bool_empty', 'FILL', 1, (n, v) => simple(n, 'FILL', v, null, [C([2], 'INT32', i32([0, 4])), T([], 'BOOL'), T([0, 4], 'BOOL')], seed(3)));
add('range_i32', 'RANGE', 1, (n, v) => model(n, 'RANGE', v, null,
    [C([], 'INT32', i32([10])), C([], 'INT32', i32([-3])), C([], 'INT32', i32([-4])), T([4], 'INT32')],
    {inputs: [], outputs: [3], opInputs: [0, 1, 2]}));
add('range_f32', 'RANGE', 1, (n, v) => model(n, 'RANGE', v, null,
    [C([], 'FLOAT32', f32([0.1])), C([], 'FLOAT32', f32([2.05])), C([], 'FLOAT32', f32([0.3])), T([7])],
    {inputs: [], outputs: [3], opInputs: [0, 1, 2]}));

// ---- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND ----
add('space_to_batch_nd_padded', 'SPACE_TO_BATCH_ND', 1, (n, v) => simple(n, 'SPACE_TO_BATCH_ND', v, null,
    [T([2, 3, 4, 2]), C([2], 'INT32', i32([2, 3])), C([2, 2], 'INT32', i32([1, 0, 1, 1])), T([12, 2, 2, 2])]));
add('space_to_batch_nd_u8_zero_point', 'SPACE_TO_BATCH_ND', 1, (n, v) => simple(n, 'SPACE_TO_BATCH_ND', v, null,
    [T([1, 4, 3, 1], 'UINT8', {q: [0.1, 17]}), C([2], 'INT32', i32([2, 2])), C([2, 2], 'INT32', i32([0, 0, 0, 1])),
     T([4, 2, 2, 1], 'UINT8', {q: [0.1, 17]})]));
add('space_to_batch_nd_3d', 'SPACE_TO_BATCH_ND', 1, (n, v) => simple(n, 'SPACE_TO_BATCH_ND', v, null,
    [T([1, 5, 2]), C([1], 'INT32', i32([2])), C([1, 2], 'INT32', i32([1, 0])), T([2, 3, 2])]));
add('batch_to_space_nd_cropped', 'BATCH_TO_SPACE_ND', 1, (n, v) => simple(n, 'BATCH_TO_SPACE_ND', v, null,
    [T([12, 2, 2, 2]), C([2], 'INT32', i32([2, 3])), C([2, 2], 'INT32', i32([1, 0, 1, 1])), T([2, 3, 4, 2])]));
add('batch_to_space_nd_i8', 'BATCH_TO_SPACE_ND', 1, (n, v) => simple(n, 'BATCH_TO_SPACE_ND', v, null,
    [T([4, 2, 2, 1], 'INT8', {q: [0.1, -3]}), C([2], 'INT32', i32([2, 2])), C([2, 2], 'INT32', i32([0, 0, 0, 0])),
     T([1, 4, 4, 1], 'INT8', {q: [0.1, -3]})]));

// ---- float math ----
for (const op of ['SIN', 'COS', 'ELU', 'FLOOR', 'CEIL', 'ROUND', 'LOG_SOFTMAX']) {
  add(`${op.toLowerCase()}_f32`, op, 1, (n, v) => simple(n, op, v, op === 'LOG_SOFTMAX' ? ['LogSoftmaxOptions', {}] : null, [T([3, 5]), T([3, 5])]));
}
// Casts of given values (halves, negative zero), where the rounding shows.
add('cast_float32_int32_given', 'CAST', 1, (n, v) => simple(n, 'CAST', v, null, [T([8]), T([8], 'INT32')],
    given(n, [[[8], [-2.7, -1.5, -0.5, 0, 0.5, 1.9, 3.2, 100.99], 'f32']])));
add('cast_float32_bool_given', 'CAST', 1, (n, v) => simple(n, 'CAST', v, null, [T([4]), T([4], 'BOOL')],
    given(n, [[[4], [0, -0.0, 0.25, -3], 'f32']])));
// Float comparisons on given values, so that ties happen.
for (const op of compareOps) {
  add(`${op.toLowerCase()}_f32_ties`, op, 1, (n, v) => simple(n, op, v, null, [T([2, 3]), T([3]), T([2, 3], 'BOOL')],
      given(n, [[[2, 3], [0.5, 1, -2, 3, 0.25, 7], 'f32'], [[3], [0.5, 2, 7], 'f32']])));
}
// Halves, where ROUND's tie rule shows.
add('round_halves', 'ROUND', 1, (n, v) => simple(n, 'ROUND', v, null, [T([8]), T([8])],
    given(n, [[[8], [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49], 'f32']])));

// ---- integer arithmetic: int32 / int64 ADD, SUB, MUL (wrapping), MINIMUM, MAXIMUM, broadcasting ----
add('add_i32_broadcast', 'ADD', 1, (n, v) => simple(n, 'ADD', v, null, [T([2, 3], 'INT32'), T([3], 'INT32'), T([2, 3], 'INT32')]));
add('sub_i64_scalar', 'SUB', 1, (n, v) => simple(n, 'SUB', v, null, [T([5], 'INT64'), T([], 'INT64'), T([5], 'INT64')], ['--int-range', '-1000:1000']));
add('mul_i32_rank3', 'MUL', 1, (n, v) => simple(n, 'MUL', v, null, [T([2, 1, 3], 'INT32'), T([4, 1], 'INT32'), T([2, 4, 3], 'INT32')], ['--int-range', '-3000:3000']));
add('div_i32_broadcast', 'DIV', 1, (n, v) => simple(n, 'DIV', v, null, [T([3, 4], 'INT32'), C([4], 'INT32', i32([3, -3, 7, -2])), T([3, 4], 'INT32')], ['--int-range', '-100:100']));
add('minimum_i32_broadcast', 'MINIMUM', 1, (n, v) => simple(n, 'MINIMUM', v, null, [T([3, 4], 'INT32'), T([4], 'INT32'), T([3, 4], 'INT32')]));
add('maximum_i64_broadcast', 'MAXIMUM', 1, (n, v) => simple(n, 'MAXIMUM', v, null, [T([4, 1], 'INT64'), T([3], 'INT64'), T([4, 3], 'INT64')]));

// ---- MIRROR_PAD, CUMSUM, ONE_HOT, GELU: the ops whose options the ABI carries since 1.2 ----
const mirror = (mode) => ['MirrorPadOptions', {mode}];
add('mirror_pad_reflect_f32', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('REFLECT'),
    [T([2, 3, 4]), C([3, 2], 'INT32', i32([1, 0, 2, 1, 0, 3])), T([3, 6, 7])]));
add('mirror_pad_symmetric_i32_i64_paddings', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('SYMMETRIC'),
    [T([3, 4], 'INT32'), C([2, 2], 'INT64', i64([3, 0, 1, 4])), T([6, 9], 'INT32')]));
add('mirror_pad_reflect_u8', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('REFLECT'),
    [T([1, 3, 3, 2], 'UINT8', {q: [0.1, 7]}), C([4, 2], 'INT32', i32([0, 0, 1, 1, 2, 2, 0, 0])), T([1, 5, 7, 2], 'UINT8', {q: [0.1, 7]})]));
add('mirror_pad_symmetric_i8', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('SYMMETRIC'),
    [T([5], 'INT8', {q: [0.1, -3]}), C([1, 2], 'INT32', i32([2, 5])), T([12], 'INT8', {q: [0.1, -3]})]));
add('mirror_pad_symmetric_i64', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('SYMMETRIC'),
    [T([2, 2], 'INT64'), C([2, 2], 'INT32', i32([1, 2, 2, 1])), T([5, 5], 'INT64')], ['--int-range', '-50:50']));
const cumsum = (exclusive, reverse) => ['CumsumOptions', {exclusive, reverse}];
add('cumsum_f32_axis1', 'CUMSUM', 1, (n, v) => simple(n, 'CUMSUM', v, cumsum(false, false), [T([2, 3, 4]), C([], 'INT32', i32([1])), T([2, 3, 4])]));
add('cumsum_f32_exclusive_reverse', 'CUMSUM', 1, (n, v) => simple(n, 'CUMSUM', v, cumsum(true, true), [T([2, 3, 4]), C([], 'INT32', i32([-1])), T([2, 3, 4])]));
add('cumsum_i32_reverse', 'CUMSUM', 1, (n, v) => simple(n, 'CUMSUM', v, cumsum(false, true), [T([4, 3], 'INT32'), C([], 'INT32', i32([0])), T([4, 3], 'INT32')], ['--int-range', '-1000:1000']));
add('cumsum_i64_exclusive', 'CUMSUM', 1, (n, v) => simple(n, 'CUMSUM', v, cumsum(true, false), [T([5], 'INT64'), C([], 'INT32', i32([0])), T([5], 'INT64')], ['--int-range', '-1000:1000']));
const oneHot = (name, axis, indices, depth, type, on, off, outShape, peerArgs = ['--int-range', '-1:4']) =>
  add(name, 'ONE_HOT', 1, (n, v) => simple(n, 'ONE_HOT', v, ['OneHotOptions', {axis}],
      [indices, C([], 'INT32', i32([depth])), C([], type, on), C([], type, off), T(outShape, type)], peerArgs));
oneHot('one_hot_f32_last_axis', -1, T([2, 3], 'INT32'), 4, 'FLOAT32', f32([2.5]), f32([-1]), [2, 3, 4]);
oneHot('one_hot_i32_i64_indices_axis0', 0, T([3], 'INT64'), 5, 'INT32', i32([7]), i32([-2]), [5, 3]);
oneHot('one_hot_bool_axis1', 1, T([2, 2], 'INT32'), 3, 'BOOL', b8([true]), b8([false]), [2, 3, 2]);
oneHot('one_hot_i64_scalar', 0, T([], 'INT32'), 3, 'INT64', i64([5]), i64([1]), [3]);
oneHot('one_hot_u8', -1, T([4], 'INT32'), 3, 'UINT8', [200], [3], [4, 3]);
oneHot('one_hot_i8_axis1', 1, T([2, 2], 'INT64'), 2, 'INT8', [100], [156], [2, 2, 2]);
const gelu = (approximate) => ['GeluOptions', {approximate}];
add('gelu_f32', 'GELU', 1, (n, v) => simple(n, 'GELU', v, gelu(false), [T([3, 7]), T([3, 7])]));
add('gelu_f32_approximate', 'GELU', 1, (n, v) => simple(n, 'GELU', v, gelu(true), [T([3, 7]), T([3, 7])]));
add('gelu_u8', 'GELU', 2, (n, v) => simple(n, 'GELU', v, gelu(false), [T([4, 64], 'UINT8', {q: [0.03, 130]}), T([4, 64], 'UINT8', {q: [0.02, 12]})]));
// Float TANH, LOGISTIC, EXP, GELU and POW by a constant 2 or 3 (baton computes them eight at a time, and
// the powers by multiplication) on inputs over the functions' whole working range: -12..12 (tanh and the
// logistic saturate), -20..10 (exp), 59 elements so no vector width divides them.
const spread = (count, lo, hi, seed) => {
  const next = lcg32(seed);
  return Array.from({length: count}, (_, i) => (i === 0 ? 0 : lo + (hi - lo) * next()));
};
for (const [op, lo, hi, seed] of [['TANH', -12, 12, 1], ['LOGISTIC', -12, 12, 2], ['EXP', -20, 10, 3]]) {
  add(`${op.toLowerCase()}_f32_wide`, op, 1, (n, v) => simple(n, op, v, null, [T([1, 59]), T([1, 59])],
      given(n, [[[1, 59], spread(59, lo, hi, seed), 'f32']])));
}
add('gelu_f32_wide', 'GELU', 1, (n, v) => simple(n, 'GELU', v, gelu(false), [T([59]), T([59])],
    given(n, [[[59], spread(59, -9, 9, 4), 'f32']])));
add('gelu_f32_approximate_wide', 'GELU', 1, (n, v) => simple(n, 'GELU', v, gelu(true), [T([59]), T([59])],
    given(n, [[[59], spread(59, -9, 9, 5), 'f32']])));
for (const p of [2, 3]) {
  add(`pow_f32_constant_${p}`, 'POW', 1, (n, v) => simple(n, 'POW', v, null, [T([3, 19]), C([], 'FLOAT32', f32([p])), T([3, 19])],
      given(n, [[[3, 19], spread(57, -20, 20, 5 + p), 'f32']])));
}
// Float BATCH_MATMUL: each batch's right operand packed for the GEMM (from 4 rows and 8 columns), with and
// without adj_x / adj_y, broadcast batches; a product too small for the GEMM runs plain loops.
const bmm = (adj_x, adj_y) => ['BatchMatMulOptions', {adj_x, adj_y}];
add('batch_matmul_f32', 'BATCH_MATMUL', 1, (n, v) => simple(n, 'BATCH_MATMUL', v, bmm(false, false), [T([2, 13, 9]), T([2, 9, 11]), T([2, 13, 11])]));
add('batch_matmul_f32_adj_y_heads', 'BATCH_MATMUL', 1, (n, v) => simple(n, 'BATCH_MATMUL', v, bmm(false, true),
    [T([1, 2, 17, 8]), T([1, 2, 19, 8]), T([1, 2, 17, 19])]));
add('batch_matmul_f32_adj_x_broadcast', 'BATCH_MATMUL', 1, (n, v) => simple(n, 'BATCH_MATMUL', v, bmm(true, false),
    [T([3, 7, 5]), T([7, 20]), T([3, 5, 20])]));
add('batch_matmul_f32_both_adjoint_deep', 'BATCH_MATMUL', 1, (n, v) => simple(n, 'BATCH_MATMUL', v, bmm(true, true),
    [T([2, 1, 300, 6]), T([3, 33, 300]), T([2, 3, 6, 33])]));
add('batch_matmul_f32_tiny', 'BATCH_MATMUL', 1, (n, v) => simple(n, 'BATCH_MATMUL', v, bmm(false, false), [T([2, 3]), T([3, 4]), T([2, 4])]));
// 8-bit TANH and int8 ELU: TFLite's tables of the float function; any output scale.
add('tanh_u8', 'TANH', 2, (n, v) => simple(n, 'TANH', v, null, [T([4, 64], 'UINT8', {q: [0.05, 120]}), T([4, 64], 'UINT8', {q: [1 / 128, 128]})]));
add('tanh_i8_other_scale', 'TANH', 2, (n, v) => simple(n, 'TANH', v, null, [T([4, 64], 'INT8', {q: [0.03, 10]}), T([4, 64], 'INT8', {q: [0.009, -3]})]));
add('elu_i8', 'ELU', 1, (n, v) => simple(n, 'ELU', v, null, [T([4, 64], 'INT8', {q: [0.05, 20]}), T([4, 64], 'INT8', {q: [0.03, -60]})]));
// 8-bit ReLUs: rescaled to the output's quantization, clamped to the activation's codes.
add('relu_u8_rescale', 'RELU', 1, (n, v) => simple(n, 'RELU', v, null, [T([4, 32], 'UINT8', {q: [0.05, 120]}), T([4, 32], 'UINT8', {q: [0.03, 10]})]));
add('relu_i8_same_quantization', 'RELU', 2, (n, v) => simple(n, 'RELU', v, null, [T([4, 32], 'INT8', {q: [0.05, -20]}), T([4, 32], 'INT8', {q: [0.05, -20]})]));
add('relu6_i8', 'RELU6', 2, (n, v) => simple(n, 'RELU6', v, null, [T([4, 32], 'INT8', {q: [0.06, 5]}), T([4, 32], 'INT8', {q: [0.025, -128]})]));
add('relu6_u8', 'RELU6', 1, (n, v) => simple(n, 'RELU6', v, null, [T([4, 32], 'UINT8', {q: [0.04, 100]}), T([4, 32], 'UINT8', {q: [0.02, 3]})]));
add('relu_n1_to_1_u8', 'RELU_N1_TO_1', 1, (n, v) => simple(n, 'RELU_N1_TO_1', v, null, [T([4, 32], 'UINT8', {q: [0.02, 128]}), T([4, 32], 'UINT8', {q: [0.009, 130]})]));
add('relu_n1_to_1_i8', 'RELU_N1_TO_1', 1, (n, v) => simple(n, 'RELU_N1_TO_1', v, null, [T([4, 32], 'INT8', {q: [0.015, 0]}), T([4, 32], 'INT8', {q: [0.008, -1]})]));
add('gelu_i8_approximate', 'GELU', 2, (n, v) => simple(n, 'GELU', v, gelu(true), [T([4, 64], 'INT8', {q: [0.04, -5]}), T([4, 64], 'INT8', {q: [0.025, -100]})]));

// ---- L2_POOL_2D, EMBEDDING_LOOKUP, TOPK_V2 ----
const pool = (padding, stride, filter, act = 'NONE') => ['Pool2DOptions',
    {padding, stride_w: stride, stride_h: stride, filter_width: filter, filter_height: filter, fused_activation_function: act}];
add('l2_pool_2d_same', 'L2_POOL_2D', 1, (n, v) => simple(n, 'L2_POOL_2D', v, pool('SAME', 2, 3), [T([1, 7, 8, 3]), T([1, 4, 4, 3])]));
add('l2_pool_2d_valid_relu6', 'L2_POOL_2D', 1, (n, v) => simple(n, 'L2_POOL_2D', v, pool('VALID', 1, 2, 'RELU6'), [T([2, 4, 5, 2]), T([2, 3, 4, 2])]));
const lookup = (name, version, ids, tableShape, type, tableData, q, outType, outShape) => add(name, 'EMBEDDING_LOOKUP', version,
    (n, v) => simple(n, 'EMBEDDING_LOOKUP', v, null, [C([ids.length], 'INT32', i32(ids)), C(tableShape, type, tableData, q ? {q} : {}), T(outShape, outType, q && outType !== 'FLOAT32' ? {q} : {})]));
lookup('embedding_lookup_f32', 1, [2, 0, 2, 1], [3, 2, 2], 'FLOAT32', f32([0.5, -1, 2, 3.25, 4, 5, -6, 7, 8.5, 9, 10, -11]), null, 'FLOAT32', [4, 2, 2]);
lookup('embedding_lookup_u8', 1, [1, 1, 0], [2, 3], 'UINT8', [1, 2, 3, 200, 250, 7], [0.5, 3], 'UINT8', [3, 3]);
lookup('embedding_lookup_i8_hybrid', 3, [0, 2], [3, 4], 'INT8', [1, 255, 3, 128, 5, 6, 7, 8, 127, 200, 11, 0], [0.25, 0], 'FLOAT32', [2, 4]);
const topk = (name, shape, k, type, peerArgs = []) => add(name, 'TOPK_V2', 1, (n, v) => model(n, 'TOPK_V2', v, null,
    [T(shape, type, type.endsWith('INT8') ? {q: [0.1, 0]} : {}), C([], 'INT32', i32([k])),
     T([...shape.slice(0, -1), k], type, type.endsWith('INT8') ? {q: [0.1, 0]} : {}), T([...shape.slice(0, -1), k], 'INT32')],
    {inputs: [0], outputs: [2, 3], opInputs: [0, 1]}, peerArgs));
topk('topk_v2_f32', [3, 10], 4, 'FLOAT32');
topk('topk_v2_i32_ties', [4, 8], 5, 'INT32', ['--int-range', '-2:2']);
topk('topk_v2_u8_rank3', [2, 2, 6], 6, 'UINT8');
topk('topk_v2_i8', [16], 3, 'INT8');
topk('topk_v2_i64', [2, 5], 1, 'INT64', ['--int-range', '-3:3']);
// ---- SCATTER_ND (repeated tuples add up), SEGMENT_SUM ----
add('scatter_nd_f32_rows', 'SCATTER_ND', 1, (n, v) => simple(n, 'SCATTER_ND', v, null,
    [C([3, 1], 'INT32', i32([3, 0, 3])), T([3, 2, 3]), C([3], 'INT32', i32([5, 2, 3])), T([5, 2, 3])]));
add('scatter_nd_i32_elements', 'SCATTER_ND', 1, (n, v) => simple(n, 'SCATTER_ND', v, null,
    [C([2, 2, 2], 'INT32', i32([0, 1, 2, 2, 1, 0, 0, 1])), T([2, 2], 'INT32'), C([2], 'INT32', i32([3, 3])), T([3, 3], 'INT32')], ['--int-range', '-50:50']));
add('scatter_nd_u8', 'SCATTER_ND', 1, (n, v) => simple(n, 'SCATTER_ND', v, null,
    [C([4, 1], 'INT32', i32([1, 1, 0, 1])), T([4, 3], 'UINT8', {q: [0.1, 0]}), C([2], 'INT32', i32([2, 3])), T([2, 3], 'UINT8', {q: [0.1, 0]})]));
add('segment_sum_f32', 'SEGMENT_SUM', 1, (n, v) => simple(n, 'SEGMENT_SUM', v, null,
    [T([5, 2, 3]), C([5], 'INT32', i32([0, 0, 1, 2, 2])), T([3, 2, 3])]));
add('segment_sum_i32', 'SEGMENT_SUM', 1, (n, v) => simple(n, 'SEGMENT_SUM', v, null,
    [T([4, 3], 'INT32'), C([4], 'INT32', i32([0, 0, 0, 1])), T([2, 3], 'INT32')], ['--int-range', '-100:100']));
// LOCAL_RESPONSE_NORMALIZATION: a window past the channels' ends, and the beta TFLite special-cases.
const lrn = (radius, bias, alpha, beta) => ['LocalResponseNormalizationOptions', {radius, bias, alpha, beta}];
add('local_response_normalization', 'LOCAL_RESPONSE_NORMALIZATION', 1, (n, v) => simple(n, 'LOCAL_RESPONSE_NORMALIZATION', v,
    lrn(2, 1.5, 0.3, 0.75), [T([1, 2, 3, 7]), T([1, 2, 3, 7])]));
add('local_response_normalization_beta_half', 'LOCAL_RESPONSE_NORMALIZATION', 1, (n, v) => simple(n, 'LOCAL_RESPONSE_NORMALIZATION', v,
    lrn(1, 0.5, 2, 0.5), [T([2, 1, 2, 5]), T([2, 1, 2, 5])]));

// 8-bit and 16x8 variants, and outputs shaped by the data: their own files.
const kit = {add, simple, model, writeModel, T, C, given, seed, reducer, outDir};
quantizedCases(kit);
dataShapeCases(kit);
arrayCases(kit);
complexCases(kit);
const carry = recurrentCases(kit);
const resized = computedCases(kit);
const invokes = randomCases(kit);
const litert = [...wildCases(kit), ...stablehloCases(kit), ...newTypeCases(kit)];

if (bench) {
  const b = (name, op, options, tensors, version = 1) => simple(`bench_${name}`, op, version, options, tensors);
  b('cast', 'CAST', null, [T([256, 256]), T([256, 256], 'INT32')]);
  b('greater', 'GREATER', null, [T([256, 256]), T([256]), T([256, 256], 'BOOL')]);
  b('select_v2', 'SELECT_V2', null, [T([256, 256], 'BOOL'), T([256, 256]), T([256]), T([256, 256])]);
  b('arg_max', 'ARG_MAX', ['ArgMaxOptions', {output_type: 'INT32'}], [T([256, 256]), C([], 'INT32', i32([-1])), T([256], 'INT32')]);
  b('slice', 'SLICE', null, [T([1, 128, 128, 16]), C([4], 'INT32', i32([0, 16, 16, 0])), C([4], 'INT32', i32([1, 96, 96, 16])), T([1, 96, 96, 16])]);
  model('bench_split_v', 'SPLIT_V', 1, ['SplitVOptions', {num_splits: 3}],
        [T([64, 1024]), C([3], 'INT32', i32([256, -1, 256])), C([], 'INT32', i32([1])), T([64, 256]), T([64, 512]), T([64, 256])],
        {inputs: [0], outputs: [3, 4, 5], opInputs: [0, 1, 2]});
  b('tile', 'TILE', null, [T([64, 64, 8]), C([3], 'INT32', i32([2, 2, 2])), T([128, 128, 16])]);
  b('reduce_max', 'REDUCE_MAX', reducer(false), [T([64, 64, 32]), C([2], 'INT32', i32([1, 2])), T([64])]);
  b('sum', 'SUM', reducer(true), [T([64, 64, 32]), C([1], 'INT32', i32([1])), T([64, 1, 32])]);
  b('resize_nearest', 'RESIZE_NEAREST_NEIGHBOR', ['ResizeNearestNeighborOptions', {align_corners: false, half_pixel_centers: false}],
    [T([1, 64, 64, 16]), C([2], 'INT32', i32([128, 128])), T([1, 128, 128, 16])]);
  // The integer paths of the three ops most models spend their time in: int8 (per-channel weights)
  // and 16x8 (int16 activations, int8 weights, int64 bias).
  const weights = lcg31(7);  // one sequence for all of them
  const w8 = (count) => int8Weights(count, weights);
  const channels = (n, s) => [Array.from({length: n}, (_, i) => s * (1 + (i % 5) / 4)), new Array(n).fill(0), 0];
  const convOptions = ['Conv2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, fused_activation_function: 'RELU', dilation_w_factor: 1, dilation_h_factor: 1}];
  b('conv_2d_i8', 'CONV_2D', convOptions, [T([1, 56, 56, 32], 'INT8', {q: [0.05, -3]}),
    C([32, 3, 3, 32], 'INT8', w8(9216), {q: channels(32, 0.01)}), C([32], 'INT32', i32(Array.from({length: 32}, (_, i) => 40 * i - 600)), {q: channels(32, 0.0005)}),
    T([1, 56, 56, 32], 'INT8', {q: [0.1, -128]})], 3);
  b('conv_2d_16x8', 'CONV_2D', convOptions, [T([1, 56, 56, 32], 'INT16', {q: [0.001, 0]}),
    C([32, 3, 3, 32], 'INT8', w8(9216), {q: channels(32, 0.01)}), C([32], 'INT64', i64(Array.from({length: 32}, (_, i) => 400 * i - 6000)), {q: channels(32, 0.00001)}),
    T([1, 56, 56, 32], 'INT16', {q: [0.002, 0]})], 4);
  const fcOptions = ['FullyConnectedOptions', {fused_activation_function: 'NONE'}];
  b('fully_connected_i8', 'FULLY_CONNECTED', fcOptions, [T([64, 512], 'INT8', {q: [0.05, 2]}),
    C([256, 512], 'INT8', w8(131072), {q: [0.01, 0]}), C([256], 'INT32', i32(Array.from({length: 256}, (_, i) => 7 * i - 900)), {q: [0.0005, 0]}),
    T([64, 256], 'INT8', {q: [0.4, -5]})], 4);
  b('fully_connected_16x8', 'FULLY_CONNECTED', fcOptions, [T([64, 512], 'INT16', {q: [0.001, 0]}),
    C([256, 512], 'INT8', w8(131072), {q: [0.01, 0]}), C([256], 'INT64', i64(Array.from({length: 256}, (_, i) => 70 * i - 9000)), {q: [0.00001, 0]}),
    T([64, 256], 'INT16', {q: [0.01, 0]})], 7);
  b('add_i8', 'ADD', ['AddOptions', {fused_activation_function: 'NONE'}],
    [T([256, 256], 'INT8', {q: [0.05, -3]}), T([256, 256], 'INT8', {q: [0.07, 9]}), T([256, 256], 'INT8', {q: [0.1, -1]})], 2);
  b('add_16x8', 'ADD', ['AddOptions', {fused_activation_function: 'NONE', pot_scale_int16: false}],
    [T([256, 256], 'INT16', {q: [0.001, 0]}), T([256, 256], 'INT16', {q: [0.0007, 0]}), T([256, 256], 'INT16', {q: [0.0015, 0]})], 3);
  // The float ops of transformers and detectors, and the 8-bit ops around 8-bit convolutions, at the sizes
  // those models give them (issue #37's "ten slowest kernels" survey).
  const values = (count, scale = 0.05) => f32(Array.from({length: count}, (_, i) => (((i * 7919) % 41) - 20) * scale));
  const none = {fused_activation_function: 'NONE'};
  for (const [op, name] of [['TANH', 'tanh'], ['LOGISTIC', 'logistic'], ['EXP', 'exp'], ['RSQRT', 'rsqrt'], ['GELU', 'gelu']]) {
    b(name, op, null, [T([128, 512]), T([128, 512])]);
  }
  b('softmax', 'SOFTMAX', ['SoftmaxOptions', {beta: 1}], [T([4, 128, 128]), T([4, 128, 128])]);
  b('mean_last_axis', 'MEAN', reducer(true), [T([196, 192]), C([1], 'INT32', i32([-1])), T([196, 1])]);
  b('batch_matmul', 'BATCH_MATMUL', ['BatchMatMulOptions', {adj_x: false, adj_y: true}], [T([4, 128, 64]), T([4, 128, 64]), T([4, 128, 128])]);
  b('transpose', 'TRANSPOSE', null, [T([1, 128, 4, 64]), C([4], 'INT32', i32([0, 2, 1, 3])), T([1, 4, 128, 64])]);
  b('mul', 'MUL', ['MulOptions', none], [T([128, 512]), T([512]), T([128, 512])]);
  b('add', 'ADD', ['AddOptions', none], [T([128, 512]), T([128, 512]), T([128, 512])]);
  b('squared_difference', 'SQUARED_DIFFERENCE', null, [T([196, 192]), T([196, 1]), T([196, 192])]);
  b('pow', 'POW', null, [T([128, 512]), C([], 'FLOAT32', f32([3])), T([128, 512])]);
  b('fully_connected', 'FULLY_CONNECTED', ['FullyConnectedOptions', {...none, keep_num_dims: true}],
    [T([1, 128, 256]), C([256, 256], 'FLOAT32', values(65536, 0.01)), C([256], 'FLOAT32', values(256)), T([1, 128, 256])]);
  b('fully_connected_nonconst', 'FULLY_CONNECTED', ['FullyConnectedOptions', none], [T([128, 256]), T([256, 256]), T([128, 256])]);
  b('conv_2d', 'CONV_2D', ['Conv2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, fused_activation_function: 'RELU6', dilation_w_factor: 1, dilation_h_factor: 1}],
    [T([1, 56, 56, 32]), C([32, 3, 3, 32], 'FLOAT32', values(9216, 0.01)), C([32], 'FLOAT32', values(32)), T([1, 56, 56, 32])]);
  b('depthwise_conv_2d', 'DEPTHWISE_CONV_2D', ['DepthwiseConv2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, depth_multiplier: 1, fused_activation_function: 'RELU6', dilation_w_factor: 1, dilation_h_factor: 1}],
    [T([1, 112, 112, 32]), C([1, 3, 3, 32], 'FLOAT32', values(288)), C([32], 'FLOAT32', values(32)), T([1, 112, 112, 32])]);
  b('max_pool_2d', 'MAX_POOL_2D', ['Pool2DOptions', {padding: 'VALID', stride_w: 2, stride_h: 2, filter_width: 2, filter_height: 2, fused_activation_function: 'NONE'}],
    [T([1, 112, 112, 32]), T([1, 56, 56, 32])]);
  b('pad', 'PAD', null, [T([1, 56, 56, 32]), C([4, 2], 'INT32', i32([0, 0, 1, 1, 1, 1, 0, 0])), T([1, 58, 58, 32])]);
  b('concatenation', 'CONCATENATION', ['ConcatenationOptions', {axis: 3, fused_activation_function: 'NONE'}],
    [T([1, 160, 160, 3]), T([1, 160, 160, 3]), T([1, 160, 160, 3]), T([1, 160, 160, 3]), T([1, 160, 160, 12])]);
  b('strided_slice', 'STRIDED_SLICE', ['StridedSliceOptions', {}],
    [T([1, 320, 320, 3]), C([4], 'INT32', i32([0, 0, 0, 0])), C([4], 'INT32', i32([1, 320, 320, 3])), C([4], 'INT32', i32([1, 2, 2, 1])), T([1, 160, 160, 3])]);
  b('resize_bilinear', 'RESIZE_BILINEAR', ['ResizeBilinearOptions', {align_corners: false, half_pixel_centers: true}],
    [T([1, 64, 64, 16]), C([2], 'INT32', i32([128, 128])), T([1, 128, 128, 16])], 3);
  const q8 = (shape, scale = 0.05, zero = -3) => T(shape, 'INT8', {q: [scale, zero]});
  b('quantize_i8', 'QUANTIZE', null, [T([1, 128, 128, 16]), q8([1, 128, 128, 16])], 2);
  b('dequantize_i8', 'DEQUANTIZE', null, [q8([1, 128, 128, 16]), T([1, 128, 128, 16])], 2);
  b('depthwise_conv_2d_i8', 'DEPTHWISE_CONV_2D', ['DepthwiseConv2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, depth_multiplier: 1, fused_activation_function: 'RELU6', dilation_w_factor: 1, dilation_h_factor: 1}],
    [q8([1, 112, 112, 32]), C([1, 3, 3, 32], 'INT8', w8(288), {q: [...channels(32, 0.01).slice(0, 2), 3]}),
     C([32], 'INT32', i32(Array.from({length: 32}, (_, i) => 40 * i - 600)), {q: channels(32, 0.0005)}), q8([1, 112, 112, 32], 0.1, -128)], 3);
  b('resize_bilinear_i8', 'RESIZE_BILINEAR', ['ResizeBilinearOptions', {align_corners: false, half_pixel_centers: true}],
    [q8([1, 64, 64, 16]), C([2], 'INT32', i32([128, 128])), q8([1, 128, 128, 16])], 3);
  b('logistic_i8', 'LOGISTIC', null, [q8([128, 512]), q8([128, 512], 1 / 256, -128)], 2);
  b('hard_swish_i8', 'HARD_SWISH', null, [q8([128, 512]), q8([128, 512], 0.04, -10)], 1);
  b('mul_i8', 'MUL', ['MulOptions', none], [q8([128, 512]), q8([128, 512], 0.07, 9), q8([128, 512], 0.1, -1)], 2);
  b('concatenation_i8', 'CONCATENATION', ['ConcatenationOptions', {axis: 3, fused_activation_function: 'NONE'}],
    [q8([1, 64, 64, 64]), q8([1, 64, 64, 32]), q8([1, 64, 64, 96])], 2);
  b('mean_i8', 'MEAN', reducer(false), [q8([1, 28, 28, 64]), C([2], 'INT32', i32([1, 2])), q8([1, 64])], 2);
  b('max_pool_2d_i8', 'MAX_POOL_2D', ['Pool2DOptions', {padding: 'VALID', stride_w: 2, stride_h: 2, filter_width: 2, filter_height: 2, fused_activation_function: 'NONE'}],
    [q8([1, 112, 112, 32]), q8([1, 56, 56, 32])], 2);
  b('softmax_i8', 'SOFTMAX', ['SoftmaxOptions', {beta: 1}], [q8([4, 128, 128]), q8([4, 128, 128], 1 / 256, -128)], 2);
  // The other 8-bit ops of detectors and segmenters (SSD-MobileNetV3's squeeze-excite MUL and ADD, the
  // YOLO heads' pads, slices and upsampling, decoder up-convolutions), at their sizes.
  b('mul_i8_broadcast', 'MUL', ['MulOptions', none], [q8([1, 28, 28, 96]), q8([1, 1, 1, 96], 1 / 256, -128), q8([1, 28, 28, 96], 0.05, -3)], 2);
  b('add_i8_broadcast', 'ADD', ['AddOptions', none], [q8([1, 28, 28, 96]), q8([1, 1, 1, 96], 0.02, 5), q8([1, 28, 28, 96], 0.06, -2)], 2);
  b('sub_i8', 'SUB', ['SubOptions', none], [q8([256, 256]), q8([256, 256], 0.07, 9), q8([256, 256], 0.1, -1)], 2);
  b('resize_nearest_i8', 'RESIZE_NEAREST_NEIGHBOR', ['ResizeNearestNeighborOptions', {align_corners: false, half_pixel_centers: false}],
    [q8([1, 40, 40, 64]), C([2], 'INT32', i32([80, 80])), q8([1, 80, 80, 64])], 3);
  b('pad_i8', 'PAD', null, [q8([1, 80, 80, 32]), C([4, 2], 'INT32', i32([0, 0, 1, 1, 1, 1, 0, 0])), q8([1, 82, 82, 32])], 2);
  b('strided_slice_i8', 'STRIDED_SLICE', ['StridedSliceOptions', {}],
    [q8([1, 320, 320, 3]), C([4], 'INT32', i32([0, 0, 0, 0])), C([4], 'INT32', i32([1, 320, 320, 3])), C([4], 'INT32', i32([1, 2, 2, 1])), q8([1, 160, 160, 3])], 2);
  b('average_pool_2d_i8', 'AVERAGE_POOL_2D', ['Pool2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, filter_width: 3, filter_height: 3, fused_activation_function: 'NONE'}],
    [q8([1, 56, 56, 32]), q8([1, 56, 56, 32])], 2);
  b('tanh_i8', 'TANH', null, [q8([128, 512]), q8([128, 512], 1 / 128, 0)], 2);
  b('leaky_relu_i8', 'LEAKY_RELU', ['LeakyReluOptions', {alpha: 0.1}], [q8([128, 512]), q8([128, 512], 0.04, -100)], 2);
  b('transpose_i8', 'TRANSPOSE', null, [q8([1, 64, 64, 32]), C([4], 'INT32', i32([0, 3, 1, 2])), q8([1, 32, 64, 64])], 2);
  b('transpose_conv_i8', 'TRANSPOSE_CONV', ['TransposeConvOptions', {padding: 'SAME', stride_w: 2, stride_h: 2}],
    [C([4], 'INT32', i32([1, 56, 56, 32])), C([32, 3, 3, 32], 'INT8', w8(9216), {q: [...channels(32, 0.01).slice(0, 2), 0]}),
     q8([1, 28, 28, 32]), q8([1, 56, 56, 32], 0.1, -5)], 2);
  // And the rest of what segmenters, detectors and landmark models put around their convolutions.
  b('transpose_conv', 'TRANSPOSE_CONV', ['TransposeConvOptions', {padding: 'SAME', stride_w: 2, stride_h: 2}],
    [C([4], 'INT32', i32([1, 56, 56, 32])), C([32, 3, 3, 32], 'FLOAT32', values(9216, 0.01)), T([1, 28, 28, 32]), T([1, 56, 56, 32])]);
  b('average_pool_2d', 'AVERAGE_POOL_2D', ['Pool2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, filter_width: 3, filter_height: 3, fused_activation_function: 'NONE'}],
    [T([1, 56, 56, 32]), T([1, 56, 56, 32])]);
  b('l2_normalization', 'L2_NORMALIZATION', ['L2NormOptions', {fused_activation_function: 'NONE'}], [T([256, 256]), T([256, 256])]);
  b('depth_to_space', 'DEPTH_TO_SPACE', ['DepthToSpaceOptions', {block_size: 2}], [T([1, 64, 64, 64]), T([1, 128, 128, 16])]);
  b('space_to_depth', 'SPACE_TO_DEPTH', ['SpaceToDepthOptions', {block_size: 2}], [T([1, 128, 128, 16]), T([1, 64, 64, 64])]);
  b('gather', 'GATHER', ['GatherOptions', {axis: 0}], [T([4096, 64]), C([512], 'INT32', i32(Array.from({length: 512}, (_, i) => (i * 37) % 4096))), T([512, 64])]);
  b('mirror_pad', 'MIRROR_PAD', ['MirrorPadOptions', {mode: 'REFLECT'}], [T([1, 64, 64, 32]), C([4, 2], 'INT32', i32([0, 0, 2, 2, 2, 2, 0, 0])), T([1, 68, 68, 32])]);
  b('space_to_batch_nd', 'SPACE_TO_BATCH_ND', null, [T([1, 64, 64, 32]), C([2], 'INT32', i32([2, 2])), C([2, 2], 'INT32', i32([0, 0, 0, 0])), T([4, 32, 32, 32])]);
  b('batch_to_space_nd', 'BATCH_TO_SPACE_ND', null, [T([4, 32, 32, 32]), C([2], 'INT32', i32([2, 2])), C([2, 2], 'INT32', i32([0, 0, 0, 0])), T([1, 64, 64, 32])]);
  b('log_softmax', 'LOG_SOFTMAX', null, [T([128, 512]), T([128, 512])]);
  b('div', 'DIV', ['DivOptions', none], [T([128, 512]), T([512]), T([128, 512])]);
  b('sqrt', 'SQRT', null, [T([128, 512]), T([128, 512])]);
  b('hard_swish', 'HARD_SWISH', null, [T([128, 512]), T([128, 512])]);
  b('prelu', 'PRELU', null, [T([1, 64, 64, 32]), C([1, 1, 32], 'FLOAT32', values(32, 0.01)), T([1, 64, 64, 32])]);
  b('maximum', 'MAXIMUM', null, [T([128, 512]), T([128, 512]), T([128, 512])]);
  b('tanh_f32', 'TANH', null, [T([128, 512]), T([128, 512])]);
  b('cumsum', 'CUMSUM', ['CumsumOptions', {exclusive: false, reverse: false}], [T([256, 256]), C([], 'INT32', i32([1])), T([256, 256])]);
  model('bench_topk_v2', 'TOPK_V2', 1, null, [T([64, 1000]), C([], 'INT32', i32([5])), T([64, 5]), T([64, 5], 'INT32')],
        {inputs: [0], outputs: [2, 3], opInputs: [0, 1]});
  b('arg_max_i8', 'ARG_MAX', ['ArgMaxOptions', {output_type: 'INT32'}], [q8([1, 128, 128, 21]), C([], 'INT32', i32([3])), T([1, 128, 128], 'INT32')], 2);
  b('prelu_i8', 'PRELU', null, [q8([1, 64, 64, 32]), C([1, 1, 32], 'INT8', w8(32), {q: [0.01, 0]}), q8([1, 64, 64, 32], 0.06, -2)]);
  b('maximum_i8', 'MAXIMUM', null, [q8([128, 512]), q8([128, 512]), q8([128, 512])], 2);
  b('depth_to_space_i8', 'DEPTH_TO_SPACE', ['DepthToSpaceOptions', {block_size: 2}], [q8([1, 64, 64, 64]), q8([1, 128, 128, 16])], 2);
  b('gather_i8', 'GATHER', ['GatherOptions', {axis: 0}], [q8([4096, 64]), C([512], 'INT32', i32(Array.from({length: 512}, (_, i) => (i * 37) % 4096))), q8([512, 64])], 2);
  model('bench_split_i8', 'SPLIT', 2, ['SplitOptions', {num_splits: 2}],
        [C([], 'INT32', i32([3])), q8([1, 64, 64, 64]), q8([1, 64, 64, 32]), q8([1, 64, 64, 32])],
        {inputs: [1], outputs: [2, 3], opInputs: [0, 1]});
  b('l2_normalization_i8', 'L2_NORMALIZATION', ['L2NormOptions', {fused_activation_function: 'NONE'}], [q8([256, 256]), q8([256, 256], 1 / 128, 0)], 2);
  b('squared_difference_i8', 'SQUARED_DIFFERENCE', null, [q8([128, 512]), q8([128, 512], 0.07, 9), q8([128, 512], 0.2, -100)], 2);
  b('reduce_max_i8', 'REDUCE_MAX', reducer(false), [q8([64, 64, 32]), C([2], 'INT32', i32([1, 2])), q8([64])], 2);
  b('sum_i8', 'SUM', reducer(true), [q8([64, 64, 32]), C([1], 'INT32', i32([1])), q8([64, 1, 32], 0.5, 0)], 2);
  // The ops of 8-bit transformers (attention's BATCH_MATMUL, layer norm's MEAN over the last axis, RSQRT)
  // and of detectors' post-processing (comparisons, PACK, requantizing QUANTIZE, a uint8 concatenation
  // that rescales).
  b('batch_matmul_i8', 'BATCH_MATMUL', ['BatchMatMulOptions', {adj_x: false, adj_y: true}],
    [q8([4, 128, 64]), q8([4, 128, 64], 0.04, 2), q8([4, 128, 128], 0.5, -1)], 2);
  b('mean_last_axis_i8', 'MEAN', reducer(true), [q8([196, 192]), C([1], 'INT32', i32([-1])), q8([196, 1])], 2);
  b('rsqrt_i8', 'RSQRT', null, [q8([128, 512], 0.05, -128), q8([128, 512], 0.02, -128)], 2);
  b('logistic_u8', 'LOGISTIC', null, [T([128, 512], 'UINT8', {q: [0.05, 128]}), T([128, 512], 'UINT8', {q: [1 / 256, 0]})]);
  b('less_i8', 'LESS', null, [q8([256, 256]), q8([256, 256], 0.07, 9), T([256, 256], 'BOOL')], 2);
  b('requantize_i8', 'QUANTIZE', null, [q8([1, 128, 128, 16]), q8([1, 128, 128, 16], 0.07, 5)], 2);
  b('concatenation_u8_rescale', 'CONCATENATION', ['ConcatenationOptions', {axis: 1, fused_activation_function: 'NONE'}],
    [T([1, 1917, 91], 'UINT8', {q: [0.09, 179]}), T([1, 1917, 91], 'UINT8', {q: [0.04, 148]}), T([1, 3834, 91], 'UINT8', {q: [0.05, 128]})]);
  model('bench_pack_i8', 'PACK', 2, ['PackOptions', {values_count: 2, axis: 1}],
        [q8([1917, 4]), q8([1917, 4]), q8([1917, 2, 4])], {inputs: [0, 1], outputs: [2], opInputs: [0, 1]});
  b('gelu_i8', 'GELU', ['GeluOptions', {approximate: false}], [q8([128, 512]), q8([128, 512], 0.04, -100)], 2);
  b('arg_max_u8', 'ARG_MAX', ['ArgMaxOptions', {output_type: 'INT32'}], [T([1, 128, 128, 21], 'UINT8', {q: [0.1, 0]}), C([], 'INT32', i32([3])), T([1, 128, 128], 'INT32')], 2);
} else if (versions) {
  // One model per op and version; the first case of each op serves.
  const seen = new Set();
  for (const c of cases) {
    if (seen.has(c.op)) continue;
    seen.add(c.op);
    for (let v = 1; v <= 16; ++v) c.fn(`v${c.op}_${v}`, v);
  }
} else {
  for (const c of cases) c.fn(c.name, c.version);
  fs.writeFileSync(path.join(outDir, 'carry.json'), JSON.stringify(carry, null, 1) + '\n');
  fs.writeFileSync(path.join(outDir, 'resized.json'), JSON.stringify(resized, null, 1) + '\n');
  fs.writeFileSync(path.join(outDir, 'invokes.json'), JSON.stringify(invokes, null, 1) + '\n');
  fs.writeFileSync(path.join(outDir, 'litert.json'), JSON.stringify(litert, null, 1) + '\n');
}
