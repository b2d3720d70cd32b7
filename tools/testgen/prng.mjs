// prng.mjs - the deterministic number sequences the generators draw weights and data from, so that a
// rerun writes the same models. None is the reference runners' input PRNG (that is the runners').

// The linear congruential recurrence of C's example rand(), x = (x * 1103515245 + 12345) mod 2^31, in
// doubles as the generators have always computed it: the product passes 2^53 and is rounded, so this
// is not C's sequence, and it stays as it is because the committed models were drawn from it. Each
// call gives the next x.
export function lcg31(seed) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648);
}

// `count` int8 weights in [-127, 127] (TFLite's symmetric range), as bytes, from lcg31(seed); `seed` may
// be an lcg31() itself, for weights that go on where the last ones left the sequence.
export function int8Weights(count, seed) {
  const next = typeof seed === 'function' ? seed : lcg31(seed);
  return Array.from({length: count}, () => ((next() >> 16) % 255 - 127) & 0xff);
}

// A 32-bit linear congruential generator computed exactly (Math.imul): each call gives the next state
// divided by 2^32, a number in [0, 1). The default constants are Numerical Recipes'.
export function lcg32(seed, multiplier = 1664525, increment = 1013904223) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, multiplier) + increment) >>> 0) / 4294967296;
}
