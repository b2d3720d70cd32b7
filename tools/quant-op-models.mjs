#!/usr/bin/env node
// quant-op-models.mjs - write small one-op TFLite models (as flatc JSON) that exercise baton's 8-bit
// and int8-weight kernels: every quantized op of the builtin pack, uint8 and int8, with zero points
// away from zero so negative rounding ties happen, per-channel weights, broadcasts, padding.
//
//   node tools/quant-op-models.mjs OUT_DIR
//
// Writes OUT_DIR/NAME.json for each case; tools/make-quant-op-cases.sh turns them into .tflite with flatc
// and runs them through the native TFLite library for the reference outputs. Weights and biases come
// from a fixed linear congruential generator, so a rerun writes the same files.
import path from 'node:path';

import {f32, i32} from './testgen/bytes.mjs';
import {lcg32} from './testgen/prng.mjs';
import {oneGraphModel, operator, operatorCode, outDirArgs, writeJson} from './testgen/tflite-json.mjs';

const {outDir} = outDirArgs('quant-op-models.mjs');

const rnd = lcg32(12345, 1103515245, 12345);
const ri = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
const rf = (lo, hi) => lo + rnd() * (hi - lo);
const bytes = (n, lo, hi) => Array.from({length: n}, () => ri(lo, hi) & 255);

// tensors: {shape, type, data (bytes), scale (number or array), zp, qd}; inputs/outputs are tensor
// indices of the graph, opInputs those of the operator (-1 = omitted).
function model(name, op, version, optionsType, options, tensors, inputs, outputs, opInputs) {
  const ts = tensors.map(({scale, zp, qd, ...t}) => {
    if (scale === undefined) return t;
    const scales = [].concat(scale);
    return {...t, q: [scales, [].concat(zp ?? Array(scales.length).fill(0)), qd ?? 0]};
  });
  const operators = [operator(0, opInputs, outputs, optionsType && [optionsType, options])];
  writeJson(path.join(outDir, `${name}.json`),
            oneGraphModel(`baton quantized-op case ${name}`, [operatorCode(op, version)], ts, inputs, outputs, operators), 1);
}

