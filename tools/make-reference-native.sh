#!/usr/bin/env bash
# make-reference-native.sh - regenerate the reference outputs in tests/data/reference/ that come from the
# native TensorFlow Lite 2.9 C library instead of LiteRT.js.
#
# usage: tools/make-reference-native.sh [--cache DIR] [CASE ...]
#        tools/make-reference-native.sh --list
#
# A developer tool, run rarely; its outputs are committed as test data and the tests never run it. It
# exists for models the LiteRT.js oracle of tools/make-reference.sh cannot run: the uint8
# mobilenet_ssd_v2_coco_quant_postprocess model crashes it (see ../shared/reference/tflite-native/
# README.md). For each case it runs the model with Google's prebuilt libtensorflowlite_c.so (TFLite 2.9.0,
# from the npm package tfjs-tflite-node@0.0.2) through the tflite-peer harness, builtin kernels only
# (--xnnpack off: 2.9's XNNPACK delegate takes no quantized node anyway), 1 thread, and writes
#   tests/data/reference/CASE/in_I.npy    the inputs that were fed
#   tests/data/reference/CASE/out_I.npy   TFLite's outputs
#   tests/data/reference/CASE/meta.json   names, shapes, dtypes, seed, model sha256, library and version
#                                         (no paths, logs or timings)
# Cases named after a model use the oracle's PRNG with seed 0 (uint8 inputs: the top byte of each
# mulberry32 draw). Cases MODEL-astronaut feed skimage's astronaut.png, resized to the input by
# tools/image-to-npy.mjs --dtype uint8 (bilinear, half-pixel centres, pixel codes rounded half up), the
# same preparation as `baton run --image` on a uint8 input.
#
# Options and environment:
#   --cache DIR     model cache (default: that of tools/fetch-models.sh); models are fetched when missing
#   TFLITE_PEER     the harness (default /tmp/tflite-native/tflite-peer); when it is missing,
#                   ../shared/reference/tflite-native/build.sh builds it there (npm pack, gcc)
#   ASTRONAUT_PNG   use this astronaut.png instead of tools/fetch-images.sh's (its sha256 is checked)
#
# Needs: node >= 20, bash, coreutils, and what build.sh needs for a first build.
set -euo pipefail

prog=make-reference-native
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
refdir=$root/tests/data/reference
peer=${TFLITE_PEER:-/tmp/tflite-native/tflite-peer}
astronaut_sha256=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
seed=0

# CASE  MODEL  PHOTO-SIZE (HxW, "-" = PRNG inputs)  PHOTO-DTYPE  OP-PACKS
# OP-PACKS lists the op packs beyond builtin that baton needs (meta.json "op_packs").
cases="
mobilenet_ssd_v2_coco_quant_postprocess           mobilenet_ssd_v2_coco_quant_postprocess  -        -      detection
mobilenet_ssd_v2_coco_quant_postprocess-astronaut mobilenet_ssd_v2_coco_quant_postprocess  300x300  uint8  detection
"

usage() { sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die() { echo "$prog: error: $*" >&2; exit 1; }

cache=-
want=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --list) awk 'NF { print $1 }' <<< "$cases"; exit 0 ;;
    --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache=$2; shift 2 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) want+=("$1"); shift ;;
  esac
done

