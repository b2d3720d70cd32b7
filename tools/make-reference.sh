#!/usr/bin/env bash
# make-reference.sh - regenerate the reference outputs in tests/data/reference/.
#
# usage: tools/make-reference.sh [--cache DIR] [CASE ...]
#        tools/make-reference.sh --list
#
# A developer tool, run rarely; its outputs are committed as test data and
# the tests never run it. For each case it runs a model with Google's LiteRT
# (the LiteRT.js WASM build, CPU/XNNPACK, 'relaxed' variant, 1 thread) through
# the oracle ref-run.mjs and writes
#   tests/data/reference/CASE/in_I.npy    the inputs that were fed
#   tests/data/reference/CASE/out_I.npy   LiteRT's outputs
#   tests/data/reference/CASE/meta.json   names, shapes, dtypes, seed, model
#                                         sha256, runtime version (trimmed of
#                                         paths, logs and timestamps)
# Cases named after a model use inputs from the oracle's PRNG, seed 0 (floats
# uniform in [-1, 1)). Cases MODEL-astronaut feed a real photograph,
# skimage's astronaut.png (public domain, NASA), converted by
# tools/image-to-npy.mjs (bilinear resize with half-pixel centres to the
# model's input size, then scaled to the range the model expects).
# With CASE names only those cases are redone; a directory is replaced whole.
#
# Options and environment:
#   --cache DIR        model cache (default: that of tools/fetch-models.sh);
#                      models are fetched into it when missing
#   LITERT_JS          the oracle's directory (default
#                      ../shared/reference/litert-js). If it has no
#                      node_modules, it is copied to
#                      ${XDG_CACHE_HOME:-$HOME/.cache}/baton/litert-js and its
#                      setup.sh (npm ci) runs there.
#   ASTRONAUT_PNG      use this astronaut.png instead of taking it from the
#                      Debian package python3-skimage (apt-get download; the
#                      package is not installed). Its sha256 is checked.
#
# Needs: node >= 20, npm, bash, coreutils; apt-get and dpkg-deb for the photo.
set -euo pipefail

prog=make-reference
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
refdir=$root/tests/data/reference
litert_src=${LITERT_JS:-$root/../shared/reference/litert-js}
astronaut_sha256=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
astronaut_member=./usr/lib/python3/dist-packages/skimage/data/astronaut.png
seed=0

# CASE  MODEL  PHOTO-SIZE (HxW, "-" = PRNG inputs)  PHOTO-RANGE  OP-PACKS
# The float models. The ranges are those the models were trained with:
# MediaPipe's face detectors take [-1, 1], its pose landmark model and its
# selfie segmentation model [0, 1] (selfie_segmentation_cpu.pbtxt's
# ImageToTensorCalculator uses output_tensor_float_range 0..1).
# OP-PACKS ("-" = builtin only) lists the op packs beyond builtin that baton
# needs for the model's custom ops; it goes into meta.json as "op_packs".
# LiteRT itself knows Convolution2DTransposeBias (selfie_segmentation).
cases="
face_detection_short_range           face_detection_short_range        -        -     -
face_detection_full_range            face_detection_full_range         -        -     -
face_detection_full_range_sparse     face_detection_full_range_sparse  -        -     -
hand_landmark_lite                   hand_landmark_lite                -        -     -
palm_detection_lite                  palm_detection_lite               -        -     -
pose_detection                       pose_detection                    -        -     -
pose_landmark_lite                   pose_landmark_lite                -        -     -
model_1                              model_1                           -        -     -
model_2                              model_2                           -        -     -
model_quant_f16_1                    model_quant_f16_1                 -        -     -
model_quant_f16_2                    model_quant_f16_2                 -        -     -
model_quant_dynamic_1                model_quant_dynamic_1             -        -     -
model_quant_dynamic_2                model_quant_dynamic_2             -        -     -
selfie_segmentation                  selfie_segmentation               -        -     mediapipe
face_detection_short_range-astronaut face_detection_short_range        128x128  -1:1  -
face_detection_full_range-astronaut  face_detection_full_range         192x192  -1:1  -
pose_landmark_lite-astronaut         pose_landmark_lite                256x256  0:1   -
selfie_segmentation-astronaut        selfie_segmentation               256x256  0:1   mediapipe
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

# ---- models
if [ "$cache" = - ]; then
  cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
fi
mapfile -t models < <(awk '{ print $2 }' <<< "$selected" | sort -u)
"$here/fetch-models.sh" "$cache" "${models[@]}"

