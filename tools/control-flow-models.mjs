#!/usr/bin/env node
// control-flow-models.mjs - write small TFLite models with several subgraphs (as flatc JSON): loops,
// branches, resource variables initialised by CALL_ONCE, signatures on other subgraphs.
//
//   node tools/control-flow-models.mjs OUT_DIR          OUT_DIR/NAME.json and NAME.args for every case
//   node tools/control-flow-models.mjs --bench OUT_DIR  bench_while.json: a loop of 100000 iterations whose
//                                                       body only counts, for the cost of one iteration
//
// NAME.args holds the tflite-peer arguments of the case (seed, integer range), or "--no-reference" for a
// model the native library cannot give a useful output for (an endless loop, kept for cancellation);
// "--litert" first: a model TFLite 2.9 cannot run (STABLEHLO_COMPOSITE, STABLEHLO_CASE), whose reference is
// LiteRT 2.5.
// tools/make-control-flow-cases.sh turns the JSON into .tflite with flatc and runs the native TFLite
// library for the reference outputs. Constants are fixed here, so a rerun writes the same files.
import fs from 'node:fs';
import path from 'node:path';

import {f32, i32} from './testgen/bytes.mjs';
import {writeNpyOf} from './testgen/npy.mjs';
import {OperatorCodes, model, operator, outDirArgs, tensor, writeJson} from './testgen/tflite-json.mjs';

const {outDir, flag} = outDirArgs('control-flow-models.mjs', ['--bench']);
const bench = flag === '--bench';

const optionsOf = {
  ADD: 'AddOptions', SUB: 'SubOptions', CONCATENATION: 'ConcatenationOptions', MUL: 'MulOptions', WHILE: 'WhileOptions', IF: 'IfOptions', CALL_ONCE: 'CallOnceOptions',
  VAR_HANDLE: 'VarHandleOptions',
};
const options2Of = {STABLEHLO_COMPOSITE: 'StableHLOCompositeOptions', STABLEHLO_CASE: 'StablehloCaseOptions'};

// A model from subgraphs written as {tensors: [{shape, type, data, signature}], inputs, outputs, ops: [[OP, ins,
// outs, options]]}; operator codes are collected across subgraphs.
function write(name, subgraphs, {signatures = [], peer = []} = {}) {
  const buffers = [{}];
  const codes = new OperatorCodes();
  const sgs = subgraphs.map((g, s) => ({
    name: g.name ?? `subgraph${s}`,
    inputs: g.inputs,
    outputs: g.outputs,
    tensors: g.tensors.map((t, i) => tensor(t, t.name ?? `s${s}_t${i}`, buffers)),
    operators: g.ops.map(([op, inputs, outputs, options]) => {
      if (options && options2Of[op]) {  // options of the later ops: the second union
        return {...operator(codes.index(op), inputs, outputs), builtin_options_2_type: options2Of[op], builtin_options_2: options};
      }
      return operator(codes.index(op), inputs, outputs, options && [optionsOf[op], options]);
    }),
  }));
  writeJson(path.join(outDir, `${name}.json`), model(`baton control-flow case ${name}`, codes.list, sgs, buffers, signatures));
  fs.writeFileSync(path.join(outDir, `${name}.args`), peer.join(' ') + '\n');
}

const scalarI32 = {shape: [], type: 'INT32'};
const f2 = {shape: [2], type: 'FLOAT32'};

// i = 0; while i < limit { i += 1 } (no inputs: the loop always runs `limit` times)
function countingLoop(name, limit, peer) {
  write(name, [
    {tensors: [{shape: [], type: 'INT32', data: i32([0])}, scalarI32], inputs: [], outputs: [1], ops: [
      ['WHILE', [0], [1], {cond_subgraph_index: 1, body_subgraph_index: 2}]]},
    {name: 'cond', tensors: [scalarI32, {shape: [], type: 'INT32', data: i32([limit])}, {shape: [], type: 'BOOL'}],
     inputs: [0], outputs: [2], ops: [['LESS', [0, 1], [2]]]},
    {name: 'body', tensors: [scalarI32, {shape: [], type: 'INT32', data: i32([1])}, scalarI32], inputs: [0], outputs: [2],
     ops: [['ADD', [0, 1], [2], {}]]},
  ], {peer});
}
if (bench) {
  countingLoop('bench_while', 100000, []);
  process.exit(0);
}