for (const type of ['UINT8', 'INT8']) {
  const u = type === 'UINT8';
  const t = type.toLowerCase();
  const w = (n) => bytes(n, u ? 0 : -127, u ? 255 : 127);  // weights: int8 ones avoid -128 as TFLite does
  // CONV_2D 3x3 stride 2 SAME, no activation (negative ties reach the output), int8 per channel.
  for (const [tag, act, stride, k] of [['3x3', 'NONE', 2, 3], ['1x1_relu6', 'RELU6', 1, 1]]) {
    const ci = 13, co = 20, ih = 11, iw = 10;
    const oh = Math.ceil(ih / stride), ow = Math.ceil(iw / stride);
    model(`conv_${tag}_${t}`, 'CONV_2D', u ? 1 : 3, 'Conv2DOptions',
          {padding: 'SAME', stride_w: stride, stride_h: stride, fused_activation_function: act},
          [{shape: [1, ih, iw, ci], type, scale: 0.04, zp: u ? 100 : 10},
           {shape: [co, k, k, ci], type, data: w(k * k * ci * co),
            scale: u ? 0.009 : Array.from({length: co}, () => rf(0.002, 0.02)), zp: u ? 121 : Array(co).fill(0)},
           {shape: [co], type: 'INT32', data: i32(Array.from({length: co}, () => ri(-5000, 5000)))},
           {shape: [1, oh, ow, co], type, scale: act === 'RELU6' ? 0.03 : 0.05, zp: u ? 110 : -20}],
          [0], [3], [0, 1, 2]);
  }
  // DEPTHWISE_CONV_2D 3x3 SAME, output zero point mid-range; int8 per channel (dimension 3).
  {
    const c = 24;
    model(`depthwise_${t}`, 'DEPTHWISE_CONV_2D', u ? 1 : 3, 'DepthwiseConv2DOptions',
          {padding: 'SAME', stride_w: 1, stride_h: 1, depth_multiplier: 1},
          [{shape: [1, 9, 9, c], type, scale: 0.05, zp: u ? 120 : -5},
           {shape: [1, 3, 3, c], type, data: w(9 * c),
            scale: u ? 0.011 : Array.from({length: c}, () => rf(0.002, 0.02)), zp: u ? 140 : Array(c).fill(0), qd: 3},
           {shape: [c], type: 'INT32', data: i32(Array.from({length: c}, () => ri(-3000, 3000)))},
           {shape: [1, 9, 9, c], type, scale: 0.07, zp: u ? 130 : 3}],
          [0], [3], [0, 1, 2]);
  }
  // FULLY_CONNECTED 40 x 37 -> 50.
  model(`fully_connected_${t}`, 'FULLY_CONNECTED', u ? 1 : 4, 'FullyConnectedOptions', {},
        [{shape: [40, 37], type, scale: 0.03, zp: u ? 128 : 1},
         {shape: [50, 37], type, data: w(50 * 37), scale: 0.012, zp: u ? 130 : 0},
         {shape: [50], type: 'INT32', data: i32(Array.from({length: 50}, () => ri(-3000, 3000)))},
         {shape: [40, 50], type, scale: 0.06, zp: u ? 125 : -3}],
        [0], [3], [0, 1, 2]);
  // ADD, SUB, MUL with a broadcast [2,3,4,5] op [1,1,4,5].
  for (const op of ['ADD', 'SUB', 'MUL']) {
    const opts = {ADD: 'AddOptions', SUB: 'SubOptions', MUL: 'MulOptions'}[op];
    model(`${op.toLowerCase()}_${t}`, op, u ? 1 : 2, opts, {fused_activation_function: 'NONE'},
          [{shape: [2, 3, 4, 5], type, scale: 0.037, zp: u ? 128 : 0},
           {shape: [1, 1, 4, 5], type, scale: 0.021, zp: u ? 100 : -10},
           {shape: [2, 3, 4, 5], type, scale: op === 'MUL' ? 0.05 : 0.045, zp: u ? 120 : 5}],
          [0, 1], [2], [0, 1]);
  }
  // Pools over a window that hangs over the SAME padding; max with RELU6.
  for (const [op, act] of [['AVERAGE_POOL_2D', 'NONE'], ['MAX_POOL_2D', 'RELU6']]) {
    model(`${op.toLowerCase()}_${t}`, op, u ? 1 : 2, 'Pool2DOptions',
          {padding: 'SAME', stride_w: 2, stride_h: 2, filter_width: 3, filter_height: 3, fused_activation_function: act},
          [{shape: [1, 7, 8, 6], type, scale: 0.1, zp: u ? 128 : 0},
           {shape: [1, 4, 4, 6], type, scale: 0.1, zp: u ? 128 : 0}],
          [0], [1], [0]);
  }
  model(`logistic_${t}`, 'LOGISTIC', u ? 1 : 2, undefined, undefined,
        [{shape: [1, 256], type, scale: 0.07, zp: u ? 130 : -2},
         {shape: [1, 256], type, scale: 1 / 256, zp: u ? 0 : -128}],
        [0], [1], [0]);
  model(`softmax_${t}`, 'SOFTMAX', u ? 1 : 2, 'SoftmaxOptions', {beta: 1.0},
        [{shape: [4, 64], type, scale: 0.09, zp: u ? 130 : -2},
         {shape: [4, 64], type, scale: 1 / 256, zp: u ? 0 : -128}],
        [0], [1], [0]);
  model(`pad_${t}`, 'PAD', u ? 1 : 2, 'PadOptions', {},
        [{shape: [1, 3, 4, 2], type, scale: 0.1, zp: u ? 77 : -33},
         {shape: [4, 2], type: 'INT32', data: i32([0, 0, 1, 2, 2, 1, 0, 3])},
         {shape: [1, 6, 7, 5], type, scale: 0.1, zp: u ? 77 : -33}],
        [0], [2], [0, 1]);
  model(`quantize_${t}`, 'QUANTIZE', u ? 1 : 2, undefined, undefined,
        [{shape: [1, 1000], type: 'FLOAT32'}, {shape: [1, 1000], type, scale: 0.0078125 * 1.3, zp: u ? 128 : 0}],
        [0], [1], [0]);
  model(`requantize_${t}`, 'QUANTIZE', 2, undefined, undefined,
        [{shape: [1, 1000], type, scale: 0.05, zp: u ? 128 : 3}, {shape: [1, 1000], type, scale: 0.037, zp: u ? 100 : -7}],
        [0], [1], [0]);
  model(`dequantize_${t}`, 'DEQUANTIZE', 2, undefined, undefined,
        [{shape: [1, 500], type, scale: 0.037, zp: u ? 100 : -7}, {shape: [1, 500], type: 'FLOAT32'}],
        [0], [1], [0]);
  model(`reshape_${t}`, 'RESHAPE', 1, 'ReshapeOptions', {new_shape: [6, -1]},
        [{shape: [1, 3, 4, 2], type, scale: 0.1, zp: u ? 77 : -33}, {shape: [2], type: 'INT32', data: i32([6, -1])},
         {shape: [6, 4], type, scale: 0.1, zp: u ? 77 : -33}],
        [0], [2], [0, 1]);
}