selected=$(awk -v list="${want[*]:-}" '
  BEGIN { n = split(list, w, " "); for (i = 1; i <= n; i++) pick[w[i]] = 1 }
  NF && (n == 0 || ($1 in pick)) { print; seen[$1] = 1 }
  END { for (k in pick) if (!(k in seen)) { print "unknown case " k > "/dev/stderr"; exit 1 } }' <<< "$cases") \
  || die "see --list for the cases"

command -v node >/dev/null || die "node (>= 20) is needed"

if [ "$cache" = - ]; then
  cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
fi
mapfile -t models < <(awk '{ print $2 }' <<< "$selected" | sort -u)
"$here/fetch-models.sh" "$cache" "${models[@]}"

if [ ! -x "$peer" ]; then
  build=$root/../shared/reference/tflite-native/build.sh
  [ -x "$build" ] || die "no tflite-peer at $peer and no $build to build it"
  "$build" "$(dirname "$peer")"
fi
[ -x "$peer" ] || die "no tflite-peer at $peer"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

astronaut=
get_astronaut() {
  [ -n "$astronaut" ] && return 0
  astronaut=${ASTRONAUT_PNG:-$("$here/fetch-images.sh" "$cache")} || die "cannot fetch astronaut.png"
  sha256sum "$astronaut" | grep -q "^$astronaut_sha256 " || die "$astronaut: sha256 is not $astronaut_sha256"
}

# Rewrite the harness's meta.json without paths, logs and timings.
trim_meta() {  # trim_meta IN OUT CASE MODEL-FILE INPUT-NOTE OP-PACKS
  node --input-type=module - "$@" <<'EOF'
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
const [src, dst, caseName, modelFile, inputNote, opPacks] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(src, 'utf8'));
const bytes = fs.readFileSync(modelFile);
const out = {
  case: caseName,
  generator: 'tools/make-reference-native.sh (native TFLite C library through tflite-peer)',
  model: {name: path.basename(modelFile), bytes: bytes.length,
          sha256: crypto.createHash('sha256').update(bytes).digest('hex')},
  runtime: {
    runtime: 'TensorFlow Lite C library (libtensorflowlite_c.so from npm tfjs-tflite-node@0.0.2, linux_amd64)',
    version: m.runtime.version, threads: m.runtime.threads, xnnpack: m.runtime.xnnpack,
    kernels: 'builtin op resolver (no delegate)',
  },
  inputs_from: m.inputs_from === 'prng' ? 'prng' : 'image',
  seed: m.inputs_from === 'prng' ? m.seed : undefined,
  prng: m.inputs_from === 'prng'
    ? 'mulberry32, stream i seeded (seed + i*0x9E3779B9) mod 2^32; uint8: x>>>24 (see ../shared/reference/litert-js/lib/prng.mjs)'
    : undefined,
  input_note: inputNote || undefined,
  op_packs: opPacks && opPacks !== '-' ? opPacks.split(',') : undefined,
  inputs: m.inputs.map(({source, ...rest}) => rest),
  outputs: m.outputs.map(({nan_count, ...rest}) => rest),
};
fs.writeFileSync(dst, JSON.stringify(out, null, 2) + '\n');
EOF
}

mkdir -p "$refdir"
while read -r name model size dtype packs; do
  [ -n "$name" ] || continue
  work="$tmp/$name"
  mkdir -p "$work"
  args=(--seed "$seed")
  note=
  if [ "$size" != - ]; then
    get_astronaut
    node "$here/image-to-npy.mjs" "$astronaut" "$work/in_0.npy" --size "$size" --dtype "$dtype" >/dev/null
    args=(--inputs "$work/in_0.npy")
    note="skimage astronaut.png (sha256 $astronaut_sha256, 512x512 RGB) -> tools/image-to-npy.mjs --size $size --dtype $dtype"
  fi
  echo "$prog: $name"
  "$peer" "$cache/$model.tflite" --xnnpack off --threads 1 --out "$work/out" "${args[@]}" --quiet \
      > "$work/log" 2>&1 || { cat "$work/log" >&2; die "tflite-peer failed for $name"; }
  grep -E '^(in|out)_[0-9]+:' "$work/log" | sed 's/^/    /'
  trim_meta "$work/out/meta.json" "$work/out/meta.trimmed.json" "$name" "$cache/$model.tflite" "$note" "$packs"
  mv "$work/out/meta.trimmed.json" "$work/out/meta.json"
  rm -rf "${refdir:?}/${name:?}"
  mv "$work/out" "$refdir/$name"
done <<< "$selected"

echo "$prog: done; $(du -sh "$refdir" | cut -f1) in $refdir"
