// op-models-stablehlo.mjs - the one-op cases of tools/op-models.mjs for the STABLEHLO_* ops current LiteRT
// has runtime kernels for (ADD, MULTIPLY, MAXIMUM, MINIMUM, AND, SHIFT_LEFT, PAD, REDUCE_WINDOW, GATHER,
// SCATTER, RNG_BIT_GENERATOR), DILATE and REDUCE_WINDOW (issue #35 item 11). TFLite 2.9 has none of them: LiteRT 2.5 computes the references.
// tools/op-models.mjs calls the default export with its helpers; it returns the names of its cases.
import fs from 'node:fs';
import path from 'node:path';

import {f32, i8, i32, i64} from './testgen/bytes.mjs';
import {operatorCode, writeJson} from './testgen/tflite-json.mjs';

export default function stablehloCases({add, simple, T, C, outDir}) {
  const names = [];
  const later = (name, op, version, fn) => { names.push(name); add(name, op, version, fn); };
  // The option tables of the schema's second union go in builtin_options_2 (flatc JSON:
  // builtin_options_2_type / builtin_options_2); `simple` writes the first union, so these are moved over.
  const options2 = (name, type, options) => {
    const file = path.join(outDir, `${name}.json`);
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    m.subgraphs[0].operators[0].builtin_options_2_type = type;
    m.subgraphs[0].operators[0].builtin_options_2 = options;
    writeJson(file, m);
    return m;
  };

  // ---- elementwise: one shape, LiteRT's types (integers wrap) ----
  const binary = (name, op, shape, type, args) => later(name, op, 1, (n, v) => simple(n, op, v, null,
      [T(shape, type), T(shape, type), T(shape, type)], args));
  binary('stablehlo_add_f32', 'STABLEHLO_ADD', [2, 3, 4], 'FLOAT32');
  binary('stablehlo_add_i8_wraps', 'STABLEHLO_ADD', [4, 8], 'INT8');
  binary('stablehlo_add_u16', 'STABLEHLO_ADD', [3, 5], 'UINT16');
  binary('stablehlo_multiply_i32', 'STABLEHLO_MULTIPLY', [2, 2, 3], 'INT32', ['--int-range', '-50000:50000']);
  binary('stablehlo_multiply_f32_rank5', 'STABLEHLO_MULTIPLY', [1, 2, 3, 2, 2], 'FLOAT32');
  binary('stablehlo_maximum_f32', 'STABLEHLO_MAXIMUM', [3, 7], 'FLOAT32');
  binary('stablehlo_maximum_u8', 'STABLEHLO_MAXIMUM', [2, 9], 'UINT8');
  binary('stablehlo_minimum_i64', 'STABLEHLO_MINIMUM', [4, 3], 'INT64', ['--int-range', '-9:9']);
  binary('stablehlo_minimum_f32_rank6', 'STABLEHLO_MINIMUM', [1, 2, 1, 3, 2, 2], 'FLOAT32');
  // float16: computed in float32 and rounded to nearest even, as LiteRT's Eigen::half (sums of operands
  // of different exponents and every product round).
  binary('stablehlo_add_f16', 'STABLEHLO_ADD', [4, 9], 'FLOAT16');
  binary('stablehlo_multiply_f16', 'STABLEHLO_MULTIPLY', [3, 2, 5], 'FLOAT16');
  binary('stablehlo_maximum_f16', 'STABLEHLO_MAXIMUM', [17], 'FLOAT16');
  binary('stablehlo_minimum_f16', 'STABLEHLO_MINIMUM', [2, 7], 'FLOAT16');
  binary('stablehlo_and_i32', 'STABLEHLO_AND', [3, 6], 'INT32');
  binary('stablehlo_and_bool', 'STABLEHLO_AND', [2, 8], 'BOOL');
  later('stablehlo_shift_left_i8', 'STABLEHLO_SHIFT_LEFT', 1, (n, v) => simple(n, 'STABLEHLO_SHIFT_LEFT', v, null,
      [T([2, 8], 'INT8'), C([2, 8], 'INT8', i8([0, 1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4, 3, 2, 1, 0])), T([2, 8], 'INT8')]));
  later('stablehlo_shift_left_i32', 'STABLEHLO_SHIFT_LEFT', 1, (n, v) => simple(n, 'STABLEHLO_SHIFT_LEFT', v, null,
      [T([6], 'INT32'), C([6], 'INT32', i32([0, 1, 5, 16, 30, 31])), T([6], 'INT32')], ['--int-range', '-1000:1000']));

  // ---- DILATE: interior padding of dilation - 1 with a padding value ----
  later('dilate_f32_rank3', 'DILATE', 1, (n, v) => simple(n, 'DILATE', v, null,
      [T([2, 3, 4]), C([3], 'INT32', i32([2, 1, 3])), C([], 'FLOAT32', f32([-7.5])), T([3, 3, 10])]));
  later('dilate_i8_value_input', 'DILATE', 1, (n, v) => simple(n, 'DILATE', v, null,
      [T([3, 2], 'INT8'), C([2], 'INT32', i32([3, 4])), T([], 'INT8'), T([7, 5], 'INT8')]));
  later('dilate_i32_rank5', 'DILATE', 1, (n, v) => simple(n, 'DILATE', v, null,
      [T([1, 2, 2, 3, 2], 'INT32'), C([5], 'INT32', i32([1, 2, 1, 2, 3])), C([], 'INT32', i32([99])), T([1, 3, 2, 5, 4], 'INT32')]));

  // ---- STABLEHLO_PAD: edge padding (negative crops) and interior padding ----
  const pad = (name, type, shape, low, high, interior, out, value) => later(name, 'STABLEHLO_PAD', 1, (n, v) => {
    simple(n, 'STABLEHLO_PAD', v, null, [T(shape, type), value, T(out, type)]);
    options2(n, 'StablehloPadOptions', {edge_padding_low: low, edge_padding_high: high, interior_padding: interior});
  });
  pad('stablehlo_pad_f32_negative_interior', 'FLOAT32', [3, 4], [1, -1], [-2, 2], [1, 2], [4, 11], C([], 'FLOAT32', f32([0.5])));
  pad('stablehlo_pad_i32_rank4', 'INT32', [1, 2, 3, 2], [0, 1, 0, 2], [1, 0, 2, 0], [0, 1, 1, 0], [2, 4, 7, 4], T([], 'INT32'));
  pad('stablehlo_pad_u8_rank6', 'UINT8', [1, 2, 1, 2, 1, 3], [0, 0, 1, 0, 0, -1], [0, 1, 0, 0, 1, 0], [0, 0, 0, 1, 0, 1],
      [1, 3, 2, 3, 2, 4], C([], 'UINT8', [255]));

  // ---- REDUCE_WINDOW: window, strides and dilations as int64 inputs; every reduction ----
  const reduceWindow = (name, fn, type, shape, window, strides, dilations, out, init, args) =>
    later(name, 'REDUCE_WINDOW', 1, (n, v) => {
      simple(n, 'REDUCE_WINDOW', v, null,
             [T(shape, type), init, C([shape.length], 'INT64', i64(window)), C([shape.length], 'INT64', i64(strides)),
              C([shape.length], 'INT64', i64(dilations)), T(out, type)], args);
      options2(n, 'ReduceWindowOptions', {reduce_function: fn});
    });
  reduceWindow('reduce_window_add_f32', 'ADD', 'FLOAT32', [1, 6, 7, 2], [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 2, 1], [1, 3, 3, 2],
               C([], 'FLOAT32', f32([0])));
  reduceWindow('reduce_window_max_f32_rank5', 'MAXIMUM', 'FLOAT32', [2, 5, 4, 3, 2], [1, 2, 2, 2, 1], [1, 1, 2, 1, 1],
               [1, 2, 1, 1, 1], [2, 3, 2, 2, 2], C([], 'FLOAT32', f32([-1e30])));
  reduceWindow('reduce_window_min_i32', 'MINIMUM', 'INT32', [5, 6], [2, 3], [1, 1], [2, 1], [3, 4], C([], 'INT32', i32([1000000])));
  reduceWindow('reduce_window_mul_f32_init_input', 'MUL', 'FLOAT32', [3, 4, 2], [2, 2, 1], [1, 2, 1], [1, 1, 1], [2, 2, 2], T([]));
  reduceWindow('reduce_window_all_i8', 'ALL', 'INT8', [4, 5], [2, 2], [2, 1], [1, 1], [2, 4], C([], 'INT8', [1]), ['--int-range', '0:2']);
  reduceWindow('reduce_window_any_u8', 'ANY', 'UINT8', [7], [3], [2], [1], [3], C([], 'UINT8', [0]), ['--int-range', '0:1']);
  reduceWindow('reduce_window_add_i64_rank6', 'ADD', 'INT64', [1, 2, 3, 2, 3, 2], [1, 2, 2, 1, 2, 2], [1, 1, 1, 1, 1, 1],
               [1, 1, 1, 1, 1, 1], [1, 1, 2, 2, 2, 1], C([], 'INT64', i64([5])), ['--int-range', '-100:100']);

  // ---- STABLEHLO_REDUCE_WINDOW: the reduction is a body subgraph of one op ----
  const hloReduceWindow = (name, bodyOp, type, shape, opts, out, init, args) =>
    later(name, 'STABLEHLO_REDUCE_WINDOW', 1, (n, v) => {
      simple(n, 'STABLEHLO_REDUCE_WINDOW', v, null, [T(shape, type), init, T(out, type)], args);
      const m = options2(n, 'StablehloReduceWindowOptions', {...opts, body_subgraph_index: 1});
      m.operator_codes.push(operatorCode(bodyOp));
      m.subgraphs.push({name: 'body', inputs: [0, 1], outputs: [2],
                        tensors: [0, 1, 2].map((i) => ({shape: [], type, name: `b${i}`, buffer: 0})),
                        operators: [{opcode_index: 1, inputs: [0, 1], outputs: [2]}]});
      writeJson(path.join(outDir, `${n}.json`), m);
    });
  // A 3x3 max pool, stride 2, SAME-like padding (how converters lower max pooling).
  hloReduceWindow('stablehlo_reduce_window_max_f32_padded', 'STABLEHLO_MAXIMUM', 'FLOAT32', [1, 5, 6, 2],
                  {window_dimensions: [1, 3, 3, 1], window_strides: [1, 2, 2, 1], padding: [0, 0, 1, 1, 1, 1, 0, 0]},
                  [1, 3, 3, 2], C([], 'FLOAT32', f32([-3.4e38])));
  hloReduceWindow('stablehlo_reduce_window_add_f32_dilations', 'STABLEHLO_ADD', 'FLOAT32', [2, 4, 5],
                  {window_dimensions: [1, 2, 3], window_strides: [1, 1, 2], base_dilations: [1, 2, 1],
                   window_dilations: [1, 2, 1], padding: [0, 0, 1, -1, 2, 0]},
                  [2, 5, 3], C([], 'FLOAT32', f32([0.25])));
  hloReduceWindow('stablehlo_reduce_window_min_i32', 'STABLEHLO_MINIMUM', 'INT32', [3, 7],
                  {window_dimensions: [2, 3], window_strides: [1, 2], window_dilations: [1, 2]},
                  [2, 2], C([], 'INT32', i32([2147483647])));
  hloReduceWindow('stablehlo_reduce_window_mul_f32_rank5', 'STABLEHLO_MULTIPLY', 'FLOAT32', [1, 3, 2, 4, 2],
                  {window_dimensions: [1, 2, 1, 2, 2], window_strides: [1, 1, 1, 2, 1], padding: [0, 0, 0, 0, 0, 0, 0, 1, 0, 0]},
                  [1, 2, 2, 2, 1], C([], 'FLOAT32', f32([1])));
  hloReduceWindow('stablehlo_reduce_window_add_tfl_body_i32', 'ADD', 'INT32', [6, 4],
                  {window_dimensions: [3, 2], window_strides: [3, 1], padding: [0, 0, 0, 0]},
                  [2, 3], C([], 'INT32', i32([0])), ['--int-range', '-1000:1000']);
  // ---- STABLEHLO_GATHER: constant start indices, some past the operand (LiteRT clamps them) ----
  const gather = (name, type, shape, indices, opts, out) => later(name, 'STABLEHLO_GATHER', 1, (n, v) => {
    simple(n, 'STABLEHLO_GATHER', v, null, [T(shape, type), indices, T(out, type)]);
    options2(n, 'StablehloGatherOptions', opts);
  });
  // An embedding lookup: rows 4, 0, 7 (clamped to 4) and -2 (clamped to 0).
  gather('stablehlo_gather_f32_rows', 'FLOAT32', [5, 4], C([4, 1], 'INT32', i32([4, 0, 7, -2])),
         {offset_dims: [1], collapsed_slice_dims: [0], start_index_map: [0], index_vector_dim: 1, slice_sizes: [1, 4]},
         [4, 4]);
  // Two-entry start vectors in a 2x3 batch, int64 indices, 2x3 windows of a rank-3 operand.
  gather('stablehlo_gather_i32_batch_2d', 'INT32', [4, 5, 3],
         C([2, 3, 2], 'INT64', i64([0, 0, 3, 1, 1, 4, 2, 2, 9, 9, 1, -3])),
         {offset_dims: [2, 3], collapsed_slice_dims: [0], start_index_map: [0, 1], index_vector_dim: 2, slice_sizes: [1, 2, 3]},
         [2, 3, 2, 3]);
  // Offset dimensions on both sides of the batch one, nothing collapsed. (LiteRT 2.5 aborts when
  // index_vector_dim is the indices' rank, the spec's implicit one-entry vector: no reference for that.)
  gather('stablehlo_gather_u8_offsets_around_batch', 'UINT8', [3, 6], C([4, 1], 'INT32', i32([1, 0, 2, 5])),
         {offset_dims: [0, 2], collapsed_slice_dims: [], start_index_map: [1], index_vector_dim: 1, slice_sizes: [2, 3]},
         [2, 4, 3]);
  // The start vectors along the indices' first dimension, mapped to the operand's dimensions in reverse;
  // single elements (every dimension collapsed).
  gather('stablehlo_gather_f32_vector_first', 'FLOAT32', [3, 4], C([2, 3], 'INT32', i32([3, 0, 1, 2, 1, 0])),
         {offset_dims: [], collapsed_slice_dims: [0, 1], start_index_map: [1, 0], index_vector_dim: 0, slice_sizes: [1, 1]},
         [3]);
  // ---- STABLEHLO_SCATTER: constant indices (repeated ones combine twice, one past the operand is
  // skipped); the update computation is a body subgraph of one op, or of none (the update replaces) ----
  const scatter = (name, bodyOp, type, shape, indices, updates, opts, args) => later(name, 'STABLEHLO_SCATTER', 1, (n, v) => {
    simple(n, 'STABLEHLO_SCATTER', v, null, [T(shape, type), indices, T(updates, type), T(shape, type)], args);
    const m = options2(n, 'StablehloScatterOptions', {...opts, update_computation_subgraph_index: 1});
    if (bodyOp) m.operator_codes.push(operatorCode(bodyOp));
    m.subgraphs.push({name: 'update', inputs: [0, 1], outputs: [bodyOp ? 2 : 1],
                      tensors: [0, 1, 2].map((i) => ({shape: [], type, name: `u${i}`, buffer: 0})),
                      operators: bodyOp ? [{opcode_index: 1, inputs: [0, 1], outputs: [2]}] : []});
    writeJson(path.join(outDir, `${n}.json`), m);
  });
  scatter('stablehlo_scatter_add_f32_rows', 'STABLEHLO_ADD', 'FLOAT32', [5, 3], C([4, 1], 'INT32', i32([1, 3, 1, 7])), [4, 3],
          {update_window_dims: [1], inserted_window_dims: [0], scatter_dims_to_operand_dims: [0], index_vector_dim: 1});
  scatter('stablehlo_scatter_replace_i32_2d', null, 'INT32', [4, 5], C([3, 2], 'INT64', i64([0, 1, 3, 3, 2, 0])), [3, 2],
          {update_window_dims: [1], inserted_window_dims: [0], scatter_dims_to_operand_dims: [0, 1], index_vector_dim: 1});
  scatter('stablehlo_scatter_max_u8_elements', 'STABLEHLO_MAXIMUM', 'UINT8', [6], C([5, 1], 'INT32', i32([0, 2, 2, 5, 4])), [5],
          {update_window_dims: [], inserted_window_dims: [0], scatter_dims_to_operand_dims: [0], index_vector_dim: 1});
  scatter('stablehlo_scatter_add_f16_rows', 'STABLEHLO_ADD', 'FLOAT16', [5, 3], C([4, 1], 'INT32', i32([1, 3, 1, 0])), [4, 3],
          {update_window_dims: [1], inserted_window_dims: [0], scatter_dims_to_operand_dims: [0], index_vector_dim: 1});
  scatter('stablehlo_scatter_mul_f32_window_around', 'STABLEHLO_MULTIPLY', 'FLOAT32', [2, 3, 4], C([2, 1], 'INT32', i32([2, 0])),
          [2, 2, 4], {update_window_dims: [0, 2], inserted_window_dims: [1], scatter_dims_to_operand_dims: [1], index_vector_dim: 1});
  // ---- STABLEHLO_RNG_BIT_GENERATOR: output sizes that end inside a block; both outputs compared ----
  const rng = (name, algorithm, stateSize, type, out) => later(name, 'STABLEHLO_RNG_BIT_GENERATOR', 1, (n, v) => {
    simple(n, 'STABLEHLO_RNG_BIT_GENERATOR', v, null, [T([stateSize], 'UINT64'), T([stateSize], 'UINT64'), T(out, type)]);
    // `simple` makes one output: the state (tensor 1) is an output too, the op's first.
    const m = options2(n, 'StablehloRngBitGeneratorOptions', {algorithm});
    Object.assign(m.subgraphs[0], {inputs: [0], outputs: [1, 2]});
    Object.assign(m.subgraphs[0].operators[0], {inputs: [0], outputs: [1, 2]});
    writeJson(path.join(outDir, `${n}.json`), m);
  });
  rng('stablehlo_rng_bit_generator_default_i32', 'DEFAULT', 2, 'INT32', [3, 5]);
  rng('stablehlo_rng_bit_generator_philox_state3_u64', 'PHILOX', 3, 'UINT64', [7]);
  rng('stablehlo_rng_bit_generator_threefry_u32', 'THREEFRY', 2, 'UINT32', [9]);
  rng('stablehlo_rng_bit_generator_threefry_i64', 'THREEFRY', 2, 'INT64', [2, 3]);
  return names;
}
