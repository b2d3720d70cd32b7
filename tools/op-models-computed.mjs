// op-models-computed.mjs - the one-op cases of tools/op-models.mjs whose axes, permutation, sizes, paddings,
// depth, k, block shape, shape or segment ids are computed: model inputs here, so they are known only at
// invoke. TFLite 2.9 then marks the output dynamic and sizes it in Eval (or, where the output keeps the
// input's shape, as for REVERSE_V2 and CUMSUM, reads the axis in Eval); baton prepares the node again
// at invoke. The inputs are given (.npy files written here) so that the computed values are valid ones.
// Returns the pairs of cases that share a model and differ in their input shapes ("resized"): the tests
// run one, resize the inputs to the other's and run again in one interpreter.
// tools/op-models.mjs calls the default export with its helpers.
import {f32, i32} from './testgen/bytes.mjs';

// Deterministic data: n values of a type, spread over a small range (floats in steps of 1/8, so that
// sums are exact; integers in [lo, hi]).
function data(type, n, salt = 0) {
  const at = (i) => ((i + 1) * 7919 + salt * 104729) % 65521;
  const out = [];
  for (let i = 0; i < n; ++i) {
    const r = at(i);
    switch (type) {
      case 'FLOAT32': out.push(((r % 81) - 40) / 8); break;
      case 'UINT8': out.push(r % 256); break;
      case 'INT8': out.push((r % 256) - 128); break;
      case 'INT16': out.push((r % 20001) - 10000); break;
      case 'BOOL': out.push(r % 3 !== 0); break;
      default: out.push((r % 19) - 9); break;
    }
  }
  return out;
}

const count = (shape) => shape.reduce((a, b) => a * b, 1);

