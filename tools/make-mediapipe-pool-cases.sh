#!/usr/bin/env bash
# make-mediapipe-pool-cases.sh - regenerate tests/data/mediapipe-pool/: small models of MediaPipe's
# custom ops MaxPoolingWithArgmax2D and MaxUnpooling2D, with the outputs Google's LiteRT 2.5 computes.
#
# usage: tools/make-mediapipe-pool-cases.sh
#
# A developer tool, run rarely; its outputs are committed as test data and the tests never run it.
# tools/mediapipe-pool-models.mjs writes each model as flatc JSON plus its inputs (.npy); flatc turns
# them into .tflite with baton's copy of the schema (runtime/model/tflite.fbs); the LiteRT reference
# runner (../shared/reference/litert-js, or $LITERT_REF: LiteRT.js 2.5, XNNPACK always applied, 1
# thread) runs each. Native TFLite 2.9 cannot: it registers neither op. LiteRT runs them only through
# its XNNPACK delegate, which takes stride == filter only and keeps argmax indices as uint32 bits in
# the float32 tensors, counted column by column (see tests/data/mediapipe-pool/README.md). Each case
# directory gets
#   model.tflite  in_I.npy  out_I.npy  meta.json (case, runtime and version; no paths or timings)
# tests/mediapipe_pool_test.cc runs every case with the mediapipe pack.
#
# Needs: node >= 20, flatc, bash, coreutils.
set -euo pipefail

prog=make-mediapipe-pool-cases
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
outdir=$root/tests/data/mediapipe-pool
litert=${LITERT_REF:-$root/../shared/reference/litert-js}

case "${1:-}" in -h|--help) sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;; esac
die() { echo "$prog: error: $*" >&2; exit 1; }
command -v node >/dev/null || die "node (>= 20) is needed"
command -v flatc >/dev/null || die "flatc is needed (Debian: flatbuffers-compiler)"
[ -f "$litert/ref-run.mjs" ] || die "no LiteRT reference runner at $litert (set LITERT_REF)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
node "$here/mediapipe-pool-models.mjs" "$tmp/json"
# The case folders are remade; README.md stays.
find "$outdir" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
mkdir -p "$outdir"
for json in "$tmp"/json/*.json; do
  name=$(basename "$json" .json)
  flatc -b -o "$tmp/bin" "$root/runtime/model/tflite.fbs" "$json"
  node "$litert/ref-run.mjs" "$tmp/bin/$name.tflite" --out "$tmp/out/$name" --threads 1 --quiet \
      --inputs "$tmp"/json/"$name".in_*.npy > "$tmp/$name.log" 2>&1 \
      || { cat "$tmp/$name.log" >&2; die "LiteRT failed on $name"; }
  mkdir -p "$outdir/$name"
  cp "$tmp/bin/$name.tflite" "$outdir/$name/model.tflite"
  cp "$tmp/out/$name"/in_*.npy "$tmp/out/$name"/out_*.npy "$outdir/$name/"
  node "$here/case-meta.mjs" "$tmp/out/$name/meta.json" "$outdir/$name/meta.json" "$name" \
      "tools/make-mediapipe-pool-cases.sh (tools/mediapipe-pool-models.mjs, flatc, LiteRT 2.5)" \
      "tools/mediapipe-pool-models.mjs"
  echo "$prog: $name"
done
echo "$prog: done; $(find "$outdir" -mindepth 1 -maxdepth 1 -type d | wc -l) cases, $(du -sh "$outdir" | cut -f1) in $outdir"
