#!/usr/bin/env bash
# make-cases.sh - regenerate one set of test cases in tests/data/: our own small models, with the outputs a
# reference runtime computes for them.
#
# usage: tools/make-cases.sh SET
#        tools/make-cases.sh SET --help    what the set holds (the header of tools/make-SET-cases.sh)
#
#   SET             tests/data/     generator (tools/)          reference
#   op              op-cases        op-models.mjs               TFLite 2.9 (tflite-peer); LiteRT 2.5 for the
#                                                               cases the generator's litert.json lists
#   quant-op        quant-ops       quant-op-models.mjs         TFLite 2.9 (tflite-peer)
#   control-flow    control-flow    control-flow-models.mjs     TFLite 2.9 (tflite-peer); LiteRT 2.5 for the
#                                                               cases marked --litert
#   mediapipe-pool  mediapipe-pool  mediapipe-pool-models.mjs   LiteRT 2.5
#   string          string-cases    string-models.mjs           TFLite 2.9 (tools/tflite-strings.c)
#   transformer     transformer     transformer-models.mjs      TFLite 2.9 (tflite-peer)
#   detector        detector        detector-models.mjs         TFLite 2.9 (tflite-peer)
#
# tools/make-SET-cases.sh runs the same. A developer tool, run rarely; its outputs are committed as test
# data and the tests never run it. The generator (on the library tools/testgen/) writes each case NAME as
# flatc JSON, NAME.json, with NAME.args (the reference's arguments: an --int-range, a --seed, --inputs
# FILES; "--no-reference" for a model without outputs, "--litert ..." for a case LiteRT computes) and
# NAME.in_I.npy (the inputs it gives) where it has them; flatc turns the JSON into .tflite with baton's
# copy of the schema (runtime/model/tflite.fbs). The reference runs each model with one thread: tflite-peer with Google's
# prebuilt libtensorflowlite_c.so (TFLite 2.9.0, builtin kernels, --xnnpack off), or the LiteRT reference
# runner (LiteRT.js 2.5, its XNNPACK delegate always applied), on the inputs the case gives or else on the
# runner's PRNG inputs (seed 0 unless the case picks another). Each case folder gets
#   model.tflite  in_I.npy  out_I.npy  meta.json (tools/case-meta.mjs: case, generator, runtime and its
#                                                 version, inputs and outputs; no paths or timings)
# The string set's cases are run by tools/tflite-strings.c instead, with their inputs as the generator
# lists them in NAME.inputs (see tools/make-string-cases.sh). The case folders are remade; files beside
# them (a README.md) stay.
#
# Environment: TFLITE_PEER (default ~/.cache/baton/tflite-peer/tflite-peer if there, else
# /tmp/tflite-native/tflite-peer, built by ../shared/reference/tflite-native/build.sh when missing);
# LITERT_REF (default ../shared/reference/litert-js, set up with its setup.sh).
# Needs: node >= 20, flatc, bash, coreutils; for the op and string sets gcc and TFLite 2.9's C headers
# and library (tools/fetch-tflite-c.sh fetches them when missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
set_name=${1:-}
prog=make-$set_name-cases

die() { echo "$prog: error: $*" >&2; exit 1; }
help() { sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "$1"; }

# What differs between the sets. reference: how a case's outputs are computed (peer: tflite-peer, LiteRT
# for a case that asks for it; litert: LiteRT; strings: tools/tflite-strings.c). tool: the C program of
# tools/ the set builds. given: what meta.json's inputs_from says for inputs the generator gives (empty:
# what the reference says).
case "$set_name" in
  op)             folder=op-cases       models=op-models.mjs             reference=peer    tool=tflite-invokes
                  given="given by tools/op-models.mjs" ;;
  quant-op)       folder=quant-ops      models=quant-op-models.mjs       reference=peer    tool=""  given="" ;;
  control-flow)   folder=control-flow   models=control-flow-models.mjs   reference=peer    tool=""  given="" ;;
  mediapipe-pool) folder=mediapipe-pool models=mediapipe-pool-models.mjs reference=litert  tool=""
                  given="tools/mediapipe-pool-models.mjs" ;;
  string)         folder=string-cases   models=string-models.mjs         reference=strings tool=tflite-strings
                  given="" ;;
  transformer)    folder=transformer    models=transformer-models.mjs    reference=peer    tool=""  given="" ;;
  detector)       folder=detector       models=detector-models.mjs       reference=peer    tool=""  given="" ;;
  -h|--help)      help "${BASH_SOURCE[0]}"; exit 0 ;;
  *)              prog=make-cases; die "usage: tools/make-cases.sh op|quant-op|control-flow|mediapipe-pool|string|transformer|detector" ;;
