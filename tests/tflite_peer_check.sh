#!/usr/bin/env bash
# A program written against TFLite's C API, used unchanged with baton's libtensorflowlite_c.so:
# ../shared/reference/tflite-native/tflite-peer (not ours: run from ../shared, skipped when that is
# absent) runs real models once with Google's TFLite 2.9 library and once with baton's (--lib), on the
# same seeded inputs; outputs must agree: float outputs within 1e-5 of the largest reference value,
# integer outputs bit for bit.
#
# usage: tests/tflite_peer_check.sh BATON_LIB GOOGLE_LIB PLUGIN_DIR...   (meson passes them)
# Environment: BATON_MODEL_CACHE (models), BATON_REQUIRE_MODELS=1 turns a missing model into a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shared=$here/../../shared/reference/tflite-native
ours=$1 google=$2
shift 2
plugin_path=$(IFS=:; echo "$*")
if [ ! -f "$shared/tflite-peer.c" ]; then
  echo "skipped: ../shared/reference/tflite-native is not here (the check runs the harness from there)"
  exit 77
fi
models=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
work=$(mktemp -d "${TMPDIR:-/tmp}/baton-peer-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
peer_dir=${XDG_CACHE_HOME:-$HOME/.cache}/baton/tflite-peer
[ -x "$peer_dir/tflite-peer" ] || "$shared/build.sh" "$peer_dir" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
peer=$peer_dir/tflite-peer

fail=0
checked=0
for name in face_detection_short_range face_detection_full_range hand_landmark_lite palm_detection_lite \
            pose_detection model_1 model_2 mobilenet_ssd_v2_coco_quant_postprocess; do
  model=$models/$name.tflite
  if [ ! -f "$model" ]; then
    [ -n "${BATON_REQUIRE_MODELS:-}" ] && { echo "missing model $model"; exit 1; }
    echo "skip $name: not in $models"
    continue
  fi
  "$peer" "$model" --lib "$google" --xnnpack off --seed 0 --out "$work/$name-google" --quiet >"$work/g.log" 2>&1 \
    || { cat "$work/g.log"; echo "FAIL $name: Google's library failed"; fail=1; continue; }
  # baton's crash journal in the scratch folder, not the user's state folder.
  XDG_STATE_HOME=$work/state BATON_PLUGIN_PATH=$plugin_path "$peer" "$model" --lib "$ours" --xnnpack off --seed 0 --out "$work/$name-baton" \
    --quiet >"$work/b.log" 2>&1 || { cat "$work/b.log"; echo "FAIL $name: baton's library failed"; fail=1; continue; }
  if ! node "$here/compare_npy.mjs" "$work/$name-google" "$work/$name-baton" 1e-5; then
    echo "FAIL $name"
    fail=1
  fi
  checked=$((checked + 1))
done
echo "$checked models compared"
[ "$checked" -gt 0 ] || { echo "skipped: no model in $models"; exit 77; }
exit $fail
