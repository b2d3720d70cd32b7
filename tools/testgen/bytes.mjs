// bytes.mjs - values as the little-endian bytes of a flatc JSON buffer (`{data: [...]}`): an array of
// byte values, one per byte of the typed array the values fill.
export const bytesOf = (Typed, values) => Array.from(new Uint8Array(Typed.from(values).buffer));

export const i8 = (v) => bytesOf(Int8Array, v);
export const i16 = (v) => bytesOf(Int16Array, v);
export const i32 = (v) => bytesOf(Int32Array, v);
export const i64 = (v) => bytesOf(BigInt64Array, v.map(BigInt));
export const f32 = (v) => bytesOf(Float32Array, v);
export const f64 = (v) => bytesOf(Float64Array, v);
export const b8 = (v) => v.map((x) => (x ? 1 : 0));
