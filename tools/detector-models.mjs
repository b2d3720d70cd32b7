#!/usr/bin/env node
// detector-models.mjs - write float32 one-stage detectors (as flatc JSON) in the form TensorFlow's
// converter gives a YOLOX-style network without its NMS: a space-to-depth stem of four STRIDED_SLICEs and a
// CONCATENATION, SiLU convolutions (CONV_2D, LOGISTIC, MUL) with PADV2 before the stride-2 ones, a feature
// pyramid with RESIZE_NEAREST_NEIGHBOR upsampling, heads at two scales reshaped to [1, cells, 5 + classes]
// and joined, and the box decode: slices of the last axis, ADD of each cell's grid position, EXP of the
// sizes, MUL by the stride, LOGISTIC of the scores. Weights are random (a fixed sequence).
// detector_nms adds the post-processing TensorFlow's tf.image.non_max_suppression gives: corner boxes,
// NON_MAX_SUPPRESSION_V4 over the objectness, GATHERs of the kept boxes and scores by its int32 indices,
// and the count of kept boxes CAST to float.
//
//   node tools/detector-models.mjs OUT_DIR          small cases for the tests (NAME.json, NAME.args)
//   node tools/detector-models.mjs --bench OUT_DIR  bench_detector: 320x320 input, 80 classes; and
//                                                   bench_detector_nms, the same with NMS (at most 100 boxes)
//
// tools/make-cases.sh detector turns the small cases into tests/data/detector with native TFLite 2.9's
// outputs.
import fs from 'node:fs';
import path from 'node:path';

import {Graph} from './testgen/graph.mjs';
import {outDirArgs, writeJson} from './testgen/tflite-json.mjs';

const {outDir, flag} = outDirArgs('detector-models.mjs', ['--bench']);

const none = {fused_activation_function: 'NONE'};
const conv2d = (g, x, out, k, stride, padding) => {
  const [n, h, w, c] = g.shape(x);
  const filter = g.weights([out, k, k, c], k * k * c);
  const oh = padding === 'SAME' ? Math.ceil(h / stride) : Math.floor((h - k) / stride) + 1;
  const ow = padding === 'SAME' ? Math.ceil(w / stride) : Math.floor((w - k) / stride) + 1;
  return g.op('CONV_2D', [x, filter, g.small([out], 0.1)], [n, oh, ow, out],
              ['Conv2DOptions', {padding, stride_w: stride, stride_h: stride, fused_activation_function: 'NONE',
                                 dilation_w_factor: 1, dilation_h_factor: 1}]);
};
const silu = (g, x) => g.op('MUL', [x, g.op('LOGISTIC', [x], g.shape(x))], g.shape(x), ['MulOptions', none]);
const slice = (g, x, begin, end, strides, shape) => {
  const r = begin.length;
  return g.op('STRIDED_SLICE', [x, g.constant([r], begin, 'INT32'), g.constant([r], end, 'INT32'), g.constant([r], strides, 'INT32')],
              shape, ['StridedSliceOptions', {begin_mask: 0, end_mask: 0, ellipsis_mask: 0, new_axis_mask: 0, shrink_axis_mask: 0}]);
};
const concat = (g, xs, axis) => {
  const shape = [...g.shape(xs[0])];
  shape[axis] = xs.reduce((s, x) => s + g.shape(x)[axis], 0);
  return g.op('CONCATENATION', xs, shape, ['ConcatenationOptions', {axis, fused_activation_function: 'NONE'}]);
};

// A 3x3 stride-2 SiLU convolution as the converter writes Keras's ZeroPadding2D + VALID conv: PADV2 with 0.
function down(g, x, out) {
  const [n, h, w, c] = g.shape(x);
  const pads = g.constant([4, 2], [0, 0, 1, 1, 1, 1, 0, 0], 'INT32');
  const padded = g.op('PADV2', [x, pads, g.constant([], [0])], [n, h + 2, w + 2, c]);
  return silu(g, conv2d(g, padded, out, 3, 2, 'VALID'));
}

