// Runs a .tflite model through Google's Node addon for TFLite (npm tfjs-tflite-node@0.0.2's
// node_tflite_binding.cc, built by check.sh against one libtensorflowlite_c.so or another) with its own
// JavaScript API: `new Interpreter(modelArrayBuffer, {threads, delegate: {path, options}})`, the
// TensorInfo objects of getInputs()/getOutputs() and infer(), which index.js exports as
// TFLiteNodeModelRunner. Inputs are seeded values of each input's type; each output's bytes go to
// OUTDIR/out_<i>.bin and its name, type and shape to OUTDIR/outputs.json.
//
// usage: node run-model.cjs ADDON.node MODEL.tflite OUTDIR [--threads N] [--delegate LIB [--option KEY=VALUE]...]
'use strict';
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
if (args.length < 3) {
  console.error('usage: node run-model.cjs ADDON.node MODEL.tflite OUTDIR [--threads N] [--delegate LIB [--option KEY=VALUE]...]');
  process.exit(2);
}
const [addonPath, modelPath, outDir] = args;
const options = {threads: 1};
for (let i = 3; i < args.length; i += 2) {
  const value = args[i + 1];
  if (value === undefined) throw new Error(`${args[i]} needs a value`);
  if (args[i] === '--threads') {
    options.threads = Number(value);
  } else if (args[i] === '--delegate') {
    options.delegate = {path: value, options: []};
  } else if (args[i] === '--option') {
    if (!options.delegate) throw new Error('--option comes after --delegate');
    const eq = value.indexOf('=');
    options.delegate.options.push([value.slice(0, eq), value.slice(eq + 1)]);
  } else {
    throw new Error(`unknown argument ${args[i]}`);
  }
}

// A small linear congruential generator: the same inputs on every run and library.
let state = 12345;
function next() {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 4294967296;
}

const addon = require(path.resolve(addonPath));
const bytes = fs.readFileSync(modelPath);
const model = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const interpreter = new addon.Interpreter(model, options);
for (const input of interpreter.getInputs()) {
  const data = input.data();
  for (let i = 0; i < data.length; ++i) {
    const u = next();
    switch (input.dataType) {
      case 'float32': case 'float64': data[i] = u; break;
      case 'uint8': data[i] = Math.floor(u * 256); break;
      case 'int8': data[i] = Math.floor(u * 256) - 128; break;
      case 'int16': data[i] = Math.floor(u * 65536) - 32768; break;
      case 'int32': data[i] = Math.floor(u * 8); break;
      case 'bool': data[i] = u < 0.5 ? 0 : 1; break;
      default: throw new Error(`input ${input.name}: type ${input.dataType} not filled by this test`);
    }
  }
}
if (!interpreter.infer()) throw new Error('infer() returned false');
fs.mkdirSync(outDir, {recursive: true});
const described = interpreter.getOutputs().map((output, i) => {
  const data = output.data();
  fs.writeFileSync(path.join(outDir, `out_${i}.bin`), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  return {name: output.name, dataType: output.dataType, shape: output.shape};
});
fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(described, null, 1));
