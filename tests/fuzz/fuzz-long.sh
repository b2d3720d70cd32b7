#!/usr/bin/env bash
# Long fuzzing runs, for a machine left to it for hours (CI runs tests/fuzz/run-fuzzers.sh for a minute per
# target instead): both libFuzzer targets at once, one core each, for HOURS hours each (a fraction is fine:
# 0.25 is a quarter of an hour), under run-fuzzers.sh's memory limits (-rss_limit_mb and -malloc_limit_mb
# of 2048) and with its seeds (every one-op and multi-subgraph model of tests/data, the real models, the
# regressions), in libFuzzer's fork mode, so that a finding does not end the run: every crash,
# out-of-memory and timeout is saved in build-fuzz/fuzz-artifacts/TARGET/ and listed at the end (the exit
# status is 1 when there is any). The corpus grows in build-fuzz/fuzz-corpus/TARGET and is kept for the
# next run (BATON_FUZZ_CORPUS=DIR keeps it elsewhere).
#
#   tests/fuzz/fuzz-long.sh HOURS          e.g. tests/fuzz/fuzz-long.sh 8 for a night
#
# Logs: build-fuzz/fuzz-model_loader.log and build-fuzz/fuzz-interpreter.log. Run one finding again with
# build-fuzz/tests/fuzz/fuzz_interpreter build-fuzz/fuzz-artifacts/interpreter/crash-... (likewise for the
# loader); once it is fixed, keep it in tests/fuzz/regressions/ under a name that says what broke.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ne 1 ]; then
  sed -n '2,15p' "$0"
  exit 2
fi
seconds=$(awk -v h="$1" 'BEGIN { s = int(h * 3600); if (s < 1) exit 1; print s }') \
  || { echo "fuzz-long.sh: HOURS must be a positive number, not '$1'"; exit 2; }
export BATON_FUZZ_CORPUS=${BATON_FUZZ_CORPUS:-$PWD/build-fuzz/fuzz-corpus}
BATON_FUZZ_SEED=${BATON_FUZZ_SEED:-0} BATON_FUZZ_FORK=1 BATON_FUZZ_PARALLEL=1 exec tests/fuzz/run-fuzzers.sh "$seconds"