// A counting loop: while i < 10 { i += 1; x = x * 1.5 + 0.25 }. The body's ADD and MUL can go to a delegate.
write('while_count', [
  {tensors: [scalarI32, f2, scalarI32, f2], inputs: [0, 1], outputs: [2, 3], ops: [
    ['WHILE', [0, 1], [2, 3], {cond_subgraph_index: 1, body_subgraph_index: 2}]]},
  {name: 'cond', tensors: [scalarI32, f2, {shape: [], type: 'INT32', data: i32([10])}, {shape: [], type: 'BOOL'}],
   inputs: [0, 1], outputs: [3], ops: [['LESS', [0, 2], [3]]]},
  {name: 'body', tensors: [scalarI32, f2, {shape: [], type: 'INT32', data: i32([1])}, scalarI32,
    {shape: [2], type: 'FLOAT32', data: f32([1.5, 1.5])}, f2, {shape: [2], type: 'FLOAT32', data: f32([0.25, 0.25])}, f2],
   inputs: [0, 1], outputs: [3, 7], ops: [
     ['ADD', [0, 2], [3], {}], ['MUL', [1, 4], [5], {}], ['ADD', [5, 6], [7], {}]]},
], {peer: ['--int-range', '0:6']});

// Fibonacci in floats: the body passes b through as the new a (an output that is also an input).
write('while_fibonacci', [
  {tensors: [scalarI32, {shape: [3], type: 'FLOAT32'}, {shape: [3], type: 'FLOAT32'}, scalarI32,
    {shape: [3], type: 'FLOAT32'}, {shape: [3], type: 'FLOAT32'}],
   inputs: [0, 1, 2], outputs: [3, 4, 5], ops: [
     ['WHILE', [0, 1, 2], [3, 4, 5], {cond_subgraph_index: 1, body_subgraph_index: 2}]]},
  {name: 'cond', tensors: [scalarI32, {shape: [3], type: 'FLOAT32'}, {shape: [3], type: 'FLOAT32'},
    {shape: [], type: 'INT32', data: i32([0])}, {shape: [], type: 'BOOL'}],
   inputs: [0, 1, 2], outputs: [4], ops: [['GREATER', [0, 3], [4]]]},
  {name: 'body', tensors: [scalarI32, {shape: [3], type: 'FLOAT32'}, {shape: [3], type: 'FLOAT32'},
    {shape: [], type: 'INT32', data: i32([-1])}, scalarI32, {shape: [3], type: 'FLOAT32'}],
   inputs: [0, 1, 2], outputs: [4, 2, 5], ops: [['ADD', [0, 3], [4], {}], ['ADD', [1, 2], [5], {}]]},
], {peer: ['--int-range', '0:12']});

// IF on a computed condition: n > 0 ? a + b : a * b. Two seeds take the two branches.
const ifModel = [
  {tensors: [scalarI32, {shape: [4], type: 'FLOAT32'}, {shape: [4], type: 'FLOAT32'},
    {shape: [], type: 'INT32', data: i32([0])}, {shape: [], type: 'BOOL'}, {shape: [4], type: 'FLOAT32'}],
   inputs: [0, 1, 2], outputs: [5], ops: [
     ['GREATER', [0, 3], [4]], ['IF', [4, 1, 2], [5], {then_subgraph_index: 1, else_subgraph_index: 2}]]},
  {name: 'then', tensors: [{shape: [4], type: 'FLOAT32'}, {shape: [4], type: 'FLOAT32'}, {shape: [4], type: 'FLOAT32'}],
   inputs: [0, 1], outputs: [2], ops: [['ADD', [0, 1], [2], {}]]},
  {name: 'else', tensors: [{shape: [4], type: 'FLOAT32'}, {shape: [4], type: 'FLOAT32'}, {shape: [4], type: 'FLOAT32'}],
   inputs: [0, 1], outputs: [2], ops: [['MUL', [0, 1], [2], {}]]},
];
write('if_then', ifModel, {peer: ['--int-range', '1:9']});
write('if_else', ifModel, {peer: ['--int-range', '-9:0']});