# ---- the oracle
litert=$litert_src
if [ ! -d "$litert/node_modules" ]; then
  litert=${XDG_CACHE_HOME:-$HOME/.cache}/baton/litert-js
  if [ ! -d "$litert/node_modules" ] || ! cmp -s "$litert_src/package-lock.json" "$litert/package-lock.json"; then
    echo "$prog: setting up the oracle in $litert"
    rm -rf "$litert"
    mkdir -p "$litert"
    (cd "$litert_src" && tar --exclude=./node_modules -cf - .) | tar -xf - -C "$litert"
    chmod -R u+w "$litert"
    "$litert/setup.sh"
  fi
fi
[ -f "$litert/ref-run.mjs" ] || die "no ref-run.mjs in $litert"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/make-reference.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- the photograph, kept beside the models so that later runs are offline
astronaut=
get_astronaut() {
  [ -n "$astronaut" ] && return 0
  if [ -n "${ASTRONAUT_PNG:-}" ]; then
    astronaut=$ASTRONAUT_PNG
  else
    astronaut=$("$here/fetch-images.sh" "$cache") || die "cannot fetch astronaut.png"
  fi
  sha256sum "$astronaut" | grep -q "^$astronaut_sha256 " \
    || die "$astronaut: sha256 is not $astronaut_sha256"
}

# Rewrite ref-run's meta.json without machine paths, logs and timestamps.
trim_meta() {  # trim_meta IN OUT CASE MODEL INPUT-NOTE OP-PACKS
  node --input-type=module - "$@" <<'EOF'
import fs from 'node:fs';
const [src, dst, caseName, modelName, inputNote, opPacks] = process.argv.slice(2);
const m = JSON.parse(fs.readFileSync(src, 'utf8'));
const r = m.runtime;
const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
const out = {
  case: caseName,
  generator: 'tools/make-reference.sh (LiteRT.js oracle ref-run.mjs)',
  model: {name: `${modelName}.tflite`, bytes: m.model.bytes, sha256: m.model.sha256},
  runtime: {
    runtime: r.runtime, version: r.version, variant: r.variant, wasm_file: r.wasm_file,
    wasm_simd128: r.wasm_simd128, wasm_relaxed_simd: r.wasm_relaxed_simd, threads: r.threads,
    accelerator: r.accelerator, node: r.node, v8: r.v8,
    // relaxed SIMD may use FMA where the CPU has it (last bits differ otherwise)
    host_cpu_fma: /^flags\s*:.*\bfma\b/m.test(cpuinfo),
  },
  signature: m.signature,
  inputs_from: m.inputs_from === 'prng' ? 'prng' : 'image',
  seed: m.seed,
  prng: m.prng,
  input_note: inputNote || undefined,
  // op packs beyond builtin that baton needs for this model's custom ops
  op_packs: opPacks && opPacks !== '-' ? opPacks.split(',') : undefined,
  inputs: m.inputs.map(({source, ...rest}) => rest),
  outputs: m.outputs,
};
fs.writeFileSync(dst, JSON.stringify(out, null, 2) + '\n');
EOF
}

# ---- the cases, one at a time
mkdir -p "$refdir"
while read -r name model size range packs; do
  [ -n "$name" ] || continue
  work="$tmp/$name"
  mkdir -p "$work"
  args=(--seed "$seed")
  note=
  if [ "$size" != - ]; then
    get_astronaut
    node "$here/image-to-npy.mjs" "$astronaut" "$work/in_0.npy" --size "$size" --range "$range" >/dev/null
    args=(--inputs "$work/in_0.npy")
    note="skimage astronaut.png (sha256 $astronaut_sha256, 512x512 RGB) -> tools/image-to-npy.mjs --size $size --range $range"
  fi
  echo "$prog: $name"
  node "$litert/ref-run.mjs" "$cache/$model.tflite" --out "$work/out" "${args[@]}" \
      --threads 1 --variant relaxed --quiet > "$work/log" 2>&1 || { cat "$work/log" >&2; die "ref-run failed for $name"; }
  grep -E '^(in|out)_[0-9]+:' "$work/log" | sed 's/^/    /'
  trim_meta "$work/out/meta.json" "$work/out/meta.trimmed.json" "$name" "$model" "$note" "$packs"
  mv "$work/out/meta.trimmed.json" "$work/out/meta.json"
  rm -rf "${refdir:?}/${name:?}"
  mv "$work/out" "$refdir/$name"
done <<< "$selected"

echo "$prog: done; $(du -sh "$refdir" | cut -f1) in $refdir"
