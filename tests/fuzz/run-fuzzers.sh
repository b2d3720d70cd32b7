#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer + fuzzer instrumentation) in build-fuzz and
# runs each for a time budget under a memory limit, seeded with every model the repository has: each
# one-op case (tests/data/op-cases, tests/data/quant-ops, tests/data/mediapipe-pool), the multi-subgraph
# ones (tests/data/control-flow, tests/data/string-cases), a tiny generated model, the real models of the
# model cache and every input in tests/fuzz/regressions.
#
#   tests/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET]   (default 60; tools/test.sh uses this)
#   tests/fuzz/fuzz-long.sh HOURS                    long runs (see there)
#
# Memory: -rss_limit_mb and -malloc_limit_mb of 2048. A model field that sizes an allocation before the
# fields it must agree with are checked (a filter declaring a billion channels, an input dimension of 2^30)
# is an out-of-memory, which fails the run as a crash does: the harness's own limits (16 MiB per tensor,
# 64 MiB of arena) leave no valid input a reason to come near it.
# State: the fuzzers run with HOME, XDG_STATE_HOME and TMPDIR in a scratch folder, and the run fails if
# anything is left under HOME or XDG_STATE_HOME: the harness keeps its crash journal in a folder of its own
# (an entry in the user's journal would quarantine the builtin pack for that model in normal use).
# Corpus: a fresh scratch folder per run, thrown away after it (BATON_FUZZ_CORPUS=DIR keeps what the
# fuzzers add in DIR/<target> instead, and starts from it next time).
#
# A finding leaves its input in build-fuzz/fuzz-artifacts/TARGET/ (crash-*, oom-*, timeout-*); copy it to
# tests/fuzz/regressions/ with a name that says what broke, fix the bug, and the regression test keeps it
# fixed. BATON_FUZZ_FORK=1 runs each target in libFuzzer's fork mode, going on past findings (every one is
# saved), and BATON_FUZZ_PARALLEL=1 runs the targets at the same time (one core each); fuzz-long.sh sets both.
# Seed: BATON_FUZZ_SEED (default 1), so that a run of the CI mutates the same way on every machine and a
# finding there is found again here; 0 picks a new one each run (fuzz-long.sh does).
# BATON_BUILD_LOCK=FILE: the build step holds that flock (a tree several people build at once).
# BATON_FUZZ_BUILD_ONLY=1: build the targets and stop (tools/test.sh builds them beside another stage's
# tests); BATON_JOBS: the build's parallel jobs (default: every core).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
memory_limit_mb=2048
corpus_root=${BATON_FUZZ_CORPUS:-}
fork=${BATON_FUZZ_FORK:-0}
parallel=${BATON_FUZZ_PARALLEL:-0}
random_seed=${BATON_FUZZ_SEED:-1}
cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
if [ -n "${BATON_BUILD_LOCK:-}" ]; then
  exec 9>"$BATON_BUILD_LOCK"
  flock 9
fi
# -O1 with line tables, as libFuzzer's documentation builds targets: half the build time of -O2 -g.
options=(-Dfuzz=true -Dbuildtype=plain -Doptimization=1 -Dc_args=-gline-tables-only -Dcpp_args=-gline-tables-only
         -Db_sanitize=address -Db_lundef=false)
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ meson setup build-fuzz "${options[@]}" >/dev/null
else
  meson configure build-fuzz "${options[@]}" >/dev/null
fi
# Quiet unless it fails: then what failed, not a silent exit.
build_log=$(mktemp)
if ! ninja -C build-fuzz -j "${BATON_JOBS:-$(nproc)}" tests/fuzz/fuzz_model_loader tests/fuzz/fuzz_interpreter \
     op-packs/builtin/libbaton_builtin.so op-packs/examples/atan/make-atan-model >"$build_log" 2>&1; then
  grep -E -A12 '^FAILED|error:' "$build_log" | head -n 60 >&2
  echo "run-fuzzers: building the fuzz targets failed (the whole log: $build_log)" >&2
  exit 1
fi
rm -f "$build_log"
[ -z "${BATON_BUILD_LOCK:-}" ] || exec 9>&-
if [ -n "${BATON_FUZZ_BUILD_ONLY:-}" ]; then
  echo "run-fuzzers: the fuzz targets are built; not run"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