// uint8 CONCATENATION whose inputs have other scales and zero points than the output (the SSD's case).
model('concatenation_uint8', 'CONCATENATION', 1, 'ConcatenationOptions', {axis: 1},
      [{shape: [1, 50, 3], type: 'UINT8', scale: 0.09134, zp: 179}, {shape: [1, 70, 3], type: 'UINT8', scale: 0.037664, zp: 148},
       {shape: [1, 30, 3], type: 'UINT8', scale: 0.05, zp: 128}, {shape: [1, 150, 3], type: 'UINT8', scale: 0.05, zp: 128}],
      [0, 1, 2], [3], [0, 1, 2]);

// Dynamic range: float activations, int8 weights (FULLY_CONNECTED v9 both ways, CONV_2D v5 per channel).
for (const asym of [false, true]) {
  model(`hybrid_fully_connected_${asym ? 'asymmetric' : 'symmetric'}`, 'FULLY_CONNECTED', 9, 'FullyConnectedOptions',
        {asymmetric_quantize_inputs: asym},
        [{shape: [3, 64], type: 'FLOAT32'},
         {shape: [33, 64], type: 'INT8', data: bytes(33 * 64, -127, 127), scale: 0.013, zp: 0},
         {shape: [33], type: 'FLOAT32', data: f32(Array.from({length: 33}, () => rf(-0.5, 0.5)))},
         {shape: [3, 33], type: 'FLOAT32'}],
        [0], [3], [0, 1, 2]);
}
model('hybrid_conv_per_channel', 'CONV_2D', 5, 'Conv2DOptions', {padding: 'VALID', stride_w: 1, stride_h: 1},
      [{shape: [1, 1, 1, 96], type: 'FLOAT32'},
       {shape: [40, 1, 1, 96], type: 'INT8', data: bytes(40 * 96, -127, 127),
        scale: Array.from({length: 40}, () => rf(0.002, 0.02)), zp: Array(40).fill(0)},
       {shape: [40], type: 'FLOAT32', data: f32(Array.from({length: 40}, () => rf(-0.5, 0.5)))},
       {shape: [1, 1, 1, 40], type: 'FLOAT32'}],
      [0], [3], [0, 1, 2]);

