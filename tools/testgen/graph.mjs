// graph.mjs - a model's one subgraph built op by op, as the network generators (transformer-models.mjs,
// detector-models.mjs) write them: inputs, constants (random weights from a fixed sequence), and ops
// whose output tensor each call adds.
import {f32, i32} from './bytes.mjs';
import {lcg32} from './prng.mjs';
import {OperatorCodes, oneGraphModel, operator} from './tflite-json.mjs';

// The operator versions the converter of TensorFlow 2.9 writes for these float ops and options.
const versionOf = {FULLY_CONNECTED: 5, BATCH_MATMUL: 1, GATHER: 1, CONV_2D: 1};

// One subgraph built op by op: each call adds the op's output tensor and returns its index.
export class Graph {
  tensors = [];
  operators = [];
  codes = new OperatorCodes();
  constructor(seed) {
    this.random = lcg32(seed);
  }
  input(shape, type = 'FLOAT32') {
    return this.tensors.push({shape, type}) - 1;
  }
  constant(shape, values, type = 'FLOAT32') {
    return this.tensors.push({shape, type, data: type === 'INT32' ? i32(values) : f32(values)}) - 1;
  }
  // Weights uniform in [-limit, limit], limit = sqrt(3 / fanIn) (unit variance through a layer).
  weights(shape, fanIn) {
    const limit = Math.sqrt(3 / fanIn);
    const count = shape.reduce((a, b) => a * b, 1);
    return this.constant(shape, Array.from({length: count}, () => (2 * this.random() - 1) * limit));
  }
  small(shape, scale) {
    const count = shape.reduce((a, b) => a * b, 1);
    return this.constant(shape, Array.from({length: count}, () => (2 * this.random() - 1) * scale));
  }
  op(name, inputs, shape, options, type = 'FLOAT32') {
    return this.opWithOutputs(name, inputs, [[shape, type]], options)[0];
  }
  // An op with several outputs, each [shape, type]; returns their indices.
  opWithOutputs(name, inputs, outputs, options) {
    const outs = outputs.map(([shape, type]) => this.input(shape, type));
    this.operators.push(operator(this.codes.index(name, versionOf[name] ?? 1), inputs, outs, options));
    return outs;
  }
  shape(t) {
    return this.tensors[t].shape;
  }
  model(description, inputs, outputs) {
    return oneGraphModel(description, this.codes.list, this.tensors, inputs, outputs, this.operators);
  }
}