// An accumulator: CALL_ONCE sets the variable to [10, 20]; each invoke adds x to it and returns the sum.
write('call_once_accumulator', [
  {tensors: [f2, {shape: [], type: 'RESOURCE'}, f2, f2], inputs: [0], outputs: [3], ops: [
    ['CALL_ONCE', [], [], {init_subgraph_index: 1}],
    ['VAR_HANDLE', [], [1], {container: '', shared_name: 'acc'}],
    ['READ_VARIABLE', [1], [2]],
    ['ADD', [2, 0], [3], {}],
    ['ASSIGN_VARIABLE', [1, 3], []]]},
  {name: 'init', tensors: [{shape: [], type: 'RESOURCE'}, {shape: [2], type: 'FLOAT32', data: f32([10, 20])}],
   inputs: [], outputs: [], ops: [
     ['VAR_HANDLE', [], [0], {container: '', shared_name: 'acc'}], ['ASSIGN_VARIABLE', [0, 1], []]]},
]);

// Loop variables that change shape: while i < 4 { i += 1; acc = concat(acc, x); x = x * 1.5 } from acc = x,
// so acc gains a row each iteration (the body is prepared again for each new shape); the ADD after the loop
// reads acc, whose shape is known only at invoke. Converters declare such tensors with -1 dimensions.
const rows = (n) => ({shape: [n, 2], type: 'FLOAT32', signature: [-1, 2]});
const x12 = {shape: [1, 2], type: 'FLOAT32'};
write('while_grows', [
  {tensors: [scalarI32, x12, scalarI32, x12, rows(1), {shape: [2], type: 'FLOAT32', data: f32([0.5, -1])}, rows(1)],
   inputs: [0, 1], outputs: [2, 4, 6], ops: [
     ['WHILE', [0, 1, 1], [2, 3, 4], {cond_subgraph_index: 1, body_subgraph_index: 2}],
     ['ADD', [4, 5], [6], {}]]},
  {name: 'cond', tensors: [scalarI32, x12, rows(1), {shape: [], type: 'INT32', data: i32([4])}, {shape: [], type: 'BOOL'}],
   inputs: [0, 1, 2], outputs: [4], ops: [['LESS', [0, 3], [4]]]},
  {name: 'body', tensors: [scalarI32, x12, rows(1), {shape: [], type: 'INT32', data: i32([1])}, scalarI32,
    {shape: [1, 2], type: 'FLOAT32', data: f32([1.5, 1.5])}, x12, rows(2)],
   inputs: [0, 1, 2], outputs: [4, 6, 7], ops: [
     ['ADD', [0, 3], [4], {}], ['MUL', [1, 5], [6], {}], ['CONCATENATION', [2, 1], [7], {axis: 0}]]},
], {peer: ['--int-range', '0:1']});

// IF branches of different shapes: n > 0 ? concat(x, x) : x * 2, twice (the second IF reads the first's
// output, known only at invoke), then an ADD. Two seeds take the two branches.
const ifShapes = [
  {tensors: [scalarI32, {shape: [2, 2], type: 'FLOAT32'}, {shape: [], type: 'INT32', data: i32([0])}, {shape: [], type: 'BOOL'},
    rows(2), rows(2), {shape: [2], type: 'FLOAT32', data: f32([1, -2])}, rows(2)],
   inputs: [0, 1], outputs: [4, 7], ops: [
     ['GREATER', [0, 2], [3]], ['IF', [3, 1], [4], {then_subgraph_index: 1, else_subgraph_index: 2}],
     ['IF', [3, 4], [5], {then_subgraph_index: 1, else_subgraph_index: 2}], ['ADD', [5, 6], [7], {}]]},
  {name: 'then', tensors: [rows(2), rows(4)], inputs: [0], outputs: [1], ops: [['CONCATENATION', [0, 0], [1], {axis: 0}]]},
  {name: 'else', tensors: [rows(2), {shape: [1], type: 'FLOAT32', data: f32([2])}, rows(2)], inputs: [0], outputs: [2],
   ops: [['MUL', [0, 1], [2], {}]]},
];
write('if_shapes_then', ifShapes, {peer: ['--int-range', '1:9']});
write('if_shapes_else', ifShapes, {peer: ['--int-range', '-9:0']});

