#!/usr/bin/env bash
# gpu-check.sh - the vulkan delegate on a real GPU against the CPU chain, in one call on a machine that has
# a GPU and its Vulkan driver but nothing else baton needs (no Vulkan loader, no compiler, no network, maybe
# not Debian): everything travels in a bundle made here.
#
# usage: tools/gpu-check.sh bundle [DIR]   (here, after the release build in build/) DIR, default
#                                          build-gpu-check, gets baton installed from build/, every library
#                                          it and its plugins load as Debian 12 ships them (the Vulkan loader
#                                          from libvulkan1, glibc and its dynamic loader too), the models and
#                                          DIR/run.sh
#        DIR/run.sh [--device NAME] [--runs N] [--rounds N] [--threads N]
#                                          (on the GPU machine) for each model: the share of nodes vulkan
#                                          takes and its partitions, then `baton bench` with --delegate vulkan
#                                          (workgroups tuned on the device, and by the built-in rule; float16
#                                          and float32) and with the CPU chain (cpu, xnnpack), alternating
#                                          over the rounds; min and median of each, the CPU's median over
#                                          vulkan's, and vulkan's first load (its shaders compiled and its
#                                          workgroups timed)
#        tools/gpu-check.sh local [DIR]    bundle, then run it here on Mesa's lavapipe (--device llvmpipe,
#                                          --runs 3 --rounds 1): the check of the check, on any machine
#
# --device NAME picks the Vulkan device (a name's part or an index, as the delegate's `device` option);
# without it the delegate takes the first discrete GPU, as it does for a user. The models: MediaPipe's
# face_detection_full_range, hand_landmark_lite, selfie_segmentation and pose_landmark_lite (from the model
# cache, tools/fetch-models.sh), a keyword-spotting transformer and a ViT block made by
# tools/transformer-models.mjs --bench, and a YOLOX-style detector with its NMS made by
# tools/detector-models.mjs --bench.
# Needs (bundle): a built build/, meson, node and flatc, the model cache ($BATON_MODEL_CACHE, default
# ~/.cache/baton/models). Needs (run.sh): bash, coreutils, awk, sed, an x86-64 Linux with a Vulkan ICD.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
die() { echo "gpu-check: error: $*" >&2; exit 1; }

