#!/usr/bin/env node
// case-meta.mjs - write a test case's meta.json from tflite-peer's (or the LiteRT runner's): the case's name, the script that made
// it, the library that computed the outputs, and the inputs and outputs without paths or timings (so a
// rerun on another machine writes the same file).
//
//   node tools/case-meta.mjs PEER_META.json OUT_META.json CASE GENERATOR [INPUTS_FROM]
//
// Used by tools/make-cases.sh (the op, quant-op, control-flow and mediapipe-pool sets).
import fs from 'node:fs';

const [src, dst, name, generator, inputsFrom] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(src, 'utf8'));
// The LiteRT reference runner's meta.json (../shared/reference/litert-js) names its runtime; tflite-peer's does not.
const litert = String(m.runtime.runtime ?? '').startsWith('LiteRT');
fs.writeFileSync(dst, JSON.stringify({
  case: name,
  generator,
  runtime: litert
    ? {runtime: `${m.runtime.runtime} (WASM, XNNPACK always applied)`, version: m.runtime.version, threads: m.runtime.threads, xnnpack: true}
    : {runtime: 'TensorFlow Lite C library (libtensorflowlite_c.so from npm tfjs-tflite-node@0.0.2, linux_amd64)',
       version: m.runtime.version, threads: m.runtime.threads, xnnpack: m.runtime.xnnpack},
  inputs_from: inputsFrom || m.inputs_from,
  seed: m.seed, int_range: m.int_range ?? null,
  inputs: m.inputs.map(({source, ...rest}) => rest),
  outputs: m.outputs.map(({nan_count, ...rest}) => rest),
}, null, 2) + '\n');
