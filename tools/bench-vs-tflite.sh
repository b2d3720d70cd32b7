#!/usr/bin/env bash
# bench-vs-tflite.sh - median latency of baton and of native TFLite 2.9 (the peer harness in
# ../shared/reference/tflite-native, built with its build.sh) on the same models and threads, run
# alternately over several rounds in one session, with ratios. A developer tool, not a test.
#
# usage: tools/bench-vs-tflite.sh [--rounds N] [--runs N] [--threads "1 2"] [--xnnpack on|off]
#                                 [--baton-args "..."] MODEL.tflite...
# env: TFLITE_PEER (default /tmp/tflite-native/tflite-peer, where ../shared/reference/tflite-native/build.sh puts it), BATON (default build/tools/baton/baton)
set -euo pipefail
rounds=3 runs=50 threads="1" xnnpack=off baton_args="--no-delegates"
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --xnnpack) xnnpack=$2; shift 2 ;;
    --baton-args) baton_args=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "bench-vs-tflite: no model given" >&2; exit 2; }
peer=${TFLITE_PEER:-/tmp/tflite-native/tflite-peer}
baton=${BATON:-build/tools/baton/baton}
[ -x "$peer" ] || { echo "bench-vs-tflite: no peer at $peer (run ../shared/reference/tflite-native/build.sh)" >&2; exit 1; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf "%-36s %3s  %12s %12s %12s %12s %7s\n" model thr "baton min" "baton med" "tflite min" "tflite med" ratio
for model in "$@"; do
  for t in $threads; do
    bmed=() pmed=() bmin=() pmin=()
    for ((r = 0; r < rounds; r++)); do
      out=$("$baton" bench "$model" --threads "$t" --runs "$runs" --json $baton_args)
      bmed+=("$(sed -E 's/.*"median":([0-9.e+-]+).*/\1/' <<< "$out")")
      bmin+=("$(sed -E 's/.*"latency_ms":\{"min":([0-9.e+-]+).*/\1/' <<< "$out")")
      out=$("$peer" "$model" --threads "$t" --xnnpack "$xnnpack" --bench "$runs" --quiet 2>&1 | grep '^bench:')
      pmed+=("$(sed -E 's/.*median=([0-9.]+) ms.*/\1/' <<< "$out")")
      pmin+=("$(sed -E 's/.*min=([0-9.]+) ms.*/\1/' <<< "$out")")
    done
    bm=$(printf '%s\n' "${bmed[@]}" | median) pm=$(printf '%s\n' "${pmed[@]}" | median)
    bn=$(printf '%s\n' "${bmin[@]}" | sort -g | head -1) pn=$(printf '%s\n' "${pmin[@]}" | sort -g | head -1)
    printf "%-36s %3s  %12.3f %12.3f %12.3f %12.3f %7.2f\n" "$(basename "$model")" "$t" "$bn" "$bm" "$pn" "$pm" \
      "$(awk -v a="$bm" -v b="$pm" 'BEGIN {print a / b}')"
  done
done
echo "(ms; medians are the median of the per-round medians, mins the smallest; ratio = baton median / tflite median;"
echo " tflite with --xnnpack $xnnpack, baton with $baton_args; $rounds rounds of $runs runs, alternating)"
