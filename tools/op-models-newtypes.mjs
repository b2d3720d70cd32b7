// op-models-newtypes.mjs - the one-op cases of tools/op-models.mjs for issue #35's new types that LiteRT 2.5
// runs: INT4 weights (two codes a byte, the first in the low nibble) under float (dynamic-range) and int16
// (16x8) activations, and BFLOAT16 (CAST to and from float32). Their reference is LiteRT 2.5 (TFLite 2.9
// knows neither type); tools/op-models.mjs calls the default export with its helpers and it returns the
// names. What LiteRT 2.5 was also asked and refused or got wrong (docs/ops.md lists them): DEPTHWISE_CONV_2D
// with an INT4 filter under float input ("Type FLOAT32 with filter type INT4 not currently supported") and
// under int16 input (run reading the packed bytes as int8 codes, past the filter's end); BFLOAT16 ADD, MUL
// and DEQUANTIZE (their kernels refuse the type); blockwise FULLY_CONNECTED weights that are INT8 or have
// FLOAT32 scales (its XNNPACK delegate takes INT4 with FLOAT16 scales only).
import {f32, i64} from './testgen/bytes.mjs';
import {int8Weights} from './testgen/prng.mjs';
import {operator, operatorCode} from './testgen/tflite-json.mjs';

export default function newTypeCases({add, simple, writeModel, given, T, C}) {
  const litert = [];
  const later = (name, op, version, fn) => { litert.push(name); add(name, op, version, fn); };
  const perChannel = (n, s, dim) => [Array.from({length: n}, (_, i) => s * (1 + (i % 4) / 3)), new Array(n).fill(0), dim];
  const int4 = (codes) => Array.from({length: Math.ceil(codes.length / 2)},
                                     (_, k) => (codes[2 * k] & 0xf) | (((codes[2 * k + 1] ?? 0) & 0xf) << 4));
  const codes = (count, seed) => int8Weights(count, seed).map((b) => ((b << 24 >> 24) % 8));  // int4 codes in [-7, 7]
  const conv = (padding, stride, act) => ['Conv2DOptions', {padding, stride_w: stride, stride_h: stride, fused_activation_function: act,
                                                            dilation_w_factor: 1, dilation_h_factor: 1}];
  const depthwise = (padding, stride, multiplier, act) => ['DepthwiseConv2DOptions', {padding, stride_w: stride, stride_h: stride,
      depth_multiplier: multiplier, fused_activation_function: act, dilation_w_factor: 1, dilation_h_factor: 1}];
  const fc = (act, extra = {}) => ['FullyConnectedOptions', {fused_activation_function: act, ...extra}];

  // ---- INT4 weights under float activations (dynamic range) ----
  later('fully_connected_hybrid_int4_weights', 'FULLY_CONNECTED', 10, (n, v) => simple(n, 'FULLY_CONNECTED', v, fc('NONE'),
      [T([3, 8]), C([5, 8], 'INT4', int4(codes(40, 51)), {q: [0.05, 0]}), C([5], 'FLOAT32', f32([0.1, -0.2, 0.3, 0, 1])), T([3, 5])]));
  later('fully_connected_hybrid_int4_per_channel_asymmetric', 'FULLY_CONNECTED', 10, (n, v) => simple(n, 'FULLY_CONNECTED', v,
      fc('RELU', {asymmetric_quantize_inputs: true}),
      [T([2, 16]), C([6, 16], 'INT4', int4(codes(96, 52)), {q: perChannel(6, 0.03, 0)}), T([2, 6])]));
  later('conv_2d_hybrid_int4_filter', 'CONV_2D', 7, (n, v) => simple(n, 'CONV_2D', v, conv('SAME', 1, 'NONE'),
      [T([1, 5, 5, 3]), C([4, 3, 3, 3], 'INT4', int4(codes(108, 53)), {q: perChannel(4, 0.02, 0)}),
       C([4], 'FLOAT32', f32([0.1, -0.2, 0.3, 0])), T([1, 5, 5, 4])]));

  // ---- INT4 weights under int16 activations (16x8) ----
  const q16 = (scale) => ({q: [scale, 0]});
  const s16 = perChannel(4, 0.01, 0);
  later('conv_2d_16x8_int4_filter', 'CONV_2D', 7, (n, v) => simple(n, 'CONV_2D', v, conv('SAME', 1, 'NONE'),
      [T([1, 4, 4, 3], 'INT16', q16(0.001)), C([4, 3, 3, 3], 'INT4', int4(codes(108, 55)), {q: s16}),
       C([4], 'INT64', i64([500, -1200, 0, 3000]), {q: [s16[0].map((s) => s * 0.001), [0, 0, 0, 0], 0]}),
       T([1, 4, 4, 4], 'INT16', q16(0.0004))], ['--int-range', '-2000:2000']));
  later('fully_connected_16x8_int4_weights', 'FULLY_CONNECTED', 10, (n, v) => simple(n, 'FULLY_CONNECTED', v, fc('NONE'),
      [T([2, 8], 'INT16', q16(0.002)), C([5, 8], 'INT4', int4(codes(40, 57)), {q: [0.01, 0]}),
       C([5], 'INT64', i64([1000, -25000, 0, 7000, -3]), {q: [0.00002, 0]}), T([2, 5], 'INT16', q16(0.005))],
      ['--int-range', '-3000:3000']));

  // ---- Blockwise INT4 FULLY_CONNECTED weights (FLOAT16 scales, one per 32 or 16 codes of a row) ----
  // LiteRT runs them only through XNNPACK, which quantizes each input row to int8 codes at run time. The
  // inputs here are whole multiples of 1/32 from -128/32 to 127/32 with both ends in every row, so that
  // quantization is exact, and the scales are bfloat16-exact: LiteRT's result is then the layer's
  // arithmetic (code * scale, summed) up to float32 summation order. (LiteRT 2.5 drops a fused activation
  // on this path: with RELU it gave negative outputs. baton applies it, as the schema says; no case here.)
  const f16 = (values) => values.flatMap((v) => {  // float16 bits of values that float16 holds exactly
    if (v === 0) return [0, 0];
    const e = Math.floor(Math.log2(Math.abs(v)));
    const bits = (v < 0 ? 0x8000 : 0) | ((e + 15) << 10) | Math.round((Math.abs(v) / 2 ** e - 1) * 1024);
    return [bits & 0xff, bits >> 8];
  });
  const rows = (batch, depth) => Array.from({length: batch * depth}, (_, i) => {
    const [r, k] = [Math.floor(i / depth), i % depth];
    return (k === 0 ? -128 : k === 1 ? 127 : ((k * 37 + r * 11) % 256) - 128) / 32;
  });
  const blockwise = (name, batch, units, depth, block, bias, act, seed) => later(name, 'FULLY_CONNECTED', 13, (n, v) => {
    const scales = Array.from({length: units * depth / block}, (_, i) => [0.0625, 0.09375, 0.046875, 0.15625, 0.125][i % 5]);
    const tensors = [T([batch, depth]), C([units, depth], 'INT4', int4(codes(units * depth, seed)),
                                          {blockwise: {scales: 2, zero_points: -1, block_size: block}}),
                     C([units, depth / block], 'FLOAT16', f16(scales))];
    if (bias) tensors.push(C([units], 'FLOAT32', f32(bias)));
    tensors.push(T([batch, units]));
    writeModel(n, [operatorCode('FULLY_CONNECTED', v)], tensors, [0], [tensors.length - 1],
               [operator(0, [0, 1, bias ? 3 : -1], [tensors.length - 1], fc(act))],
               given(n, [[[batch, depth], rows(batch, depth), 'f32']]));
  });
  blockwise('fully_connected_blockwise_int4_f16_scales', 3, 5, 64, 32, [0.5, -1, 0, 2, 0.25], 'NONE', 58);
  blockwise('fully_connected_blockwise_int4_batch8_blocks16', 8, 6, 96, 16, null, 'NONE', 59);
  // EMBEDDING_LOOKUP of a blockwise INT4 table: LiteRT 2.5's own kernel (code * its block's FLOAT16 scale).
  later('embedding_lookup_blockwise_int4_f16_scales', 'EMBEDDING_LOOKUP', 4, (n, v) => {
    const scales = Array.from({length: 5 * 4}, (_, i) => [0.0123, -0.5, 1.75, 0.0009765625, 3.1][i % 5]);
    writeModel(n, [operatorCode('EMBEDDING_LOOKUP', v)],
               [T([4], 'INT32'), C([5, 64], 'INT4', int4(codes(5 * 64, 60)), {blockwise: {scales: 2, zero_points: -1, block_size: 16}}),
                C([5, 4], 'FLOAT16', f16(scales)), T([4, 64])],
               [0], [3], [operator(0, [0, 1], [3])], given(n, [[[4], [3, 1, 0, 3], 'i32']]));
  });

  // ---- BFLOAT16 (CAST v7): float32 in and out (the runners feed no bfloat16): rounded to bfloat16 and back ----
  later('cast_f32_bf16_f32', 'CAST', 7, (n, v) => writeModel(n, [operatorCode('CAST', v)],
      [T([2, 8]), T([2, 8], 'BFLOAT16'), T([2, 8])], [0], [2], [operator(0, [0], [1]), operator(0, [1], [2])]));
  return litert;
}
