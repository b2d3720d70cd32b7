#!/usr/bin/env bash
# fetch-tflite-c.sh - fetch TFLite 2.9's C headers and Google's prebuilt libtensorflowlite_c.so from the
# npm package tfjs-tflite-node@0.0.2 (pinned, sha256-checked), for baton's TFLite C API library
# (runtime/compat/tflite_c), which is built against those headers, and for its tests, which compare it
# with Google's library. Nothing of it is ever committed.
#
# usage: tools/fetch-tflite-c.sh [DIR]    (default ${XDG_CACHE_HOME:-~/.cache}/baton/tflite-c-2.9)
#
# Prints DIR. Afterwards DIR/include/tensorflow/lite/c/{c_api.h,c_api_types.h,common.h}, Google's
# DIR/lib/libtensorflowlite_c.so and DIR/lib/libexternal_delegate_obj.so (TFLite's external-delegate
# wrapper, which the package's Node addon links) and the addon's source DIR/node-addon/ (binding.gyp,
# binding/node_tflite_binding.cc, dist/) exist: the tests use them as a client of TFLite's C API written
# by Google. Safe to run again: a complete DIR is left as it is.
set -euo pipefail

prog=fetch-tflite-c
package=tfjs-tflite-node@0.0.2
tarball=tfjs-tflite-node-0.0.2.tgz
tarball_sha256=3be1632328a76a2475e5b6833253763c802c859433becb4d879ee1860e3b5284
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/tflite-c-2.9}

case "${1:-}" in -h|--help) sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;; esac
die() { echo "$prog: error: $*" >&2; exit 1; }

if [ -f "$dir/include/tensorflow/lite/c/c_api.h" ] && [ -f "$dir/lib/libtensorflowlite_c.so" ] &&
   [ -f "$dir/lib/libexternal_delegate_obj.so" ] && [ -f "$dir/node-addon/binding/node_tflite_binding.cc" ]; then
  echo "$dir"
  exit 0
fi
command -v npm >/dev/null || die "npm is needed (tools/setup.sh installs it)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$package" >/dev/null 2>"$tmp/npm.log") || { cat "$tmp/npm.log" >&2; die "npm pack $package failed"; }
[ -f "$tmp/$tarball" ] || die "npm pack did not write $tarball"
got=$(sha256sum "$tmp/$tarball" | cut -d' ' -f1)
[ "$got" = "$tarball_sha256" ] || die "$tarball: sha256 $got, expected $tarball_sha256"
tar -xzf "$tmp/$tarball" -C "$tmp" package/cc_deps/include package/cc_deps/linux_amd64/libtensorflowlite_c.so \
  package/cc_deps/linux_amd64/libexternal_delegate_obj.so package/binding.gyp package/binding package/dist package/package.json
mkdir -p "$dir.new/lib" "$dir.new/node-addon"
cp -r "$tmp/package/cc_deps/include" "$dir.new/include"
cp "$tmp/package/cc_deps/linux_amd64/libtensorflowlite_c.so" "$tmp/package/cc_deps/linux_amd64/libexternal_delegate_obj.so" "$dir.new/lib/"
cp -r "$tmp/package/binding.gyp" "$tmp/package/binding" "$tmp/package/dist" "$tmp/package/package.json" "$dir.new/node-addon/"
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "$dir"
