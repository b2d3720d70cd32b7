// tflite-json.mjs - TFLite models as flatc JSON: what `flatc -b runtime/model/tflite.fbs NAME.json` turns
// into NAME.tflite (tools/make-cases.sh does). The pieces follow the schema's tables: operator codes,
// tensors (constant data in buffers), operators, subgraphs, the model. Keys are written in one fixed
// order, so a rerun writes the same bytes.
import fs from 'node:fs';

// BuiltinOperator's codes, read from baton's schema: the one table of them.
const schema = fs.readFileSync(new URL('../../runtime/model/tflite.fbs', import.meta.url), 'utf8');
const builtins = /enum BuiltinOperator\s*:\s*\w+\s*\{([^}]*)\}/.exec(schema)[1];
export const opCodes = Object.fromEntries(
    [...builtins.matchAll(/^\s*([A-Z0-9_]+)\s*=\s*(\d+)/gm)].map(([, op, code]) => [op, Number(code)]));

// An entry of operator_codes: deprecated_builtin_code holds codes up to 127, as the converter writes it.
export function operatorCode(op, version = 1) {
  const code = opCodes[op];
  if (code === undefined) throw new Error(`${op}: no such BuiltinOperator in runtime/model/tflite.fbs`);
  return {deprecated_builtin_code: Math.min(code, 127), builtin_code: op, version};
}
export const customOperatorCode = (customCode, version = 1) =>
  ({deprecated_builtin_code: opCodes.CUSTOM, builtin_code: 'CUSTOM', custom_code: customCode, version});

// A model's operator_codes gathered as its operators name them: index() gives a code's place in `list`,
// adding it on first use.
export class OperatorCodes {
  list = [];
  #keys = [];
  index(op, version = 1) {
    return this.#place(`${op}:${version}`, () => operatorCode(op, version));
  }
  custom(customCode, version = 1) {
    return this.#place(`CUSTOM:${customCode}:${version}`, () => customOperatorCode(customCode, version));
  }
  #place(key, make) {
    let at = this.#keys.indexOf(key);
    if (at < 0) {
      at = this.#keys.push(key) - 1;
      this.list.push(make());
    }
    return at;
  }
}

// A tensor, from {shape, type (FLOAT32 when absent), data (constant bytes, put in `buffers`), signature
// (shape_signature: -1 for a dimension the data decides), variable, q}, where q is [scale, zero_point]
// or, per channel, [[scales], [zero_points], quantized_dimension]. `buffers` starts as [{}]: buffer 0 is
// the empty one of every tensor without data.
export function tensor(t, name, buffers) {
  const o = {shape: t.shape, type: t.type ?? 'FLOAT32', name, buffer: 0};
  if (t.signature) o.shape_signature = t.signature;
  if (t.data) {
    buffers.push({data: t.data});
    o.buffer = buffers.length - 1;
  }
  if (t.variable) o.is_variable = true;
  if (t.blockwise) o.quantization = {details_type: 'BlockwiseQuantization', details: t.blockwise};
  else if (t.q && Array.isArray(t.q[0])) o.quantization = {scale: t.q[0], zero_point: t.q[1], quantized_dimension: t.q[2]};
  else if (t.q) o.quantization = {scale: [t.q[0]], zero_point: [t.q[1]]};
  return o;
}

// An operator; `options` [OptionsTable, {fields}] of the schema's first union (builtin_options).
export function operator(opcodeIndex, inputs, outputs, options) {
  const o = {opcode_index: opcodeIndex, inputs, outputs};
  if (options) {
    o.builtin_options_type = options[0];
    o.builtin_options = options[1];
  }
  return o;
}

export function model(description, operatorCodes, subgraphs, buffers, signatures = []) {
  const m = {version: 3, operator_codes: operatorCodes, subgraphs, description, buffers};
  if (signatures.length) m.signature_defs = signatures;
  return m;
}

// A model of one subgraph, 'main', whose tensors are named t0, t1, ...
export function oneGraphModel(description, operatorCodes, tensors, inputs, outputs, operators) {
  const buffers = [{}];
  const ts = tensors.map((t, i) => tensor(t, `t${i}`, buffers));
  return model(description, operatorCodes, [{tensors: ts, inputs, outputs, operators, name: 'main'}], buffers);
}

// JSON text and a newline (`indent` as JSON.stringify takes it).
export function writeJson(file, value, indent) {
  fs.writeFileSync(file, JSON.stringify(value, null, indent) + '\n');
}

// A generator's command line, [FLAG] OUT_DIR with FLAG one of `flags`: makes OUT_DIR and returns it and
// the flag (null without one); without OUT_DIR, prints the usage and exits 2.
export function outDirArgs(script, flags = []) {
  const args = process.argv.slice(2);
  const flag = flags.includes(args[0]) ? args[0] : null;
  const outDir = args[flag ? 1 : 0];
  if (!outDir) {
    console.error(`usage: node tools/${script} ${flags.length ? `[${flags.join(' | ')}] ` : ''}OUT_DIR`);
    process.exit(2);
  }
  fs.mkdirSync(outDir, {recursive: true});
  return {outDir, flag};
}
