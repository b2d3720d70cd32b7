// npy.mjs - .npy files (format 1.0, little-endian, C order): the inputs the generators give their cases,
// and tools/image-to-npy.mjs's tensors. The header is padded with spaces to a newline so that the data
// starts at a multiple of 64 bytes, as numpy writes it.
import fs from 'node:fs';

// The .npy type (descr) and typed array of each TFLite tensor type a generator writes.
export const npyTypes = {
  FLOAT32: ['<f4', Float32Array], FLOAT64: ['<f8', Float64Array], INT32: ['<i4', Int32Array],
  INT64: ['<i8', BigInt64Array], UINT8: ['|u1', Uint8Array], INT8: ['|i1', Int8Array], INT16: ['<i2', Int16Array],
  BOOL: ['|b1', Uint8Array],
};

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('tools/testgen/npy.mjs: a big-endian host');

const asBuffer = (body) => (Buffer.isBuffer(body) ? body
  : ArrayBuffer.isView(body) ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.from(body));

// The file's bytes: `descr` as numpy writes it ('<f4', '|u1', ...), `body` the data (a Buffer, a typed
// array, or an array of byte values).
export function npyBytes(descr, shape, body) {
  const dims = shape.join(', ') + (shape.length === 1 ? ',' : '');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), asBuffer(body)]);
}

export function writeNpy(file, descr, shape, body) {
  fs.writeFileSync(file, npyBytes(descr, shape, body));
}

// `values` (numbers, booleans for BOOL, numbers or BigInts for INT64) as a tensor of TFLite type `type`.
export function writeNpyOf(file, type, shape, values) {
  const [descr, Typed] = npyTypes[type];
  const data = Typed === BigInt64Array ? BigInt64Array.from(values.map(BigInt))
             : Typed.from(values.map((v) => (typeof v === 'boolean' ? Number(v) : v)));
  writeNpy(file, descr, shape, data);
}

export const npyF32 = (file, shape, values) => writeNpyOf(file, 'FLOAT32', shape, values);