esac
case "${2:-}" in -h|--help) help "$here/make-$set_name-cases.sh"; exit 0 ;; esac
[ $# -eq 1 ] || die "usage: tools/make-cases.sh $set_name"
outdir=$root/tests/data/$folder

command -v node >/dev/null || die "node (>= 20) is needed"
command -v flatc >/dev/null || die "flatc is needed (Debian: flatbuffers-compiler)"
if [ "$reference" = peer ]; then
  peer=${TFLITE_PEER:-$HOME/.cache/baton/tflite-peer/tflite-peer}
  [ -n "${TFLITE_PEER:-}" ] || [ -x "$peer" ] || peer=/tmp/tflite-native/tflite-peer
  if [ ! -x "$peer" ]; then
    build=$root/../shared/reference/tflite-native/build.sh
    [ -x "$build" ] || die "no tflite-peer at $peer and no $build to build it"
    "$build" "$(dirname "$peer")"
  fi
fi
if [ "$reference" != strings ]; then
  litert=${LITERT_REF:-$root/../shared/reference/litert-js}
  [ -f "$litert/ref-run.mjs" ] || die "no LiteRT reference runner at $litert (set LITERT_REF)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "$tool" ]; then
  tflite_c=$("$here/fetch-tflite-c.sh")
  gcc -std=c11 -O2 -Wall -I"$tflite_c/include" -o "$tmp/$tool" "$here/$tool.c" \
      -L"$tflite_c/lib" -ltensorflowlite_c -Wl,-rpath,"$tflite_c/lib"
fi
node "$here/$models" "$tmp/json"
find "$outdir" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} + 2>/dev/null || true
mkdir -p "$outdir"

