#!/usr/bin/env node
// mediapipe-pool-models.mjs - write small models (as flatc JSON) of MediaPipe's custom ops
// MaxPoolingWithArgmax2D and MaxUnpooling2D, for tools/make-mediapipe-pool-cases.sh.
//
//   node tools/mediapipe-pool-models.mjs OUT_DIR    OUT_DIR/NAME.json, and NAME.in_I.npy where a case
//                                                  feeds its own inputs (the argmax indices of an
//                                                  unpooling case must be whole window positions)
//
// The ops' custom options are not a FlexBuffer: MediaPipe (mediapipe/util/tflite/operations/
// max_pool_argmax.cc, max_unpooling.cc) reads custom_options as TFLite's C struct TfLitePoolParams,
// so the blob is its little-endian int32 fields: padding (1 = SAME, 2 = VALID), stride_width,
// stride_height, filter_width, filter_height, activation, then four ints of computed padding that the
// kernels recompute (the converter writes zeros; 40 bytes in all).
// Constants are fixed here, so a rerun writes the same files.
import path from 'node:path';

import {i32} from './testgen/bytes.mjs';
import {npyF32, writeNpy} from './testgen/npy.mjs';
import {lcg31} from './testgen/prng.mjs';
import {OperatorCodes, oneGraphModel, operator, outDirArgs, writeJson} from './testgen/tflite-json.mjs';

const {outDir} = outDirArgs('mediapipe-pool-models.mjs');

const SAME = 1, VALID = 2;
// TfLitePoolParams as bytes; activation 0 = NONE, 1 = RELU, 3 = RELU6.
const poolParams = ({padding, stride, filter, activation = 0}) =>
  i32([padding, stride[1], stride[0], filter[1], filter[0], activation, 0, 0, 0, 0]);

// Deterministic values (lcg31) in [-1, 1), without ties: MediaPipe's kernel keeps the first
// maximum in row-major window order, XNNPACK (and so LiteRT) scans the window column by column, so a
// tie would compare two tie-breaking rules (tests/mediapipe_pool_test.cc has MediaPipe's by hand).
function values(count, seed) {
  const next = lcg31(seed);
  return Array.from({length: count}, () => (next() / 2147483648) * 2 - 1);
}

// `tensors`: [{shape, type}]; `ops`: [{code, inputs, outputs, options}].
function writeModel(name, tensors, inputs, outputs, ops) {
  const codes = new OperatorCodes();
  const operators = ops.map((o) => ({...operator(codes.custom(o.code), o.inputs, o.outputs), custom_options: o.options}));
  writeJson(path.join(outDir, `${name}.json`),
            oneGraphModel(`baton mediapipe pool case ${name}`, codes.list, tensors, inputs, outputs, operators));
}

// The output size MediaPipe's MaxPoolingWithArgmax2D computes (TensorFlow's windowed output size).
const pooledSize = (size, filter, stride, padding) =>
  padding === SAME ? Math.floor((size + stride - 1) / stride) : Math.floor((size - filter + stride) / stride);

function argmaxCase(name, shape, p, seed) {
  const [n, h, w, c] = shape;
  const out = [n, pooledSize(h, p.filter[0], p.stride[0], p.padding), pooledSize(w, p.filter[1], p.stride[1], p.padding), c];
  writeModel(name, [{shape}, {shape: out}, {shape: out}], [0], [1, 2],
             [{code: 'MaxPoolingWithArgmax2D', inputs: [0], outputs: [1, 2], options: poolParams(p)}]);
  npyF32(path.join(outDir, `${name}.in_0.npy`), shape, values(n * h * w * c, seed));
}

