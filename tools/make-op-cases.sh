#!/usr/bin/env bash
# make-op-cases.sh - regenerate tests/data/op-cases/: one-op models of the builtin pack's comparison,
# logic, selection, shape, movement, reduction and math ops, with the outputs the native TensorFlow Lite
# 2.9 library computes for them, and the version range the library registers for each op.
#
# usage: tools/make-op-cases.sh
#
# A developer tool, run rarely; its outputs are committed as test data and the tests never run it.
# tools/op-models.mjs writes each model as flatc JSON (our own small models: each op in the types TFLite's
# kernel takes, with the options that change the result); flatc turns them into .tflite with baton's
# copy of the schema (runtime/model/tflite.fbs); tflite-peer runs each with Google's prebuilt
# libtensorflowlite_c.so (TFLite 2.9.0, builtin kernels, --xnnpack off, 1 thread) on the oracle's
# PRNG inputs (seed 0 unless the case picks another, narrowed by its --int-range where it has one; a
# few cases give their inputs as .npy). Each case directory gets
#   model.tflite  in_I.npy  out_I.npy  meta.json (op, types, library version; no paths or timings)
# carry.json pairs each stateful op's single-node case with its chain case (the node repeated over one
# shared state tensor), resized.json each case with computed axes or sizes whose model also runs with
# other input shapes with that case (NAME_resized: its inputs are resized, by the peer as by the test),
# litert.json lists the cases TFLite 2.9 does not run, or not as current converters mean them (int8
# FULLY_CONNECTED with per-channel weights, whose scales 2.9 does not read): LiteRT 2.5
# (../shared/reference/litert-js, or $LITERT_REF) computes their outputs from the same PRNG's inputs;
# invokes.json lists the cases whose later invokes give other outputs (the random
# ops'): tools/tflite-invokes.c runs each of those 3 times in one interpreter of the same library and
# writes out_I.invoke_K.npy for invokes 2 and 3 (invoke 1 must equal out_I.npy); versions.json lists, per
# op, the versions the library accepts (a model of each op at versions 1..16
# either loads or is refused by the op resolver), versions-litert.json the same for LiteRT 2.5
# (tools/probe-litert-versions.mjs). tests/op_cases_test.cc runs every case with the
# builtin pack (float outputs within 1e-5 of the largest reference magnitude, the rest bit for bit) and
# checks the pack declares those version ranges.
#
# Environment: TFLITE_PEER (default /tmp/tflite-native/tflite-peer; built by
# ../shared/reference/tflite-native/build.sh when missing).
# Needs: node >= 20, flatc, gcc, bash, coreutils; TFLite 2.9's C headers and library
# (tools/fetch-tflite-c.sh fetches them when missing).
set -euo pipefail

prog=make-op-cases
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
outdir=$root/tests/data/op-cases
peer=${TFLITE_PEER:-/tmp/tflite-native/tflite-peer}
litert=${LITERT_REF:-$root/../shared/reference/litert-js}

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
tflite_c=$("$here/fetch-tflite-c.sh")
gcc -std=c11 -O2 -Wall -I"$tflite_c/include" -o "$tmp/tflite-invokes" "$here/tflite-invokes.c" \
    -L"$tflite_c/lib" -ltensorflowlite_c -Wl,-rpath,"$tflite_c/lib"
node "$here/op-models.mjs" "$tmp/json"
node "$here/op-models.mjs" --versions "$tmp/versions"
rm -rf "$outdir"
mkdir -p "$outdir"
cp "$tmp/json/carry.json" "$outdir/carry.json"  # the stateful ops' single-node cases and their chains
cp "$tmp/json/resized.json" "$outdir/resized.json"  # cases that share a model, with other input shapes
cp "$tmp/json/invokes.json" "$outdir/invokes.json"  # the cases run several times

