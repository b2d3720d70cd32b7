#!/usr/bin/env bash
# bench-vs-tflite.sh - median latency of baton and of native TFLite 2.9 (the peer harness in
# ../shared/reference/tflite-native, built with its build.sh) on the same models and threads, run
# alternately over several rounds in one session, with ratios. A developer tool, not a test.
#
# usage: tools/bench-vs-tflite.sh [--rounds N] [--runs N] [--threads "1 2"] [--xnnpack on|off|best]
#                                 [--baton-args "..."] [--peer-args "..."] MODEL.tflite...
# --xnnpack best: for each model and thread count, TFLite at its best: XNNPACK with its 8-bit flags
# (--xnnpack on --xnnpack-quant) or its own kernels (--xnnpack off), whichever has the lower min over 10
# runs before the rounds (the other where one fails); the table's last column says which.
# env: TFLITE_PEER (default /tmp/tflite-native/tflite-peer, where ../shared/reference/tflite-native/build.sh puts it), BATON (default build/tools/baton/baton)
set -euo pipefail
rounds=3 runs=50 threads="1" xnnpack=off baton_args="--no-delegates" peer_args=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --xnnpack) xnnpack=$2; shift 2 ;;
    --baton-args) baton_args=$2; shift 2 ;;
    --peer-args) peer_args=$2; shift 2 ;;  # e.g. --xnnpack-claim-custom for MediaPipe's custom ops
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "bench-vs-tflite: no model given" >&2; exit 2; }
peer=${TFLITE_PEER:-/tmp/tflite-native/tflite-peer}
baton=${BATON:-build/tools/baton/baton}
[ -x "$peer" ] || { echo "bench-vs-tflite: no peer at $peer (run ../shared/reference/tflite-native/build.sh)" >&2; exit 1; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# The peer's min over 10 runs with the given flags; nothing when it fails.
peer_min() {
  local model=$1 t=$2
  shift 2
  "$peer" "$model" --threads "$t" --bench 10 --quiet "$@" 2>/dev/null | sed -nE 's/^bench:.*min=([0-9.]+) ms.*/\1/p' || true
}
printf "%-36s %3s  %10s %10s %10s %10s %6s %6s   %10s %10s %6s  %s\n" model thr "baton min" "baton med" "tflite min" "tflite med" \
  "r(min)" "r(med)" "baton l+f" "tflite l+f" ratio "tflite with"
for model in "$@"; do
  for t in $threads; do
    bmed=() pmed=() bmin=() pmin=() bload=() pload=()
    mode=(--xnnpack "$xnnpack")
    if [ "$xnnpack" = best ]; then
      quant=$(peer_min "$model" "$t" --xnnpack on --xnnpack-quant $peer_args)
      own=$(peer_min "$model" "$t" --xnnpack off $peer_args)
      [ -n "$quant$own" ] || { echo "bench-vs-tflite: the peer fails on $model with and without XNNPACK" >&2; exit 1; }
      if [ -n "$quant" ] && { [ -z "$own" ] || awk -v a="$quant" -v b="$own" 'BEGIN {exit !(a <= b)}'; }; then
        mode=(--xnnpack on --xnnpack-quant)
      else
        mode=(--xnnpack off)
      fi
    fi
    for ((r = 0; r < rounds; r++)); do
      out=$("$baton" bench "$model" --threads "$t" --runs "$runs" --json $baton_args)
      bmed+=("$(sed -E 's/.*"median":([0-9.e+-]+).*/\1/' <<< "$out")")
      bmin+=("$(sed -E 's/.*"latency_ms":\{"min":([0-9.e+-]+).*/\1/' <<< "$out")")
      bload+=("$(sed -E 's/.*"load_ms":([0-9.e+-]+),"first_run_ms":([0-9.e+-]+).*/\1 \2/' <<< "$out" | awk '{print $1 + $2}')")
      all=$("$peer" "$model" --threads "$t" "${mode[@]}" --bench "$runs" --quiet $peer_args 2>&1)
      pload+=("$(sed -nE 's/^load:.*total ([0-9.]+) ms; first invoke ([0-9.]+) ms.*/\1 \2/p' <<< "$all" | awk '{print $1 + $2}')")
      out=$(grep '^bench:' <<< "$all")
      pmed+=("$(sed -E 's/.*median=([0-9.]+) ms.*/\1/' <<< "$out")")
      pmin+=("$(sed -E 's/.*min=([0-9.]+) ms.*/\1/' <<< "$out")")
    done
    bm=$(printf '%s\n' "${bmed[@]}" | median) pm=$(printf '%s\n' "${pmed[@]}" | median)
    bn=$(printf '%s\n' "${bmin[@]}" | sort -g | head -1) pn=$(printf '%s\n' "${pmin[@]}" | sort -g | head -1)
    bl=$(printf '%s\n' "${bload[@]}" | median) pl=$(printf '%s\n' "${pload[@]}" | median)
    printf "%-36s %3s  %10.3f %10.3f %10.3f %10.3f %6.2f %6.2f   %10.2f %10.2f %6.2f  %s\n" "$(basename "$model")" "$t" "$bn" "$bm" \
      "$pn" "$pm" "$(awk -v a="$bn" -v b="$pn" 'BEGIN {print a / b}')" "$(awk -v a="$bm" -v b="$pm" 'BEGIN {print a / b}')" "$bl" "$pl" "$(awk -v a="$bl" -v b="$pl" 'BEGIN {print a / b}')" "${mode[*]}"
  done
done
echo "(ms; medians are the median of the per-round medians, mins the smallest; r(min) = baton min / tflite min,"
echo " r(med) = baton median / tflite median;"
echo " l+f = model load plus first run, median over rounds (baton: load_ms + first_run_ms; tflite: load total + first invoke);"
echo " tflite with --xnnpack $xnnpack $peer_args, baton with $baton_args; $rounds rounds of $runs runs, alternating)"
