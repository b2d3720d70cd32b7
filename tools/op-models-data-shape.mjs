// op-models-data-shape.mjs - the one-op cases of tools/op-models.mjs whose output shapes depend on
// input values: WHERE, UNIQUE, NON_MAX_SUPPRESSION_V4 / V5, and ops whose shape inputs are computed (given
// here as model inputs). tools/op-models.mjs calls the default export with its helpers.
import {f32, i32} from './testgen/bytes.mjs';

export default function dataShapeCases({add, simple, model, T, C, given, seed}) {
  // ---- outputs whose shape depends on the data: WHERE, UNIQUE, NON_MAX_SUPPRESSION_V4 / V5 ----
  // The model's output shapes are placeholders; the kernels set them from the values.
  add('where_bool', 'WHERE', 1, (n, v) => simple(n, 'WHERE', v, null, [T([3, 4], 'BOOL'), T([0, 2], 'INT64')], seed(3)));
  add('where_f32_rank3', 'WHERE', 1, (n, v) => simple(n, 'WHERE', v, null, [T([2, 3, 2]), T([0, 3], 'INT64')]));
  add('where_i32_none_true', 'WHERE', 1, (n, v) => simple(n, 'WHERE', v, null, [T([5], 'INT32'), T([0, 1], 'INT64')], ['--int-range', '0:0']));
  add('where_constant_u8', 'WHERE', 1, (n, v) => model(n, 'WHERE', v, null, [C([2, 3], 'UINT8', [0, 3, 0, 250, 1, 0]), T([0, 2], 'INT64')],
      {inputs: [], outputs: [1], opInputs: [0]}));
  const unique = (name, type, size, idx, peerArgs) => add(name, 'UNIQUE', 1, (n, v) => model(n, 'UNIQUE', v,
      ['UniqueOptions', {idx_out_type: idx}],
      [T([size], type, type.endsWith('INT8') ? {q: [0.1, 0]} : {}), T([0], type, type.endsWith('INT8') ? {q: [0.1, 0]} : {}), T([size], idx)],
      {inputs: [0], outputs: [1, 2], opInputs: [0]}, peerArgs));
  unique('unique_i32', 'INT32', 12, 'INT32', ['--int-range', '-3:3']);
  unique('unique_i64_idx64', 'INT64', 9, 'INT64', ['--int-range', '0:4']);
  unique('unique_i8', 'INT8', 10, 'INT32', ['--int-range', '-2:2']);
  add('unique_f32_given', 'UNIQUE', 1, (n, v) => model(n, 'UNIQUE', v, ['UniqueOptions', {}], [T([9]), T([0]), T([9], 'INT32')],
      {inputs: [0], outputs: [1, 2], opInputs: [0]}, given(n, [[[9], [1.5, -2, 1.5, 0, -0.0, 7.25, -2, 7.25, 3], 'f32']])));
  // Shape inputs computed at run time (model inputs here): the outputs' shapes are set at invoke.
  // [shape, values] of int32 inputs, or of a float32 one when values start with 'f32'.
  const givenInts = (n, inputs) => given(n, inputs.map(([shape, values]) =>
      (values[0] === 'f32' ? [shape, values.slice(1), 'f32'] : [shape, values, 'i32'])))[1];
  add('fill_computed_dims', 'FILL', 1, (n, v) => simple(n, 'FILL', v, null, [T([3], 'INT32'), T([], 'INT32'), T([1, 1, 1], 'INT32')],
      ['--inputs', givenInts(n, [[[3], [2, 1, 3]], [[], [7]]])]));
  add('range_computed_limit', 'RANGE', 1, (n, v) => model(n, 'RANGE', v, null,
      [C([], 'INT32', i32([2])), T([], 'INT32'), C([], 'INT32', i32([3])), T([1], 'INT32')],
      {inputs: [1], outputs: [3], opInputs: [0, 1, 2]}, ['--inputs', givenInts(n, [[[], [17]]])]));
  add('slice_computed_begin_size', 'SLICE', 1, (n, v) => simple(n, 'SLICE', v, null, [T([3, 5]), T([2], 'INT32'), T([2], 'INT32'), T([1, 1])],
      ['--inputs', givenInts(n, [[[3, 5], ['f32', ...Array.from({length: 15}, (_, i) => i * 0.5 - 3)]], [[2], [1, 2]], [[2], [2, -1]]])]));
  add('tile_computed_multiples', 'TILE', 1, (n, v) => simple(n, 'TILE', v, null, [T([2, 2], 'INT32'), T([2], 'INT32'), T([1, 1], 'INT32')],
      ['--inputs', givenInts(n, [[[2, 2], [1, 2, 3, 4]], [[2], [2, 3]]])]));
  add('resize_nearest_computed_size', 'RESIZE_NEAREST_NEIGHBOR', 1, (n, v) => simple(n, 'RESIZE_NEAREST_NEIGHBOR', v,
      ['ResizeNearestNeighborOptions', {align_corners: false, half_pixel_centers: false}], [T([1, 2, 3, 1]), T([2], 'INT32'), T([1, 1, 1, 1])],
      ['--inputs', givenInts(n, [[[1, 2, 3, 1], ['f32', 1, 2, 3, 4, 5, 6]], [[2], [3, 5]]])]));
  add('pad_computed_paddings', 'PAD', 1, (n, v) => simple(n, 'PAD', v, null, [T([2, 3]), T([2, 2], 'INT32'), T([1, 1])],
      ['--inputs', givenInts(n, [[[2, 3], ['f32', 1, 2, 3, 4, 5, 6]], [[2, 2], [1, 0, 0, 2]]])]));
  add('strided_slice_computed_end', 'STRIDED_SLICE', 1, (n, v) => simple(n, 'STRIDED_SLICE', v, ['StridedSliceOptions', {}],
      [T([6], 'INT32'), C([1], 'INT32', i32([1])), T([1], 'INT32'), C([1], 'INT32', i32([2])), T([1], 'INT32')],
      ['--inputs', givenInts(n, [[[6], [10, 11, 12, 13, 14, 15]], [[1], [6]]])]));
  add('broadcast_to_computed_shape', 'BROADCAST_TO', 2, (n, v) => simple(n, 'BROADCAST_TO', v, null, [T([3, 1]), T([3], 'INT32'), T([1, 1, 1])],
      ['--inputs', givenInts(n, [[[3, 1], ['f32', 1.5, -2, 4]], [[3], [2, 3, 4]]])]));
  // Overlapping boxes (corners in either order, one empty box), random scores.
  const nmsBoxes = [0, 0, 1, 1, 0.1, 0.1, 1.1, 1.1, 1, 1, 0, 0, 0, 2, 1, 3, 0.05, 2.1, 1, 3.1, 0.5, 0.5, 0.5, 0.9,
                    2, 2, 3, 3, 2.2, 2.3, 3.1, 3.4];
  const nms = (name, op, maxOut, iou, scoreThreshold, sigma) => add(name, op, 1, (n, v) => {
    const v5 = op === 'NON_MAX_SUPPRESSION_V5';
    const tensors = [T([8, 4]), T([8]), C([], 'INT32', i32([maxOut])), C([], 'FLOAT32', f32([iou])), C([], 'FLOAT32', f32([scoreThreshold]))];
    if (v5) tensors.push(C([], 'FLOAT32', f32([sigma])));
    const first = tensors.length;
    tensors.push(T([maxOut], 'INT32'));
    if (v5) tensors.push(T([maxOut]));
    tensors.push(T([], 'INT32'));
    const outs = v5 ? [first, first + 1, first + 2] : [first, first + 1];
    model(n, op, v, null, tensors, {inputs: [0, 1], outputs: outs, opInputs: [...Array(first).keys()]},
          given(n, [[[8, 4], nmsBoxes, 'f32'], [[8], [0.9, 0.75, 0.8, 0.3, 0.85, 0.6, 0.7, 0.7], 'f32']]));
  });
  nms('non_max_suppression_v4', 'NON_MAX_SUPPRESSION_V4', 6, 0.5, 0.1, 0);
  nms('non_max_suppression_v4_padded', 'NON_MAX_SUPPRESSION_V4', 10, 0.3, 0.65, 0);
  nms('non_max_suppression_v5_soft', 'NON_MAX_SUPPRESSION_V5', 6, 0.6, 0.2, 0.5);
  nms('non_max_suppression_v5_hard', 'NON_MAX_SUPPRESSION_V5', 4, 0.4, 0.0, 0);
}