// A resource variable that grows: CALL_ONCE sets it to [7]; each invoke reads it, appends x and assigns the
// longer value back, returning it. The model declares the read [1] and the concatenation [3]: their
// shapes are the variable's at invoke.
const vec = (n) => ({shape: [n], type: 'FLOAT32', signature: [-1]});
write('variable_grows', [
  {tensors: [f2, {shape: [], type: 'RESOURCE'}, vec(1), vec(3)], inputs: [0], outputs: [3], ops: [
    ['CALL_ONCE', [], [], {init_subgraph_index: 1}],
    ['VAR_HANDLE', [], [1], {container: '', shared_name: 'grow'}],
    ['READ_VARIABLE', [1], [2]],
    ['CONCATENATION', [2, 0], [3], {axis: 0}],
    ['ASSIGN_VARIABLE', [1, 3], []]]},
  {name: 'init', tensors: [{shape: [], type: 'RESOURCE'}, {shape: [1], type: 'FLOAT32', data: f32([7])}],
   inputs: [], outputs: [], ops: [
     ['VAR_HANDLE', [], [0], {container: '', shared_name: 'grow'}], ['ASSIGN_VARIABLE', [0, 1], []]]},
]);

// Two loops share their condition and body with loop variables of different shapes ([3], then [2]): each
// prepares the body for its own shapes again before it runs (x = x * 1.5 while i < 3). TFLite 2.9 fails
// its invoke (its first loop copies into the body as the second loop's prepare left it), so the test
// derives the outputs by hand.
write('while_shared_body', [
  {tensors: [scalarI32, f2, {shape: [3], type: 'FLOAT32'}, scalarI32, f2, scalarI32, {shape: [3], type: 'FLOAT32'}],
   inputs: [0, 1, 2], outputs: [4, 6], ops: [
     ['WHILE', [0, 2], [5, 6], {cond_subgraph_index: 1, body_subgraph_index: 2}],
     ['WHILE', [0, 1], [3, 4], {cond_subgraph_index: 1, body_subgraph_index: 2}]]},
  {name: 'cond', tensors: [scalarI32, vec(2), {shape: [], type: 'INT32', data: i32([3])}, {shape: [], type: 'BOOL'}],
   inputs: [0, 1], outputs: [3], ops: [['LESS', [0, 2], [3]]]},
  {name: 'body', tensors: [scalarI32, vec(2), {shape: [], type: 'INT32', data: i32([1])}, scalarI32,
    {shape: [1], type: 'FLOAT32', data: f32([1.5])}, vec(2)],
   inputs: [0, 1], outputs: [3, 5], ops: [['ADD', [0, 2], [3], {}], ['MUL', [1, 4], [5], {}]]},
], {peer: ['--no-reference']});

// A signature on subgraph 1: "double" runs subgraph 0 (x + x), "triple" subgraph 1 (x * 3).
write('signatures', [
  {name: 'double', tensors: [f2, f2], inputs: [0], outputs: [1], ops: [['ADD', [0, 0], [1], {}]]},
  {name: 'triple', tensors: [f2, {shape: [2], type: 'FLOAT32', data: f32([3, 3])}, f2], inputs: [0], outputs: [2],
   ops: [['MUL', [0, 1], [2], {}]]},
], {signatures: [
  {signature_key: 'double', subgraph_index: 0, inputs: [{name: 'x', tensor_index: 0}], outputs: [{name: 'y', tensor_index: 1}]},
  {signature_key: 'triple', subgraph_index: 1, inputs: [{name: 'x', tensor_index: 0}], outputs: [{name: 'y', tensor_index: 2}]},
]});

