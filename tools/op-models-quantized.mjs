// op-models-quantized.mjs - the one-op cases of tools/op-models.mjs for the 8-bit variants of ops the
// builtin pack first had in float (HARD_SWISH, LOG_SOFTMAX, PRELU, SQUARED_DIFFERENCE, REDUCE_PROD,
// RESIZE_BILINEAR, TRANSPOSE_CONV, MINIMUM / MAXIMUM) and for TFLite's 16x8 quantization (int16
// activations, int8 weights, int64 bias). tools/op-models.mjs calls the default export with its helpers.
import {f32, i32, i64} from './testgen/bytes.mjs';
import {int8Weights} from './testgen/prng.mjs';

export default function quantizedCases({add, simple, model, T, C, seed, reducer}) {
  // 8-bit and int16 MINIMUM / MAXIMUM compare codes.
  add('maximum_u8_broadcast', 'MAXIMUM', 2, (n, v) => simple(n, 'MAXIMUM', v, null,
      [T([3, 4], 'UINT8', {q: [0.1, 10]}), T([4], 'UINT8', {q: [0.1, 10]}), T([3, 4], 'UINT8', {q: [0.1, 10]})]));
  add('minimum_i8', 'MINIMUM', 2, (n, v) => simple(n, 'MINIMUM', v, null,
      [T([2, 5], 'INT8', {q: [0.05, -2]}), T([2, 5], 'INT8', {q: [0.05, -2]}), T([2, 5], 'INT8', {q: [0.05, -2]})]));
  add('maximum_i16', 'MAXIMUM', 4, (n, v) => simple(n, 'MAXIMUM', v, null,
      [T([2, 1, 3], 'INT16', {q: [0.001, 0]}), T([4, 1], 'INT16', {q: [0.001, 0]}), T([2, 4, 3], 'INT16', {q: [0.001, 0]})]));


  // ---- 8-bit HARD_SWISH, LOG_SOFTMAX, PRELU, SQUARED_DIFFERENCE, REDUCE_PROD, RESIZE_BILINEAR ----
  const s8 = (v) => v.map((x) => x & 0xff);  // int8 constants as bytes
  add('hard_swish_u8', 'HARD_SWISH', 1, (n, v) => simple(n, 'HARD_SWISH', v, null,
      [T([4, 64], 'UINT8', {q: [0.05, 120]}), T([4, 64], 'UINT8', {q: [0.04, 30]})]));
  add('hard_swish_i8', 'HARD_SWISH', 1, (n, v) => simple(n, 'HARD_SWISH', v, null,
      [T([4, 64], 'INT8', {q: [0.03, -10]}), T([4, 64], 'INT8', {q: [0.025, -100]})]));
  // An input scale wide enough that the relu-ish multiplier shifts left (and saturates).
  add('hard_swish_i8_wide_input', 'HARD_SWISH', 1, (n, v) => simple(n, 'HARD_SWISH', v, null,
      [T([4, 64], 'INT8', {q: [0.6, 5]}), T([4, 64], 'INT8', {q: [0.5, -20]})]));
  const logSoftmax = ['LogSoftmaxOptions', {}];
  add('log_softmax_u8', 'LOG_SOFTMAX', 1, (n, v) => simple(n, 'LOG_SOFTMAX', v, logSoftmax,
      [T([3, 40], 'UINT8', {q: [0.1, 128]}), T([3, 40], 'UINT8', {q: [16 / 256, 255]})]));
  add('log_softmax_i8', 'LOG_SOFTMAX', 2, (n, v) => simple(n, 'LOG_SOFTMAX', v, logSoftmax,
      [T([3, 40], 'INT8', {q: [0.07, -5]}), T([3, 40], 'INT8', {q: [16 / 256, 127]})]));
  // A wide input scale: most differences fall below the kernel's range and give -128.
  add('log_softmax_i8_wide_input', 'LOG_SOFTMAX', 2, (n, v) => simple(n, 'LOG_SOFTMAX', v, logSoftmax,
      [T([2, 3, 9], 'INT8', {q: [0.5, 0]}), T([2, 3, 9], 'INT8', {q: [16 / 256, 127]})]));
  add('log_softmax_i8_narrow_input', 'LOG_SOFTMAX', 2, (n, v) => simple(n, 'LOG_SOFTMAX', v, logSoftmax,
      [T([4, 100], 'INT8', {q: [0.01, 3]}), T([4, 100], 'INT8', {q: [16 / 256, 127]})]));
  add('prelu_f32_channel', 'PRELU', 1, (n, v) => simple(n, 'PRELU', v, null,
      [T([1, 3, 4, 3]), C([3], 'FLOAT32', f32([0.25, -0.5, 2])), T([1, 3, 4, 3])]));
  add('prelu_u8_channel', 'PRELU', 1, (n, v) => simple(n, 'PRELU', v, null,
      [T([1, 3, 4, 3], 'UINT8', {q: [0.05, 128]}), C([3], 'UINT8', [10, 128, 250], {q: [0.01, 128]}), T([1, 3, 4, 3], 'UINT8', {q: [0.04, 100]})]));
  add('prelu_i8_broadcast', 'PRELU', 1, (n, v) => simple(n, 'PRELU', v, null,
      [T([2, 3, 4], 'INT8', {q: [0.05, -3]}), C([3, 1], 'INT8', s8([-40, 25, 127]), {q: [0.02, 0]}), T([2, 3, 4], 'INT8', {q: [0.03, 10]})]));
  add('squared_difference_i8_broadcast', 'SQUARED_DIFFERENCE', 2, (n, v) => simple(n, 'SQUARED_DIFFERENCE', v, null,
      [T([2, 3, 4], 'INT8', {q: [0.05, 3]}), T([4], 'INT8', {q: [0.08, -2]}), T([2, 3, 4], 'INT8', {q: [0.1, -128]})]));
  add('squared_difference_i8_same_scale', 'SQUARED_DIFFERENCE', 2, (n, v) => simple(n, 'SQUARED_DIFFERENCE', v, null,
      [T([5, 8], 'INT8', {q: [0.02, 0]}), T([5, 8], 'INT8', {q: [0.02, 0]}), T([5, 8], 'INT8', {q: [0.003, -128]})]));
  add('reduce_prod_i8', 'REDUCE_PROD', 2, (n, v) => simple(n, 'REDUCE_PROD', v, reducer(false),
      [T([3, 4], 'INT8', {q: [0.1, 0]}), C([1], 'INT32', i32([1])), T([3], 'INT8', {q: [0.05, 0]})]));
  const bilinear = (align_corners, half_pixel_centers) => ['ResizeBilinearOptions', {align_corners, half_pixel_centers}];
  add('resize_bilinear_f32_half_pixel', 'RESIZE_BILINEAR', 3, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(false, true),
      [T([1, 3, 5, 2]), C([2], 'INT32', i32([5, 7])), T([1, 5, 7, 2])]));
  add('resize_bilinear_u8_2x', 'RESIZE_BILINEAR', 1, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(false, false),
      [T([1, 3, 4, 3], 'UINT8', {q: [0.1, 5]}), C([2], 'INT32', i32([6, 8])), T([1, 6, 8, 3], 'UINT8', {q: [0.1, 5]})]));
  add('resize_bilinear_u8_half_pixel', 'RESIZE_BILINEAR', 3, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(false, true),
      [T([2, 3, 5, 2], 'UINT8', {q: [0.1, 5]}), C([2], 'INT32', i32([5, 7])), T([2, 5, 7, 2], 'UINT8', {q: [0.1, 5]})]));
  add('resize_bilinear_i8_align_corners', 'RESIZE_BILINEAR', 2, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(true, false),
      [T([1, 4, 3, 3], 'INT8', {q: [0.1, -20]}), C([2], 'INT32', i32([7, 5])), T([1, 7, 5, 3], 'INT8', {q: [0.1, -20]})]));
  add('resize_bilinear_i8_half_pixel_down', 'RESIZE_BILINEAR', 3, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(false, true),
      [T([1, 6, 6, 1], 'INT8', {q: [0.1, 0]}), C([2], 'INT32', i32([4, 3])), T([1, 4, 3, 1], 'INT8', {q: [0.1, 0]})]));
  // Upscaled with half-pixel centres: the first rows and columns weigh their high tap negatively; 37
  // channels and two batches run the kernel's vector loop, its tail and its row split.
  add('resize_bilinear_i8_half_pixel_up', 'RESIZE_BILINEAR', 3, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(false, true),
      [T([2, 3, 5, 37], 'INT8', {q: [0.1, 3]}), C([2], 'INT32', i32([8, 13])), T([2, 8, 13, 37], 'INT8', {q: [0.1, 3]})]));
  add('resize_bilinear_i8_4x', 'RESIZE_BILINEAR', 1, (n, v) => simple(n, 'RESIZE_BILINEAR', v, bilinear(false, false),
      [T([1, 4, 4, 16], 'INT8', {q: [0.1, -1]}), C([2], 'INT32', i32([16, 16])), T([1, 16, 16, 16], 'INT8', {q: [0.1, -1]})]));

  // ---- 16x8: int16 activations (zero point 0), int8 weights, int64 bias ----
  const q16 = (scale) => ({q: [scale, 0]});
  const elementwise16 = (act) => [{fused_activation_function: act, pot_scale_int16: false}];
  add('add_i16_broadcast', 'ADD', 3, (n, v) => simple(n, 'ADD', v, ['AddOptions', ...elementwise16('NONE')],
      [T([2, 3, 4], 'INT16', q16(0.001)), T([4], 'INT16', q16(0.0007)), T([2, 3, 4], 'INT16', q16(0.0015))]));
  add('sub_i16_relu', 'SUB', 3, (n, v) => simple(n, 'SUB', v, ['SubOptions', ...elementwise16('RELU')],
      [T([3, 5], 'INT16', q16(0.002)), T([3, 5], 'INT16', q16(0.002)), T([3, 5], 'INT16', q16(0.003))]));
  add('mul_i16_broadcast', 'MUL', 4, (n, v) => simple(n, 'MUL', v, ['MulOptions', {fused_activation_function: 'NONE'}],
      [T([4, 1, 3], 'INT16', q16(0.0004)), T([2, 3], 'INT16', q16(0.0003)), T([4, 2, 3], 'INT16', q16(0.005))]));
  add('fully_connected_16x8', 'FULLY_CONNECTED', 7, (n, v) => simple(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'NONE'}],
      [T([2, 8], 'INT16', q16(0.002)), C([5, 8], 'INT8', int8Weights(40, 1), {q: [0.01, 0]}),
       C([5], 'INT64', i64([1000, -25000, 0, 70000, -3]), {q: [0.00002, 0]}), T([2, 5], 'INT16', q16(0.005))],
      ['--int-range', '-3000:3000']));
  add('fully_connected_16x8_relu_no_bias', 'FULLY_CONNECTED', 7, (n, v) => model(n, 'FULLY_CONNECTED', v,
      ['FullyConnectedOptions', {fused_activation_function: 'RELU'}],
      [T([3, 6], 'INT16', q16(0.001)), C([4, 6], 'INT8', int8Weights(24, 7), {q: [0.02, 0]}), T([3, 4], 'INT16', q16(0.002))],
      {inputs: [0], outputs: [2], opInputs: [0, 1, -1]}, ['--int-range', '-2000:2000']));
  add('conv_2d_16x8_per_channel', 'CONV_2D', 4, (n, v) => simple(n, 'CONV_2D', v,
      ['Conv2DOptions', {padding: 'SAME', stride_w: 2, stride_h: 2, fused_activation_function: 'RELU6', dilation_w_factor: 1, dilation_h_factor: 1}],
      [T([1, 5, 5, 3], 'INT16', q16(0.001)), C([4, 3, 3, 3], 'INT8', int8Weights(108, 3), {q: [[0.01, 0.02, 0.005, 0.015], [0, 0, 0, 0], 0]}),
       C([4], 'INT64', i64([500, -1200, 0, 30000]), {q: [[0.00001, 0.00002, 0.000005, 0.000015], [0, 0, 0, 0], 0]}),
       T([1, 3, 3, 4], 'INT16', q16(0.0004))], ['--int-range', '-2000:2000']));
  add('conv_2d_16x8_dilated_valid', 'CONV_2D', 4, (n, v) => simple(n, 'CONV_2D', v,
      ['Conv2DOptions', {padding: 'VALID', stride_w: 1, stride_h: 1, fused_activation_function: 'NONE', dilation_w_factor: 2, dilation_h_factor: 2}],
      [T([2, 6, 6, 2], 'INT16', q16(0.0005)), C([3, 2, 2, 2], 'INT8', int8Weights(24, 5), {q: [0.01, 0]}),
       C([3], 'INT64', i64([10, 20, -30]), {q: [0.000005, 0]}), T([2, 4, 4, 3], 'INT16', q16(0.0002))], ['--int-range', '-4000:4000']));
  add('depthwise_conv_2d_16x8', 'DEPTHWISE_CONV_2D', 5, (n, v) => simple(n, 'DEPTHWISE_CONV_2D', v,
      ['DepthwiseConv2DOptions', {padding: 'SAME', stride_w: 1, stride_h: 1, depth_multiplier: 2, fused_activation_function: 'NONE', dilation_w_factor: 1, dilation_h_factor: 1}],
      [T([1, 4, 4, 2], 'INT16', q16(0.001)), C([1, 3, 3, 4], 'INT8', int8Weights(36, 9), {q: [[0.01, 0.02, 0.005, 0.015], [0, 0, 0, 0], 3]}),
       C([4], 'INT64', i64([100, -200, 300, -400]), {q: [[0.00001, 0.00002, 0.000005, 0.000015], [0, 0, 0, 0], 0]}),
       T([1, 4, 4, 4], 'INT16', q16(0.0003))], ['--int-range', '-5000:5000']));
  // int16 SOFTMAX (TFLite's exp and 1 / (1 + x) lookup tables), LOGISTIC and TANH (its sigmoid table).
  add('softmax_i16', 'SOFTMAX', 3, (n, v) => simple(n, 'SOFTMAX', v, ['SoftmaxOptions', {beta: 1}],
      [T([3, 20], 'INT16', q16(0.001)), T([3, 20], 'INT16', q16(1 / 32768))], ['--int-range', '-6000:6000']));
  add('softmax_i16_beta', 'SOFTMAX', 3, (n, v) => simple(n, 'SOFTMAX', v, ['SoftmaxOptions', {beta: 0.5}],
      [T([2, 3, 7], 'INT16', q16(0.0005)), T([2, 3, 7], 'INT16', q16(1 / 32768))]));
  add('logistic_i16', 'LOGISTIC', 3, (n, v) => simple(n, 'LOGISTIC', v, null,
      [T([4, 64], 'INT16', q16(0.0007)), T([4, 64], 'INT16', q16(1 / 32768))]));
  add('tanh_i16', 'TANH', 3, (n, v) => simple(n, 'TANH', v, null,
      [T([4, 64], 'INT16', q16(0.0005)), T([4, 64], 'INT16', q16(1 / 32768))]));
  // Input scale 2^-12 (Q3.12; TANH also 2^-11, doubled with saturation): TFLite's gemmlowp fixed-point
  // path instead of the table; a scale within 1e-3 of log2 of it counts as it (TFLite's CheckedLog2).
  add('logistic_i16_pot', 'LOGISTIC', 3, (n, v) => simple(n, 'LOGISTIC', v, null,
      [T([8, 256], 'INT16', q16(1 / 4096)), T([8, 256], 'INT16', q16(1 / 32768))], seed(13)));
  add('logistic_i16_near_pot', 'LOGISTIC', 3, (n, v) => simple(n, 'LOGISTIC', v, null,
      [T([4, 64], 'INT16', q16(0.9996 / 4096)), T([4, 64], 'INT16', q16(1 / 32768))]));
  add('tanh_i16_pot', 'TANH', 3, (n, v) => simple(n, 'TANH', v, null,
      [T([8, 256], 'INT16', q16(1 / 4096)), T([8, 256], 'INT16', q16(1 / 32768))], seed(14)));
  add('tanh_i16_pot_doubled', 'TANH', 3, (n, v) => simple(n, 'TANH', v, null,
      [T([8, 256], 'INT16', q16(1 / 2048)), T([8, 256], 'INT16', q16(1 / 32768))], seed(15)));
  // int16 RELU and RELU6: rescaled, clamped at 0 and round(6 / output scale) (past 32767 here in the second).
  add('relu_i16', 'RELU', 3, (n, v) => simple(n, 'RELU', v, null, [T([4, 16], 'INT16', q16(0.0005)), T([4, 16], 'INT16', q16(0.0007))]));
  add('relu6_i16', 'RELU6', 3, (n, v) => simple(n, 'RELU6', v, null, [T([4, 16], 'INT16', q16(0.0005)), T([4, 16], 'INT16', q16(0.0002))]));
  add('relu6_i16_wide_output', 'RELU6', 3, (n, v) => simple(n, 'RELU6', v, null, [T([4, 16], 'INT16', q16(0.0005)), T([4, 16], 'INT16', q16(0.0001))]));
  // The ends of a 16x8 model: QUANTIZE from float and between int16 and int8, DEQUANTIZE.
  add('quantize_f32_i16', 'QUANTIZE', 1, (n, v) => simple(n, 'QUANTIZE', v, null, [T([4, 16]), T([4, 16], 'INT16', q16(0.00003))]));
  add('quantize_i16_i8', 'QUANTIZE', 1, (n, v) => simple(n, 'QUANTIZE', v, null, [T([4, 16], 'INT16', q16(0.0003)), T([4, 16], 'INT8', {q: [0.05, -3]})]));
  add('quantize_i16_i16', 'QUANTIZE', 1, (n, v) => simple(n, 'QUANTIZE', v, null, [T([4, 16], 'INT16', q16(0.0003)), T([4, 16], 'INT16', q16(0.0007))]));
  add('dequantize_i16', 'DEQUANTIZE', 1, (n, v) => simple(n, 'DEQUANTIZE', v, null, [T([4, 16], 'INT16', q16(0.0003)), T([4, 16])]));
  // uint8, int8 (per channel) and 16x8 TRANSPOSE_CONV: output_shape, filter, input, bias.
  const transposeConv = (padding, stride) => ['TransposeConvOptions', {padding, stride_w: stride, stride_h: stride}];
  add('transpose_conv_u8', 'TRANSPOSE_CONV', 1, (n, v) => simple(n, 'TRANSPOSE_CONV', v, transposeConv('SAME', 2),
      [C([4], 'INT32', i32([1, 6, 6, 2])), C([2, 3, 3, 3], 'UINT8', int8Weights(54, 21).map((b) => (b + 128) & 0xff), {q: [0.02, 120]}),
       T([1, 3, 3, 3], 'UINT8', {q: [0.05, 128]}), C([2], 'INT32', i32([300, -700]), {q: [0.001, 0]}), T([1, 6, 6, 2], 'UINT8', {q: [0.08, 100]})]));
  add('transpose_conv_i8_per_channel', 'TRANSPOSE_CONV', 2, (n, v) => simple(n, 'TRANSPOSE_CONV', v, transposeConv('VALID', 2),
      [C([4], 'INT32', i32([2, 7, 7, 3])), C([3, 3, 3, 2], 'INT8', int8Weights(54, 22), {q: [[0.01, 0.02, 0.005], [0, 0, 0], 0]}),
       T([2, 3, 3, 2], 'INT8', {q: [0.05, -3]}), C([3], 'INT32', i32([100, -2000, 50]), {q: [[0.0005, 0.001, 0.00025], [0, 0, 0], 0]}),
       T([2, 7, 7, 3], 'INT8', {q: [0.06, 5]})]));
  add('transpose_conv_16x8', 'TRANSPOSE_CONV', 3, (n, v) => simple(n, 'TRANSPOSE_CONV', v, transposeConv('SAME', 1),
      [C([4], 'INT32', i32([1, 4, 4, 2])), C([2, 3, 3, 2], 'INT8', int8Weights(36, 23), {q: [[0.01, 0.02], [0, 0], 0]}),
       T([1, 4, 4, 2], 'INT16', q16(0.001)), C([2], 'INT64', i64([1000, -3000]), {q: [[0.00001, 0.00002], [0, 0], 0]}),
       T([1, 4, 4, 2], 'INT16', q16(0.002))], ['--int-range', '-5000:5000']));
  add('leaky_relu_i16', 'LEAKY_RELU', 2, (n, v) => simple(n, 'LEAKY_RELU', v, ['LeakyReluOptions', {alpha: 0.2}],
      [T([4, 16], 'INT16', q16(0.0005)), T([4, 16], 'INT16', q16(0.0004))]));
  // Quantized ABS: |code - zero point|, rescaled when the scales differ.
  add('abs_i8_rescale', 'ABS', 2, (n, v) => simple(n, 'ABS', v, null, [T([4, 16], 'INT8', {q: [0.05, -7]}), T([4, 16], 'INT8', {q: [0.04, -128]})]));
  add('abs_i8_same_scale', 'ABS', 2, (n, v) => simple(n, 'ABS', v, null, [T([4, 16], 'INT8', {q: [0.05, 3]}), T([4, 16], 'INT8', {q: [0.05, -20]})]));
  add('abs_i16', 'ABS', 3, (n, v) => simple(n, 'ABS', v, null, [T([4, 16], 'INT16', q16(0.0005)), T([4, 16], 'INT16', q16(0.0003))]));
  // int8 and int16 BATCH_MATMUL: zero points, adj_x / adj_y, broadcast batches.
  const matmul = (adj_x, adj_y) => ['BatchMatMulOptions', {adj_x, adj_y}];
  add('batch_matmul_i8', 'BATCH_MATMUL', 2, (n, v) => simple(n, 'BATCH_MATMUL', v, matmul(false, false),
      [T([2, 3, 8], 'INT8', {q: [0.05, -3]}), T([2, 8, 5], 'INT8', {q: [0.04, 6]}), T([2, 3, 5], 'INT8', {q: [0.6, 5]})]));
  add('batch_matmul_i8_adjoint_broadcast', 'BATCH_MATMUL', 2, (n, v) => simple(n, 'BATCH_MATMUL', v, matmul(true, true),
      [T([2, 1, 6, 3], 'INT8', {q: [0.05, 0]}), T([3, 4, 6], 'INT8', {q: [0.05, 0]}), T([2, 3, 3, 4], 'INT8', {q: [0.4, -1]})]));
  add('batch_matmul_i16', 'BATCH_MATMUL', 3, (n, v) => simple(n, 'BATCH_MATMUL', v, matmul(false, true),
      [T([3, 7], 'INT16', q16(0.001)), T([4, 7], 'INT16', q16(0.001)), T([3, 4], 'INT16', q16(0.08))]));
  // int8 RSQRT on codes at or above the zero point (TFLite fails on a negative value).
  add('rsqrt_i8', 'RSQRT', 2, (n, v) => simple(n, 'RSQRT', v, null,
      [T([4, 64], 'INT8', {q: [0.05, -128]}), T([4, 64], 'INT8', {q: [0.03, -128]})]));
  add('rsqrt_i8_wide', 'RSQRT', 2, (n, v) => simple(n, 'RSQRT', v, null,
      [T([2, 32], 'INT8', {q: [0.002, -128]}), T([2, 32], 'INT8', {q: [0.2, -100]})]));
  // uint8 DIV: TFLite's integer reciprocal; divisors kept away from their zero point.
  add('div_u8', 'DIV', 2, (n, v) => simple(n, 'DIV', v, ['DivOptions', {fused_activation_function: 'NONE'}],
      [T([3, 8], 'UINT8', {q: [0.05, 100]}), T([3, 8], 'UINT8', {q: [0.02, 0]}), T([3, 8], 'UINT8', {q: [0.2, 128]})], ['--int-range', '1:255']));
  add('div_u8_broadcast_relu', 'DIV', 2, (n, v) => simple(n, 'DIV', v, ['DivOptions', {fused_activation_function: 'RELU'}],
      [T([2, 3, 4], 'UINT8', {q: [0.1, 128]}), T([4], 'UINT8', {q: [0.05, 10]}), T([2, 3, 4], 'UINT8', {q: [0.05, 100]})], ['--int-range', '11:255']));
  // int16 pooling: codes averaged (rounding half away from zero) or maxed, clamped to the activation.
  const pool16 = (padding, stride, filter, act) => ['Pool2DOptions',
      {padding, stride_w: stride, stride_h: stride, filter_width: filter, filter_height: filter, fused_activation_function: act}];
  add('average_pool_2d_i16_same', 'AVERAGE_POOL_2D', 3, (n, v) => simple(n, 'AVERAGE_POOL_2D', v, pool16('SAME', 2, 3, 'NONE'),
      [T([1, 5, 6, 3], 'INT16', q16(0.001)), T([1, 3, 3, 3], 'INT16', q16(0.001))]));
  add('max_pool_2d_i16_relu6', 'MAX_POOL_2D', 3, (n, v) => simple(n, 'MAX_POOL_2D', v, pool16('VALID', 1, 2, 'RELU6'),
      [T([2, 4, 4, 2], 'INT16', q16(0.0003)), T([2, 3, 3, 2], 'INT16', q16(0.0003))]));
  // 8-bit pooling over 300 channels (the kernel sums them in chunks of 256) with partial windows at the
  // borders: SPPF's 5x5 stride-1 SAME max pool, and a strided average with a clamp.
  add('max_pool_2d_i8_5x5_same_300c', 'MAX_POOL_2D', 2, (n, v) => simple(n, 'MAX_POOL_2D', v, pool16('SAME', 1, 5, 'NONE'),
      [T([1, 6, 7, 300], 'INT8', {q: [0.05, -3]}), T([1, 6, 7, 300], 'INT8', {q: [0.05, -3]})]));
  add('average_pool_2d_u8_3x3_s2_300c_relu6', 'AVERAGE_POOL_2D', 2, (n, v) => simple(n, 'AVERAGE_POOL_2D', v, pool16('SAME', 2, 3, 'RELU6'),
      [T([2, 5, 6, 300], 'UINT8', {q: [0.05, 7]}), T([2, 3, 3, 300], 'UINT8', {q: [0.05, 7]})]));
  // Wider input ranges over more elements, so that every segment of the sigmoid table is used.
  add('logistic_i16_whole_table', 'LOGISTIC', 3, (n, v) => simple(n, 'LOGISTIC', v, null,
      [T([16, 1024], 'INT16', q16(0.0004)), T([16, 1024], 'INT16', q16(1 / 32768))], seed(11)));
  add('tanh_i16_whole_table', 'TANH', 3, (n, v) => simple(n, 'TANH', v, null,
      [T([16, 1024], 'INT16', q16(0.0002)), T([16, 1024], 'INT16', q16(1 / 32768))], seed(12)));
  // int16 (and 8-bit) codes through the data-movement ops.
  add('concatenation_i16', 'CONCATENATION', 3, (n, v) => simple(n, 'CONCATENATION', v, ['ConcatenationOptions', {axis: 1, fused_activation_function: 'NONE'}],
      [T([2, 3], 'INT16', q16(0.001)), T([2, 2], 'INT16', q16(0.001)), T([2, 5], 'INT16', q16(0.001))]));
  add('reshape_i16', 'RESHAPE', 1, (n, v) => simple(n, 'RESHAPE', v, null,
      [T([2, 6], 'INT16', q16(0.001)), C([3], 'INT32', i32([3, 2, 2])), T([3, 2, 2], 'INT16', q16(0.001))]));
  add('transpose_i16', 'TRANSPOSE', 5, (n, v) => simple(n, 'TRANSPOSE', v, null,
      [T([2, 3, 4], 'INT16', q16(0.001)), C([3], 'INT32', i32([2, 0, 1])), T([4, 2, 3], 'INT16', q16(0.001))]));
  add('pad_i16', 'PAD', 4, (n, v) => simple(n, 'PAD', v, null,
      [T([2, 3], 'INT16', q16(0.001)), C([2, 2], 'INT32', i32([1, 0, 2, 1])), T([3, 6], 'INT16', q16(0.001))]));
  add('strided_slice_i16', 'STRIDED_SLICE', 4, (n, v) => simple(n, 'STRIDED_SLICE', v, ['StridedSliceOptions', {}],
      [T([4, 6], 'INT16', q16(0.001)), C([2], 'INT32', i32([1, 5])), C([2], 'INT32', i32([4, 0])), C([2], 'INT32', i32([2, -2])),
       T([2, 3], 'INT16', q16(0.001))]));
  add('strided_slice_i8', 'STRIDED_SLICE', 2, (n, v) => simple(n, 'STRIDED_SLICE', v, ['StridedSliceOptions', {}],
      [T([4, 6], 'INT8', {q: [0.1, -3]}), C([2], 'INT32', i32([0, 1])), C([2], 'INT32', i32([4, 6])), C([2], 'INT32', i32([3, 2])),
       T([2, 3], 'INT8', {q: [0.1, -3]})]));
  add('gather_u8', 'GATHER', 1, (n, v) => simple(n, 'GATHER', v, ['GatherOptions', {axis: 1}],
      [T([2, 5], 'UINT8', {q: [0.1, 7]}), C([3], 'INT32', i32([4, 0, 4])), T([2, 3], 'UINT8', {q: [0.1, 7]})]));
  add('gather_i16', 'GATHER', 1, (n, v) => simple(n, 'GATHER', v, ['GatherOptions', {axis: 0}],
      [T([4, 3], 'INT16', q16(0.001)), C([2], 'INT32', i32([3, 1])), T([2, 3], 'INT16', q16(0.001))]));
}