export default function computedCases({add, model, simple, T, C, given: npyInputs, reducer}) {
  const resized = [];
  // tflite-peer arguments feeding the given inputs, in the model's input order: [type, shape, values];
  // values 'data' (or 'data:SALT') asks for data() of that type and shape.
  const given = (n, inputs) => npyInputs(n, inputs.map(([type, shape, values]) =>
      [shape, typeof values === 'string' ? data(type, count(shape), Number(values.split(':')[1] ?? 0)) : values, type]));
  // A case whose model also runs with other input shapes: NAME with `inputs`, NAME_resized with `other`.
  const withResize = (name, op, version, build, inputs, other) => {
    add(name, op, version, (n, v) => build(n, v, given(n, inputs)));
    add(`${name}_resized`, op, version, (n, v) => build(n, v, given(n, other)));
    resized.push({case: name, resized: `${name}_resized`});
  };
  const q = (scale, zero) => ({q: [scale, zero]});

  // ---- reductions: MEAN (float and TFLite's 8-bit and int16 paths), SUM, REDUCE_*, ARG_MAX / ARG_MIN ----
  withResize('mean_f32_computed_axes_keep', 'MEAN', 1, (n, v, args) => simple(n, 'MEAN', v, reducer(true),
      [T([2, 3, 4]), T([2], 'INT32'), T([1, 3, 1])], args),
      [['FLOAT32', [2, 3, 4], 'data'], ['INT32', [2], [-1, 0]]],
      [['FLOAT32', [3, 2, 5], 'data:1'], ['INT32', [1], [1]]]);
  add('mean_u8_computed_axes_spatial', 'MEAN', 1, (n, v) => simple(n, 'MEAN', v, reducer(true),
      [T([1, 4, 4, 3], 'UINT8', q(0.05, 120)), T([2], 'INT32'), T([1, 1, 1, 3], 'UINT8', q(0.03, 100))],
      given(n, [['UINT8', [1, 4, 4, 3], 'data'], ['INT32', [2], [1, 2]]])));
  add('mean_i8_computed_axis_rescale', 'MEAN', 2, (n, v) => simple(n, 'MEAN', v, reducer(false),
      [T([2, 3, 4], 'INT8', q(0.07, -10)), T([1], 'INT32'), T([2, 4], 'INT8', q(0.02, 5))],
      given(n, [['INT8', [2, 3, 4], 'data'], ['INT32', [1], [-2]]])));
  add('mean_i16_computed_axes_spatial', 'MEAN', 3, (n, v) => simple(n, 'MEAN', v, reducer(true),
      [T([2, 3, 5, 4], 'INT16', q(0.002, 0)), T([2], 'INT32'), T([2, 1, 1, 4], 'INT16', q(0.0007, 0))],
      given(n, [['INT16', [2, 3, 5, 4], 'data'], ['INT32', [2], [2, 1]]])));
  add('sum_f32_computed_repeated_axes', 'SUM', 1, (n, v) => simple(n, 'SUM', v, reducer(false),
      [T([2, 3, 4]), T([3], 'INT32'), T([4])], given(n, [['FLOAT32', [2, 3, 4], 'data'], ['INT32', [3], [1, -2, 0]]])));
  add('sum_i8_computed_axes_rescale_keep', 'SUM', 2, (n, v) => simple(n, 'SUM', v, reducer(true),
      [T([3, 4, 6], 'INT8', q(0.05, -7)), T([2], 'INT32'), T([1, 4, 1], 'INT8', q(0.3, 3))],
      given(n, [['INT8', [3, 4, 6], 'data'], ['INT32', [2], [0, -1]]])));
  add('reduce_prod_i8_computed_axis', 'REDUCE_PROD', 2, (n, v) => simple(n, 'REDUCE_PROD', v, reducer(false),
      [T([3, 4], 'INT8', q(0.1, 0)), T([1], 'INT32'), T([3], 'INT8', q(0.1, 0))],
      given(n, [['INT8', [3, 4], [13, -25, 17, 12, -11, 14, 16, -18, 20, -12, 13, 15]], ['INT32', [1], [1]]])));
  add('reduce_prod_i32_computed_axis', 'REDUCE_PROD', 1, (n, v) => simple(n, 'REDUCE_PROD', v, reducer(false),
      [T([2, 3], 'INT32'), T([1], 'INT32'), T([3], 'INT32')], given(n, [['INT32', [2, 3], 'data'], ['INT32', [1], [0]]])));
  add('reduce_max_u8_computed_axis_keep', 'REDUCE_MAX', 1, (n, v) => simple(n, 'REDUCE_MAX', v, reducer(true),
      [T([2, 5], 'UINT8', q(0.3, 11)), T([1], 'INT32'), T([2, 1], 'UINT8', q(0.3, 11))],
      given(n, [['UINT8', [2, 5], 'data'], ['INT32', [1], [-1]]])));
  add('reduce_min_i16_computed_axes', 'REDUCE_MIN', 3, (n, v) => simple(n, 'REDUCE_MIN', v, reducer(false),
      [T([2, 5, 3], 'INT16', q(0.1, 0)), T([2], 'INT32'), T([5], 'INT16', q(0.1, 0))],
      given(n, [['INT16', [2, 5, 3], 'data'], ['INT32', [2], [0, -1]]])));
  add('reduce_any_computed_axis', 'REDUCE_ANY', 1, (n, v) => simple(n, 'REDUCE_ANY', v, reducer(false),
      [T([6, 2], 'BOOL'), T([1], 'INT32'), T([6], 'BOOL')],
      given(n, [['BOOL', [6, 2], [false, false, true, false, false, true, true, true, false, false, true, false]], ['INT32', [1], [1]]])));
  add('reduce_all_computed_axes_keep', 'REDUCE_ALL', 1, (n, v) => simple(n, 'REDUCE_ALL', v, reducer(true),
      [T([4, 2, 1], 'BOOL'), T([2], 'INT32'), T([4, 1, 1], 'BOOL')],
      given(n, [['BOOL', [4, 2, 1], [true, true, true, false, false, false, false, true]], ['INT32', [2], [1, -1]]])));
  add('arg_max_f32_computed_i64_axis', 'ARG_MAX', 1, (n, v) => simple(n, 'ARG_MAX', v, ['ArgMaxOptions', {output_type: 'INT64'}],
      [T([3, 2, 4]), T([1], 'INT64'), T([2, 4], 'INT64')], given(n, [['FLOAT32', [3, 2, 4], 'data'], ['INT64', [1], [-3]]])));
  add('arg_min_u8_computed_axis', 'ARG_MIN', 1, (n, v) => simple(n, 'ARG_MIN', v, ['ArgMinOptions', {output_type: 'INT32'}],
      [T([3, 4], 'UINT8', q(0.1, 0)), T([], 'INT32'), T([3], 'INT32')], given(n, [['UINT8', [3, 4], 'data'], ['INT32', [], [1]]])));

  // ---- TRANSPOSE, SPLIT, SPLIT_V, EXPAND_DIMS, REVERSE_V2, CUMSUM, MIRROR_PAD ----
  withResize('transpose_f32_computed_perm', 'TRANSPOSE', 1, (n, v, args) => simple(n, 'TRANSPOSE', v, null,
      [T([2, 3, 4]), T([3], 'INT32'), T([4, 2, 3])], args),
      [['FLOAT32', [2, 3, 4], 'data'], ['INT32', [3], [2, 0, 1]]],
      [['FLOAT32', [2, 5], 'data:1'], ['INT32', [2], [1, 0]]]);
  add('transpose_i8_computed_perm', 'TRANSPOSE', 2, (n, v) => simple(n, 'TRANSPOSE', v, null,
      [T([2, 1, 3, 2], 'INT8', q(0.1, -3)), T([4], 'INT32'), T([2, 1, 2, 3], 'INT8', q(0.1, -3))],
      given(n, [['INT8', [2, 1, 3, 2], 'data'], ['INT32', [4], [3, 1, 0, 2]]])));
  add('split_f32_computed_axis', 'SPLIT', 1, (n, v) => model(n, 'SPLIT', v, ['SplitOptions', {num_splits: 3}],
      [T([], 'INT32'), T([2, 6]), T([2, 2]), T([2, 2]), T([2, 2])], {inputs: [0, 1], outputs: [2, 3, 4], opInputs: [0, 1]},
      given(n, [['INT32', [], [-1]], ['FLOAT32', [2, 6], 'data']])));
  add('split_u8_computed_axis', 'SPLIT', 1, (n, v) => model(n, 'SPLIT', v, ['SplitOptions', {num_splits: 2}],
      [T([1], 'INT32'), T([4, 3], 'UINT8', q(0.1, 2)), T([2, 3], 'UINT8', q(0.1, 2)), T([2, 3], 'UINT8', q(0.1, 2))],
      {inputs: [0, 1], outputs: [2, 3], opInputs: [0, 1]}, given(n, [['INT32', [1], [0]], ['UINT8', [4, 3], 'data']])));
  withResize('split_v_computed_sizes_axis', 'SPLIT_V', 1, (n, v, args) => model(n, 'SPLIT_V', v, ['SplitVOptions', {num_splits: 3}],
      [T([2, 7]), T([3], 'INT32'), T([], 'INT32'), T([2, 2]), T([2, 4]), T([2, 1])],
      {inputs: [0, 1, 2], outputs: [3, 4, 5], opInputs: [0, 1, 2]}, args),
      [['FLOAT32', [2, 7], 'data'], ['INT32', [3], [2, -1, 1]], ['INT32', [], [-1]]],
      [['FLOAT32', [5, 3], 'data:1'], ['INT32', [3], [1, 3, 1]], ['INT32', [], [0]]]);
  add('split_v_i8_computed_i64_sizes', 'SPLIT_V', 2, (n, v) => model(n, 'SPLIT_V', v, ['SplitVOptions', {num_splits: 2}],
      [T([5, 2], 'INT8', q(0.1, 1)), T([2], 'INT64'), C([], 'INT32', i32([0])), T([3, 2], 'INT8', q(0.1, 1)), T([2, 2], 'INT8', q(0.1, 1))],
      {inputs: [0, 1], outputs: [3, 4], opInputs: [0, 1, 2]}, given(n, [['INT8', [5, 2], 'data'], ['INT64', [2], [3, 2]]])));
  add('expand_dims_computed_axis', 'EXPAND_DIMS', 1, (n, v) => simple(n, 'EXPAND_DIMS', v, null,
      [T([2, 3]), T([1], 'INT32'), T([2, 3, 1])], given(n, [['FLOAT32', [2, 3], 'data'], ['INT32', [1], [-1]]])));
  add('expand_dims_computed_i64_axis', 'EXPAND_DIMS', 1, (n, v) => simple(n, 'EXPAND_DIMS', v, null,
      [T([2, 3], 'INT32'), T([], 'INT64'), T([2, 1, 3], 'INT32')], given(n, [['INT32', [2, 3], 'data'], ['INT64', [], [1]]])));
  withResize('reverse_v2_computed_axis', 'REVERSE_V2', 1, (n, v, args) => simple(n, 'REVERSE_V2', v, null,
      [T([2, 3, 2]), T([1], 'INT32'), T([2, 3, 2])], args),
      [['FLOAT32', [2, 3, 2], 'data'], ['INT32', [1], [-2]]],
      [['FLOAT32', [4, 5], 'data:1'], ['INT32', [1], [0]]]);
  add('reverse_v2_u8_computed_axis', 'REVERSE_V2', 2, (n, v) => simple(n, 'REVERSE_V2', v, null,
      [T([3, 4], 'UINT8', q(0.1, 7)), T([1], 'INT32'), T([3, 4], 'UINT8', q(0.1, 7))],
      given(n, [['UINT8', [3, 4], 'data'], ['INT32', [1], [1]]])));
  const cumsum = (exclusive, reverse) => ['CumsumOptions', {exclusive, reverse}];
  withResize('cumsum_f32_computed_axis_exclusive', 'CUMSUM', 1, (n, v, args) => simple(n, 'CUMSUM', v, cumsum(true, false),
      [T([2, 3, 4]), T([], 'INT32'), T([2, 3, 4])], args),
      [['FLOAT32', [2, 3, 4], 'data'], ['INT32', [], [-2]]],
      [['FLOAT32', [3, 5], 'data:1'], ['INT32', [], [1]]]);
  add('cumsum_i64_computed_axis_reverse', 'CUMSUM', 1, (n, v) => simple(n, 'CUMSUM', v, cumsum(false, true),
      [T([4, 3], 'INT64'), T([], 'INT32'), T([4, 3], 'INT64')], given(n, [['INT64', [4, 3], 'data'], ['INT32', [], [0]]])));
  const mirror = (mode) => ['MirrorPadOptions', {mode}];
  add('mirror_pad_reflect_f32_computed_paddings', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('REFLECT'),
      [T([2, 3, 4]), T([3, 2], 'INT32'), T([3, 6, 7])],
      given(n, [['FLOAT32', [2, 3, 4], 'data'], ['INT32', [3, 2], [1, 0, 2, 1, 0, 3]]])));
  add('mirror_pad_symmetric_i8_computed_i64_paddings', 'MIRROR_PAD', 1, (n, v) => simple(n, 'MIRROR_PAD', v, mirror('SYMMETRIC'),
      [T([5], 'INT8', q(0.1, -3)), T([1, 2], 'INT64'), T([12], 'INT8', q(0.1, -3))],
      given(n, [['INT8', [5], 'data'], ['INT64', [1, 2], [2, 5]]])));

  // ---- ONE_HOT, TOPK_V2, SCATTER_ND, SEGMENT_SUM ----
  add('one_hot_computed_depth', 'ONE_HOT', 1, (n, v) => simple(n, 'ONE_HOT', v, ['OneHotOptions', {axis: -1}],
      [T([2, 3], 'INT32'), T([], 'INT32'), C([], 'FLOAT32', f32([2.5])), C([], 'FLOAT32', f32([-1])), T([2, 3, 4])],
      given(n, [['INT32', [2, 3], [0, 3, 1, -1, 4, 2]], ['INT32', [], [4]]])));
  const topk = (shape, k) => [T(shape), T([], 'INT32'), T([...shape.slice(0, -1), k]), T([...shape.slice(0, -1), k], 'INT32')];
  withResize('topk_v2_f32_computed_k', 'TOPK_V2', 1, (n, v, args) => model(n, 'TOPK_V2', v, null, topk([3, 10], 4),
      {inputs: [0, 1], outputs: [2, 3], opInputs: [0, 1]}, args),
      [['FLOAT32', [3, 10], 'data'], ['INT32', [], [4]]],
      [['FLOAT32', [2, 6], 'data:1'], ['INT32', [], [6]]]);
  add('topk_v2_i8_computed_k', 'TOPK_V2', 2, (n, v) => model(n, 'TOPK_V2', v, null,
      [T([16], 'INT8', q(0.1, 0)), T([], 'INT32'), T([3], 'INT8', q(0.1, 0)), T([3], 'INT32')],
      {inputs: [0, 1], outputs: [2, 3], opInputs: [0, 1]}, given(n, [['INT8', [16], 'data'], ['INT32', [], [3]]])));
  add('scatter_nd_computed_shape', 'SCATTER_ND', 1, (n, v) => simple(n, 'SCATTER_ND', v, null,
      [C([3, 1], 'INT32', i32([3, 0, 3])), T([3, 2, 3]), T([3], 'INT32'), T([5, 2, 3])],
      given(n, [['FLOAT32', [3, 2, 3], 'data'], ['INT32', [3], [5, 2, 3]]])));
  add('segment_sum_computed_ids', 'SEGMENT_SUM', 1, (n, v) => simple(n, 'SEGMENT_SUM', v, null,
      [T([5, 2, 3]), T([5], 'INT32'), T([3, 2, 3])], given(n, [['FLOAT32', [5, 2, 3], 'data'], ['INT32', [5], [0, 0, 1, 2, 2]]])));

  // ---- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, TRANSPOSE_CONV, RESHAPE ----
  add('space_to_batch_nd_computed_block_paddings', 'SPACE_TO_BATCH_ND', 1, (n, v) => simple(n, 'SPACE_TO_BATCH_ND', v, null,
      [T([2, 3, 4, 2]), T([2], 'INT32'), T([2, 2], 'INT32'), T([12, 2, 2, 2])],
      given(n, [['FLOAT32', [2, 3, 4, 2], 'data'], ['INT32', [2], [2, 3]], ['INT32', [2, 2], [1, 0, 1, 1]]])));
  add('batch_to_space_nd_u8_computed_crops', 'BATCH_TO_SPACE_ND', 1, (n, v) => simple(n, 'BATCH_TO_SPACE_ND', v, null,
      [T([4, 2, 2, 1], 'UINT8', q(0.1, 17)), C([2], 'INT32', i32([2, 2])), T([2, 2], 'INT32'), T([1, 3, 3, 1], 'UINT8', q(0.1, 17))],
      given(n, [['UINT8', [4, 2, 2, 1], 'data'], ['INT32', [2, 2], [0, 1, 1, 0]]])));
  const transposeConv = (padding, stride) => ['TransposeConvOptions', {padding, stride_w: stride, stride_h: stride}];
  const filter = (n, salt) => data('FLOAT32', n, salt).map((x) => x / 4);
  add('transpose_conv_f32_computed_output_shape', 'TRANSPOSE_CONV', 1, (n, v) => simple(n, 'TRANSPOSE_CONV', v, transposeConv('SAME', 2),
      [T([4], 'INT32'), C([2, 3, 3, 3], 'FLOAT32', f32(filter(54, 3))), T([1, 3, 3, 3]), T([1, 6, 6, 2])],
      given(n, [['INT32', [4], [1, 6, 6, 2]], ['FLOAT32', [1, 3, 3, 3], 'data']])));
  add('transpose_conv_i8_computed_output_shape', 'TRANSPOSE_CONV', 2, (n, v) => simple(n, 'TRANSPOSE_CONV', v, transposeConv('VALID', 2),
      [T([4], 'INT32'), C([3, 3, 3, 2], 'INT8', data('INT8', 54, 4).map((b) => b & 0xff), {q: [[0.01, 0.02, 0.005], [0, 0, 0], 0]}),
       T([2, 3, 3, 2], 'INT8', q(0.05, -3)), C([3], 'INT32', i32([100, -2000, 50]), {q: [[0.0005, 0.001, 0.00025], [0, 0, 0], 0]}),
       T([2, 7, 7, 3], 'INT8', q(0.06, 5))],
      given(n, [['INT32', [4], [2, 7, 7, 3]], ['INT8', [2, 3, 3, 2], 'data']])));
  // The shape input decides over a new_shape option written for other shapes, as in TFLite.
  add('reshape_computed_shape_over_option', 'RESHAPE', 1, (n, v) => simple(n, 'RESHAPE', v, ['ReshapeOptions', {new_shape: [2, 6]}],
      [T([3, 4]), T([2], 'INT32'), T([4, 3])], given(n, [['FLOAT32', [3, 4], 'data'], ['INT32', [2], [4, -1]]])));
  return resized;
}