// A shape computed from data: RESHAPE(x, s + 0) where s is an input; the MUL after it reads a tensor whose
// shape is known only at invoke. The model declares both outputs [1, 1]: the shapes come from the data.
writeNpyOf(path.join(outDir, 'reshape_computed.in0.npy'), 'FLOAT32', [2, 3, 4], Array.from({length: 24}, (_, i) => i * 0.5 - 3));
writeNpyOf(path.join(outDir, 'reshape_computed.in1.npy'), 'INT32', [2], [4, -1]);
write('reshape_computed', [
  {tensors: [{shape: [2, 3, 4], type: 'FLOAT32'}, {shape: [2], type: 'INT32'}, {shape: [2], type: 'INT32', data: i32([0, 0])},
    {shape: [2], type: 'INT32'}, {shape: [1, 1], type: 'FLOAT32'}, {shape: [1], type: 'FLOAT32', data: f32([2])},
    {shape: [1, 1], type: 'FLOAT32'}],
   inputs: [0, 1], outputs: [4, 6], ops: [
     ['ADD', [1, 2], [3], {}], ['RESHAPE', [0, 3], [4]], ['MUL', [4, 5], [6], {}]]},
], {peer: ['--inputs', path.join(outDir, 'reshape_computed.in0.npy'), path.join(outDir, 'reshape_computed.in1.npy')]});

// STABLEHLO_COMPOSITE (what ai-edge-torch writes for attention, layer norm, GELU...): the runtime runs
// its decomposition subgraph, as LiteRT does (which wants the attributes, a flexbuffer map, present: an
// empty map here). One input, x * x + x then halved.
const noAttributes = [0, 0, 1, 0, 0, 36, 1];
write('composite_one_input', [
  {tensors: [f2, f2, {shape: [2], type: 'FLOAT32', data: f32([3, 3])}, f2], inputs: [0], outputs: [3], ops: [
    ['STABLEHLO_COMPOSITE', [0], [1], {name: 'baton.test_square_plus', decomposition_subgraph_index: 1,
      composite_attributes: noAttributes, version: 1}],
    ['ADD', [1, 2], [3], {}]]},
  {name: 'decomposition', tensors: [f2, f2, f2, {shape: [], type: 'FLOAT32', data: f32([0.5])}, f2], inputs: [0], outputs: [4],
   ops: [['MUL', [0, 0], [1], {}], ['ADD', [1, 0], [2], {}], ['MUL', [2, 3], [4], {}]]},
], {peer: ['--litert']});
// Two inputs, two outputs, the same decomposition called by two composites (one reads the other's output).
const f23 = {shape: [2, 3], type: 'FLOAT32'};
write('composite_two_outputs_shared', [
  {tensors: [f23, f23, f23, f23, f23, f23], inputs: [0, 1], outputs: [4, 5], ops: [
    ['STABLEHLO_COMPOSITE', [0, 1], [2, 3], {name: 'baton.test_sum_product', decomposition_subgraph_index: 1, composite_attributes: noAttributes}],
    ['STABLEHLO_COMPOSITE', [2, 1], [4, 5], {name: 'baton.test_sum_product', decomposition_subgraph_index: 1, composite_attributes: noAttributes}]]},
  {name: 'decomposition', tensors: [f23, f23, f23, f23], inputs: [0, 1], outputs: [2, 3],
   ops: [['ADD', [0, 1], [2], {}], ['MUL', [0, 1], [3], {}]]},
], {peer: ['--litert']});