function detector({size, width, classes, seed, nms}) {
  const g = new Graph(seed);
  const image = g.input([1, size, size, 3]);
  const half = size / 2;
  // Space to depth: the four phases of every 2x2 block side by side in the channels.
  const phases = [[0, 0], [1, 0], [0, 1], [1, 1]].map(([y, x]) =>
    slice(g, image, [0, y, x, 0], [1, size, size, 3], [1, 2, 2, 1], [1, half, half, 3]));
  let x = silu(g, conv2d(g, concat(g, phases, 3), width, 3, 1, 'SAME'));
  const c3 = down(g, x, 2 * width);       // stride 4
  const c4 = down(g, c3, 4 * width);      // stride 8
  const c5 = down(g, c4, 4 * width);      // stride 16
  // Top-down: c5 reduced, upsampled 2x, joined with c4.
  const p5 = silu(g, conv2d(g, c5, 2 * width, 1, 1, 'SAME'));
  const [, h5, w5] = g.shape(p5);
  const up = g.op('RESIZE_NEAREST_NEIGHBOR', [p5, g.constant([2], [2 * h5, 2 * w5], 'INT32')], [1, 2 * h5, 2 * w5, 2 * width],
                  ['ResizeNearestNeighborOptions', {align_corners: false, half_pixel_centers: false}]);
  const p4 = silu(g, conv2d(g, concat(g, [up, c4], 3), 2 * width, 3, 1, 'SAME'));
  // Heads: 4 box numbers, objectness and the class scores per cell, decoded.
  const per = 5 + classes;
  const heads = [[p4, 8], [p5, 16]].map(([f, stride]) => {
    const [, h, w] = g.shape(f);
    const raw = conv2d(g, f, per, 1, 1, 'SAME');
    return {flat: g.op('RESHAPE', [raw, g.constant([3], [1, h * w, per], 'INT32')], [1, h * w, per]), h, w, stride};
  });
  const all = concat(g, heads.map((h) => h.flat), 1);
  const cells = g.shape(all)[1];
  const grid = [], strides = [];
  for (const {h, w, stride} of heads) {
    for (let y = 0; y < h; ++y) for (let xx = 0; xx < w; ++xx) grid.push(xx, y), strides.push(stride);
  }
  const stride = g.constant([1, cells, 1], strides);
  const mul = (a, b) => g.op('MUL', [a, b], g.shape(a), ['MulOptions', none]);
  const xy = mul(g.op('ADD', [slice(g, all, [0, 0, 0], [1, cells, 2], [1, 1, 1], [1, cells, 2]), g.constant([1, cells, 2], grid)],
                      [1, cells, 2], ['AddOptions', none]), stride);
  const wh = mul(g.op('EXP', [slice(g, all, [0, 0, 2], [1, cells, 4], [1, 1, 1], [1, cells, 2])], [1, cells, 2]), stride);
  if (!nms) {
    const scores = g.op('LOGISTIC', [slice(g, all, [0, 0, 4], [1, cells, per], [1, 1, 1], [1, cells, per - 4])], [1, cells, per - 4]);
    return {graph: g, inputs: [image], outputs: [concat(g, [xy, wh, scores], 2)]};
  }
  const halfSize = mul(wh, g.constant([], [0.5]));
  const lo = g.op('SUB', [xy, halfSize], [1, cells, 2], ['SubOptions', none]);
  const hi = g.op('ADD', [xy, halfSize], [1, cells, 2], ['AddOptions', none]);
  const reshape = (x, shape) => g.op('RESHAPE', [x, g.constant([shape.length], shape, 'INT32')], shape);
  const boxes = reshape(concat(g, [lo, hi], 2), [cells, 4]);
  // The objectness logits of random weights are all near 0: scaled, so the scores spread over (0, 1) and
  // no two are so close that a last-bit difference reorders them.
  const logit = slice(g, all, [0, 0, 4], [1, cells, 5], [1, 1, 1], [1, cells, 1]);
  const objectness = g.op('LOGISTIC', [mul(logit, g.constant([], [50]))], [1, cells, 1]);
  const [kept, count] = g.opWithOutputs('NON_MAX_SUPPRESSION_V4',
      [boxes, reshape(objectness, [cells]), g.constant([], [nms.maxOut], 'INT32'), g.constant([], [nms.iou]),
       g.constant([], [nms.scoreThreshold])], [[[nms.maxOut], 'INT32'], [[], 'INT32']]);
  const gather = (x, shape) => g.op('GATHER', [x, kept], shape, ['GatherOptions', {axis: 0, batch_dims: 0}]);
  return {graph: g, inputs: [image], outputs: [gather(boxes, [nms.maxOut, 4]), gather(reshape(objectness, [cells, 1]), [nms.maxOut, 1]),
                                              g.op('CAST', [count], [])]};
}

const models = flag === '--bench' ? {
  bench_detector: () => detector({size: 320, width: 16, classes: 80, seed: 21}),
  bench_detector_nms: () => detector({size: 320, width: 16, classes: 80, seed: 21, nms: {maxOut: 100, iou: 0.5, scoreThreshold: 0.5}}),
} : {
  // Cell grids of 6x6 and 3x3 (48x48) and 4x4 and 2x2 (32x32); 3 and 6 classes, widths not multiples of 4.
  detector_small: () => detector({size: 48, width: 6, classes: 3, seed: 22}),
  detector_wide: () => detector({size: 32, width: 10, classes: 6, seed: 23}),
  // 45 cells, at most 8 boxes kept: some cut by the score threshold, some by overlap.
  detector_nms: () => detector({size: 48, width: 6, classes: 3, seed: 24, nms: {maxOut: 8, iou: 0.5, scoreThreshold: 0.5}}),
};

for (const [name, make] of Object.entries(models)) {
  const {graph, inputs, outputs} = make();
  writeJson(path.join(outDir, `${name}.json`), graph.model(name, inputs, outputs));
  fs.writeFileSync(path.join(outDir, `${name}.args`), '--seed 0\n');
}
