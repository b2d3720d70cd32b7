#!/usr/bin/env node
// image-to-npy.mjs - turn a PNG photograph into a model input tensor (.npy).
//
//   node tools/image-to-npy.mjs IN.png OUT.npy --size HxW [--range LO:HI] [--dtype float32|uint8|int8]
//
// Writes an array of shape [1, H, W, 3] (NHWC, RGB), C order, little
// endian, .npy format 1.0; float32 unless --dtype says otherwise. Used by
// tools/make-reference.sh and tools/make-reference-native.sh to make the
// reference inputs of the photo cases. `baton run --image` must prepare an
// image exactly the same way, so the steps are spelled out here:
//
// 1. Decode. PNG with bit depth 8, colour type gray (0), RGB (2), palette (3),
//    gray+alpha (4) or RGBA (6), not interlaced. Gray becomes R=G=B; the alpha
//    channel is dropped (not blended with anything). Pixel values are 0..255.
// 2. Resize to W x H: bilinear, half-pixel centres, no antialiasing filter, no
//    crop and no letterbox (the image is stretched if the aspect ratios
//    differ). For an output column x (0 <= x < W):
//        sx = (x + 0.5) * inW / W - 0.5
//        x0 = floor(sx), fx = sx - x0
//        xa = clamp(x0, 0, inW - 1), xb = clamp(x0 + 1, 0, inW - 1)
//    and the same for rows (sy, y0, fy, ya, yb with inH / H). Each channel is
//        v = (1 - fy) * ((1 - fx) * p[ya][xa] + fx * p[ya][xb])
//          +      fy  * ((1 - fx) * p[yb][xa] + fx * p[yb][xb])
//    This is TFLite's RESIZE_BILINEAR with half_pixel_centers=true.
// 3. Normalise: out = LO + v * (HI - LO) / 255, with --range LO:HI
//    (default -1:1, i.e. v / 127.5 - 1; MediaPipe's pose landmark model
//    wants 0:1). With --dtype uint8 (quantized models, whose input codes are
//    the pixel values) out = floor(v + 0.5), the resized value rounded half
//    up, 0..255; with --dtype int8 that minus 128. --range is then unused.
// Steps 2 and 3 are computed in double precision and rounded to float32 once
// at the end; a float32 implementation agrees to about 1e-6. The 8-bit codes
// need the double computation in exactly this order (no fused multiply-add)
// to agree everywhere.
//
// Only Node's standard library (zlib for the PNG data stream) and tools/testgen/npy.mjs are used.
import fs from 'node:fs';
import zlib from 'node:zlib';
import {pathToFileURL} from 'node:url';

import {npyBytes} from './testgen/npy.mjs';

function fail(msg) {
  process.stderr.write(`image-to-npy: ${msg}\n`);
  process.exit(1);
}

// CRC-32 as used by PNG chunks (polynomial 0xEDB88320).
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(bytes) {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// Returns {width, height, rgb: Uint8Array(width * height * 3)}.
export function decodePng(buf) {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (buf.length < 8 || sig.some((b, i) => buf[i] !== b)) throw new Error('not a PNG file');
  let pos = 8, ihdr = null, palette = null;
  const idat = [];
  for (;;) {
    if (pos + 12 > buf.length) throw new Error('truncated PNG (no IEND chunk)');
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    if (pos + 12 + len > buf.length) throw new Error(`truncated PNG chunk ${type}`);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (crc32(buf.subarray(pos + 4, pos + 8 + len)) !== buf.readUInt32BE(pos + 8 + len)) {
      throw new Error(`bad CRC in PNG chunk ${type}`);
    }
    pos += 12 + len;
    if (type === 'IHDR') {
      ihdr = {width: body.readUInt32BE(0), height: body.readUInt32BE(4), depth: body[8],
        colorType: body[9], compression: body[10], filter: body[11], interlace: body[12]};
    } else if (type === 'PLTE') {
      palette = body;
    } else if (type === 'IDAT') {
      idat.push(body);
    } else if (type === 'IEND') {
      break;
    }
  }
  if (!ihdr) throw new Error('PNG has no IHDR chunk');
  const {width, height, depth, colorType, interlace} = ihdr;
  const channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colorType];
  if (depth !== 8 || channels === undefined) {
    throw new Error(`unsupported PNG: bit depth ${depth}, colour type ${colorType} (need 8-bit gray/RGB/palette/GA/RGBA)`);
  }
  if (interlace !== 0) throw new Error('interlaced PNG is not supported');
  if (ihdr.compression !== 0 || ihdr.filter !== 0) throw new Error('unknown PNG compression/filter method');
  if (colorType === 3 && !palette) throw new Error('palette PNG without PLTE chunk');

  const raw = zlib.inflateSync(Buffer.concat(idat));
  const bpp = channels;  // bytes per pixel at bit depth 8
  const stride = width * bpp;
  if (raw.length < height * (stride + 1)) throw new Error('PNG image data too short');

  // Undo the per-row filters in place into `px`.
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const ft = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1, row = y * stride, prev = row - stride;
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? px[row + i - bpp] : 0;
      const b = y > 0 ? px[prev + i] : 0;
      const c = i >= bpp && y > 0 ? px[prev + i - bpp] : 0;
      let pred;
      switch (ft) {
        case 0: pred = 0; break;
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) >> 1; break;
        case 4: {
          const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`bad PNG filter type ${ft} in row ${y}`);
      }
      px[row + i] = (raw[src + i] + pred) & 0xff;
    }
  }

  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const s = i * bpp;
    if (colorType === 3) {
      const k = px[s] * 3;
      if (k + 2 >= palette.length) throw new Error('PNG palette index out of range');
      rgb.set(palette.subarray(k, k + 3), i * 3);
    } else if (channels <= 2) {
      rgb[i * 3] = rgb[i * 3 + 1] = rgb[i * 3 + 2] = px[s];
    } else {
      rgb[i * 3] = px[s];
      rgb[i * 3 + 1] = px[s + 1];
      rgb[i * 3 + 2] = px[s + 2];
    }
  }
  return {width, height, rgb};
}

