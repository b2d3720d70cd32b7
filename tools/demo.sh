#!/usr/bin/env bash
# The main job: build baton, show the plugins it discovers, and run MediaPipe's face detector on a
# portrait (skimage's public-domain astronaut photo, from Debian's python3-skimage package).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup.sh
cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
tools/fetch-models.sh "$cache" face_detection_short_range >/dev/null
image=$(tools/fetch-images.sh "$cache")
if [ ! -f build/build.ninja ]; then meson setup build >/dev/null; fi
ninja -C build -j "$(nproc)" >/dev/null

model=$cache/face_detection_short_range.tflite
echo "== baton plugins"
build/tools/baton/baton plugins
echo
echo "== baton run on $image (outputs in build/demo-out)"
build/tools/baton/baton run "$model" --image "$image" --image-range -1:1 --output-dir build/demo-out
echo
echo "== face detection on the portrait"
build/tools/examples/baton-face-detect "$model" "$image"
