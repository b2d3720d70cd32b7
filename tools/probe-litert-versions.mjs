#!/usr/bin/env node
// probe-litert-versions.mjs - which versions of each op LiteRT 2.5's op resolver registers, found the way
// tools/make-op-cases.sh finds TFLite 2.9's: one model per op and version (vNAME_V.tflite, made by
// `node tools/op-models.mjs --versions DIR` and flatc) is loaded into LiteRT; a version counts as
// registered unless LiteRT says it has no kernel for it (a model its kernel then refuses in prepare still
// counts: the resolver took it).
//
//   node tools/probe-litert-versions.mjs LITERT_DIR MODELS_DIR [--from VERSIONS.json] > versions-litert.json
//
// LITERT_DIR is ../shared/reference/litert-js (set up with its setup.sh). Prints {"OP": [min, max], ...}.
import fs from 'node:fs';
import path from 'node:path';

const [litertDir, modelsDir] = process.argv.slice(2);
if (!litertDir || !modelsDir) {
  console.error('usage: node tools/probe-litert-versions.mjs LITERT_DIR MODELS_DIR');
  process.exit(2);
}
const lr = await import(path.resolve(litertDir, 'lib/litert-node.mjs'));
await lr.initLiteRt({variant: 'relaxed', threads: 1, log: () => {}});

// Versions are one range from 1 up (a newer kernel keeps the older versions): for each op, versions are
// tried upwards from 1 (or from past the range of `--from VERSIONS.json`, TFLite 2.9's, which LiteRT keeps)
// until LiteRT refuses one.
const fromIndex = process.argv.indexOf('--from');
const known = fromIndex > 0 ? JSON.parse(fs.readFileSync(process.argv[fromIndex + 1], 'utf8')) : {};
const files = new Map();  // op -> version -> file
for (const file of fs.readdirSync(modelsDir).filter((f) => f.endsWith('.tflite'))) {
  const m = /^v(.+)_(\d+)\.tflite$/.exec(file);
  if (m) (files.get(m[1]) ?? files.set(m[1], new Map()).get(m[1])).set(Number(m[2]), file);
}

// true: registered; false: refused by the resolver; null: the model fails before LiteRT resolves its ops
// (its loader takes no variable tensors), which says nothing of the op.
async function registered(file) {
  const logStart = lr.runtimeLog().length;
  try {
    await lr.loadModel(new Uint8Array(fs.readFileSync(path.join(modelsDir, file))));
    return true;
  } catch (e) {
    const log = lr.runtimeLog().slice(logStart).join('\n');
    if (/Didn't find op for builtin opcode/.test(log)) return false;
    if (/Variable tensors not yet supported/.test(log)) return null;
    if (process.env.PROBE_VERBOSE) console.error(`${file}: registered, but: ${log.split('\n').filter((l) => l.startsWith('ERROR')).join(' | ')}`);
    return true;
  }
}

const ranges = {};
for (const op of [...files.keys()].sort()) {
  const versions = files.get(op);
  let v = known[op] ? known[op][1] + 1 : 1;
  let max = known[op] ? known[op][1] : 0;
  let answered = true;
  for (; versions.has(v); ++v) {
    const r = await registered(versions.get(v));
    if (r === null) { answered = false; break; }
    if (!r) break;
    max = v;
  }
  if (!answered) {
    console.error(`${op}: not probed (the model fails before LiteRT resolves its ops)`);
    continue;
  }
  if (!versions.has(v)) console.error(`${op}: registered up to the last version tried (${v - 1})`);
  if (max > 0) ranges[op] = [known[op] ? known[op][0] : 1, max];
}
const out = ranges;
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
lr.shutdown();
