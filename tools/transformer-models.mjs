#!/usr/bin/env node
// transformer-models.mjs - write float32 transformer models (as flatc JSON) in the form TensorFlow's
// converter gives a Keras encoder: 3-D FULLY_CONNECTED with keep_num_dims, attention as RESHAPE /
// TRANSPOSE / BATCH_MATMUL / MUL / SOFTMAX, layer norm as MEAN over the last axis, SQUARED_DIFFERENCE,
// ADD, RSQRT, SUB, MUL, and GELU as the builtin op (exact) or as the tanh approximation's POW / MUL / ADD /
// TANH chain. Weights are random (a fixed sequence), so a rerun writes the same bytes.
//
//   node tools/transformer-models.mjs OUT_DIR          small cases for the tests (NAME.json, NAME.args)
//   node tools/transformer-models.mjs --bench OUT_DIR  the benchmark models (issue #37): a BERT-tiny-style
//                                                      encoder (2 layers, hidden 128, 2 heads, sequence
//                                                      128, token ids in), a ViT-style block on 14x14
//                                                      patches of a 224x224 image (hidden 192, 3 heads,
//                                                      exact GELU) and a keyword-spotting transformer (12
//                                                      layers, hidden 64, sequence 99, MFCC frames in)
//
// tools/make-cases.sh transformer turns the small cases into tests/data/transformer with native TFLite
// 2.9's outputs; the benchmark models go to flatc by hand (tools/make-cases.sh says how).
import fs from 'node:fs';
import path from 'node:path';

import {Graph} from './testgen/graph.mjs';
import {outDirArgs, writeJson} from './testgen/tflite-json.mjs';

const {outDir, flag} = outDirArgs('transformer-models.mjs', ['--bench']);

const none = {fused_activation_function: 'NONE'};

// x [.., n] times W [m, n] (TFLite's FULLY_CONNECTED weight layout) plus b, keeping x's leading dims.
function dense(g, x, m, activation = 'NONE') {
  const shape = g.shape(x);
  const n = shape[shape.length - 1];
  const w = g.weights([m, n], n);
  const b = g.small([m], 0.1);
  return g.op('FULLY_CONNECTED', [x, w, b], [...shape.slice(0, -1), m],
              ['FullyConnectedOptions', {fused_activation_function: activation, keep_num_dims: true}]);
}

const scalar = (g, v) => g.constant([], [v]);
const binary = (g, op, a, b, shape) => g.op(op, [a, b], shape, [`${op[0]}${op.slice(1).toLowerCase()}Options`, none]);
const add = (g, a, b) => binary(g, 'ADD', a, b, g.shape(a));
const mul = (g, a, b) => binary(g, 'MUL', a, b, g.shape(a));
const sub = (g, a, b) => binary(g, 'SUB', a, b, g.shape(a));

// Layer norm over the last axis as the converter writes tf.keras.layers.LayerNormalization.
function layerNorm(g, x) {
  const shape = g.shape(x);
  const h = shape[shape.length - 1];
  const axis = g.constant([1], [shape.length - 1], 'INT32');
  const kept = [...shape.slice(0, -1), 1];
  const mean = g.op('MEAN', [x, axis], kept, ['ReducerOptions', {keep_dims: true}]);
  const sq = g.op('SQUARED_DIFFERENCE', [x, mean], shape);
  const variance = g.op('MEAN', [sq, axis], kept, ['ReducerOptions', {keep_dims: true}]);
  const eps = add(g, variance, scalar(g, 1e-6));
  const inv = g.op('RSQRT', [eps], kept);
  const gamma = g.constant([h], Array.from({length: h}, () => 1 + (2 * g.random() - 1) * 0.1));
  const scale = mul(g, inv, gamma);
  const centred = sub(g, x, mean);
  const beta = g.small([h], 0.1);
  return add(g, mul(g, centred, scale), beta);
}

// GELU: the builtin op (exact, approximate false), or the tanh approximation as POW / TANH arithmetic:
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
function gelu(g, x, exact) {
  const shape = g.shape(x);
  if (exact) return g.op('GELU', [x], shape, ['GeluOptions', {approximate: false}]);
  const cube = g.op('POW', [x, scalar(g, 3)], shape);
  const inner = add(g, x, mul(g, cube, scalar(g, 0.044715)));
  const t = g.op('TANH', [mul(g, inner, scalar(g, Math.sqrt(2 / Math.PI)))], shape);
  return mul(g, mul(g, x, scalar(g, 0.5)), add(g, t, scalar(g, 1)));
}

// [1, s, heads * d] -> [1, heads, s, d]
function splitHeads(g, x, heads) {
  const [b, s, h] = g.shape(x);
  const r = g.op('RESHAPE', [x, g.constant([4], [b, s, heads, h / heads], 'INT32')], [b, s, heads, h / heads]);
  return g.op('TRANSPOSE', [r, g.constant([4], [0, 2, 1, 3], 'INT32')], [b, heads, s, h / heads]);
}

// Multi-head self-attention: Q, K, V projections, softmax(Q K^T / sqrt(d)) V, the output projection.
function attention(g, x, heads) {
  const [b, s, h] = g.shape(x);
  const d = h / heads;
  const q = splitHeads(g, dense(g, x, h), heads);
  const k = splitHeads(g, dense(g, x, h), heads);
  const v = splitHeads(g, dense(g, x, h), heads);
  const scores = g.op('BATCH_MATMUL', [q, k], [b, heads, s, s], ['BatchMatMulOptions', {adj_x: false, adj_y: true}]);
  const scaled = mul(g, scores, scalar(g, 1 / Math.sqrt(d)));
  const probs = g.op('SOFTMAX', [scaled], [b, heads, s, s], ['SoftmaxOptions', {beta: 1}]);
  const context = g.op('BATCH_MATMUL', [probs, v], [b, heads, s, d], ['BatchMatMulOptions', {adj_x: false, adj_y: false}]);
  const merged = g.op('TRANSPOSE', [context, g.constant([4], [0, 2, 1, 3], 'INT32')], [b, s, heads, d]);
  const flat = g.op('RESHAPE', [merged, g.constant([3], [b, s, h], 'INT32')], [b, s, h]);
  return dense(g, flat, h);
}