# The op set's version ranges: which versions of each op TFLite 2.9 (a model of each op at versions 1..16
# loads or is refused by the op resolver) and LiteRT 2.5 (tools/probe-litert-versions.mjs) register.
op_versions() {
  node "$here/op-models.mjs" --versions "$tmp/versions"
  local json probe
  for json in "$tmp"/versions/*.json; do
    probe=$(basename "$json" .json)
    flatc -b -o "$tmp/vbin" "$root/runtime/model/tflite.fbs" "$json"
    # shellcheck disable=SC2046
    if "$peer" "$tmp/vbin/$probe.tflite" --xnnpack off --threads 1 --seed 0 $(cat "${json%.json}.args") \
         --quiet >/dev/null 2>&1; then
      echo "${probe#v}"
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
  # The ranges current LiteRT registers (it keeps TFLite 2.9's and adds versions and ops); the pack
  # declares those (tests/op_cases_test.cc checks it).
  node "$here/probe-litert-versions.mjs" "$litert" "$tmp/vbin" --from "$outdir/versions.json" \
      > "$outdir/versions-litert.json" 2> "$tmp/probe-litert.log" || { cat "$tmp/probe-litert.log" >&2; die "probing LiteRT failed"; }
}

# The op set's cases whose later invokes give other outputs (invokes.json, the random ops'): case DEST
# runs 3 times in one interpreter of TFLite 2.9 (tools/tflite-invokes.c), which writes out_I.invoke_K.npy
# for invokes 2 and 3; invoke 1 must equal out_I.npy.
op_invokes() {
  local dest=$1 first
  # shellcheck disable=SC2046
  "$tmp/tflite-invokes" "$dest/model.tflite" 3 "$dest" $(ls "$dest"/in_*.npy 2>/dev/null | sort -V)
  for first in "$dest"/out_*.invoke_1.npy; do
    node --input-type=module -e '
import fs from "node:fs";
const data = (f) => { const b = fs.readFileSync(f); return b.subarray(10 + b.readUInt16LE(8)); };
process.exit(data(process.argv[1]).equals(data(process.argv[2])) ? 0 : 1);
' "$first" "${first%.invoke_1.npy}.npy" || die "$(basename "$dest"): tflite-invokes' first invoke differs from tflite-peer's"
    rm "$first"
  done
}

# Makes case NAME of SRC (a folder of the generator's output) in DEST: model.tflite, then its inputs and
# outputs and meta.json from the reference, or sets model_only for a case marked --no-reference. A string
# case gets its input files (NAME.inputs lists them), whose paths in SRC it leaves in `inputs`, and no
# outputs (the caller runs tflite-strings).
make_case() {
  local src=$1 dest=$3 args="" seed="--seed 0" runner=$reference made_by=tflite-peer from="" file
  name=$2 model_only=0
  flatc -b -o "$src/bin" "$root/runtime/model/tflite.fbs" "$src/$name.json"
  mkdir -p "$dest"
  cp "$src/bin/$name.tflite" "$dest/model.tflite"
  if [ "$reference" = strings ]; then
    inputs=()
    while IFS= read -r file; do
      [ -n "$file" ] || continue
      inputs+=("$src/$file")
      cp "$src/$file" "$dest/${file#"$name".}"
    done < "$src/$name.inputs"
    return
  fi
  [ -f "$src/$name.args" ] && args=$(cat "$src/$name.args")
  if [ "$args" = --no-reference ]; then
    model_only=1
    return
  fi
  case "$args" in --litert*) runner=litert; args=${args#--litert} ;; esac
  if [ -f "$src/litert.json" ] && grep -qF "\"$name\"" "$src/litert.json"; then runner=litert; fi
  case "$args" in *--seed*) seed="" ;; esac  # the case picks its own
  # Inputs the generator gives: named in the arguments, else NAME.in_I.npy beside the JSON.
  case "$args" in
    *--inputs*) from=$given ;;
    *) if compgen -G "$src/$name.in_*.npy" >/dev/null; then args="$args --inputs $(echo "$src/$name".in_*.npy)"; from=$given; fi ;;
  esac
  if [ "$runner" = litert ]; then
    # Not run by TFLite 2.9, or not as current converters mean it: LiteRT 2.5 computes the outputs (its
    # runner feeds the same PRNG's inputs as tflite-peer).
    made_by="LiteRT 2.5"
    # shellcheck disable=SC2086
    node "$litert/ref-run.mjs" "$src/bin/$name.tflite" --threads 1 $seed $args --out "$tmp/out/$name" --quiet \
        > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "LiteRT failed on $name"; }
  else
    # shellcheck disable=SC2086
    "$peer" "$src/bin/$name.tflite" --xnnpack off --threads 1 $seed $args --out "$tmp/out/$name" --quiet \
        > "$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log" >&2; die "tflite-peer failed on $name"; }
  fi
  cp "$tmp/out/$name"/*.npy "$dest/"  # in_I.npy (none for a model without inputs), out_I.npy
  node "$here/case-meta.mjs" "$tmp/out/$name/meta.json" "$dest/meta.json" "$name" \
      "tools/make-$set_name-cases.sh (tools/$models, flatc, $made_by)" "$from"
}

if [ "$set_name" = op ]; then
  cp "$tmp/json/carry.json" "$outdir/carry.json"  # the stateful ops' single-node cases and their chains
  cp "$tmp/json/resized.json" "$outdir/resized.json"  # cases that share a model, with other input shapes
  cp "$tmp/json/invokes.json" "$outdir/invokes.json"  # the cases run several times
  op_versions
fi

for json in "$tmp"/json/*.json; do
  name=$(basename "$json" .json)
  case "$name" in carry|resized|invokes|litert) continue ;; esac  # the op set's lists, not cases
  make_case "$tmp/json" "$name" "$outdir/$name"
  if [ "$model_only" = 1 ]; then
    echo "$prog: $name (model only)"
    continue
  fi
  if [ "$reference" = strings ]; then
    "$tmp/tflite-strings" "$outdir/$name/model.tflite" "$outdir/$name" ${inputs[@]+"${inputs[@]}"} \
        || die "TFLite failed on $name"
  fi
  if [ "$set_name" = op ] && grep -qF "\"$name\"" "$tmp/json/invokes.json"; then op_invokes "$outdir/$name"; fi
  echo "$prog: $name"
done

# The string set: what TFLite refuses (the generator's refused/), with TFLite's first error line (the test
# expects baton to refuse them too).
if [ "$set_name" = string ]; then
  for json in "$tmp"/json/refused/*.json; do
    name=$(basename "$json" .json)
    case_dir=$outdir/refused/$name
    make_case "$tmp/json/refused" "$name" "$case_dir"
    if "$tmp/tflite-strings" "$case_dir/model.tflite" "$tmp" ${inputs[@]+"${inputs[@]}"} 2> "$tmp/err"; then
      die "TFLite ran $name, which the models say it refuses"
    fi
    grep -m1 '^ERROR' "$tmp/err" | sed 's|tensorflow/lite/kernels/[a-z_]*\.cc:[0-9]* ||' > "$case_dir/tflite_error.txt"
    echo "$prog: refused/$name: $(cat "$case_dir/tflite_error.txt")"
  done
fi
echo "$prog: done; $(find "$outdir" -mindepth 1 -maxdepth 1 -type d ! -name refused | wc -l) cases," \
     "$(du -sh "$outdir" | cut -f1) in $outdir"