# Version ranges: the versions whose model the library loads.
for json in "$tmp"/versions/*.json; do
  name=$(basename "$json" .json)
  flatc -b -o "$tmp/vbin" "$root/runtime/model/tflite.fbs" "$json"
  # shellcheck disable=SC2046
  if "$peer" "$tmp/vbin/$name.tflite" --xnnpack off --threads 1 --seed 0 $(cat "${json%.json}.args") \
       --quiet >/dev/null 2>&1; then
    echo "${name#v}"
  fi
done | node --input-type=module -e '
import fs from "node:fs";
const ranges = {};
for (const line of fs.readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const at = line.lastIndexOf("_");
  const op = line.slice(0, at), v = Number(line.slice(at + 1));
  (ranges[op] ??= []).push(v);
}
const out = {};
for (const op of Object.keys(ranges).sort()) {
  const vs = ranges[op].sort((a, b) => a - b);
  out[op] = [vs[0], vs[vs.length - 1]];
  if (vs.length !== vs[vs.length - 1] - vs[0] + 1) throw new Error(`${op}: versions ${vs} are not one range`);
}
fs.writeFileSync(process.argv[1], JSON.stringify(out, null, 1) + "\n");
' "$outdir/versions.json"
# The ranges current LiteRT registers (it keeps TFLite 2.9's and adds versions and ops); the pack declares
# those (tests/op_cases_test.cc checks it).
node "$here/probe-litert-versions.mjs" "$litert" "$tmp/vbin" --from "$outdir/versions.json" \
    > "$outdir/versions-litert.json" 2> "$tmp/probe-litert.log" || { cat "$tmp/probe-litert.log" >&2; die "probing LiteRT failed"; }

for json in "$tmp"/json/*.json; do
  name=$(basename "$json" .json)
  case "$name" in carry|resized|invokes|litert) continue ;; esac
  flatc -b -o "$tmp/bin" "$root/runtime/model/tflite.fbs" "$json"
  args=$(cat "$tmp/json/$name.args")
  seed="--seed 0"
  case "$args" in *--seed*) seed="" ;; esac  # the case picks its own
  made_by=tflite-peer
  if grep -qF "\"$name\"" "$tmp/json/litert.json"; then
    made_by="LiteRT 2.5"
    # Not run by TFLite 2.9, or not as current converters mean it: LiteRT 2.5 computes the outputs (its
    # runner feeds the same PRNG's inputs as tflite-peer).
    # shellcheck disable=SC2086
    node "$litert/ref-run.mjs" "$tmp/bin/$name.tflite" $seed $args --out "$tmp/out/$name" --quiet \
        > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "LiteRT failed on $name"; }
  else
    # shellcheck disable=SC2086
    "$peer" "$tmp/bin/$name.tflite" --xnnpack off --threads 1 $seed $args \
        --out "$tmp/out/$name" --quiet > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "tflite-peer failed on $name"; }
  fi
  mkdir -p "$outdir/$name"
  cp "$tmp/bin/$name.tflite" "$outdir/$name/model.tflite"
  cp "$tmp/out/$name"/*.npy "$outdir/$name/"  # in_I.npy (none for a model without inputs), out_I.npy
  from=""
  case "$(cat "$tmp/json/$name.args")" in *--inputs*) from="given by tools/op-models.mjs" ;; esac
  node "$here/case-meta.mjs" "$tmp/out/$name/meta.json" "$outdir/$name/meta.json" "$name" \
      "tools/make-op-cases.sh (tools/op-models.mjs, flatc, $made_by)" "$from"
  if grep -qF "\"$name\"" "$tmp/json/invokes.json"; then
    # shellcheck disable=SC2046
    "$tmp/tflite-invokes" "$outdir/$name/model.tflite" 3 "$outdir/$name" $(ls "$outdir/$name"/in_*.npy 2>/dev/null | sort -V)
    for first in "$outdir/$name"/out_*.invoke_1.npy; do
      node --input-type=module -e '
import fs from "node:fs";
const data = (f) => { const b = fs.readFileSync(f); return b.subarray(10 + b.readUInt16LE(8)); };
process.exit(data(process.argv[1]).equals(data(process.argv[2])) ? 0 : 1);
' "$first" "${first%.invoke_1.npy}.npy" || die "$name: tflite-invokes' first invoke differs from tflite-peer's"
      rm "$first"
    done
  fi
  echo "$prog: $name"
done
echo "$prog: done; $(find "$outdir" -mindepth 1 -maxdepth 1 -type d | wc -l) cases, $(du -sh "$outdir" | cut -f1) in $outdir"
