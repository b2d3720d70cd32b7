// op-models-recurrent.mjs - the one-op cases of tools/op-models.mjs for the recurrent and stateful ops
// (RNN, UNIDIRECTIONAL_SEQUENCE_RNN, SVDF, ...), whose state is a variable tensor the op updates in
// place. tools/op-models.mjs calls the default export with its helpers.
//
// Besides single-node cases, each op has a "chain" case: the same node repeated (same weights, one
// shared state tensor), one model input and output per node, so that TFLite's outputs show the state
// each step leaves for the next. OUT_DIR/carry.json pairs each chain with its single-node case:
// tests/op_cases_test.cc invokes the single node once per chain input and expects the chain's outputs,
// which is the state carried across invokes.
import {f32, i8, i16, i32} from './testgen/bytes.mjs';
import {lcg32} from './testgen/prng.mjs';
import {operator, operatorCode} from './testgen/tflite-json.mjs';

// Deterministic weights (a small LCG), so a rerun writes the same models.
const uniform = (seed, n, lo, hi) => {
  const r = lcg32(seed);
  return Array.from({length: n}, () => lo + (hi - lo) * r());
};
const ints = (seed, n, lo, hi) => uniform(seed, n, lo, hi + 1).map(Math.floor);

export default function recurrentCases({add, writeModel}) {
  const carry = [];

  // A graph of `steps` copies of one node. `tensors`: [{shape, type, data, q, variable}]; `node(k)` gives
  // the k-th copy's {inputs, outputs} (tensor indices, -1 = omitted); model inputs and outputs are listed.
  function graph(name, op, version, options, tensors, nodes, inputs, outputs, args = []) {
    const operators = nodes.map((n) => ({...operator(0, n.inputs, n.outputs, options),
                                         ...(n.intermediates ? {intermediates: n.intermediates} : {})}));
    writeModel(name, [operatorCode(op, version)], tensors, inputs, outputs, operators, args);
  }

  // One op's case and its chain of `steps` nodes: `weights` are the constant tensors (after the input),
  // `state` the variable tensor(s), `io(x, consts, states, y)` the node's input and output lists,
  // `input` / `output` the per-step tensors.
  // `extraInputs`: more per-step model inputs after `input` (handed to io as a fifth argument).
  function cell(name, op, version, options, {input, weights, states, output, io, intermediates = [], args = [],
                                             extraInputs = []}, steps = 3) {
    const build = (n, v, count) => {
      const tensors = [];
      const push = (t) => tensors.push(t) - 1;
      const consts = weights.map(push);
      const st = states.map((s) => push({...s, variable: true}));
      const xs = [], ys = [], nodes = [];
      for (let k = 0; k < count; ++k) {
        const x = push(input);
        const extras = extraInputs.map(push);
        const y = Array.isArray(output) ? output.map(push) : push(output);
        xs.push(x, ...extras);
        ys.push(...[y].flat());
        // Each node's intermediates (tensors that only carry a quantization) are its own.
        const node = io(x, consts, st, y, extras);
        if (intermediates.length) node.intermediates = intermediates.map(push);
        nodes.push(node);
      }
      graph(n, op, v, options, tensors, nodes, xs, ys, args);
    };
    add(name, op, version, (n, v) => build(n, v, 1));
    if (steps > 1) {
      add(`${name}_chain${steps}`, op, version, (n, v) => build(n, v, steps));
      carry.push({case: name, chain: `${name}_chain${steps}`});
    }
  }

  const T = (shape, type = 'FLOAT32', extra = {}) => ({shape, type, ...extra});
  const F = (shape, seed, scale = 0.5) => ({shape, type: 'FLOAT32', data: f32(uniform(seed, shape.reduce((a, b) => a * b, 1), -scale, scale))});
  const Q = (shape, seed, scale) => ({shape, type: 'INT8', data: i8(ints(seed, shape.reduce((a, b) => a * b, 1), -127, 127)),
                                      q: [scale, 0]});

  // ---- RNN, UNIDIRECTIONAL_SEQUENCE_RNN: input, weights, recurrent weights, bias, hidden state ----
  const rnnIo = (x, [w, r, b], [h], y) => ({inputs: [x, w, r, b, h], outputs: [y]});
  const rnn = (name, op, options, inShape, inputSize, units, batch, seed, steps) => cell(name, op, 1, options, {
    input: T(inShape), output: T([...inShape.slice(0, -1), units]),
    weights: [F([units, inputSize], seed), F([units, units], seed + 1), F([units], seed + 2)],
    states: [T([batch, units])], io: rnnIo}, steps);
  const rnnOptions = (act) => ['RNNOptions', {fused_activation_function: act}];
  const seqOptions = (act, timeMajor) => ['SequenceRNNOptions', {fused_activation_function: act, time_major: timeMajor}];
  rnn('rnn_f32_tanh', 'RNN', rnnOptions('TANH'), [2, 3], 3, 4, 2, 11, 3);
  rnn('rnn_f32_relu_batch1', 'RNN', rnnOptions('RELU'), [1, 5], 5, 3, 1, 21, 1);
  rnn('rnn_f32_none_batch3', 'RNN', rnnOptions('NONE'), [3, 2], 2, 5, 3, 31, 1);
  rnn('unidirectional_sequence_rnn_time_major_tanh', 'UNIDIRECTIONAL_SEQUENCE_RNN', seqOptions('TANH', true),
      [4, 2, 3], 3, 4, 2, 41, 2);
  rnn('unidirectional_sequence_rnn_batch_major_relu6', 'UNIDIRECTIONAL_SEQUENCE_RNN', seqOptions('RELU6', false),
      [3, 5, 2], 2, 3, 3, 51, 2);
  rnn('unidirectional_sequence_rnn_batch_major_none', 'UNIDIRECTIONAL_SEQUENCE_RNN', seqOptions('NONE', false),
      [1, 6, 4], 4, 2, 1, 61, 1);

  // Hybrid: int8 weights (symmetric, one scale each) with float input, bias and state.
  const rnnHybrid = (name, op, options, inShape, inputSize, units, batch, seed, steps) => cell(name, op, 1, options, {
    input: T(inShape), output: T([...inShape.slice(0, -1), units]),
    weights: [Q([units, inputSize], seed, 0.004), Q([units, units], seed + 1, 0.003), F([units], seed + 2)],
    states: [T([batch, units])], io: rnnIo}, steps);
  rnnHybrid('rnn_hybrid_tanh', 'RNN', rnnOptions('TANH'), [2, 5], 5, 4, 2, 131, 3);
  rnnHybrid('unidirectional_sequence_rnn_hybrid_time_major_relu', 'UNIDIRECTIONAL_SEQUENCE_RNN', seqOptions('RELU', true),
            [3, 2, 4], 4, 3, 2, 141, 2);
  // asymmetric_quantize_inputs: each row quantized with its own zero point.
  const asym = ([type, o]) => [type, {...o, asymmetric_quantize_inputs: true}];
  rnnHybrid('rnn_hybrid_asymmetric_tanh', 'RNN', asym(rnnOptions('TANH')), [2, 5], 5, 4, 2, 151, 3);
  rnnHybrid('unidirectional_sequence_rnn_hybrid_asymmetric_batch_major_none', 'UNIDIRECTIONAL_SEQUENCE_RNN',
            asym(seqOptions('NONE', false)), [2, 3, 4], 4, 3, 2, 161, 2);

  // BIDIRECTIONAL_SEQUENCE_RNN: input, forward weights, recurrent weights, bias, hidden state, the same
  // backward, then the auxiliary input and its weights. Two outputs, or one with merge_outputs. aux:
  // 'cross' (an auxiliary input of auxWidth with weights: both directions add it) or 'backward' (no
  // weights: the backward direction reads it in place of the input).
  const biRnn = (name, {timeMajor, merge, act, inShape, inputSize, fw, bw, batch, seed, steps, hybrid = false,
                        asymmetric = false, aux = null, auxWidth = inputSize}) => {
    const lead = inShape.slice(0, -1);
    const M = (shape, k) => (hybrid ? Q(shape, k, 0.004) : F(shape, k));
    const auxWeights = aux === 'cross' ? [M([fw, auxWidth], seed + 6), M([bw, auxWidth], seed + 7)] : [];
    cell(name, 'BIDIRECTIONAL_SEQUENCE_RNN', 1, ['BidirectionalSequenceRNNOptions',
        {time_major: timeMajor, fused_activation_function: act, merge_outputs: merge,
         asymmetric_quantize_inputs: asymmetric}], {
      input: T(inShape), output: merge ? T([...lead, fw + bw]) : [T([...lead, fw]), T([timeMajor ? lead[1] : lead[0], timeMajor ? lead[0] : lead[1], bw])],
      weights: [M([fw, inputSize], seed), M([fw, fw], seed + 1), F([fw], seed + 2),
                M([bw, inputSize], seed + 3), M([bw, bw], seed + 4), F([bw], seed + 5), ...auxWeights],
      states: [T([batch, fw]), T([batch, bw])],
      extraInputs: aux ? [T([...lead, auxWidth])] : [],
      io: (x, [w1, r1, b1, w2, r2, b2, a1 = -1, a2 = -1], [h1, h2], y, extras) => ({
        inputs: [x, w1, r1, b1, h1, w2, r2, b2, h2, aux ? extras[0] : -1, a1, a2], outputs: [y].flat()})}, steps);
  };
  // The separate backward output is [batch, time, units] in TFLite even when time-major.
  biRnn('bidirectional_sequence_rnn_time_major_tanh', {timeMajor: true, merge: false, act: 'TANH', inShape: [3, 2, 3],
        inputSize: 3, fw: 4, bw: 3, batch: 2, seed: 401, steps: 2});
  biRnn('bidirectional_sequence_rnn_batch_major_merged_relu', {timeMajor: false, merge: true, act: 'RELU',
        inShape: [2, 4, 2], inputSize: 2, fw: 3, bw: 2, batch: 2, seed: 411, steps: 2});
  // Int8 weights (TFLite's hybrid kernel, which runs a time-major sequence once per step), with and without
  // asymmetric_quantize_inputs.
  biRnn('bidirectional_sequence_rnn_hybrid_time_major', {timeMajor: true, merge: false, act: 'TANH',
        inShape: [3, 2, 4], inputSize: 4, fw: 3, bw: 4, batch: 2, seed: 421, steps: 2, hybrid: true});
  biRnn('bidirectional_sequence_rnn_hybrid_asymmetric_time_major', {timeMajor: true, merge: false, act: 'TANH',
        inShape: [3, 2, 4], inputSize: 4, fw: 3, bw: 4, batch: 2, seed: 421, steps: 2, hybrid: true, asymmetric: true});
  biRnn('bidirectional_sequence_rnn_hybrid_asymmetric_batch_major_merged', {timeMajor: false, merge: true,
        act: 'RELU', inShape: [2, 3, 3], inputSize: 3, fw: 2, bw: 3, batch: 2, seed: 431, steps: 2, hybrid: true,
        asymmetric: true});

  // The auxiliary input with weights (cross links): as wide as the input, wider (time-major and hybrid,
  // TFLite 2.9 steps through it by the input's width) and narrower (batch-major float, by its own);
  // without weights (the backward direction reads it time-major; batch-major TFLite 2.9 reads the input).
  biRnn('bidirectional_sequence_rnn_aux_cross_time_major', {timeMajor: true, merge: false, act: 'TANH',
        inShape: [3, 2, 3], inputSize: 3, fw: 4, bw: 3, batch: 2, seed: 441, steps: 1, aux: 'cross'});
  biRnn('bidirectional_sequence_rnn_aux_cross_wider_time_major_merged', {timeMajor: true, merge: true, act: 'RELU',
        inShape: [3, 2, 3], inputSize: 3, fw: 2, bw: 3, batch: 2, seed: 451, steps: 1, aux: 'cross', auxWidth: 5});
  biRnn('bidirectional_sequence_rnn_aux_cross_narrower_batch_major', {timeMajor: false, merge: false, act: 'TANH',
        inShape: [2, 3, 4], inputSize: 4, fw: 3, bw: 2, batch: 2, seed: 461, steps: 1, aux: 'cross', auxWidth: 2});
  biRnn('bidirectional_sequence_rnn_aux_backward_time_major', {timeMajor: true, merge: false, act: 'TANH',
        inShape: [3, 2, 3], inputSize: 3, fw: 4, bw: 3, batch: 2, seed: 471, steps: 1, aux: 'backward'});
  biRnn('bidirectional_sequence_rnn_aux_backward_batch_major_merged', {timeMajor: false, merge: true, act: 'TANH',
        inShape: [2, 3, 3], inputSize: 3, fw: 2, bw: 3, batch: 2, seed: 481, steps: 1, aux: 'backward'});
  biRnn('bidirectional_sequence_rnn_hybrid_aux_cross_time_major', {timeMajor: true, merge: false, act: 'TANH',
        inShape: [3, 2, 4], inputSize: 4, fw: 3, bw: 4, batch: 2, seed: 491, steps: 1, hybrid: true, aux: 'cross'});
  biRnn('bidirectional_sequence_rnn_hybrid_asymmetric_aux_cross_wider_batch_major_merged', {timeMajor: false,
        merge: true, act: 'RELU', inShape: [2, 3, 3], inputSize: 3, fw: 2, bw: 3, batch: 2, seed: 501, steps: 1,
        hybrid: true, asymmetric: true, aux: 'cross', auxWidth: 4});
  biRnn('bidirectional_sequence_rnn_hybrid_aux_backward_time_major', {timeMajor: true, merge: false, act: 'TANH',
        inShape: [3, 2, 4], inputSize: 4, fw: 3, bw: 4, batch: 2, seed: 511, steps: 1, hybrid: true, aux: 'backward'});

  // ---- SVDF: input, weights_feature, weights_time, bias (optional), state ----
  const svdfOptions = (rank, act) => ['SVDFOptions', {rank, fused_activation_function: act}];
  const svdf = (name, {batch, inputSize, filters, memory, rank, act, bias, seed, steps}) => cell(name, 'SVDF', 1,
      svdfOptions(rank, act), {
        input: T([batch, inputSize]), output: T([batch, filters / rank]),
        weights: [F([filters, inputSize], seed), F([filters, memory], seed + 1), ...(bias ? [F([filters / rank], seed + 2)] : [])],
        states: [T([batch, filters * memory])],
        io: (x, [wf, wt, b], [s], y) => ({inputs: [x, wf, wt, b ?? -1, s], outputs: [y]})}, steps);
  svdf('svdf_f32_rank1_relu', {batch: 2, inputSize: 3, filters: 4, memory: 3, rank: 1, act: 'RELU', bias: true, seed: 71, steps: 4});
  svdf('svdf_f32_rank2_no_bias', {batch: 1, inputSize: 4, filters: 6, memory: 2, rank: 2, act: 'NONE', bias: false, seed: 81, steps: 3});
  svdf('svdf_f32_rank3_tanh', {batch: 3, inputSize: 2, filters: 6, memory: 4, rank: 3, act: 'TANH', bias: true, seed: 91, steps: 1});
  // Hybrid: int8 feature and time weights (one scale each), float input, bias and state.
  const svdfHybrid = (name, {batch, inputSize, filters, memory, rank, act, seed, steps, asymmetric = false}) => cell(name, 'SVDF', 1,
      [svdfOptions(rank, act)[0], {...svdfOptions(rank, act)[1], asymmetric_quantize_inputs: asymmetric}], {
        input: T([batch, inputSize]), output: T([batch, filters / rank]),
        weights: [Q([filters, inputSize], seed, 0.004), Q([filters, memory], seed + 1, 0.005), F([filters / rank], seed + 2)],
        states: [T([batch, filters * memory])],
        io: (x, [wf, wt, b], [s], y) => ({inputs: [x, wf, wt, b, s], outputs: [y]})}, steps);
  svdfHybrid('svdf_hybrid_rank2_relu', {batch: 2, inputSize: 5, filters: 4, memory: 3, rank: 2, act: 'RELU', seed: 121, steps: 3});
  svdfHybrid('svdf_hybrid_asymmetric_rank1_none', {batch: 2, inputSize: 5, filters: 3, memory: 4, rank: 1, act: 'NONE',
                                                   seed: 131, steps: 3, asymmetric: true});

  // Full integer: int8 input, feature weights and output, int16 time weights and state, int32 bias.
  const svdfI8 = (name, {batch, inputSize, filters, memory, rank, seed, steps, stateScale}) => cell(name, 'SVDF', 1,
      svdfOptions(rank, 'RELU'), {
        input: T([batch, inputSize], 'INT8', {q: [0.05, 3]}), output: T([batch, filters / rank], 'INT8', {q: [0.15, -10]}),
        weights: [{shape: [filters, inputSize], type: 'INT8', data: i8(ints(seed, filters * inputSize, -127, 127)), q: [0.01, 0]},
                  {shape: [filters, memory], type: 'INT16', data: i16(ints(seed + 1, filters * memory, -20000, 20000)), q: [0.0001, 0]},
                  {shape: [filters / rank], type: 'INT32', data: i32(ints(seed + 2, filters / rank, -200000, 200000)), q: [stateScale * 0.0001, 0]}],
        states: [T([batch, filters * memory], 'INT16', {q: [stateScale, 0]})],
        io: (x, [wf, wt, b], [s], y) => ({inputs: [x, wf, wt, b, s], outputs: [y]})}, steps);
  svdfI8('svdf_i8_rank1', {batch: 2, inputSize: 4, filters: 3, memory: 3, rank: 1, seed: 101, steps: 4, stateScale: 0.002});
  // A state scale small enough that the feature activations saturate the int16 state.
  svdfI8('svdf_i8_rank2_saturating', {batch: 1, inputSize: 8, filters: 4, memory: 2, rank: 2, seed: 111, steps: 3, stateScale: 0.00005});

  // ---- LSTM's BASIC kernel type (TOCO's cell): inputs 0 input, 1 previous activation, 2 weights, 3 biases,
  // 4 previous state; outputs activation, state, the concatenation and the gate values. No state of its
  // own: the previous activation and state are model inputs here. Float32, or TOCO's quantized cell
  // (uint8 activations on [-1, 127/128], an int16 state at 2^-11, gate values at 2^-12). ----
  const basicLstm = (name, {batch, inputs, cells, quantized, seed}) => add(name, 'LSTM', 2, (n, v) => {
    const depth = inputs + cells, units = 4 * cells;
    const act = quantized ? {type: 'UINT8', q: [1 / 128, 128]} : {type: 'FLOAT32'};
    const state = quantized ? {type: 'INT16', q: [2 ** -11, 0]} : {type: 'FLOAT32'};
    const weights = quantized
      ? {type: 'UINT8', data: ints(seed, units * depth, 0, 255), q: [0.01, 131]}
      : {type: 'FLOAT32', data: f32(uniform(seed, units * depth, -0.6, 0.6))};
    const bias = quantized
      ? {type: 'INT32', data: i32(ints(seed + 1, units, -3000, 3000)), q: [0.01 / 128, 0]}
      : {type: 'FLOAT32', data: f32(uniform(seed + 1, units, -0.3, 0.3))};
    const tensors = [
      {shape: [batch, inputs], ...act}, {shape: [batch, cells], ...act}, {shape: [units, depth], ...weights},
      {shape: [units], ...bias}, {shape: [batch, cells], ...state},
      {shape: [batch, cells], ...act}, {shape: [batch, cells], ...state}, {shape: [batch, depth], ...act},
      {shape: [batch, units], ...(quantized ? {type: 'INT16', q: [2 ** -12, 0]} : {type: 'FLOAT32'})},
    ];
    writeModel(n, [operatorCode('LSTM', v)], tensors, [0, 1, 4], [5, 6, 7, 8],
               [operator(0, [0, 1, 2, 3, 4], [5, 6, 7, 8], ['LSTMOptions', {fused_activation_function: 'TANH', kernel_type: 'BASIC'}])]);
  });
  basicLstm('lstm_basic_f32', {batch: 2, inputs: 3, cells: 4, seed: 1101});
  basicLstm('lstm_basic_u8', {batch: 2, inputs: 3, cells: 4, quantized: true, seed: 1111});
  basicLstm('lstm_basic_u8_wide', {batch: 3, inputs: 9, cells: 7, quantized: true, seed: 1121});

  // ---- LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM: TFLite's 20 inputs (24 with layer norm); -1 = omitted ----
  const lstm = (name, op, options, {inShape, batch, inputs, cells, outputs, cifg, peephole, projection,
                                    projectionBias, norm, hybrid, seed, steps}) => {
    const slots = new Array(norm ? 24 : 20).fill(null);
    const W = (shape, k, lo = -0.5, hi = 0.5) => ({shape, type: 'FLOAT32',
                                                 data: f32(uniform(seed + k, shape.reduce((a, b) => a * b, 1), lo, hi))});
    // Weight matrices and peepholes: int8 codes with one scale each in a hybrid layer.
    const M = (shape, k) => (hybrid ? Q(shape, seed + k, 0.004) : W(shape, k));
    for (let g = 0; g < 4; ++g) {
      if (g === 0 && cifg) continue;
      slots[1 + g] = M([cells, inputs], 1 + g);
      slots[5 + g] = M([cells, outputs], 5 + g);
      slots[12 + g] = W([cells], 12 + g, g === 1 ? 0.5 : -0.2, g === 1 ? 1.5 : 0.2);  // forget bias near 1
      if (norm) slots[20 + g] = W([cells], 20 + g, 0.5, 1.5);
    }
    if (peephole) {
      if (!cifg) slots[9] = M([cells], 9);
      slots[10] = M([cells], 10);
      slots[11] = M([cells], 11);
    }
    if (projection) slots[16] = M([outputs, cells], 16);
    if (projectionBias) slots[17] = W([outputs], 17, -0.1, 0.1);
    const weights = slots.filter((t) => t);
    cell(name, op, 1, options, {
      input: T(inShape), output: T([...inShape.slice(0, -1), outputs]), weights,
      states: [T([batch, outputs]), T([batch, cells])],
      io: (x, consts, [h, c], y) => {
        let next = 0;
        const inputsList = slots.map((t, i) => (i === 0 ? x : i === 18 ? h : i === 19 ? c : t ? consts[next++] : -1));
        return {inputs: inputsList, outputs: [y]};
      }}, steps);
  };
  const lstmOptions = (act, cellClip = 0, projClip = 0) => ['LSTMOptions',
      {fused_activation_function: act, cell_clip: cellClip, proj_clip: projClip, kernel_type: 'FULL'}];
  const seqLstmOptions = (act, timeMajor, cellClip = 0, projClip = 0) => ['UnidirectionalSequenceLSTMOptions',
      {fused_activation_function: act, cell_clip: cellClip, proj_clip: projClip, time_major: timeMajor}];
  lstm('lstm_f32', 'LSTM', lstmOptions('TANH'),
       {inShape: [2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, seed: 201, steps: 3});
  lstm('lstm_f32_cifg_peephole_projection_clip', 'LSTM', lstmOptions('TANH', 0.3, 0.15),
       {inShape: [1, 2], batch: 1, inputs: 2, cells: 5, outputs: 3, cifg: true, peephole: true, projection: true,
        projectionBias: true, seed: 231, steps: 3});
  lstm('lstm_f32_peephole_layer_norm', 'LSTM', lstmOptions('TANH'),
       {inShape: [3, 4], batch: 3, inputs: 4, cells: 3, outputs: 3, peephole: true, norm: true, seed: 261, steps: 2});
  lstm('lstm_f32_projection_relu', 'LSTM', lstmOptions('RELU'),
       {inShape: [2, 3], batch: 2, inputs: 3, cells: 4, outputs: 2, projection: true, seed: 291, steps: 1});
  lstm('lstm_hybrid_peephole_projection', 'LSTM', lstmOptions('TANH'),
       {inShape: [2, 4], batch: 2, inputs: 4, cells: 3, outputs: 2, peephole: true, projection: true,
        projectionBias: true, hybrid: true, seed: 301, steps: 3});
  lstm('unidirectional_sequence_lstm_hybrid_cifg_layer_norm', 'UNIDIRECTIONAL_SEQUENCE_LSTM', seqLstmOptions('TANH', true),
       {inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, cifg: true, peephole: true, norm: true,
        hybrid: true, seed: 311, steps: 2});
  lstm('lstm_hybrid_asymmetric_peephole_projection', 'LSTM', asym(lstmOptions('TANH')),
       {inShape: [2, 4], batch: 2, inputs: 4, cells: 3, outputs: 2, peephole: true, projection: true,
        projectionBias: true, hybrid: true, seed: 331, steps: 3});
  lstm('unidirectional_sequence_lstm_hybrid_asymmetric_batch_major_layer_norm', 'UNIDIRECTIONAL_SEQUENCE_LSTM',
       asym(seqLstmOptions('TANH', false)),
       {inShape: [2, 3, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, norm: true, hybrid: true, seed: 341, steps: 2});
  lstm('unidirectional_sequence_lstm_time_major', 'UNIDIRECTIONAL_SEQUENCE_LSTM', seqLstmOptions('TANH', true),
       {inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, seed: 321, steps: 2});
  lstm('unidirectional_sequence_lstm_batch_major_cifg_norm_projection', 'UNIDIRECTIONAL_SEQUENCE_LSTM',
       seqLstmOptions('TANH', false, 0.4, 0),
       {inShape: [2, 4, 2], batch: 2, inputs: 2, cells: 3, outputs: 2, cifg: true, norm: true, projection: true,
        seed: 351, steps: 2});
  lstm('unidirectional_sequence_lstm_batch_major_peephole', 'UNIDIRECTIONAL_SEQUENCE_LSTM', seqLstmOptions('TANH', false),
       {inShape: [3, 2, 4], batch: 3, inputs: 4, cells: 2, outputs: 2, peephole: true, seed: 381, steps: 1});

  // Full-integer LSTMs (TFLite's 8x8_16 kernel): int8 input, weights and output state, int32 biases, int16
  // cell state (a power-of-two scale), int16 peepholes and layer-norm coefficients, and five intermediates
  // the kernel reads only the quantization of: the four gates' matmul outputs (used with layer norm) and
  // the hidden value before the projection. `act16` makes the input, output and output state int16 (16x8).
  const lstmInt = (name, op, options, {inShape, batch, inputs, cells, outputs, cifg, peephole, projection,
                                       projectionBias, norm, seed, steps, act16 = false, inQ = [0.02, 5],
                                       stateQ = [1 / 128, 2], hiddenQ = [1 / 128, 2], cellScale = 2 ** -11,
                                       gateScales = [0.0007, 0.0006, 0.0009, 0.0008], eight = false}) => {
    const slots = new Array(norm ? 24 : 20).fill(null);
    const act = act16 ? 'INT16' : 'INT8';
    const wScale = 0.004;
    const I8 = (shape, k) => ({shape, type: 'INT8', data: i8(ints(seed + k, shape.reduce((a, b) => a * b, 1), -127, 127)),
                               q: [wScale, 0]});
    const I16 = (shape, k, lo, hi, scale) => ({shape, type: 'INT16', data: i16(ints(seed + k, shape.reduce((a, b) => a * b, 1), lo, hi)),
                                               q: [scale, 0]});
    // A bias of real values in [lo, hi] in units of `unit`.
    const B = (shape, k, lo, hi, unit) => ({shape, type: 'INT32',
                                           data: i32(uniform(seed + k, shape.reduce((a, b) => a * b, 1), lo, hi).map((r) => Math.round(r / unit))),
                                           q: [unit, 0]});
    const normScale = 5e-5;
    for (let g = 0; g < 4; ++g) {
      if (g === 0 && cifg) continue;
      slots[1 + g] = I8([cells, inputs], 1 + g);
      slots[5 + g] = I8([cells, outputs], 5 + g);
      // The gate's bias is added to the input matmul (units input scale x weight scale), or after the layer
      // norm (units coefficient scale / 1024).
      const unit = norm ? normScale / 1024 : inQ[0] * wScale;
      slots[12 + g] = B([cells], 12 + g, g === 1 ? 0.5 : -0.2, g === 1 ? 1.5 : 0.2, unit);
      if (norm) slots[20 + g] = I16([cells], 20 + g, 10000, 30000, normScale);
    }
    if (peephole) {
      if (!cifg) slots[9] = I16([cells], 9, -20000, 20000, 2.5e-5);
      slots[10] = I16([cells], 10, -20000, 20000, 2.5e-5);
      slots[11] = I16([cells], 11, -20000, 20000, 2.5e-5);
    }
    if (projection) slots[16] = I8([outputs, cells], 16);
    if (projectionBias) slots[17] = B([outputs], 17, -0.1, 0.1, hiddenQ[0] * wScale);
    const weights = slots.filter((t) => t);
    // The 8x8_8 form's twelve: per gate (input, forget, cell, output) the sum of the two products, the
    // input's product and the output state's, each an int8 with its own zero point.
    const eightQ = (g) => [[0.001 * (1 + g / 4), g - 1], [0.02 * (1 + g / 8), 3 - g], [0.01 * (1 + g / 8), g - 2]];
    const intermediates = eight
      ? [0, 1, 2, 3].flatMap((g) => eightQ(g).map((q) => T([], 'INT8', {q})))
      : [...gateScales.map((s) => T([], 'INT16', {q: [s, 0]})), T([], 'INT8', {q: hiddenQ})];
    cell(name, op, 1, options, {
      input: T(inShape, act, {q: inQ}), output: T([...inShape.slice(0, -1), outputs], act, {q: stateQ}), weights,
      states: [T([batch, outputs], act, {q: stateQ}), T([batch, cells], 'INT16', {q: [cellScale, 0]})],
      intermediates, args: act16 ? ['--int-range', '-3000:3000'] : [],
      io: (x, consts, [h, c], y) => {
        let next = 0;
        const inputsList = slots.map((t, i) => (i === 0 ? x : i === 18 ? h : i === 19 ? c : t ? consts[next++] : -1));
        return {inputs: inputsList, outputs: [y]};
      }}, steps);
  };
  lstmInt('lstm_i8', 'LSTM', lstmOptions('TANH'),
          {inShape: [2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, seed: 801, steps: 3});
  lstmInt('lstm_i8_cifg_peephole_projection_clip', 'LSTM', lstmOptions('TANH', 0.3, 0.15),
          {inShape: [1, 2], batch: 1, inputs: 2, cells: 5, outputs: 3, cifg: true, peephole: true, projection: true,
           projectionBias: true, hiddenQ: [1 / 256, -3], seed: 831, steps: 3});
  lstmInt('lstm_i8_peephole_layer_norm', 'LSTM', lstmOptions('TANH'),
          {inShape: [3, 4], batch: 3, inputs: 4, cells: 4, outputs: 4, peephole: true, norm: true, seed: 861, steps: 2});
  lstmInt('unidirectional_sequence_lstm_i8_time_major', 'UNIDIRECTIONAL_SEQUENCE_LSTM', seqLstmOptions('TANH', true),
          {inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, seed: 921, steps: 2});
  lstmInt('unidirectional_sequence_lstm_i8_batch_major_cifg_norm_projection', 'UNIDIRECTIONAL_SEQUENCE_LSTM',
          seqLstmOptions('TANH', false, 0.4, 0),
          {inShape: [2, 4, 2], batch: 2, inputs: 2, cells: 4, outputs: 2, cifg: true, norm: true, projection: true,
           hiddenQ: [1 / 256, 1], seed: 951, steps: 2});
  // TFLite 2.9's "8x8_8" integer LSTM (12 intermediates, a cell state at 2^-15): its kernel always reads the
  // layer norm, the projection and its bias, and computes neither an input gate (it takes 1 - forget) nor
  // the peepholes, whatever the node gives (the second case gives both). Its UNIDIRECTIONAL_SEQUENCE_LSTM
  // has no such form (the library fails the model at AllocateTensors).
  lstmInt('lstm_i8x8_8_cifg_norm_projection', 'LSTM', lstmOptions('TANH'),
          {inShape: [2, 4], batch: 2, inputs: 4, cells: 3, outputs: 2, cifg: true, norm: true, projection: true,
           projectionBias: true, cellScale: 2 ** -15, eight: true, seed: 1011, steps: 3});
  lstmInt('lstm_i8x8_8_input_gate_peephole_clip', 'LSTM', lstmOptions('TANH', 0.5, 0.3),
          {inShape: [1, 3], batch: 1, inputs: 3, cells: 4, outputs: 4, peephole: true, norm: true, projection: true,
           projectionBias: true, cellScale: 2 ** -15, eight: true, seed: 1041, steps: 3});
  // Peepholes with fewer outputs than cells on a batch of 2: TFLite 2.9 walks each peephole product over the
  // output width per batch row.
  lstmInt('unidirectional_sequence_lstm_i8_peephole_projection', 'UNIDIRECTIONAL_SEQUENCE_LSTM',
          seqLstmOptions('TANH', true),
          {inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 2, peephole: true, projection: true,
           projectionBias: true, seed: 981, steps: 2});

  // BIDIRECTIONAL_SEQUENCE_LSTM: 48 inputs; each direction's 17 tensors laid out as LSTM's 1-17 (forward
  // at 1, backward at 18), the states at 35-38, the auxiliary input at 39 and its weights at 40-43
  // (forward) and 44-47 (backward). aux: 'cross' (an auxiliary input of auxWidth with weights: both
  // directions add it) or 'backward' (no weights: the backward direction reads it instead of the input).
  const biLstm = (name, {timeMajor, merge, inShape, batch, inputs, cells, outputs, cifg, peephole, projection,
                         seed, steps, cellClip = 0, projClip = 0, hybrid = false, asymmetric = hybrid, aux = null,
                         auxWidth = inputs}) => {
    const slots = new Array(48).fill(null);
    const F32 = (shape, k, lo = -0.5, hi = 0.5) => ({shape, type: 'FLOAT32',
                                                   data: f32(uniform(seed + k, shape.reduce((a, b) => a * b, 1), lo, hi))});
    // Weight matrices and peepholes as int8 codes in a hybrid layer (biases, given a range, stay float).
    const W = (shape, k, lo, hi) => (hybrid && lo === undefined ? Q(shape, seed + k, 0.004) : F32(shape, k, lo, hi));
    for (const base of [0, 17]) {
      for (let g = 0; g < 4; ++g) {
        if (g === 0 && cifg) continue;
        slots[base + 1 + g] = W([cells, inputs], base + 1 + g);
        slots[base + 5 + g] = W([cells, outputs], base + 5 + g);
        slots[base + 12 + g] = W([cells], base + 12 + g, g === 1 ? 0.5 : -0.2, g === 1 ? 1.5 : 0.2);
      }
      if (peephole) {
        if (!cifg) slots[base + 9] = W([cells], base + 9);
        slots[base + 10] = W([cells], base + 10);
        slots[base + 11] = W([cells], base + 11);
      }
      if (projection) slots[base + 16] = W([outputs, cells], base + 16);
    }
    if (aux === 'cross') {
      for (let g = cifg ? 1 : 0; g < 4; ++g) {
        slots[40 + g] = W([cells, auxWidth], 40 + g);
        slots[44 + g] = W([cells, auxWidth], 44 + g);
      }
    }
    const lead = inShape.slice(0, -1);
    cell(name, 'BIDIRECTIONAL_SEQUENCE_LSTM', 1, ['BidirectionalSequenceLSTMOptions',
        {fused_activation_function: 'TANH', cell_clip: cellClip, proj_clip: projClip, merge_outputs: merge, time_major: timeMajor,
         ...(asymmetric ? {asymmetric_quantize_inputs: true} : {})}], {
      input: T(inShape), output: merge ? T([...lead, 2 * outputs]) : [T([...lead, outputs]), T([...lead, outputs])],
      weights: slots.filter((t) => t),
      states: [T([batch, outputs]), T([batch, cells]), T([batch, outputs]), T([batch, cells])],
      extraInputs: aux ? [T([...lead, auxWidth])] : [],
      io: (x, consts, [h1, c1, h2, c2], y, extras) => {
        let next = 0;
        const fixed = {0: x, 35: h1, 36: c1, 37: h2, 38: c2, ...(aux ? {39: extras[0]} : {})};
        const inputsList = slots.map((t, i) => (i in fixed ? fixed[i] : t ? consts[next++] : -1));
        return {inputs: inputsList, outputs: [y].flat()};
      }}, steps);
  };
  biLstm('bidirectional_sequence_lstm_time_major', {timeMajor: true, merge: false, inShape: [3, 2, 3], batch: 2,
         inputs: 3, cells: 4, outputs: 4, seed: 501, steps: 2});
  // Batch 1: with more, TFLite 2.9 steps a batch-major merged layer's states past their end (refused).
  biLstm('bidirectional_sequence_lstm_batch_major_merged_cifg_peephole_projection', {timeMajor: false, merge: true,
         inShape: [1, 3, 2], batch: 1, inputs: 2, cells: 3, outputs: 2, cifg: true, peephole: true, projection: true,
         seed: 601, steps: 2, cellClip: 0.5});
  biLstm('bidirectional_sequence_lstm_batch_major_projection', {timeMajor: false, merge: false, inShape: [2, 3, 3],
         batch: 2, inputs: 3, cells: 3, outputs: 2, projection: true, seed: 701, steps: 1});
  biLstm('bidirectional_sequence_lstm_hybrid_asymmetric_time_major_peephole', {timeMajor: true, merge: false,
         inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, peephole: true, seed: 801, steps: 2,
         hybrid: true});
  // The auxiliary input: with weights (cross links), wider than the input (TFLite 2.9 steps through it by
  // the input's width; time-major, peepholes, CIFG) and as wide (batch-major, merged); without weights
  // (the backward direction reads it; batch-major, projection).
  biLstm('bidirectional_sequence_lstm_aux_cross_time_major_cifg_peephole', {timeMajor: true, merge: false,
         inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, cifg: true, peephole: true, seed: 1201,
         steps: 1, aux: 'cross', auxWidth: 5});
  biLstm('bidirectional_sequence_lstm_aux_cross_batch_major_merged', {timeMajor: false, merge: true,
         inShape: [1, 4, 2], batch: 1, inputs: 2, cells: 3, outputs: 3, seed: 1301, steps: 1, aux: 'cross', auxWidth: 2});
  biLstm('bidirectional_sequence_lstm_aux_backward_input_batch_major_projection', {timeMajor: false, merge: false,
         inShape: [2, 3, 3], batch: 2, inputs: 3, cells: 3, outputs: 2, projection: true, seed: 1401, steps: 1,
         aux: 'backward'});
  // A hybrid layer's auxiliary input with int8 weights (quantized per row as the input is), symmetric
  // and asymmetric, as wide as the input and wider; and a batch-major hybrid layer.
  biLstm('bidirectional_sequence_lstm_hybrid_aux_cross_time_major_cifg', {timeMajor: true, merge: false,
         inShape: [3, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 4, cifg: true, seed: 1501, steps: 1,
         hybrid: true, asymmetric: false, aux: 'cross'});
  biLstm('bidirectional_sequence_lstm_hybrid_asymmetric_aux_cross_wider_time_major_peephole_projection',
         {timeMajor: true, merge: true, inShape: [2, 2, 3], batch: 2, inputs: 3, cells: 4, outputs: 3, peephole: true,
          projection: true, seed: 1601, steps: 1, hybrid: true, aux: 'cross', auxWidth: 5});
  biLstm('bidirectional_sequence_lstm_hybrid_batch_major', {timeMajor: false, merge: false, inShape: [2, 3, 3],
         batch: 2, inputs: 3, cells: 3, outputs: 3, seed: 1701, steps: 1, hybrid: true});

  return carry;
}
