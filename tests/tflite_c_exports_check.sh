#!/usr/bin/env bash
# baton's libtensorflowlite_c.so exports every function Google's TFLite 2.9 C library exports, under
# the same version node, and has its SONAME, so a program linked against Google's runs against baton's.
# usage: tests/tflite_c_exports_check.sh BATON_LIB GOOGLE_LIB
set -euo pipefail
ours=$1 google=$2
exports() { nm -D --defined-only "$1" | awk '$3 ~ /^TfLite/ {print $3}' | sort; }
missing=$(comm -23 <(exports "$google") <(exports "$ours"))
if [ -n "$missing" ]; then
  echo "missing from $ours:"
  echo "$missing"
  exit 1
fi
soname() { readelf -d "$1" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p'; }
[ "$(soname "$ours")" = "$(soname "$google")" ] || { echo "SONAME $(soname "$ours") differs from $(soname "$google")"; exit 1; }
echo "$(exports "$google" | wc -l) exports of Google's library all present; SONAME $(soname "$ours")"
