#!/usr/bin/env bash
# make-quant-op-cases.sh - regenerate tests/data/quant-ops/: one-op quantized models and the outputs the
# native TensorFlow Lite 2.9 library computes for them.
#
# usage: tools/make-quant-op-cases.sh
#
# A developer tool, run rarely; its outputs are committed as test data and the tests never run it.
# tools/quant-op-models.mjs writes each model as flatc JSON (our own small models: every 8-bit and
# int8-weight op of the builtin pack, uint8 and int8); flatc turns them into .tflite with baton's copy
# of the schema (runtime/model/tflite.fbs); tflite-peer runs each with Google's prebuilt
# libtensorflowlite_c.so (TFLite 2.9.0, builtin kernels, --xnnpack off, 1 thread) on the oracle's
# seed-0 PRNG inputs. Each case directory gets
#   model.tflite  in_I.npy  out_0.npy  meta.json (op, types, library version; no paths or timings)
# tests/quant_ops_test.cc runs every case with the builtin pack: 8-bit outputs must be equal bit for
# bit, float outputs within 1e-5 of the largest reference value.
#
# Environment: TFLITE_PEER (default /tmp/tflite-native/tflite-peer; built by
# ../shared/reference/tflite-native/build.sh when missing).
# Needs: node >= 20, flatc, bash, coreutils.
set -euo pipefail

prog=make-quant-op-cases
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
outdir=$root/tests/data/quant-ops
peer=${TFLITE_PEER:-/tmp/tflite-native/tflite-peer}

case "${1:-}" in -h|--help) sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;; esac
die() { echo "$prog: error: $*" >&2; exit 1; }
command -v node >/dev/null || die "node (>= 20) is needed"
command -v flatc >/dev/null || die "flatc is needed (Debian: flatbuffers-compiler)"
if [ ! -x "$peer" ]; then
  build=$root/../shared/reference/tflite-native/build.sh
  [ -x "$build" ] || die "no tflite-peer at $peer and no $build to build it"
  "$build" "$(dirname "$peer")"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
node "$here/quant-op-models.mjs" "$tmp/json"
# The case folders are remade; README.md stays.
find "$outdir" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
mkdir -p "$outdir"
for json in "$tmp"/json/*.json; do
  name=$(basename "$json" .json)
  flatc -b -o "$tmp/bin" "$root/runtime/model/tflite.fbs" "$json"
  "$peer" "$tmp/bin/$name.tflite" --xnnpack off --threads 1 --seed 0 --out "$tmp/out/$name" --quiet \
      > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "tflite-peer failed on $name"; }
  mkdir -p "$outdir/$name"
  cp "$tmp/bin/$name.tflite" "$outdir/$name/model.tflite"
  cp "$tmp/out/$name"/in_*.npy "$tmp/out/$name"/out_*.npy "$outdir/$name/"
  node "$here/case-meta.mjs" "$tmp/out/$name/meta.json" "$outdir/$name/meta.json" "$name" \
      "tools/make-quant-op-cases.sh (tools/quant-op-models.mjs, flatc, tflite-peer)"
  echo "$prog: $name"
done
echo "$prog: done; $(ls "$outdir" | wc -l) cases, $(du -sh "$outdir" | cut -f1) in $outdir"