// TRANSPOSE_CONV, 8-bit (its matrix-product kernel): input channels not a multiple of 4, products not a
// multiple of a panel, strides 1, 2 and 3 (3 over a kernel of 2 leaves output pixels no tap reaches),
// SAME and VALID, with and without a bias, zero points at the ends of the range; uint8 per tensor,
// int8 per channel. Inputs: output_shape, filter, input, bias.
for (const type of ['UINT8', 'INT8']) {
  const u = type === 'UINT8';
  const t = type.toLowerCase();
  const w = (n) => bytes(n, u ? 0 : -127, u ? 255 : 127);
  for (const [tag, batch, ih, iw, ci, co, k, stride, padding, bias, inZero, outZero] of [
    ['3x3_s2_same', 1, 9, 7, 37, 19, 3, 2, 'SAME', true, u ? 0 : -128, u ? 255 : 127],
    ['4x4_s1_valid', 2, 5, 6, 20, 33, 4, 1, 'VALID', false, u ? 255 : 127, u ? 0 : -128],
    ['2x2_s3_same', 1, 4, 5, 6, 5, 2, 3, 'SAME', true, u ? 128 : 3, u ? 120 : -7]]) {
    const oh = padding === 'SAME' ? ih * stride : (ih - 1) * stride + k;
    const ow = padding === 'SAME' ? iw * stride : (iw - 1) * stride + k;
    const tensors = [
      {shape: [4], type: 'INT32', data: i32([batch, oh, ow, co])},
      {shape: [co, k, k, ci], type, data: w(co * k * k * ci),
       scale: u ? 0.006 : Array.from({length: co}, () => rf(0.002, 0.01)), zp: u ? 131 : Array(co).fill(0)},
      {shape: [batch, ih, iw, ci], type, scale: 0.04, zp: inZero},
      {shape: [batch, oh, ow, co], type, scale: 0.25, zp: outZero}];
    if (bias) tensors.splice(3, 0, {shape: [co], type: 'INT32', data: i32(Array.from({length: co}, () => ri(-4000, 4000)))});
    model(`transpose_conv_${tag}_${t}`, 'TRANSPOSE_CONV', u ? 1 : 2, 'TransposeConvOptions',
          {padding, stride_w: stride, stride_h: stride}, tensors, [2], [bias ? 4 : 3], bias ? [0, 1, 2, 3] : [0, 1, 2, -1]);
  }
}
// The same op with its filter a model input (the scatter kernel: nothing to pack at prepare).
for (const type of ['UINT8', 'INT8']) {
  const u = type === 'UINT8';
  model(`transpose_conv_filter_input_${type.toLowerCase()}`, 'TRANSPOSE_CONV', u ? 1 : 2, 'TransposeConvOptions',
        {padding: 'SAME', stride_w: 2, stride_h: 2},
        [{shape: [4], type: 'INT32', data: i32([1, 10, 8, 7])},
         {shape: [7, 3, 3, 5], type, scale: 0.006, zp: u ? 131 : 0},
         {shape: [1, 5, 4, 5], type, scale: 0.04, zp: u ? 100 : -9},
         {shape: [7], type: 'INT32', data: i32(Array.from({length: 7}, () => ri(-4000, 4000)))},
         {shape: [1, 10, 8, 7], type, scale: 0.25, zp: u ? 120 : 4}],
        [1, 2], [4], [0, 1, 2, 3]);
}

// int8 BATCH_MATMUL (its matrix-product kernel): sizes that are no multiple of a panel or of 4, zero
// points at the ends of the range, adj_x and adj_y with broadcast batches (more batches than threads:
// each thread takes whole ones; fewer: they share each product).
model('batch_matmul_int8', 'BATCH_MATMUL', 2, 'BatchMatMulOptions', {adj_x: false, adj_y: false},
      [{shape: [4, 37, 29], type: 'INT8', scale: 0.05, zp: -128}, {shape: [4, 29, 41], type: 'INT8', scale: 0.04, zp: 5},
       {shape: [4, 37, 41], type: 'INT8', scale: 0.9, zp: 127}],
      [0, 1], [2], [0, 1]);
model('batch_matmul_int8_adjoint_broadcast', 'BATCH_MATMUL', 2, 'BatchMatMulOptions', {adj_x: true, adj_y: true},
      [{shape: [2, 1, 29, 37], type: 'INT8', scale: 0.05, zp: 3}, {shape: [3, 41, 29], type: 'INT8', scale: 0.04, zp: -7},
       {shape: [2, 3, 37, 41], type: 'INT8', scale: 0.3, zp: -20}],
      [0, 1], [2], [0, 1]);
model('batch_matmul_int8_one_batch', 'BATCH_MATMUL', 2, 'BatchMatMulOptions', {adj_x: false, adj_y: true},
      [{shape: [1, 130, 70], type: 'INT8', scale: 0.05, zp: 1}, {shape: [1, 90, 70], type: 'INT8', scale: 0.04, zp: 127},
       {shape: [1, 130, 90], type: 'INT8', scale: 1.5, zp: -5}],
      [0, 1], [2], [0, 1]);
