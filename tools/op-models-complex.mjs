// op-models-complex.mjs - the cases of tools/op-models.mjs for complex tensors: RFFT2D, REAL, IMAG,
// COMPLEX_ABS, and the other ops TFLite 2.9 runs on complex64 (CAST, RESHAPE, SQUEEZE, EXPAND_DIMS,
// SHAPE). tflite-peer neither feeds nor writes complex tensors, so the complex values stay inside each
// model: an RFFT2D (or a CAST, or a constant) makes them and REAL, IMAG, COMPLEX_ABS or a CAST turns them
// into the float outputs that are compared. These models have several operators, the op of the case
// under the version being probed and the others at version 1. tools/op-models.mjs calls the default
// export with its helpers.
import {f32, f64, i32} from './testgen/bytes.mjs';
import {OperatorCodes, operator} from './testgen/tflite-json.mjs';

// Complex constants: (real, imaginary) pairs of float32 or float64.
const c64 = f32;
const c128 = f64;

export default function complexCases({add, writeModel, T, C, given, seed}) {
  // A model of several operators. `ops`: [{op, version, options, inputs, outputs}]; `tensors` as
  // tools/op-models.mjs's writeModel() takes them (shape, type, constant data).
  function graph(name, tensors, ops, inputs, outputs, peerArgs = []) {
    const codes = new OperatorCodes();
    const operators = ops.map((o) => operator(codes.index(o.op, o.version ?? 1), o.inputs, o.outputs, o.options));
    writeModel(name, codes.list, tensors, inputs, outputs, operators, peerArgs);
  }
  const spectrumShape = (inShape, len) => [...inShape.slice(0, -2), len[0], len[1] / 2 + 1];

  // ---- RFFT2D, seen through REAL and IMAG: lengths that crop, pad or keep the input, batches ----
  // x -> RFFT2D(fft_length) -> complex -> REAL, IMAG (the two outputs).
  const rfft2d = (name, inShape, len, peerArgs = []) => add(name, 'RFFT2D', 1, (n, v) => {
    const s = spectrumShape(inShape, len);
    graph(n, [T(inShape), C([2], 'INT32', i32(len)), T(s, 'COMPLEX64'), T(s), T(s)],
          [{op: 'RFFT2D', version: v, inputs: [0, 1], outputs: [2]}, {op: 'REAL', inputs: [2], outputs: [3]},
           {op: 'IMAG', inputs: [2], outputs: [4]}], [0], [3, 4], peerArgs);
  });
  rfft2d('rfft2d_f32', [4, 8], [4, 8]);
  rfft2d('rfft2d_crop', [2, 6, 10], [4, 8]);                 // both dimensions cropped, a batch of 2
  rfft2d('rfft2d_pad', [3, 5], [8, 16]);                     // both zero-padded
  rfft2d('rfft2d_crop_rows_pad_columns_rank4', [2, 1, 7, 3], [4, 4]);
  rfft2d('rfft2d_one_row', [5, 1, 64], [1, 64]);             // a 1-D FFT as the converter writes tf.signal.rfft
  rfft2d('rfft2d_width_2', [3, 4, 2], [4, 2]);               // the narrowest row transform TFLite gets right
  rfft2d('rfft2d_tall', [64, 4], [64, 4]);
  rfft2d('rfft2d_large', [64, 128], [64, 128]);
  // A computed fft_length: the output's shape is known at invoke (dynamic), as in TFLite.
  add('rfft2d_computed_length', 'RFFT2D', 1, (n, v) => graph(n, [T([3, 6]), T([2], 'INT32'), T([1, 1], 'COMPLEX64'), T([1, 1])],
      [{op: 'RFFT2D', version: v, inputs: [0, 1], outputs: [2]}, {op: 'COMPLEX_ABS', inputs: [2], outputs: [3]}],
      [0, 1], [3], given(n, [[[3, 6], Array.from({length: 18}, (_, i) => Math.sin(i * 0.7) * 2 - 0.25), 'f32'], [[2], [4, 8], 'i32']])));

  // ---- REAL, IMAG, COMPLEX_ABS of an RFFT2D's output, and of constants (complex128 too) ----
  const part = (name, op, inShape, len) => add(name, op, 1, (n, v) => {
    const s = spectrumShape(inShape, len);
    graph(n, [T(inShape), C([2], 'INT32', i32(len)), T(s, 'COMPLEX64'), T(s)],
          [{op: 'RFFT2D', inputs: [0, 1], outputs: [2]}, {op, version: v, inputs: [2], outputs: [3]}], [0], [3]);
  });
  part('real_of_rfft2d', 'REAL', [2, 4, 8], [4, 8]);
  part('imag_of_rfft2d', 'IMAG', [2, 4, 8], [4, 8]);
  part('complex_abs_of_rfft2d', 'COMPLEX_ABS', [2, 3, 4, 8], [4, 8]);
  // Constants, infinities and NaNs included (hypot: an infinite part gives infinity beside a NaN).
  const constant = (name, op, type, values) => add(name, op, 1, (n, v) => {
    const count = values.length / 2;
    graph(n, [C([count], type, type === 'COMPLEX64' ? c64(values) : c128(values)), T([count], type === 'COMPLEX64' ? 'FLOAT32' : 'FLOAT64')],
          [{op, version: v, inputs: [0], outputs: [1]}], [], [1]);
  });
  const specials = [3, 4, -1.5, 2, 0, -0, 1e30, -1e30, Infinity, NaN, NaN, -Infinity, -2.5e-30, 7e-31];
  constant('complex_abs_c64_constant', 'COMPLEX_ABS', 'COMPLEX64', specials);
  constant('complex_abs_c128_constant', 'COMPLEX_ABS', 'COMPLEX128', [...specials, 1e300, 1e300, 3e-300, -4e-300]);
  constant('real_c128_constant', 'REAL', 'COMPLEX128', [3, 4, -1.5, 2, 1e300, -7e-300]);
  constant('imag_c128_constant', 'IMAG', 'COMPLEX128', [3, 4, -1.5, 2, 1e300, -7e-300]);
  // Folded at load by baton (a constant complex64 in, not a model output), then added to the input.
  add('real_c64_constant_folded', 'REAL', 1, (n, v) => graph(n,
      [C([3], 'COMPLEX64', c64([1, 2, -3, 4.5, 0.25, -1])), T([3]), T([3]), T([3])],
      [{op: 'REAL', version: v, inputs: [0], outputs: [1]}, {op: 'ADD', inputs: [1, 2], outputs: [3], options: ['AddOptions', {}]}],
      [2], [3]));

  // ---- a spectrogram front end, as TFLite's converter writes tf.signal.stft: frames times a window,
  // a row dimension added, a 1 x 512 RFFT2D (400 samples zero-padded), the row dimension dropped (on the
  // complex spectrum), magnitudes ----
  const hann = Array.from({length: 400}, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / 400));
  add('rfft2d_spectrogram_expand_squeeze', 'RFFT2D', 1, (n, v) => graph(n,
      [T([6, 400]), C([400], 'FLOAT32', f32(hann)), T([6, 400]), C([], 'INT32', i32([-2])), T([6, 1, 400]),
       C([2], 'INT32', i32([1, 512])), T([6, 1, 257], 'COMPLEX64'), T([6, 257], 'COMPLEX64'), T([6, 257])],
      [{op: 'MUL', inputs: [0, 1], outputs: [2], options: ['MulOptions', {}]},
       {op: 'EXPAND_DIMS', inputs: [2, 3], outputs: [4]},
       {op: 'RFFT2D', version: v, inputs: [4, 5], outputs: [6]},
       {op: 'SQUEEZE', inputs: [6], outputs: [7], options: ['SqueezeOptions', {squeeze_dims: [-2]}]},
       {op: 'COMPLEX_ABS', inputs: [7], outputs: [8]}], [0], [8]));
  add('rfft2d_spectrogram_reshape', 'RFFT2D', 1, (n, v) => graph(n,
      [T([2, 5, 400]), C([400], 'FLOAT32', f32(hann)), T([2, 5, 400]), C([3], 'INT32', i32([10, 1, 400])), T([10, 1, 400]),
       C([2], 'INT32', i32([1, 512])), T([10, 1, 257], 'COMPLEX64'), C([3], 'INT32', i32([2, 5, 257])),
       T([2, 5, 257], 'COMPLEX64'), T([2, 5, 257]), T([3], 'INT32')],
      [{op: 'MUL', inputs: [0, 1], outputs: [2], options: ['MulOptions', {}]},
       {op: 'RESHAPE', inputs: [2, 3], outputs: [4]},
       {op: 'RFFT2D', version: v, inputs: [4, 5], outputs: [6]},
       {op: 'RESHAPE', inputs: [6, 7], outputs: [8]},
       {op: 'COMPLEX_ABS', inputs: [8], outputs: [9]},
       {op: 'SHAPE', inputs: [8], outputs: [10], options: ['ShapeOptions', {out_type: 'INT32'}]}], [0], [9, 10]));

  // ---- CAST to and from complex64 (real part out; a zero imaginary part in) ----
  // From an RFFT2D's spectrum to each type (values of +-4 and more, so that integer casts truncate
  // something).
  for (const to of ['FLOAT32', 'INT32', 'INT64', 'INT16', 'INT8', 'BOOL', 'COMPLEX64']) {
    add(`cast_complex64_${to.toLowerCase()}`, 'CAST', 1, (n, v) => {
      const tensors = [T([4, 8]), C([2], 'INT32', i32([4, 8])), T([4, 5], 'COMPLEX64'), T([4, 5], to)];
      const ops = [{op: 'RFFT2D', inputs: [0, 1], outputs: [2]}, {op: 'CAST', version: v, inputs: [2], outputs: [3]}];
      if (to === 'COMPLEX64') {
        tensors.push(T([4, 5]), T([4, 5]));
        ops.push({op: 'REAL', inputs: [3], outputs: [4]}, {op: 'IMAG', inputs: [3], outputs: [5]});
      }
      graph(n, tensors, ops, [0], to === 'COMPLEX64' ? [4, 5] : [3]);
    });
  }
  for (const from of ['FLOAT32', 'INT32', 'INT64', 'INT16', 'UINT8', 'INT8', 'BOOL']) {
    add(`cast_${from.toLowerCase()}_complex64`, 'CAST', 1, (n, v) => graph(n,
        [T([2, 3], from), T([2, 3], 'COMPLEX64'), T([2, 3]), T([2, 3])],
        [{op: 'CAST', version: v, inputs: [0], outputs: [1]}, {op: 'REAL', inputs: [1], outputs: [2]},
         {op: 'IMAG', inputs: [1], outputs: [3]}], [0], [2, 3],
        from === 'BOOL' ? seed(3) : from.startsWith('INT') && from !== 'INT8' ? ['--int-range', '-1000:1000'] : []));
  }
}

