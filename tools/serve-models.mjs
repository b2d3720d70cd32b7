#!/usr/bin/env node
// serve-models.mjs - the small models baton serve's tests need that no real model gives: batch_fc, whose
// first dimension is a batch (shape_signature -1, as the converter writes a Keras model's None batch),
// for dynamic batching: y = tanh(x W^T + b) with x [-1, 4], W [3, 4], b [3], y [-1, 3].
//
//   node tools/serve-models.mjs OUT_DIR && flatc -b runtime/model/tflite.fbs OUT_DIR/batch_fc.json
//
// The weights are fixed here (tests/server/test_batching.py computes the same function in numpy), so a
// rerun writes the same bytes. tests/data/serve/batch_fc.tflite is its output.
import path from 'node:path';

import {f32} from './testgen/bytes.mjs';
import {OperatorCodes, oneGraphModel, operator, outDirArgs, writeJson} from './testgen/tflite-json.mjs';

const {outDir} = outDirArgs('serve-models.mjs');

export const W = [[0.5, -0.25, 0.125, 1], [-1, 0.75, 0.5, -0.5], [0.25, 0.25, -0.75, 0.375]];
export const B = [0.1, -0.2, 0.05];

const codes = new OperatorCodes();
const rows = (n) => ({shape: [1, n], signature: [-1, n]});
const tensors = [
  rows(4),                                          // t0: x
  {shape: [3, 4], data: f32(W.flat())},             // t1: W
  {shape: [3], data: f32(B)},                       // t2: b
  rows(3),                                          // t3: x W^T + b
  rows(3),                                          // t4: y
];
const operators = [
  operator(codes.index('FULLY_CONNECTED'), [0, 1, 2], [3],
           ['FullyConnectedOptions', {fused_activation_function: 'NONE', keep_num_dims: false}]),
  operator(codes.index('TANH'), [3], [4]),
];
writeJson(path.join(outDir, 'batch_fc.json'),
          oneGraphModel('baton serve test: a batchable FULLY_CONNECTED + TANH', codes.list, tensors, [0], [4], operators), 2);
