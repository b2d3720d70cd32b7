#!/usr/bin/env bash
# make-control-flow-cases.sh - regenerate tests/data/control-flow/: models with several subgraphs (WHILE,
# IF, CALL_ONCE with resource variables, signatures) and the outputs the native TensorFlow Lite 2.9
# library computes for them.
#
# usage: tools/make-control-flow-cases.sh
#
# A developer tool; its outputs are committed as test data and the tests never run it.
# tools/control-flow-models.mjs writes each model as flatc JSON; flatc turns it into .tflite with baton's
# copy of the schema; tflite-peer runs subgraph 0 once with Google's prebuilt libtensorflowlite_c.so
# (TFLite 2.9.0, builtin kernels, 1 thread) on the oracle's PRNG inputs (seed 0, narrowed by the case's
# --int-range). Each case directory gets model.tflite, in_I.npy, out_I.npy and meta.json; a case marked
# --no-reference (an endless loop, a recursive model, loops sharing a body that TFLite 2.9 fails) gets its
# model only; a case marked --litert (STABLEHLO_COMPOSITE, which TFLite 2.9 lacks) gets LiteRT 2.5's outputs
# (../shared/reference/litert-js, or $LITERT_REF). tests/control_flow_test.cc and control_flow_shapes_test.cc
# check baton against them, and
# derive by hand what the library cannot show (several invokes of a stateful model, a signature on another
# subgraph, the shared body).
#
# Environment: TFLITE_PEER (default ~/.cache/baton/tflite-peer/tflite-peer, else /tmp/tflite-native/tflite-peer).
# Needs: node >= 20, flatc, bash, coreutils.
set -euo pipefail

prog=make-control-flow-cases
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
outdir=$root/tests/data/control-flow
peer=${TFLITE_PEER:-$HOME/.cache/baton/tflite-peer/tflite-peer}
[ -x "$peer" ] || peer=/tmp/tflite-native/tflite-peer
litert=${LITERT_REF:-$root/../shared/reference/litert-js}

case "${1:-}" in -h|--help) sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;; esac
die() { echo "$prog: error: $*" >&2; exit 1; }
command -v node >/dev/null || die "node (>= 20) is needed"
command -v flatc >/dev/null || die "flatc is needed (Debian: flatbuffers-compiler)"
[ -x "$peer" ] || die "no tflite-peer (build it with ../shared/reference/tflite-native/build.sh, set TFLITE_PEER)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
node "$here/control-flow-models.mjs" "$tmp/json"
rm -rf "$outdir"
for json in "$tmp"/json/*.json; do
  name=$(basename "$json" .json)
  args=$(cat "$tmp/json/$name.args")
  flatc -b -o "$tmp/bin" "$root/runtime/model/tflite.fbs" "$json"
  mkdir -p "$outdir/$name"
  cp "$tmp/bin/$name.tflite" "$outdir/$name/model.tflite"
  if [ "$args" = "--no-reference" ]; then
    echo "$prog: $name (model only)"
    continue
  fi
  made_by=tflite-peer
  case "$args" in
    --litert*)
      # TFLite 2.9 cannot run it (STABLEHLO_COMPOSITE): LiteRT 2.5 is the reference, from the same PRNG.
      made_by="LiteRT 2.5"
      # shellcheck disable=SC2086
      node "$litert/ref-run.mjs" "$tmp/bin/$name.tflite" --seed 0 ${args#--litert} --out "$tmp/out/$name" --quiet \
          > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "LiteRT failed on $name"; } ;;
    *)
      # shellcheck disable=SC2086
      "$peer" "$tmp/bin/$name.tflite" --xnnpack off --threads 1 --seed 0 $args --out "$tmp/out/$name" --quiet \
          > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "tflite-peer failed on $name"; } ;;
  esac
  cp "$tmp/out/$name"/*.npy "$outdir/$name/"
  node "$here/case-meta.mjs" "$tmp/out/$name/meta.json" "$outdir/$name/meta.json" "$name" \
      "tools/make-control-flow-cases.sh (tools/control-flow-models.mjs, flatc, $made_by)"
  echo "$prog: $name"
done