bundle() {
  local dir=$1 stage lib plugins f dep
  [ -x "$root/build/tools/baton/baton" ] || die "no build/ (run: meson setup build --buildtype=release && ninja -C build)"
  [ -f "$root/build/plugins/vulkan/libbaton_vulkan.so" ] || die "build/ has no vulkan plugin (libvulkan-dev and glslang-dev are needed)"
  local cache=${BATON_MODEL_CACHE:-$HOME/.cache/baton/models}
  rm -rf "$dir"
  mkdir -p "$dir/lib/sys" "$dir/models"
  dir=$(cd "$dir" && pwd)
  stage=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
  trap 'rm -rf "$stage"' RETURN
  meson install -C "$root/build" --destdir "$stage" --no-rebuild --quiet >/dev/null
  lib=$(dirname "$(find "$stage" -name 'libbaton.so.0' | head -1)")
  plugins=$lib/baton/plugins-1
  [ -d "$plugins" ] || die "the install under $stage has no baton/plugins-1"
  cp -a "$(find "$stage" -path '*/bin/baton')" "$dir/baton.bin"
  cp -a "$lib"/libbaton.so* "$dir/lib/"
  mkdir -p "$dir/lib/baton"
  cp -a "$plugins" "$dir/lib/baton/"
  # Every library the program and the plugins load, as this machine (Debian 12) has it, under its soname.
  for f in "$dir/baton.bin" "$plugins"/*.so "$plugins"/baton-vulkan-probe "$plugins"/baton-vulkan-glslang.module; do
    ldd "$f" | awk '/=> \// {print $1, $3} /^[ \t]*\/.*ld-linux/ {print "LOADER", $1}'
  done | sort -u | while read -r name dep; do
    case "$name" in
      LOADER) cp -L "$dep" "$dir/lib/sys/ld-linux-x86-64.so.2" ;;
      libbaton.so*) ;;
      *) cp -L "$dep" "$dir/lib/sys/$name" ;;
    esac
  done
  # The Vulkan loader, which the plugin opens on first use (plugins/vulkan/vk.h) rather than links.
  vulkan_loader=$(ldconfig -p | awk '/^[ \t]*libvulkan\.so\.1 .*x86-64/ {print $NF; exit}')
  [ -n "$vulkan_loader" ] || die "no Vulkan loader (libvulkan.so.1) here (Debian: libvulkan1)"
  cp -L "$vulkan_loader" "$dir/lib/sys/libvulkan.so.1"
  [ -f "$dir/lib/sys/ld-linux-x86-64.so.2" ] || die "no dynamic loader found for baton"
  for m in face_detection_full_range hand_landmark_lite selfie_segmentation pose_landmark_lite; do
    [ -f "$cache/$m.tflite" ] || die "$cache/$m.tflite is missing (run tools/fetch-models.sh)"
    cp "$cache/$m.tflite" "$dir/models/"
  done
  node "$root/tools/transformer-models.mjs" --bench "$stage/transformers" >/dev/null
  for m in bench_kws_transformer bench_vit_block; do
    flatc -b -o "$dir/models" "$root/runtime/model/tflite.fbs" "$stage/transformers/$m.json"
  done
  node "$root/tools/detector-models.mjs" --bench "$stage/detectors" >/dev/null
  flatc -b -o "$dir/models" "$root/runtime/model/tflite.fbs" "$stage/detectors/bench_detector_nms.json"
  sed -n '/^# ---- run.sh ----$/,$p' "${BASH_SOURCE[0]}" | tail -n +2 > "$dir/run.sh"
  chmod +x "$dir/run.sh"
  echo "gpu-check: bundle in $dir ($(du -sh "$dir" | cut -f1)); on the GPU machine: bash $dir/run.sh"
}

case "${1:-}" in
  bundle) bundle "${2:-build-gpu-check}" ;;
  local)
    dir=${2:-build-gpu-check}
    bundle "$dir"
    bash "$dir/run.sh" --device llvmpipe --runs 3 --rounds 1 ;;
  -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" ;;
  *) echo "usage: tools/gpu-check.sh bundle [DIR] | local [DIR] | --help" >&2; exit 2 ;;
esac
exit 0

# ---- run.sh ----
#!/usr/bin/env bash
# run.sh - made by tools/gpu-check.sh bundle: baton's vulkan delegate against its CPU chain on the models
# beside this script, with the libraries beside it (its own glibc loader, so any x86-64 Linux runs it).
# usage: run.sh [--device NAME] [--runs N] [--rounds N] [--threads N]
set -euo pipefail
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
device="" runs=30 rounds=3 threads=""
while [ $# -gt 0 ]; do
  case $1 in
    --device) device=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
threads=${threads:-$(nproc)}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$B/cache} XDG_STATE_HOME=${XDG_STATE_HOME:-$B/state}
conf=$B/gpu-check.conf
{ echo "# written by run.sh"; echo "[plugin.vulkan]"; [ -z "$device" ] || echo "device = $device"; } > "$conf"
conf32=$B/gpu-check-fp32.conf  # the same with float32 storage (fp16 = false)
{ cat "$conf"; echo "fp16 = false"; } > "$conf32"
echo "fp16 = true" >> "$conf"  # a GPU's default; named, so that lavapipe (float32 by default) compares the two too
confrule=$B/gpu-check-rule.conf  # workgroups by the built-in rule: no tuning, and a cache without the tuned table
{ cat "$conf"; echo "tune = false"; echo "cache-dir = $B/cache-rule"; } > "$confrule"
echo "tune = true" >> "$conf"  # a GPU's default too
baton() { "$B/lib/sys/ld-linux-x86-64.so.2" --library-path "$B/lib:$B/lib/sys" "$B/baton.bin" "$@"; }

echo "vulkan devices (the one used: --device, else the first discrete GPU):"
baton plugins --config "$conf" 2>&1 | awk '/^vulkan/ {v = 1} v && /devices:/ {d = 1; next} d && /options:/ {d = 0; v = 0} d {print}'

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -E "s/.*\"$1\":([0-9.e+-]+).*/\1/"; }
printf "\n%-26s %9s %9s %9s %9s %9s %9s %7s %9s  %s\n" model "vk min" "vk med" "rule min" "vk32 min" "cpu min" "cpu med" "cpu/vk" "load0 ms" \
  "plan with --delegate vulkan"
for model in "$B"/models/*.tflite; do
  name=$(basename "$model" .tflite)
  vmin=() vmed=() rmin=() v32min=() cmin=() cmed=() plan="" failed="" load0=""
  for ((r = 0; r < rounds; r++)); do
    if ! out=$(baton bench "$model" --config "$conf" --delegate vulkan --threads "$threads" --runs "$runs" --json 2>&1); then
      failed=$(tail -1 <<< "$out"); break
    fi
    plan=$(sed -E 's/.*"plan":"([^"]*)".*/\1/' <<< "$out")
    [ -n "$load0" ] || load0=$(field load_ms <<< "$out")  # the first start: shaders compiled, workgroups timed
    vmin+=("$(sed -E 's/.*"latency_ms":\{"min":([0-9.e+-]+).*/\1/' <<< "$out")")
    vmed+=("$(field median <<< "$out")")
    out=$(baton bench "$model" --config "$conf32" --delegate vulkan --threads "$threads" --runs "$runs" --json 2>&1) \
      || { failed=$(tail -1 <<< "$out"); break; }
    v32min+=("$(sed -E 's/.*"latency_ms":\{"min":([0-9.e+-]+).*/\1/' <<< "$out")")
    out=$(baton bench "$model" --config "$confrule" --delegate vulkan --threads "$threads" --runs "$runs" --json 2>&1) \
      || { failed=$(tail -1 <<< "$out"); break; }
    rmin+=("$(sed -E 's/.*"latency_ms":\{"min":([0-9.e+-]+).*/\1/' <<< "$out")")
    out=$(baton bench "$model" --config "$conf" --delegate cpu --delegate xnnpack --threads "$threads" --runs "$runs" --json 2>&1) \
      || { failed=$(tail -1 <<< "$out"); break; }
    cmin+=("$(sed -E 's/.*"latency_ms":\{"min":([0-9.e+-]+).*/\1/' <<< "$out")")
    cmed+=("$(field median <<< "$out")")
  done
  if [ -n "$failed" ]; then
    printf "%-26s failed: %s\n" "$name" "$failed"
    continue
  fi
  vn=$(printf '%s\n' "${vmin[@]}" | sort -g | head -1) vm=$(printf '%s\n' "${vmed[@]}" | median)
  v32n=$(printf '%s\n' "${v32min[@]}" | sort -g | head -1) rn=$(printf '%s\n' "${rmin[@]}" | sort -g | head -1)
  cn=$(printf '%s\n' "${cmin[@]}" | sort -g | head -1) cm=$(printf '%s\n' "${cmed[@]}" | median)
  printf "%-26s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %7.2f %9.1f  %s\n" "$name" "$vn" "$vm" "$rn" "$v32n" "$cn" "$cm" \
    "$(awk -v a="$cm" -v b="$vm" 'BEGIN {print a / b}')" "$load0" "$plan"
done
echo "(ms; $rounds rounds of $runs runs after 5 warm-up, vulkan (float16 storage where the device has it and"
echo " workgroups tuned, a GPU's defaults), vulkan with the rule's workgroups (rule), with fp16 = false (vk32)"
echo " and the cpu chain alternating; $threads threads; load0 = vulkan's first load (shaders compiled, workgroups timed);"
echo " min = the smallest of the rounds' minima, med = the median of their medians; cpu/vk > 1: vulkan is faster)"
