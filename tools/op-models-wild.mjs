// op-models-wild.mjs - the one-op cases of tools/op-models.mjs for what real models from the wild use and
// baton once refused or computed differently (issue #35): int8 FULLY_CONNECTED with per-channel weights,
// dynamic-range DEPTHWISE_CONV_2D, dynamic-range CONV_2D with a legacy UINT8 filter, 16x8 convolutions
// with an INT32 bias, 8-bit tensors without quantization parameters, FILL with 8- and 16-bit values,
// zero-sized spatial outputs, and QUANTIZE at the float / double rounding ties. tools/op-models.mjs calls
// the default export with its helpers; it returns the cases whose reference is LiteRT 2.5, not TFLite 2.9.
import {f32, i32} from './testgen/bytes.mjs';
import {int8Weights} from './testgen/prng.mjs';
import {operator, operatorCode} from './testgen/tflite-json.mjs';

export default function wildCases({add, simple, model, writeModel, T, C, given, reducer}) {
  const perChannel = (n, s, dim) => [Array.from({length: n}, (_, i) => s * (1 + (i % 4) / 3)), new Array(n).fill(0), dim];
  const conv = (padding, stride, act) => ['Conv2DOptions', {padding, stride_w: stride, stride_h: stride, fused_activation_function: act,
                                                            dilation_w_factor: 1, dilation_h_factor: 1}];
  const depthwise = (padding, stride, multiplier, act) => ['DepthwiseConv2DOptions', {padding, stride_w: stride, stride_h: stride,
      depth_multiplier: multiplier, fused_activation_function: act, dilation_w_factor: 1, dilation_h_factor: 1}];

  // ---- int8 FULLY_CONNECTED, one weight scale per output row (ai-edge-quantizer's a8w8, MLPerf Tiny) ----
  const inScale = 0.05;
  const rowScales = perChannel(5, 0.01, 0);
  add('fully_connected_i8_per_channel', 'FULLY_CONNECTED', 4, (n, v) => simple(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'NONE'}],
      [T([3, 8], 'INT8', {q: [inScale, -3]}), C([5, 8], 'INT8', int8Weights(40, 31), {q: rowScales}),
       C([5], 'INT32', i32([300, -1200, 0, 2500, -70]), {q: [rowScales[0].map((s) => s * inScale), [0, 0, 0, 0, 0], 0]}),
       T([3, 5], 'INT8', {q: [0.08, 4]})]));
  add('fully_connected_i8_per_channel_relu_no_bias', 'FULLY_CONNECTED', 4, (n, v) => model(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'RELU', keep_num_dims: true}],
      [T([2, 3, 16], 'INT8', {q: [0.03, 10]}), C([7, 16], 'INT8', int8Weights(112, 32), {q: perChannel(7, 0.02, 0)}),
       T([2, 3, 7], 'INT8', {q: [0.1, -20]})],
      {inputs: [0], outputs: [2], opInputs: [0, 1, -1]}));

  // ---- dynamic-range DEPTHWISE_CONV_2D: float input and output, int8 weights per channel ----
  add('depthwise_conv_2d_hybrid', 'DEPTHWISE_CONV_2D', 6, (n, v) => simple(n, 'DEPTHWISE_CONV_2D', v, depthwise('SAME', 1, 2, 'RELU6'),
      [T([1, 5, 6, 3]), C([1, 3, 3, 6], 'INT8', int8Weights(54, 33), {q: perChannel(6, 0.02, 3)}),
       C([6], 'FLOAT32', f32([0.1, -0.2, 0.3, 0, 0.05, -0.5])), T([1, 5, 6, 6])]));
  add('depthwise_conv_2d_hybrid_stride2_valid', 'DEPTHWISE_CONV_2D', 6, (n, v) => simple(n, 'DEPTHWISE_CONV_2D', v,
      depthwise('VALID', 2, 1, 'NONE'),
      [T([2, 7, 8, 5]), C([1, 3, 3, 5], 'INT8', int8Weights(45, 34), {q: perChannel(5, 0.015, 3)}),
       C([5], 'FLOAT32', f32([0.5, -0.25, 0, 1, -1])), T([2, 3, 3, 5])]));

  // ---- dynamic-range CONV_2D with a UINT8 filter (older converters; TFLite reads the bytes as int8) ----
  add('conv_2d_hybrid_uint8_filter', 'CONV_2D', 2, (n, v) => simple(n, 'CONV_2D', v, conv('SAME', 1, 'NONE'),
      [T([1, 5, 5, 3]), C([4, 3, 3, 3], 'UINT8', int8Weights(108, 35), {q: [0.02, 0]}),
       C([4], 'FLOAT32', f32([0.1, -0.2, 0.3, 0])), T([1, 5, 5, 4])]));

  add('fully_connected_hybrid_uint8_weights', 'FULLY_CONNECTED', 3, (n, v) => simple(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'NONE'}],
      [T([2, 8]), C([5, 8], 'UINT8', int8Weights(40, 40), {q: [0.02, 0]}), C([5], 'FLOAT32', f32([0.1, -0.2, 0.3, 0, 1])), T([2, 5])]));

  // ---- 16x8 CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV with an INT32 bias (TFLite 2.9's depthwise refuses one) ----
  const q16 = (scale) => ({q: [scale, 0]});
  add('conv_2d_16x8_int32_bias', 'CONV_2D', 4, (n, v) => simple(n, 'CONV_2D', v, conv('SAME', 2, 'RELU'),
      [T([1, 5, 5, 3], 'INT16', q16(0.001)), C([4, 3, 3, 3], 'INT8', int8Weights(108, 36), {q: perChannel(4, 0.01, 0)}),
       C([4], 'INT32', i32([500, -1200, 0, 30000]), {q: [perChannel(4, 0.01, 0)[0].map((s) => s * 0.001), [0, 0, 0, 0], 0]}),
       T([1, 3, 3, 4], 'INT16', q16(0.0004))], ['--int-range', '-2000:2000']));
  add('fully_connected_16x8_int32_bias', 'FULLY_CONNECTED', 7, (n, v) => simple(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'NONE'}],
      [T([2, 8], 'INT16', q16(0.002)), C([5, 8], 'INT8', int8Weights(40, 39), {q: [0.01, 0]}),
       C([5], 'INT32', i32([1000, -25000, 0, 70000, -3]), {q: [0.00002, 0]}), T([2, 5], 'INT16', q16(0.005))],
      ['--int-range', '-3000:3000']));
  add('transpose_conv_16x8_int32_bias', 'TRANSPOSE_CONV', 3, (n, v) => simple(n, 'TRANSPOSE_CONV', v,
      ['TransposeConvOptions', {padding: 'SAME', stride_w: 2, stride_h: 2}],
      [C([4], 'INT32', i32([1, 6, 6, 2])), C([2, 3, 3, 3], 'INT8', int8Weights(54, 37), {q: [[0.01, 0.02], [0, 0], 0]}),
       T([1, 3, 3, 3], 'INT16', q16(0.001)), C([2], 'INT32', i32([1000, -3000]), {q: [[0.00001, 0.00002], [0, 0], 0]}),
       T([1, 6, 6, 2], 'INT16', q16(0.002))], ['--int-range', '-5000:5000']));

  // ---- 8-bit tensors without quantization parameters (TFLite reads scale 0, zero point 0) ----
  const concat = (axis) => ['ConcatenationOptions', {axis, fused_activation_function: 'NONE'}];
  add('concatenation_i8_no_quantization', 'CONCATENATION', 2, (n, v) => simple(n, 'CONCATENATION', v, concat(-1),
      [T([2, 3, 2], 'INT8'), T([2, 3, 5], 'INT8'), T([2, 3, 7], 'INT8')]));
  add('concatenation_u8_no_quantization', 'CONCATENATION', 1, (n, v) => simple(n, 'CONCATENATION', v, concat(0),
      [T([1, 4], 'UINT8'), T([3, 4], 'UINT8'), T([4, 4], 'UINT8')]));
  add('mean_i8_no_quantization_5d', 'MEAN', 2, (n, v) => simple(n, 'MEAN', v, reducer(true),
      [T([1, 2, 3, 4, 5], 'INT8'), C([1], 'INT32', i32([2])), T([1, 2, 1, 4, 5], 'INT8')]));
  add('mean_i8_no_quantization_spatial', 'MEAN', 2, (n, v) => simple(n, 'MEAN', v, reducer(true),
      [T([1, 4, 5, 3], 'INT8'), C([2], 'INT32', i32([1, 2])), T([1, 1, 1, 3], 'INT8')]));

  // ---- FILL with an 8- or 16-bit value (Arm's int8 keyword-spotting LSTMs) ----
  add('fill_i8', 'FILL', 3, (n, v) => simple(n, 'FILL', v, null,
      [C([2], 'INT32', i32([2, 3])), T([], 'INT8', {q: [0.1, 3]}), T([2, 3], 'INT8', {q: [0.1, 3]})]));
  add('fill_i16', 'FILL', 3, (n, v) => simple(n, 'FILL', v, null,
      [C([3], 'INT32', i32([1, 2, 3])), T([], 'INT16', q16(0.001)), T([1, 2, 3], 'INT16', q16(0.001))]));

  // ---- zero-sized spatial outputs: an input of width 0 (a STRIDED_SLICE that selects nothing) ----
  add('conv_2d_empty_width', 'CONV_2D', 1, (n, v) => simple(n, 'CONV_2D', v, conv('SAME', 1, 'NONE'),
      [T([1, 4, 0, 3]), C([2, 3, 3, 3], 'FLOAT32', f32(Array.from({length: 54}, (_, i) => (i % 7) / 7 - 0.4))),
       C([2], 'FLOAT32', f32([0.5, -0.5])), T([1, 4, 0, 2])]));
  add('depthwise_conv_2d_empty_height', 'DEPTHWISE_CONV_2D', 1, (n, v) => simple(n, 'DEPTHWISE_CONV_2D', v, depthwise('SAME', 2, 1, 'NONE'),
      [T([1, 0, 5, 3]), C([1, 3, 3, 3], 'FLOAT32', f32(Array.from({length: 27}, (_, i) => (i % 5) / 5 - 0.3))),
       C([3], 'FLOAT32', f32([0.1, 0.2, 0.3])), T([1, 0, 3, 3])]));
  add('max_pool_2d_empty_width', 'MAX_POOL_2D', 1, (n, v) => simple(n, 'MAX_POOL_2D', v,
      ['Pool2DOptions', {padding: 'SAME', stride_w: 2, stride_h: 2, filter_width: 2, filter_height: 2, fused_activation_function: 'NONE'}],
      [T([1, 4, 0, 3]), T([1, 2, 0, 3])]));

  // ---- QUANTIZE float32 -> 8 / 16 bits where x / scale is a tie in float but not in double ----
  // TFLite divides in double: round(double(x) / double(scale)) + zero point, half away from zero.
  const ties = (scale, count) => {
    const s = Math.fround(scale);
    const bits = new Float32Array(1), word = new Int32Array(bits.buffer);
    const found = [];
    for (let k = -100; k < 100 && found.length < count; ++k) {
      bits[0] = (k + 0.5) * s;
      const center = word[0];
      for (let j = -16; j <= 16 && found.length < count; ++j) {  // the floats around (k + 0.5) * scale
        word[0] = center + j;
        const x = bits[0];
        if (Math.fround(x / s) === k + 0.5 && x / s !== k + 0.5) found.push(x);
      }
    }
    return found;
  };
  const tieCase = (name, type, scale, zero) => {
    const values = ties(scale, 48);
    add(name, 'QUANTIZE', 1, (n, v) => simple(n, 'QUANTIZE', v, null,
        [T([values.length]), T([values.length], type, {q: [scale, zero]})],
        given(n, [[[values.length], values, 'f32']])));
  };
  tieCase('quantize_f32_i8_ties', 'INT8', 0.1, -3);
  tieCase('quantize_f32_u8_ties', 'UINT8', 0.07, 128);
  tieCase('quantize_f32_i16_ties', 'INT16', 0.003, 0);

  // ---- ops after TFLite 2.9 that current LiteRT registers (their reference is LiteRT 2.5) ----
  const litert = ['fully_connected_i8_per_channel', 'fully_connected_i8_per_channel_relu_no_bias'];
  const later = (name, op, version, fn) => { litert.push(name); add(name, op, version, fn); };
  later('sign_f32', 'SIGN', 1, (n, v) => simple(n, 'SIGN', v, null, [T([2, 5]), T([2, 5])]));
  later('sign_i32', 'SIGN', 2, (n, v) => simple(n, 'SIGN', v, null, [T([7], 'INT32'), T([7], 'INT32')], ['--int-range', '-2:2']));
  later('atan2_f32', 'ATAN2', 1, (n, v) => simple(n, 'ATAN2', v, null, [T([3, 4]), T([3, 4]), T([3, 4])]));
  later('relu_0_to_1_f32', 'RELU_0_TO_1', 1, (n, v) => simple(n, 'RELU_0_TO_1', v, null,
      [T([4, 8]), T([4, 8])], given(n, [[[4, 8], Array.from({length: 32}, (_, i) => (i - 12) * 0.11), 'f32']])));
  later('bitwise_xor_i32_broadcast', 'BITWISE_XOR', 1, (n, v) => simple(n, 'BITWISE_XOR', v, null,
      [T([2, 3], 'INT32'), T([3], 'INT32'), T([2, 3], 'INT32')]));
  later('bitwise_xor_u8', 'BITWISE_XOR', 1, (n, v) => simple(n, 'BITWISE_XOR', v, null,
      [T([4, 5], 'UINT8'), T([4, 5], 'UINT8'), T([4, 5], 'UINT8')]));
  later('right_shift_i32_past_width', 'RIGHT_SHIFT', 1, (n, v) => simple(n, 'RIGHT_SHIFT', v, null,
      [T([3, 5], 'INT32'), C([5], 'INT32', i32([0, 1, 31, 40, -2])), T([3, 5], 'INT32')]));
  later('right_shift_i8', 'RIGHT_SHIFT', 1, (n, v) => simple(n, 'RIGHT_SHIFT', v, null,
      [T([2, 4], 'INT8'), T([2, 4], 'INT8'), T([2, 4], 'INT8')], ['--int-range', '-9:9']));
  later('bitcast_f32_i32', 'BITCAST', 1, (n, v) => simple(n, 'BITCAST', v, null, [T([2, 3]), T([2, 3], 'INT32')]));
  later('bitcast_u8_i32', 'BITCAST', 1, (n, v) => simple(n, 'BITCAST', v, null, [T([3, 4], 'UINT8'), T([3], 'INT32')]));
  later('bitcast_i32_i16', 'BITCAST', 1, (n, v) => simple(n, 'BITCAST', v, null, [T([5], 'INT32'), T([5, 2], 'INT16')]));
  for (const [kind, code] of [['sum', 'UNSORTED_SEGMENT_SUM'], ['prod', 'UNSORTED_SEGMENT_PROD'],
                              ['max', 'UNSORTED_SEGMENT_MAX'], ['min', 'UNSORTED_SEGMENT_MIN']]) {
    // Segment 3 is named by no id: it keeps the operation's identity.
    later(`unsorted_segment_${kind}_f32`, code, 1, (n, v) => simple(n, code, v, null,
        [T([5, 3]), C([5], 'INT32', i32([2, 0, 2, 1, 0])), C([], 'INT32', i32([4])), T([4, 3])]));
    later(`unsorted_segment_${kind}_i32_2d_ids`, code, 1, (n, v) => simple(n, code, v, null,
        [T([2, 3, 2], 'INT32'), C([2, 3], 'INT32', i32([1, 0, 1, 3, 3, 0])), C([], 'INT32', i32([5])), T([5, 2], 'INT32')],
        ['--int-range', '-6:6']));
  }
  // CONV_2D v8 and TRANSPOSE_CONV v5 name the 16x8 bias type (`quantized_bias_type`): LiteRT reads an int32
  // bias only when the option says so (without it, as int64); TFLite 2.9 and baton go by the tensor's type.
  later('conv_2d_16x8_quantized_bias_type', 'CONV_2D', 8, (n, v) => simple(n, 'CONV_2D', v,
      ['Conv2DOptions', {...conv('SAME', 2, 'RELU')[1], quantized_bias_type: 'INT32'}],
      [T([1, 5, 5, 3], 'INT16', q16(0.001)), C([4, 3, 3, 3], 'INT8', int8Weights(108, 36), {q: perChannel(4, 0.01, 0)}),
       C([4], 'INT32', i32([500, -1200, 0, 30000]), {q: [perChannel(4, 0.01, 0)[0].map((s) => s * 0.001), [0, 0, 0, 0], 0]}),
       T([1, 3, 3, 4], 'INT16', q16(0.0004))], ['--int-range', '-2000:2000']));
  later('transpose_conv_16x8_quantized_bias_type', 'TRANSPOSE_CONV', 5, (n, v) => simple(n, 'TRANSPOSE_CONV', v,
      ['TransposeConvOptions', {padding: 'SAME', stride_w: 2, stride_h: 2, quantized_bias_type: 'INT32'}],
      [C([4], 'INT32', i32([1, 6, 6, 2])), C([2, 3, 3, 3], 'INT8', int8Weights(54, 37), {q: [[0.01, 0.02], [0, 0], 0]}),
       T([1, 3, 3, 3], 'INT16', q16(0.001)), C([2], 'INT32', i32([1000, -3000]), {q: [[0.00001, 0.00002], [0, 0], 0]}),
       T([1, 6, 6, 2], 'INT16', q16(0.002))], ['--int-range', '-5000:5000']));
  // INT4 (two codes a byte, the first in the low nibble), DEQUANTIZE v6: per tensor (an odd count: the last
  // byte half used) and per channel.
  const int4 = (codes) => Array.from({length: Math.ceil(codes.length / 2)},
                                     (_, k) => (codes[2 * k] & 0xf) | (((codes[2 * k + 1] ?? 0) & 0xf) << 4));
  const codes15 = Array.from({length: 15}, (_, i) => ((i * 5 + 3) % 16) - 8);
  // The dequantized weights are added to an input: a graph of constants alone gives LiteRT's runner nothing
  // to compute.
  const dequantizeThenAdd = (n, v, shape, weights) => writeModel(n, [operatorCode('DEQUANTIZE', v), operatorCode('ADD')],
      [weights, T(shape), T(shape), T(shape)], [1], [3],
      [operator(0, [0], [2]), operator(1, [2, 1], [3], ['AddOptions', {}])]);
  later('dequantize_int4', 'DEQUANTIZE', 6, (n, v) => dequantizeThenAdd(n, v, [3, 5],
      C([3, 5], 'INT4', int4(codes15), {q: [0.25, 0]})));
  later('dequantize_int4_per_channel', 'DEQUANTIZE', 6, (n, v) => dequantizeThenAdd(n, v, [4, 3],
      C([4, 3], 'INT4', int4(codes15.slice(0, 12)), {q: [[0.1, 0.2, 0.3, 0.4], [0, 0, 0, 0], 0]})));
  // INT4 weights under int8 activations (CONV_2D v7, DEPTHWISE_CONV_2D v7, FULLY_CONNECTED v10): symmetric,
  // per channel or per tensor; LiteRT's kernels unpack them to int8.
  const codes = (count, seed) => int8Weights(count, seed).map((b) => ((b << 24 >> 24) % 8));  // int4 codes in [-7, 7]
  const inScale4 = 0.05;
  const convScales = perChannel(4, 0.02, 0);
  later('conv_2d_i8_int4_filter', 'CONV_2D', 7, (n, v) => simple(n, 'CONV_2D', v, conv('SAME', 1, 'RELU'),
      [T([1, 5, 5, 3], 'INT8', {q: [inScale4, -3]}), C([4, 3, 3, 3], 'INT4', int4(codes(108, 41)), {q: convScales}),
       C([4], 'INT32', i32([40, -120, 0, 300]), {q: [convScales[0].map((s) => s * inScale4), [0, 0, 0, 0], 0]}),
       T([1, 5, 5, 4], 'INT8', {q: [0.04, -10]})]));
  const dwScales = perChannel(3, 0.03, 3);
  later('depthwise_conv_2d_i8_int4_filter', 'DEPTHWISE_CONV_2D', 7, (n, v) => simple(n, 'DEPTHWISE_CONV_2D', v,
      depthwise('VALID', 1, 1, 'NONE'),
      [T([1, 4, 5, 3], 'INT8', {q: [inScale4, 5]}), C([1, 3, 3, 3], 'INT4', int4(codes(27, 42)), {q: dwScales}),
       C([3], 'INT32', i32([10, -20, 30]), {q: [dwScales[0].map((s) => s * inScale4), [0, 0, 0], 0]}),
       T([1, 2, 3, 3], 'INT8', {q: [0.03, 0]})]));
  const fcScales = perChannel(5, 0.04, 0);
  later('fully_connected_i8_int4_weights', 'FULLY_CONNECTED', 10, (n, v) => simple(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'NONE'}],
      [T([3, 8], 'INT8', {q: [inScale4, -3]}), C([5, 8], 'INT4', int4(codes(40, 43)), {q: fcScales}),
       C([5], 'INT32', i32([300, -1200, 0, 250, -70]), {q: [fcScales[0].map((s) => s * inScale4), [0, 0, 0, 0, 0], 0]}),
       T([3, 5], 'INT8', {q: [0.08, 4]})]));
  // EMBEDDING_LOOKUP v4: an INT4 table (rows of 6 codes: LiteRT starts row r at byte r * 6 / 2, so a row
  // of odd length would start a nibble early) with one scale per row, and an int8 table with one scale per
  // row, both with float outputs.
  const rowScales4 = [[0.1, 0.2, 0.3, 0.4], [0, 0, 0, 0], 0];
  later('embedding_lookup_int4_per_row', 'EMBEDDING_LOOKUP', 4, (n, v) => simple(n, 'EMBEDDING_LOOKUP', v, null,
      [T([3], 'INT32'), C([4, 6], 'INT4', int4(codes(24, 44)), {q: rowScales4}), T([3, 6])], ['--int-range', '0:3', '--seed', '4']));
  later('embedding_lookup_i8_per_row', 'EMBEDDING_LOOKUP', 4, (n, v) => simple(n, 'EMBEDDING_LOOKUP', v, null,
      [T([5], 'INT32'), C([4, 3], 'INT8', int8Weights(12, 45), {q: rowScales4}), T([5, 3])], ['--int-range', '0:3', '--seed', '5']));
  // STRIDED_SLICE v8: `offset` makes end a size counted from begin.
  later('strided_slice_offset', 'STRIDED_SLICE', 8, (n, v) => simple(n, 'STRIDED_SLICE', v, ['StridedSliceOptions', {offset: true}],
      [T([4, 6]), C([2], 'INT32', i32([1, 2])), C([2], 'INT32', i32([2, 3])), C([2], 'INT32', i32([1, 1])), T([2, 3])]));
  return litert;
}
