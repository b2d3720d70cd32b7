#!/usr/bin/env bash
# Google's own client of TFLite's C API, used with baton's libtensorflowlite_c.so: the Node addon of npm
# tfjs-tflite-node@0.0.2 (binding/node_tflite_binding.cc, kept by tools/fetch-tflite-c.sh with Google's
# library and TFLite's external-delegate wrapper) is compiled twice from its unchanged source, once linked
# with Google's TFLite 2.9 library and once with baton's, each with the wrapper, as its binding.gyp links
# it. Then its JavaScript API (run-model.cjs) runs real models through both on the same seeded inputs:
# integer outputs bit for bit, float outputs within 1e-5 of the largest value (compare.cjs). Last, its
# `delegate` option: TFLite's external-delegate wrapper around our test delegate
# (tests/plugins/tflite_test_delegate.cc, which computes float ADD and MUL) runs the delegate's kernel on
# both libraries, with the same outputs as without it.
#
# The addon is compiled with g++ directly rather than node-gyp: node-gyp would download Node's headers
# from nodejs.org, and this machine has them (/usr/include/node: nodejs, or Debian's libnode-dev, which
# tools/setup.sh installs where they are missing). node-addon-api (the headers the addon includes) comes
# from the npm registry, pinned and sha256-checked, into the same cache.
#
# usage: tests/node-addon/check.sh BATON_LIB TFLITE_C_DIR TEST_DELEGATE PLUGIN_DIR...   (meson passes them)
# Environment: BATON_MODEL_CACHE (models); BATON_REQUIRE_MODELS=1 turns anything missing into a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ours=$1 tflite_c_dir=$2 test_delegate=$3
shift 3
plugin_path=$(IFS=:; echo "$*")
models=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/baton
skip() {
  if [ -n "${BATON_REQUIRE_MODELS:-}" ]; then echo "FAIL: $*"; exit 1; fi
  echo "skipped: $*"
  exit 77
}
binding=$tflite_c_dir/node-addon/binding/node_tflite_binding.cc
[ -f "$binding" ] || skip "$binding is missing (tools/fetch-tflite-c.sh fetches it)"
node_include=
for d in "$(dirname "$(command -v node)")/../include/node" /usr/include/node /usr/include/nodejs/src; do
  [ -f "$d/node_api.h" ] && { node_include=$d; break; }
done
[ -n "$node_include" ] || skip "Node's headers (node_api.h) are not installed (Debian: libnode-dev)"

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-node-addon.XXXXXX")
trap 'rm -rf "$work"' EXIT

# node-addon-api 4.3.0, as the package's dependencies name it.
napi=$cache/node-addon-api-4.3.0
if [ ! -f "$napi/napi.h" ]; then
  (cd "$work" && npm pack --silent node-addon-api@4.3.0 >/dev/null 2>"$work/npm.log") || { cat "$work/npm.log"; skip "npm pack node-addon-api@4.3.0 failed"; }
  got=$(sha256sum "$work/node-addon-api-4.3.0.tgz" | cut -d' ' -f1)
  [ "$got" = 3760f2d172ef44b950ae8d3e2f932ca97f28ea8d5cc5f717451ebffd771f5cd1 ] || { echo "FAIL: node-addon-api-4.3.0.tgz: sha256 $got"; exit 1; }
  tar -xzf "$work/node-addon-api-4.3.0.tgz" -C "$work"
  mkdir -p "$napi.new" && cp "$work"/package/*.h "$napi.new/" && rm -rf "$napi" && mv "$napi.new" "$napi"
fi

# build NAME LIBDIR: the addon linked with LIBDIR/libtensorflowlite_c.so and the wrapper, found at run time
# through its rpath (as binding.gyp's -rpath), in $work/NAME.
build() {
  mkdir -p "$work/$1"
  g++ -std=c++17 -O1 -shared -fPIC -fexceptions -DNAPI_CPP_EXCEPTIONS -DNAPI_VERSION=8 -DBUILDING_NODE_EXTENSION \
    -I"$node_include" -I"$napi" -I"$tflite_c_dir/include" "$binding" -o "$work/$1/node_tflite_binding.node" \
    -L"$2" -ltensorflowlite_c "$tflite_c_dir/lib/libexternal_delegate_obj.so" \
    -Wl,-rpath,"$2" -Wl,-rpath,"$tflite_c_dir/lib" 2>"$work/$1.log" || { cat "$work/$1.log"; echo "FAIL: building the addon against $2"; exit 1; }
}
[ "$(basename "$ours")" = libtensorflowlite_c.so ] || { echo "FAIL: $ours is not named libtensorflowlite_c.so"; exit 1; }
ours_dir=$(cd "$(dirname "$ours")" && pwd)
build google "$tflite_c_dir/lib"
build baton "$ours_dir"
# Which library each addon runs: its own, not the other's.
# (ldd's whole output first: `ldd | grep -q` under pipefail fails when grep stops reading before ldd ends.)
grep -q "$ours_dir/libtensorflowlite_c.so" <<< "$(ldd "$work/baton/node_tflite_binding.node")" || { echo "FAIL: the baton addon does not load baton's library"; exit 1; }

# baton's plugins from the build tree; its crash journal in the scratch folder, not the user's.
run() {  # run NAME MODEL OUT [ARGS...]
  local name=$1 model=$2 out=$3
  shift 3
  XDG_STATE_HOME=$work/state BATON_PLUGIN_PATH=$plugin_path node "$here/run-model.cjs" "$work/$name/node_tflite_binding.node" \
    "$model" "$out" "$@" >"$work/run.log" 2>&1 || { cat "$work/run.log"; echo "FAIL $(basename "$model"): $name's library failed"; return 1; }
}

fail=0
checked=0
for name in face_detection_short_range hand_landmark_lite pose_detection palm_detection_lite model_1 model_2 \
            mobilenet_ssd_v2_coco_quant_postprocess; do
  model=$models/$name.tflite
  [ -f "$model" ] || skip "model $model is missing"
  run google "$model" "$work/$name-google" --threads 4 || { fail=1; continue; }
  run baton "$model" "$work/$name-baton" --threads 4 || { fail=1; continue; }
  if node "$here/compare.cjs" "$work/$name-google" "$work/$name-baton" 1e-5; then
    echo "ok $name"
  else
    echo "FAIL $name"
    fail=1
  fi
  checked=$((checked + 1))
done

# The delegate option, on a model whose float ADDs our test delegate takes.
model=$models/palm_detection_lite.tflite
# The addon passes option strings to the wrapper through copies that die before the delegate reads them
# (fill_delegate_options iterates by value): only values short enough to live inside those copies (15
# bytes) arrive intact, so the count file is a short name relative to the folder it runs in.
for lib in google baton; do
  (cd "$work" && run "$lib" "$model" "$work/delegate-$lib" --threads 1 --delegate "$test_delegate" --option count_file="c-$lib") ||
    { fail=1; continue; }
  invokes=$(cat "$work/c-$lib" 2>/dev/null | wc -l)
  if [ "$invokes" -lt 1 ]; then
    echo "FAIL delegate option ($lib's library): the delegate's kernel never ran"
    fail=1
  elif node "$here/compare.cjs" "$work/palm_detection_lite-google" "$work/delegate-$lib" 1e-5; then
    echo "ok delegate option ($lib's library): $invokes kernel invokes, outputs as without it"
  else
    echo "FAIL delegate option ($lib's library): outputs differ from the run without it"
    fail=1
  fi
done
echo "$checked models compared"
exit $fail