seeds=$work/seeds
mkdir -p "$seeds/model_loader" "$seeds/interpreter"
# seed NAME FILE [TARGET...]: FILE under NAME in each target's seeds (both when none is named).
seed() {
  local name=$1 file=$2
  shift 2
  [ $# -gt 0 ] || set -- model_loader interpreter
  for t in "$@"; do cp "$file" "$seeds/$t/$name"; done
}
for m in face_detection_short_range model_1 model_quant_f16_1 selfie_segmentation face_detection_full_range_sparse; do
  [ -f "$cache/$m.tflite" ] && seed "real_$m.tflite" "$cache/$m.tflite"
done
# A tiny model too: small inputs are where the fuzzer mutates fastest.
build-fuzz/op-packs/examples/atan/make-atan-model "$work/tiny_atan.tflite" 4
seed tiny_atan.tflite "$work/tiny_atan.tflite"
# Every one-op model (float, quantized, hybrid, the MediaPipe ops the builtin pack refuses) and every model
# of several subgraphs (loops, branches, variables, signatures; strings), so mutations reach each kernel's
# checks and control flow. A WHILE that never ends only costs the interpreter a second per mutation.
for f in tests/data/{op-cases,quant-ops,mediapipe-pool,control-flow,string-cases}/*/*.tflite; do
  [ -f "$f" ] || continue
  name=$(echo "${f#tests/data/}" | tr / _)
  case $f in
    */while_endless/*) seed "$name" "$f" model_loader ;;
    *) seed "$name" "$f" ;;
  esac
done
for f in tests/fuzz/regressions/*; do
  case $f in *.md) ;; *) seed "regression_$(basename "$f")" "$f" ;; esac
done
echo "fuzz seeds: $(ls "$seeds/model_loader" | wc -l) models for the loader, $(ls "$seeds/interpreter" | wc -l) for the interpreter"

fuzz_flags=(-rss_limit_mb=$memory_limit_mb -malloc_limit_mb=$memory_limit_mb -timeout=20 -max_len=4000000
            -max_total_time="$seconds" -print_final_stats=1 -seed="$random_seed")
[ "$fork" = 1 ] && fuzz_flags+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)

# run_target TARGET: fuzzes it into its log; the status says whether it found something or wrote state.
run_target() {
  local target=$1 corpus
  if [ -n "$corpus_root" ]; then corpus=$corpus_root/$target; else corpus=$work/corpus/$target; fi
  mkdir -p "$corpus" "$work/home-$target" "$work/tmp-$target" "build-fuzz/fuzz-artifacts/$target"
  touch "$work/start-$target"
  local log=build-fuzz/fuzz-$target.log rc=0
  HOME=$work/home-$target XDG_STATE_HOME=$work/home-$target/.local/state TMPDIR=$work/tmp-$target ASAN_OPTIONS=detect_leaks=0 \
    build-fuzz/tests/fuzz/fuzz_$target "$corpus" "$seeds/$target" "${fuzz_flags[@]}" \
    -artifact_prefix="$PWD/build-fuzz/fuzz-artifacts/$target/" >"$log" 2>&1 || rc=$?
  return $rc
}

# report TARGET RC: its executions, what it found, and whether it kept out of the user's state folder.
report() {
  local target=$1 rc=$2 log=build-fuzz/fuzz-$1.log status=0
  local runs peak
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1 || true)
  # Fork mode prints no final stats: its last status line counts the executions of every job.
  [ -n "$runs" ] || runs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
  peak=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1 || true)
  # The inputs it saved in this run (fork mode's log does not name them).
  local artifacts=build-fuzz/fuzz-artifacts/$target findings
  findings=$(find "$artifacts" -type f -newer "$work/start-$target" -printf '%f\n' | sort)
  # Without fork mode the first finding ends the run, before its time is up.
  echo "fuzz_$target: ${runs:-?} executions (${seconds} s budget), peak RSS ${peak:-?} MB," \
       "memory limit ${memory_limit_mb} MB, $(echo -n "$findings" | grep -c . || true) findings"
  if [ "$rc" -ne 0 ] || [ -n "$findings" ]; then
    echo "fuzz_$target: FOUND A BUG (see $log):"
    for f in $findings; do echo "  $artifacts/$f"; done
    # What they were, once per kind (and place, where the log has it).
    grep -E '^SUMMARY: |^==[0-9]+==ERROR: ' "$log" |
      sed -E 's/ \(BuildId: [0-9a-f]+\)//; s/==[0-9]+==//; s/ on address 0x[0-9a-f]+.*//' | sort | uniq -c | head -n 20
    [ "$fork" = 1 ] || tail -n 40 "$log"
    status=1
  fi
  if [ -n "$(ls -A "$work/home-$target")" ]; then
    echo "fuzz_$target: wrote to its HOME or XDG_STATE_HOME, which are the user's in normal use:"
    (cd "$work/home-$target" && find . -mindepth 1 | head -n 20)
    status=1
  fi
  return $status
}

status=0
targets=(model_loader interpreter)
if [ "$parallel" = 1 ]; then
  declare -A pids
  for t in "${targets[@]}"; do run_target "$t" & pids[$t]=$!; done
  for t in "${targets[@]}"; do rc=0; wait "${pids[$t]}" || rc=$?; report "$t" $rc || status=1; done
else
  for t in "${targets[@]}"; do rc=0; run_target "$t" || rc=$?; report "$t" $rc || status=1; done
fi
exit $status
