// node compare_npy.mjs REF_DIR CAND_DIR REL
// Compares every out_N.npy of REF_DIR with CAND_DIR's: float outputs may differ by at most REL times
// the largest magnitude of the reference output; every other type must be equal byte for byte. Prints
// one line per output; exits 1 on any difference beyond that.
import fs from 'node:fs';
import path from 'node:path';

const [refDir, candDir, relText] = process.argv.slice(2);
const rel = Number(relText);

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const start = buf[6] === 1 ? 10 : 12;
  const hlen = buf[6] === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  return {descr, data: buf.subarray(start + hlen), header};
}

let bad = 0;
const outs = fs.readdirSync(refDir).filter((f) => /^out_\d+\.npy$/.test(f)).sort();
if (!outs.length) {
  console.error(`no out_*.npy in ${refDir}`);
  process.exit(1);
}
for (const f of outs) {
  const a = readNpy(path.join(refDir, f));
  const b = readNpy(path.join(candDir, f));
  if (a.descr !== b.descr || a.data.length !== b.data.length) {
    console.log(`${f}: type or size differs (${a.descr} ${a.data.length} vs ${b.descr} ${b.data.length})`);
    bad++;
    continue;
  }
  if (a.descr === '<f4') {
    const x = new Float32Array(a.data.buffer.slice(a.data.byteOffset, a.data.byteOffset + a.data.length));
    const y = new Float32Array(b.data.buffer.slice(b.data.byteOffset, b.data.byteOffset + b.data.length));
    let peak = 0, worst = 0, nonfinite = 0;
    for (let i = 0; i < x.length; i++) {
      if (Number.isFinite(x[i]) !== Number.isFinite(y[i])) nonfinite++;
      if (!Number.isFinite(x[i])) continue;
      peak = Math.max(peak, Math.abs(x[i]));
      worst = Math.max(worst, Math.abs(x[i] - y[i]));
    }
    const ok = worst <= rel * peak && nonfinite === 0;
    console.log(`${f}: float32, max |diff| ${worst.toExponential(2)}, ${(peak ? worst / peak : 0).toExponential(2)} of max |ref| ${ok ? 'ok' : 'TOO LARGE'}`);
    if (!ok) bad++;
  } else {
    const ok = a.data.equals(b.data);
    console.log(`${f}: ${a.descr}, ${ok ? 'bit-identical' : 'DIFFERS'}`);
    if (!ok) bad++;
  }
}
process.exit(bad ? 1 : 0);