// One post-norm encoder layer (BERT's order): x = LN(x + MHA(x)); x = LN(x + FFN(x)).
function encoderLayer(g, x, {heads, ff, exactGelu}) {
  const h = g.shape(x)[2];
  const a = layerNorm(g, add(g, x, attention(g, x, heads)));
  const f = dense(g, gelu(g, dense(g, a, ff), exactGelu), h);
  return layerNorm(g, add(g, a, f));
}

// Token ids [1, s] -> embeddings (GATHER) + positions -> layers -> [1, s, hidden].
function bert({layers, hidden, heads, seq, vocab, seed}) {
  const g = new Graph(seed);
  const ids = g.input([1, seq], 'INT32');
  const table = g.small([vocab, hidden], 1);
  let x = g.op('GATHER', [table, ids], [1, seq, hidden], ['GatherOptions', {axis: 0, batch_dims: 0}]);
  x = layerNorm(g, add(g, x, g.small([1, seq, hidden], 0.5)));
  for (let l = 0; l < layers; ++l) x = encoderLayer(g, x, {heads, ff: 4 * hidden, exactGelu: false});
  return {graph: g, inputs: [ids], outputs: [x], args: `--int-range 0:${vocab - 1}`};
}

// Image [1, size, size, 3] -> patches (CONV_2D, stride = patch) -> tokens -> pre-norm block(s) -> pooled
// logits.
function vit({layers, hidden, heads, size, patch, classes, seed}) {
  const g = new Graph(seed);
  const image = g.input([1, size, size, 3]);
  const side = size / patch;
  const filter = g.weights([hidden, patch, patch, 3], patch * patch * 3);
  const patches = g.op('CONV_2D', [image, filter, g.small([hidden], 0.1)], [1, side, side, hidden],
                       ['Conv2DOptions', {padding: 'VALID', stride_w: patch, stride_h: patch, fused_activation_function: 'NONE',
                                          dilation_w_factor: 1, dilation_h_factor: 1}]);
  let x = g.op('RESHAPE', [patches, g.constant([3], [1, side * side, hidden], 'INT32')], [1, side * side, hidden]);
  x = add(g, x, g.small([1, side * side, hidden], 0.5));
  for (let l = 0; l < layers; ++l) {
    x = add(g, x, attention(g, layerNorm(g, x), heads));
    x = add(g, x, dense(g, gelu(g, dense(g, layerNorm(g, x), 4 * hidden), true), hidden));
  }
  const pooled = g.op('MEAN', [layerNorm(g, x), g.constant([1], [1], 'INT32')], [1, hidden], ['ReducerOptions', {keep_dims: false}]);
  return {graph: g, inputs: [image], outputs: [dense(g, pooled, classes)], args: ''};
}

// MFCC frames [1, seq, features] -> projection + positions -> layers -> mean over time -> class
// probabilities.
function kws({layers, hidden, heads, seq, features, classes, seed}) {
  const g = new Graph(seed);
  const frames = g.input([1, seq, features]);
  let x = add(g, dense(g, frames, hidden), g.small([1, seq, hidden], 0.5));
  for (let l = 0; l < layers; ++l) x = encoderLayer(g, x, {heads, ff: 4 * hidden, exactGelu: false});
  const pooled = g.op('MEAN', [x, g.constant([1], [1], 'INT32')], [1, hidden], ['ReducerOptions', {keep_dims: false}]);
  const logits = dense(g, pooled, classes);
  return {graph: g, inputs: [frames], outputs: [g.op('SOFTMAX', [logits], [1, classes], ['SoftmaxOptions', {beta: 1}])], args: ''};
}

const models = flag === '--bench' ? {
  bench_bert_tiny: () => bert({layers: 2, hidden: 128, heads: 2, seq: 128, vocab: 1000, seed: 1}),
  bench_vit_block: () => vit({layers: 1, hidden: 192, heads: 3, size: 224, patch: 16, classes: 10, seed: 2}),
  bench_kws_transformer: () => kws({layers: 12, hidden: 64, heads: 2, seq: 99, features: 40, classes: 12, seed: 3}),
} : {
  // Sizes chosen odd (sequence 13, 17, 9; hidden not a multiple of 16) so no kernel's vector width divides them.
  transformer_bert: () => bert({layers: 2, hidden: 24, heads: 2, seq: 13, vocab: 50, seed: 11}),
  transformer_vit: () => vit({layers: 1, hidden: 36, heads: 3, size: 20, patch: 5, classes: 7, seed: 12}),
  transformer_kws: () => kws({layers: 3, hidden: 20, heads: 2, seq: 17, features: 9, classes: 5, seed: 13}),
  transformer_one_head: () => kws({layers: 1, hidden: 16, heads: 1, seq: 9, features: 6, classes: 4, seed: 14}),
};

for (const [name, make] of Object.entries(models)) {
  const {graph, inputs, outputs, args} = make();
  writeJson(path.join(outDir, `${name}.json`), graph.model(name, inputs, outputs));
  fs.writeFileSync(path.join(outDir, `${name}.args`), `--seed 0 ${args}`.trim() + '\n');
}
