// Compares two runs of run-model.cjs: the same outputs (names, types, shapes), integer outputs byte for
// byte, float outputs within TOLERANCE times the largest magnitude of the first run's output.
//
// usage: node compare.cjs REFERENCE_DIR CANDIDATE_DIR TOLERANCE
'use strict';
const fs = require('fs');
const path = require('path');

const [referenceDir, candidateDir, toleranceText] = process.argv.slice(2);
const tolerance = Number(toleranceText);
const read = (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'outputs.json'), 'utf8'));
const reference = read(referenceDir);
const candidate = read(candidateDir);
let failed = false;
const fail = (message) => {
  console.log(`  ${message}`);
  failed = true;
};
if (JSON.stringify(reference) !== JSON.stringify(candidate)) {
  fail(`outputs differ: ${JSON.stringify(reference)} vs ${JSON.stringify(candidate)}`);
}
reference.forEach((output, i) => {
  const a = fs.readFileSync(path.join(referenceDir, `out_${i}.bin`));
  const b = fs.readFileSync(path.join(candidateDir, `out_${i}.bin`));
  if (a.length !== b.length) return fail(`${output.name}: ${a.length} bytes vs ${b.length}`);
  if (output.dataType !== 'float32') {
    if (!a.equals(b)) fail(`${output.name} (${output.dataType}): not bit for bit the same`);
    return;
  }
  const x = new Float32Array(a.buffer, a.byteOffset, a.length / 4);
  const y = new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  let largest = 0, worst = 0, at = -1;
  for (let k = 0; k < x.length; ++k) largest = Math.max(largest, Math.abs(x[k]));
  for (let k = 0; k < x.length; ++k) {
    const d = Math.abs(x[k] - y[k]);
    if (!(d <= worst)) { worst = d; at = k; }
  }
  if (!(worst <= tolerance * Math.max(largest, 1e-30))) {
    fail(`${output.name}: differs by ${worst} at ${at} (${x[at]} vs ${y[at]}), more than ${tolerance} x ${largest}`);
  }
});
process.exit(failed ? 1 : 0);
