#!/usr/bin/env bash
# make-string-cases.sh - regenerate tests/data/string-cases/: small models whose tensors hold strings
# (every op TFLite 2.9 runs on strings), with the outputs the native TensorFlow Lite 2.9 library computes.
#
# usage: tools/make-string-cases.sh
#
# A developer tool, run rarely; its outputs are committed as test data and the tests never run it.
# tools/string-models.mjs writes each model as flatc JSON with its input files; flatc turns them into
# .tflite with baton's copy of the schema (runtime/model/tflite.fbs); tools/tflite-strings.c runs each
# with Google's prebuilt libtensorflowlite_c.so (TFLite 2.9.0, builtin kernels, 1 thread). Each case
# directory gets
#   model.tflite  in_I.str or in_I.npy  out_I.str or out_I.npy
# and out_I.second.str or .npy where a second invoke with the same inputs gives another value (state
# kept between invokes: a hash table's size before its import).
# where a .str file is a string tensor's value as TFLite's packed buffer (an int32 count, count + 1 int32
# offsets, the bytes) and a .npy file a numeric tensor's. tests/string_ops_test.cc runs every case with
# the builtin pack and compares each output byte for byte. refused/NAME holds the models TFLite refuses
# (string shapes and ops its kernels do not take), with TFLite's error in tflite_error.txt.
#
# Needs: node >= 20, flatc, gcc, bash; TFLite 2.9's C headers and library (tools/fetch-tflite-c.sh
# fetches them when missing).
set -euo pipefail

prog=make-string-cases
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
outdir=$root/tests/data/string-cases

case "${1:-}" in -h|--help) sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;; esac
die() { echo "$prog: error: $*" >&2; exit 1; }
command -v node >/dev/null || die "node (>= 20) is needed"
command -v flatc >/dev/null || die "flatc is needed (Debian: flatbuffers-compiler)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tflite_c=$("$here/fetch-tflite-c.sh")
gcc -std=c11 -O2 -Wall -I"$tflite_c/include" -o "$tmp/tflite-strings" "$here/tflite-strings.c" \
    -L"$tflite_c/lib" -ltensorflowlite_c -Wl,-rpath,"$tflite_c/lib"
node "$here/string-models.mjs" "$tmp/json"
rm -rf "$outdir"
mkdir -p "$outdir"
# Places case NAME of SRC (a folder of string-models.mjs's output) in DEST: its model and input files,
# whose paths (in SRC) it leaves in `inputs`.
place_case() {
  local src=$1 name=$2 dest=$3 file
  flatc -b -o "$src/bin" "$root/runtime/model/tflite.fbs" "$src/$name.json"
  mkdir -p "$dest"
  cp "$src/bin/$name.tflite" "$dest/model.tflite"
  inputs=()
  while IFS= read -r file; do
    [ -n "$file" ] || continue
    inputs+=("$src/$file")
    cp "$src/$file" "$dest/${file#"$name".}"
  done < "$src/$name.inputs"
}

for json in "$tmp"/json/*.json; do
  name=$(basename "$json" .json)
  place_case "$tmp/json" "$name" "$outdir/$name"
  "$tmp/tflite-strings" "$outdir/$name/model.tflite" "$outdir/$name" ${inputs[@]+"${inputs[@]}"} \
      || die "TFLite failed on $name"
  echo "$prog: $name"
done
# What TFLite refuses: the model and inputs, and TFLite's first error line (the test expects baton to
# refuse them too).
for json in "$tmp"/json/refused/*.json; do
  name=$(basename "$json" .json)
  case_dir=$outdir/refused/$name
  place_case "$tmp/json/refused" "$name" "$case_dir"
  if "$tmp/tflite-strings" "$case_dir/model.tflite" "$tmp" ${inputs[@]+"${inputs[@]}"} 2> "$tmp/err"; then
    die "TFLite ran $name, which the models say it refuses"
  fi
  grep -m1 '^ERROR' "$tmp/err" | sed 's|tensorflow/lite/kernels/[a-z_]*\.cc:[0-9]* ||' > "$case_dir/tflite_error.txt"
  echo "$prog: refused/$name: $(cat "$case_dir/tflite_error.txt")"
done
echo "$prog: done; $(find "$outdir" -mindepth 1 -maxdepth 1 -type d ! -name refused | wc -l) cases in $outdir"