// Values and window positions fed directly; the output is [N, H*filter_h, W*filter_w, C]. VALID for
// LiteRT's sake, as in chainCase. The positions are written as LiteRT computes them: its XNNPACK
// delegate keeps argmax indices as uint32 in the float32 tensor and counts a window column by column
// (kx * filter_h + ky; MediaPipe's kernel writes the float ky * filter_w + kx + 0.1), so in_1.npy holds
// those bits; tests/mediapipe_pool_test.cc feeds baton the same positions in MediaPipe's encoding.
function unpoolCase(name, shape, p, seed) {
  const [n, h, w, c] = shape;
  const out = [n, h * p.filter[0], w * p.filter[1], c];
  writeModel(name, [{shape}, {shape}, {shape: out}], [0, 1], [2],
             [{code: 'MaxUnpooling2D', inputs: [0, 1], outputs: [2], options: poolParams(p)}]);
  const count = n * h * w * c;
  const window = p.filter[0] * p.filter[1];
  npyF32(path.join(outDir, `${name}.in_0.npy`), shape, values(count, seed));
  const next = lcg31(seed * 7 + 1);
  writeNpy(path.join(outDir, `${name}.in_1.npy`), '<f4', shape, Uint32Array.from({length: count}, () => (next() >> 8) % window));
}

// The hair segmentation model's pattern: pool, then unpool the pooled values at their argmax. The
// unpooling node says VALID: its result does not depend on the mode, and LiteRT's XNNPACK delegate
// logs an error for SAME (which the reference runner treats as fatal).
function chainCase(name, shape, p, seed) {
  const [n, h, w, c] = shape;
  const ph = pooledSize(h, p.filter[0], p.stride[0], p.padding), pw = pooledSize(w, p.filter[1], p.stride[1], p.padding);
  const pooled = [n, ph, pw, c];
  writeModel(name, [{shape}, {shape: pooled}, {shape: pooled}, {shape: [n, ph * p.filter[0], pw * p.filter[1], c]}], [0], [3],
             [{code: 'MaxPoolingWithArgmax2D', inputs: [0], outputs: [1, 2], options: poolParams(p)},
              {code: 'MaxUnpooling2D', inputs: [1, 2], outputs: [3], options: poolParams({...p, padding: VALID})}]);
  npyF32(path.join(outDir, `${name}.in_0.npy`), shape, values(n * h * w * c, seed));
}

// SAME cases whose padding lies below and right of the image only: where a window reaches above or left
// of it, XNNPACK's index can name a padding position when the maximum sits in the image's first row or
// column (the padding aliases it and the column-first scan meets it first); MediaPipe's never does
// (tests/mediapipe_pool_test.cc checks that case by hand).
argmaxCase('argmax_2x2_s2_same_odd', [1, 5, 7, 3], {padding: SAME, stride: [2, 2], filter: [2, 2]}, 1);
argmaxCase('argmax_2x2_s2_valid_odd', [1, 5, 7, 3], {padding: VALID, stride: [2, 2], filter: [2, 2]}, 2);
argmaxCase('argmax_3x3_s3_same_batch2', [2, 8, 8, 4], {padding: SAME, stride: [3, 3], filter: [3, 3]}, 3);
argmaxCase('argmax_3x2_s3x2_valid', [1, 8, 5, 2], {padding: VALID, stride: [3, 2], filter: [3, 2]}, 4);
argmaxCase('argmax_1x1_same', [1, 3, 2, 5], {padding: SAME, stride: [1, 1], filter: [1, 1]}, 5);
unpoolCase('unpool_2x2_s2', [1, 3, 4, 3], {padding: VALID, stride: [2, 2], filter: [2, 2]}, 6);
unpoolCase('unpool_2x2_s2_batch2', [2, 3, 3, 5], {padding: VALID, stride: [2, 2], filter: [2, 2]}, 7);
unpoolCase('unpool_3x2_s3x2', [1, 3, 4, 2], {padding: VALID, stride: [3, 2], filter: [3, 2]}, 8);
chainCase('chain_2x2_s2_same_odd', [2, 5, 7, 3], {padding: SAME, stride: [2, 2], filter: [2, 2]}, 9);
chainCase('chain_2x2_s2_valid', [1, 6, 8, 4], {padding: VALID, stride: [2, 2], filter: [2, 2]}, 10);