// STABLEHLO_CASE: input 0, an INT32 index, picks the branch; an index out of range runs the last one (the
// StableHLO spec, and LiteRT). Three branches of one shape: x + x, x * x, x * 0.5; the index comes from
// the case's input file: 1, past the end (7) and negative (-2) take the last branch.
const caseModel = [
  {tensors: [scalarI32, f23, f23], inputs: [0, 1], outputs: [2], ops: [
    ['STABLEHLO_CASE', [0, 1], [2], {branch_subgraph_indices: [1, 2, 3]}]]},
  {name: 'twice', tensors: [f23, f23], inputs: [0], outputs: [1], ops: [['ADD', [0, 0], [1], {}]]},
  {name: 'square', tensors: [f23, f23], inputs: [0], outputs: [1], ops: [['MUL', [0, 0], [1], {}]]},
  {name: 'half', tensors: [f23, {shape: [], type: 'FLOAT32', data: f32([0.5])}, f23], inputs: [0], outputs: [2],
   ops: [['MUL', [0, 1], [2], {}]]},
];
const caseX = [1.5, -2, 0.25, 3, -0.5, 7];
for (const [name, index] of [['case_branch', 1], ['case_index_past_end', 7], ['case_index_negative', -2]]) {
  const files = [path.join(outDir, `${name}.in0.npy`), path.join(outDir, `${name}.in1.npy`)];
  writeNpyOf(files[0], 'INT32', [], [index]);
  writeNpyOf(files[1], 'FLOAT32', [2, 3], caseX);
  write(name, caseModel, {peer: ['--litert', '--inputs', ...files]});
}
// Branches of different shapes (concat(x, y) and concat(y, x), or x - y and x * y): the outputs' shapes are
// the branch's, known at invoke. LiteRT 2.5 gives outputs it never wrote for this model (denormal garbage,
// either index), so tests/control_flow_shapes_test.cc derives the values by hand.
write('case_shapes', [
  {tensors: [scalarI32, rows(2), rows(2), rows(2), rows(2)], inputs: [0, 1, 2], outputs: [3, 4], ops: [
    ['STABLEHLO_CASE', [0, 1, 2], [3, 4], {branch_subgraph_indices: [1, 2]}]]},
  {name: 'stack', tensors: [rows(2), rows(2), rows(4), rows(4)], inputs: [0, 1], outputs: [2, 3], ops: [
    ['CONCATENATION', [0, 1], [2], {axis: 0}], ['CONCATENATION', [1, 0], [3], {axis: 0}]]},
  {name: 'differ', tensors: [rows(2), rows(2), rows(2), rows(2)], inputs: [0, 1], outputs: [2, 3], ops: [
    ['SUB', [0, 1], [2], {}], ['MUL', [0, 1], [3], {}]]},
], {peer: ['--no-reference']});

// STABLEHLO_CASE nodes that cannot run, each refused with its reason: a FLOAT32 index, no branches, a
// branch past the model's subgraphs, a branch that takes two inputs where the node gives one.
const badCase = (index, options, branchInputs = 1) => [
  {tensors: [{shape: [], type: index}, f23, f23], inputs: [0, 1], outputs: [2], ops: [['STABLEHLO_CASE', [0, 1], [2], options]]},
  {name: 'twice', tensors: [f23, f23, f23], inputs: branchInputs === 1 ? [0] : [0, 1], outputs: [2], ops: [['ADD', [0, 0], [2], {}]]},
];
write('case_bad_index_type', badCase('FLOAT32', {branch_subgraph_indices: [1]}), {peer: ['--no-reference']});
write('case_bad_no_branches', badCase('INT32', {branch_subgraph_indices: []}), {peer: ['--no-reference']});
write('case_bad_branch_missing', badCase('INT32', {branch_subgraph_indices: [1, 9]}), {peer: ['--no-reference']});
write('case_bad_branch_inputs', badCase('INT32', {branch_subgraph_indices: [1]}, 2), {peer: ['--no-reference']});

// A loop that never ends (its condition is the constant true): only cancellation stops it.
write('while_endless', [
  {tensors: [scalarI32, scalarI32], inputs: [0], outputs: [1], ops: [
    ['WHILE', [0], [1], {cond_subgraph_index: 1, body_subgraph_index: 2}]]},
  {name: 'cond', tensors: [scalarI32, {shape: [], type: 'BOOL', data: [1]}], inputs: [0], outputs: [1], ops: []},
  {name: 'body', tensors: [scalarI32, {shape: [], type: 'INT32', data: i32([1])}, scalarI32], inputs: [0], outputs: [2],
   ops: [['ADD', [0, 1], [2], {}]]},
], {peer: ['--no-reference']});

// A subgraph that runs itself: refused at load.
write('while_recursive', [
  {tensors: [scalarI32, scalarI32], inputs: [0], outputs: [1], ops: [
    ['WHILE', [0], [1], {cond_subgraph_index: 1, body_subgraph_index: 0}]]},
  {name: 'cond', tensors: [scalarI32, {shape: [], type: 'BOOL', data: [0]}], inputs: [0], outputs: [1], ops: []},
], {peer: ['--no-reference']});