// Bilinear resize with half-pixel centres and normalisation (steps 2 and 3 above).
// dtype 'float32' (default), 'uint8' or 'int8'.
export function toTensor(img, outH, outW, lo, hi, dtype = 'float32') {
  const {width: inW, height: inH, rgb} = img;
  const out = dtype === 'uint8' ? new Uint8Array(outH * outW * 3)
      : dtype === 'int8' ? new Int8Array(outH * outW * 3) : new Float32Array(outH * outW * 3);
  const clamp = (v, n) => (v < 0 ? 0 : v > n - 1 ? n - 1 : v);
  const axis = (o, inN, outN) => {
    const s = (o + 0.5) * inN / outN - 0.5;
    const i0 = Math.floor(s);
    return [clamp(i0, inN), clamp(i0 + 1, inN), s - i0];
  };
  const scale = (hi - lo) / 255;
  for (let y = 0; y < outH; y++) {
    const [ya, yb, fy] = axis(y, inH, outH);
    for (let x = 0; x < outW; x++) {
      const [xa, xb, fx] = axis(x, inW, outW);
      for (let c = 0; c < 3; c++) {
        const p = (yy, xx) => rgb[(yy * inW + xx) * 3 + c];
        const v = (1 - fy) * ((1 - fx) * p(ya, xa) + fx * p(ya, xb)) +
            fy * ((1 - fx) * p(yb, xa) + fx * p(yb, xb));
        const code = Math.floor(v + 0.5);
        out[(y * outW + x) * 3 + c] = dtype === 'uint8' ? code : dtype === 'int8' ? code - 128 : lo + v * scale;
      }
    }
  }
  return out;
}

// .npy of float32, uint8 or int8 by the array's type.
const npyArray = (data, shape) =>
  npyBytes(data instanceof Uint8Array ? '|u1' : data instanceof Int8Array ? '|i1' : '<f4', shape, data);

function main(argv) {
  const usage = 'usage: node tools/image-to-npy.mjs IN.png OUT.npy --size HxW [--range LO:HI] [--dtype float32|uint8|int8]';
  const pos = [];
  let size = null, range = [-1, 1], dtype = 'float32';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      console.log(usage);
      return;
    } else if (a === '--size') {
      const m = /^(\d+)x(\d+)$/.exec(argv[++i] ?? '');
      if (!m) fail('--size wants HxW, e.g. 128x128');
      size = [parseInt(m[1], 10), parseInt(m[2], 10)];
    } else if (a === '--range') {
      const m = /^(-?[\d.]+):(-?[\d.]+)$/.exec(argv[++i] ?? '');
      if (!m) fail('--range wants LO:HI, e.g. -1:1');
      range = [parseFloat(m[1]), parseFloat(m[2])];
    } else if (a === '--dtype') {
      dtype = argv[++i] ?? '';
      if (!['float32', 'uint8', 'int8'].includes(dtype)) fail('--dtype wants float32, uint8 or int8');
    } else if (a.startsWith('--')) {
      fail(`unknown option ${a}\n${usage}`);
    } else {
      pos.push(a);
    }
  }
  if (pos.length !== 2 || !size || size[0] < 1 || size[1] < 1) fail(usage);
  const [inFile, outFile] = pos;
  let img;
  try {
    img = decodePng(fs.readFileSync(inFile));
  } catch (e) {
    fail(`${inFile}: ${e.message}`);
  }
  const [h, w] = size;
  const t = toTensor(img, h, w, range[0], range[1], dtype);
  fs.writeFileSync(outFile, npyArray(t, [1, h, w, 3]));
  console.log(`image-to-npy: ${inFile} ${img.width}x${img.height} -> ${outFile} ${dtype} [1, ${h}, ${w}, 3]` +
              (dtype === 'float32' ? ` range ${range[0]}:${range[1]}` : ' (pixel codes)'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
