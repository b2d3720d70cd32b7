// op-models-array.mjs - the one-op cases of tools/op-models.mjs for the small array ops (RANK,
// BROADCAST_ARGS, BUCKETIZE, SPARSE_TO_DENSE, REVERSE_SEQUENCE, MATRIX_DIAG, MATRIX_SET_DIAG,
// DYNAMIC_UPDATE_SLICE), FAKE_QUANT and the 3-D convolutions (CONV_3D, CONV_3D_TRANSPOSE): each in the
// types TFLite 2.9's kernel takes, with the options that change the result. tools/op-models.mjs calls
// the default export with its helpers.
import {f32, i32, i64} from './testgen/bytes.mjs';

// `given(NAME, [[shape, values, kind], ...])`: the inputs given as .npy, in model-input order (kind 'f32',
// 'i32' or 'i64').
export default function arrayCases({add, simple, model, T, C, given, seed}) {
  const q8 = (type) => (type === 'UINT8' || type === 'INT8' ? {q: [0.1, type === 'UINT8' ? 128 : 0]} : {});

  // ---- RANK: any type, rank 0 and empty tensors too ----
  add('rank_f32_rank3', 'RANK', 1, (n, v) => simple(n, 'RANK', v, null, [T([2, 3, 4]), T([], 'INT32')]));
  add('rank_i8_scalar', 'RANK', 1, (n, v) => simple(n, 'RANK', v, null, [T([], 'INT8', q8('INT8')), T([], 'INT32')]));
  add('rank_bool_empty', 'RANK', 1, (n, v) => simple(n, 'RANK', v, null, [T([0, 3, 1, 2, 1], 'BOOL'), T([], 'INT32')], seed(3)));

  // ---- BROADCAST_ARGS: int32 or int64 shapes, of other lengths, one of them empty ----
  add('broadcast_args_i32', 'BROADCAST_ARGS', 1, (n, v) => simple(n, 'BROADCAST_ARGS', v, null,
      [T([3], 'INT32'), T([2], 'INT32'), T([3], 'INT32')], given(n, [[[3], [2, 1, 3], 'i32'], [[2], [4, 1], 'i32']])));
  add('broadcast_args_i64', 'BROADCAST_ARGS', 1, (n, v) => simple(n, 'BROADCAST_ARGS', v, null,
      [T([4], 'INT64'), T([3], 'INT64'), T([4], 'INT64')], given(n, [[[4], [5, 1, 2, 1], 'i64'], [[3], [3, 1, 4], 'i64']])));
  add('broadcast_args_empty_side', 'BROADCAST_ARGS', 1, (n, v) => simple(n, 'BROADCAST_ARGS', v, null,
      [C([0], 'INT32', []), T([2], 'INT32'), T([2], 'INT32')], given(n, [[[2], [3, 0], 'i32']])));

  // ---- BUCKETIZE: float32, float64, int32, int64 values; boundaries from the options ----
  const bucketize = (b) => ['BucketizeOptions', {boundaries: b}];
  add('bucketize_f32', 'BUCKETIZE', 1, (n, v) => simple(n, 'BUCKETIZE', v, bucketize([-0.75, -0.5, 0, 0.25, 0.3, 0.9]),
      [T([3, 5]), T([3, 5], 'INT32')]));
  add('bucketize_f32_on_boundaries', 'BUCKETIZE', 1, (n, v) => simple(n, 'BUCKETIZE', v, bucketize([-1, 0, 0.5, 2]),
      [T([7]), T([7], 'INT32')], given(n, [[[7], [-1.5, -1, -0.0, 0, 0.5, 1.999, 2], 'f32']])));
  add('bucketize_f64_scalar', 'BUCKETIZE', 1, (n, v) => simple(n, 'BUCKETIZE', v, bucketize([-0.1, 0.1]),
      [T([], 'FLOAT64'), T([], 'INT32')], seed(4)));
  add('bucketize_i32', 'BUCKETIZE', 1, (n, v) => simple(n, 'BUCKETIZE', v, bucketize([-5, 0, 0.5, 3, 7]),
      [T([2, 3, 4], 'INT32'), T([2, 3, 4], 'INT32')], ['--int-range', '-9:9']));
  add('bucketize_i64', 'BUCKETIZE', 1, (n, v) => simple(n, 'BUCKETIZE', v, bucketize([-2.5, 1, 4]),
      [T([9], 'INT64'), T([9], 'INT32')], ['--int-range', '-5:5']));
  add('bucketize_no_boundaries', 'BUCKETIZE', 1, (n, v) => simple(n, 'BUCKETIZE', v, bucketize([]),
      [T([4]), T([4], 'INT32')]));

  // ---- SPARSE_TO_DENSE: float32, int32, int64, int8, uint8 values; int32 or int64 indices ----
  const s2d = (name, indices, shape, values, out, peerArgs) => add(name, 'SPARSE_TO_DENSE', 1, (n, v) =>
      simple(n, 'SPARSE_TO_DENSE', v, ['SparseToDenseOptions', {validate_indices: false}], [indices, shape, values[0], values[1], out], peerArgs));
  s2d('sparse_to_dense_f32_2d', C([3, 2], 'INT32', i32([0, 1, 2, 3, 1, 0])), C([2], 'INT32', i32([3, 4])), [T([3]), T([])], T([3, 4]));
  s2d('sparse_to_dense_i64_1d', C([4], 'INT64', i64([6, 1, 4, 0])), C([1], 'INT64', i64([8])),
      [T([4], 'INT64'), T([], 'INT64')], T([8], 'INT64'), ['--int-range', '-100:100']);
  s2d('sparse_to_dense_i32_3d', C([2, 3], 'INT64', i64([1, 0, 2, 0, 2, 1])), C([3], 'INT32', i32([2, 3, 3])),
      [T([2], 'INT32'), C([], 'INT32', i32([-7]))], T([2, 3, 3], 'INT32'), ['--int-range', '-100:100']);
  s2d('sparse_to_dense_u8_scalar_value', C([1, 2], 'INT32', i32([1, 2])), C([2], 'INT32', i32([2, 3])),
      [T([], 'UINT8'), T([], 'UINT8')], T([2, 3], 'UINT8'));
  s2d('sparse_to_dense_i8_4d', C([2, 4], 'INT32', i32([0, 1, 0, 1, 1, 0, 0, 0])), C([4], 'INT32', i32([2, 2, 1, 2])),
      [T([2], 'INT8'), T([], 'INT8')], T([2, 2, 1, 2], 'INT8'));
  add('sparse_to_dense_computed_shape', 'SPARSE_TO_DENSE', 1, (n, v) => simple(n, 'SPARSE_TO_DENSE', v,
      ['SparseToDenseOptions', {validate_indices: false}],
      [C([2, 2], 'INT32', i32([0, 0, 1, 2])), T([2], 'INT32'), C([2], 'FLOAT32', f32([1.5, -2])), T([]), T([1, 1])],
      given(n, [[[2], [3, 4], 'i32'], [[], [0.25], 'f32']])));

  // ---- REVERSE_SEQUENCE: float32, int32, int64, int16, uint8 ... ----
  const revseq = (seqDim, batchDim) => ['ReverseSequenceOptions', {seq_dim: seqDim, batch_dim: batchDim}];
  add('reverse_sequence_f32', 'REVERSE_SEQUENCE', 1, (n, v) => simple(n, 'REVERSE_SEQUENCE', v, revseq(1, 0),
      [T([3, 5, 2]), C([3], 'INT32', i32([5, 2, 0])), T([3, 5, 2])]));
  add('reverse_sequence_i32_batch_after_seq', 'REVERSE_SEQUENCE', 1, (n, v) => simple(n, 'REVERSE_SEQUENCE', v, revseq(0, 2),
      [T([4, 2, 3], 'INT32'), C([3], 'INT64', i64([4, 1, 3])), T([4, 2, 3], 'INT32')]));
  add('reverse_sequence_i64_lengths_input', 'REVERSE_SEQUENCE', 1, (n, v) => simple(n, 'REVERSE_SEQUENCE', v, revseq(2, 1),
      [T([2, 3, 4, 2], 'INT64'), T([3], 'INT32'), T([2, 3, 4, 2], 'INT64')],
      given(n, [[[2, 3, 4, 2], Array.from({length: 48}, (_, i) => i - 20), 'i64'], [[3], [3, 4, 1], 'i32']])));
  for (const type of ['UINT8', 'INT16']) {  // TFLite 2.9 refuses int8 and bool
    add(`reverse_sequence_${type.toLowerCase()}`, 'REVERSE_SEQUENCE', 1, (n, v) => simple(n, 'REVERSE_SEQUENCE', v, revseq(1, 0),
        [T([2, 6], type, q8(type)), C([2], 'INT32', i32([6, 3])), T([2, 6], type, q8(type))]));
  }

  // ---- MATRIX_DIAG, MATRIX_SET_DIAG ----
  // TFLite 2.9 runs any other type (bool) as float32, overrunning its buffers; baton refuses it.
  const diagTypes = [['FLOAT32', [2, 3]], ['INT32', [2, 2, 3]], ['INT64', [4]], ['INT16', [1, 3]], ['INT8', [2, 2]], ['UINT8', [3]], ['FLOAT32', [0, 2]]];
  for (const [type, shape] of diagTypes) {
    add(`matrix_diag_${type.toLowerCase()}${shape[0] === 0 ? '_empty' : ''}`, 'MATRIX_DIAG', 1, (n, v) => simple(n, 'MATRIX_DIAG', v, null,
        [T(shape, type, q8(type)), T([...shape, shape[shape.length - 1]], type, q8(type))]));
  }
  const setDiag = [['FLOAT32', [2, 3, 4]], ['INT32', [4, 2]], ['INT64', [3, 3]], ['INT16', [2, 1, 2, 3]], ['INT8', [2, 5]], ['UINT8', [3, 2]]];
  for (const [type, shape] of setDiag) {
    const m = shape[shape.length - 2], k = shape[shape.length - 1];
    add(`matrix_set_diag_${type.toLowerCase()}`, 'MATRIX_SET_DIAG', 1, (n, v) => simple(n, 'MATRIX_SET_DIAG', v, null,
        [T(shape, type, q8(type)), T([...shape.slice(0, -2), Math.min(m, k)], type, q8(type)), T(shape, type, q8(type))]));
  }

  // ---- DYNAMIC_UPDATE_SLICE: start indices clamped so the update fits ----
  const dus = (name, operand, update, start, peerArgs = []) => add(name, 'DYNAMIC_UPDATE_SLICE', 1, (n, v) =>
      simple(n, 'DYNAMIC_UPDATE_SLICE', v, null, [operand, update, start, T(operand.shape, operand.type, operand.q ? {q: operand.q} : {})], peerArgs));
  dus('dynamic_update_slice_f32', T([4, 5]), T([2, 3]), C([2], 'INT32', i32([1, 1])));
  dus('dynamic_update_slice_clamped', T([4, 5]), T([2, 3]), C([2], 'INT32', i32([3, -2])));
  dus('dynamic_update_slice_i32_rank3', T([2, 3, 4], 'INT32'), T([1, 2, 2], 'INT32'), C([3], 'INT32', i32([1, 0, 5])));
  dus('dynamic_update_slice_whole', T([3, 2], 'INT32'), T([3, 2], 'INT32'), C([2], 'INT32', i32([0, 0])));
  // TFLite 2.9 takes float32, int32, int64 and int8 (uint8, int16 and bool fail at invoke), int32 start
  // indices only, and crashes on an empty update.
  for (const type of ['INT64', 'INT8']) {
    dus(`dynamic_update_slice_${type.toLowerCase()}`, T([5], type, q8(type)), T([2], type, q8(type)), C([1], 'INT32', i32([2])));
  }
  add('dynamic_update_slice_computed_start', 'DYNAMIC_UPDATE_SLICE', 1, (n, v) => simple(n, 'DYNAMIC_UPDATE_SLICE', v, null,
      [T([3, 4]), T([2, 2]), T([2], 'INT32'), T([3, 4])],
      given(n, [[[3, 4], Array.from({length: 12}, (_, i) => i * 0.5), 'f32'], [[2, 2], [-1, -2, -3, -4], 'f32'], [[2], [2, 1], 'i32']])));

  // ---- FAKE_QUANT (float32): min / max nudged so that zero is a code ----
  const fq = (min, max, bits, narrow) => ['FakeQuantOptions', {min, max, num_bits: bits, narrow_range: narrow}];
  add('fake_quant_8bit', 'FAKE_QUANT', 1, (n, v) => simple(n, 'FAKE_QUANT', v, fq(-0.6, 0.9, 8, false), [T([4, 16]), T([4, 16])]));
  add('fake_quant_4bit', 'FAKE_QUANT', 1, (n, v) => simple(n, 'FAKE_QUANT', v, fq(-0.37, 0.71, 4, false), [T([3, 11]), T([3, 11])]));
  add('fake_quant_3bit_v2', 'FAKE_QUANT', 2, (n, v) => simple(n, 'FAKE_QUANT', v, fq(-1, 0.5, 3, false), [T([20]), T([20])]));
  add('fake_quant_16bit_scalar', 'FAKE_QUANT', 1, (n, v) => simple(n, 'FAKE_QUANT', v, fq(-0.3, 0.8, 16, false), [T([]), T([])]));

  // ---- CONV_3D, CONV_3D_TRANSPOSE (float32; NDHWC input, DHWIO / DHWOI filter) ----
  // TFLite 2.9's CONV_3D_TRANSPOSE wants as many bias values as the filter has input channels (its last
  // dimension), and adds the first out_c of them. Its optimized (undilated) kernel disagrees with its
  // reference kernel and with the definition for some SAME paddings (an output of 1x5x6x7 from this
  // case's 1x3x3x4 input: depth padded by 1, height by 0); baton computes the definition, as the reference
  // kernel does, and this case keeps to a padding where the two agree.
  const c3 = (padding, [sd, sh, sw], [dd, dh, dw], act = 'NONE') => ['Conv3DOptions', {padding, stride_d: sd, stride_h: sh, stride_w: sw,
    dilation_d_factor: dd, dilation_h_factor: dh, dilation_w_factor: dw, fused_activation_function: act}];
  add('conv_3d_same', 'CONV_3D', 1, (n, v) => simple(n, 'CONV_3D', v, c3('SAME', [1, 1, 1], [1, 1, 1]),
      [T([1, 4, 5, 6, 3]), T([3, 3, 2, 3, 4]), T([4]), T([1, 4, 5, 6, 4])]));
  add('conv_3d_valid_strides_relu', 'CONV_3D', 1, (n, v) => model(n, 'CONV_3D', v, c3('VALID', [2, 1, 2], [1, 1, 1], 'RELU'),
      [T([2, 5, 6, 7, 2]), T([2, 3, 3, 2, 3]), T([2, 2, 4, 3, 3])], {inputs: [0, 1], outputs: [2], opInputs: [0, 1, -1]}));
  add('conv_3d_dilated_same_stride2', 'CONV_3D', 1, (n, v) => simple(n, 'CONV_3D', v, c3('SAME', [2, 2, 1], [2, 1, 2], 'RELU6'),
      [T([1, 5, 6, 5, 2]), T([2, 2, 3, 2, 3]), T([3]), T([1, 3, 3, 5, 3])]));
  add('conv_3d_valid_dilated_relu_n1', 'CONV_3D', 1, (n, v) => simple(n, 'CONV_3D', v, c3('VALID', [1, 2, 1], [2, 1, 1], 'RELU_N1_TO_1'),
      [T([1, 6, 5, 4, 3]), T([2, 3, 2, 3, 2]), T([2]), T([1, 4, 2, 3, 2])]));
  add('conv_3d_transpose_same', 'CONV_3D_TRANSPOSE', 1, (n, v) => model(n, 'CONV_3D_TRANSPOSE', v, c3('SAME', [2, 2, 2], [1, 1, 1]),
      [C([5], 'INT32', i32([1, 6, 6, 7, 2])), T([3, 3, 3, 2, 4]), T([1, 3, 3, 4, 4]), T([4]), T([1, 6, 6, 7, 2])],
      {inputs: [1, 2, 3], outputs: [4], opInputs: [0, 1, 2, 3]}));
  add('conv_3d_transpose_valid_relu', 'CONV_3D_TRANSPOSE', 1, (n, v) => model(n, 'CONV_3D_TRANSPOSE', v, c3('VALID', [1, 2, 2], [1, 1, 1], 'RELU'),
      [C([5], 'INT32', i32([2, 3, 7, 4, 3])), T([2, 3, 2, 3, 2]), T([2, 2, 3, 2, 2]), T([2, 3, 7, 4, 3])],
      {inputs: [1, 2], outputs: [3], opInputs: [0, 1, 2, -1]}));
  // Dilated, so TFLite runs its reference kernel, which adds the bias with a stride of its own: only a
  // bias of out_c values (input channels == output channels) runs there without overrunning the output.
  add('conv_3d_transpose_dilated', 'CONV_3D_TRANSPOSE', 1, (n, v) => model(n, 'CONV_3D_TRANSPOSE', v, c3('SAME', [1, 2, 1], [2, 1, 2], 'RELU6'),
      [C([5], 'INT32', i32([1, 4, 6, 5, 2])), T([2, 2, 3, 2, 2]), T([1, 4, 3, 5, 2]), T([2]), T([1, 4, 6, 5, 2])],
      {inputs: [1, 2, 3], outputs: [4], opInputs: [0, 1, 2, 3]}));
  add('conv_3d_transpose_computed_shape', 'CONV_3D_TRANSPOSE', 1, (n, v) => model(n, 'CONV_3D_TRANSPOSE', v, c3('VALID', [1, 1, 1], [1, 1, 1]),
      [T([5], 'INT32'), C([1, 2, 2, 1, 1], 'FLOAT32', f32([1, -2, 0.5, 3])), T([1, 2, 2, 2, 1]), T([1, 1, 1, 1, 1])],
      {inputs: [0, 2], outputs: [3], opInputs: [0, 1, 2]},
      given(n, [[[5], [1, 2, 3, 3, 1], 'i32'], [[1, 2, 2, 2, 1], [1, 2, 3, 4, 5, 6, 7, 8], 'f32']])));
}
