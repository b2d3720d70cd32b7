#!/usr/bin/env bash
# Builds baton and runs the whole test suite twice: a release build, then a build with
# AddressSanitizer and UndefinedBehaviorSanitizer; then the concurrency tests under ThreadSanitizer and the
# fuzzers. Installs what is missing and fetches the real test models (pinned, sha256-checked, cached outside
# the repo) first. The next stage's build runs beside each stage's tests (see build_beside).
#
#   tools/test.sh              everything
#   BATON_TEST_SKIP_SANITIZE=1 tools/test.sh    the release build only
#   BATON_FUZZ_SECONDS=600 tools/test.sh         fuzz longer (default 60 s per target)
#   BATON_TEST_SKIP_PACKAGING=1 tools/test.sh    without the subprojects/ build and the Debian packages test
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage's wall time, printed as it ends and together at the end: CI has a 90-minute limit.
timings=()
stage_name=""
stage_start=$SECONDS
stage() {
  if [ -n "$stage_name" ]; then timings+=("$(printf '%5d s  %s' $((SECONDS - stage_start)) "$stage_name")"); fi
  stage_name=$1
  stage_start=$SECONDS
  [ -z "$stage_name" ] || echo "== $stage_name"
}
report_timings() {
  stage ""
  echo "== wall time by stage (total $((SECONDS / 60)) min)"
  printf '%s\n' "${timings[@]}"
}
# A build beside a stage's tests (below); stopped with its compilers if this script ends first.
beside_pid=""
on_exit() {
  [ -z "$beside_pid" ] || kill -- -"$beside_pid" 2>/dev/null || kill "$beside_pid" 2>/dev/null || true
  report_timings
}
trap on_exit EXIT
stage "set-up and fetch"
tools/setup.sh
export BATON_MODEL_CACHE=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
export BATON_REQUIRE_MODELS=1
tools/fetch-models.sh "$BATON_MODEL_CACHE" >/dev/null
tools/fetch-images.sh "$BATON_MODEL_CACHE" >/dev/null
# TFLite 2.9's C headers and library (npm, pinned): baton's libtensorflowlite_c.so builds against them
# and its tests compare it with Google's.
tflite_c_dir=$(tools/fetch-tflite-c.sh)

jobs=$(nproc)
export BATON_JOBS=$jobs
configure_and_build() {
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" -Dtflite_c_dir="$tflite_c_dir" >/dev/null
  else
    meson configure "$dir" "$@" -Dtflite_c_dir="$tflite_c_dir" >/dev/null
  fi
  local t=$SECONDS
  ninja -C "$dir" -j "$jobs" >/dev/null
  echo "built in $((SECONDS - t)) s"
}
run_tests() {
  meson test -C "$1" --no-rebuild --print-errorlogs --num-processes 1
}

# Most suites run one thread, so a stage's tests leave much of the second core idle: the next stage's
# build runs beside them, at the lowest priority (the tests keep their share of the CPU), in a process
# group of its own. Its output goes to a log, shown if it fails. Exit 77 (a skip) passes here; the stage
# itself says why.
#   build_beside WHAT FUNCTION     start it;   wait_beside     wait for it
beside_what=""
beside_log=""
build_beside() {
  beside_what=$1
  beside_log=$(mktemp)
  export -f "$2"
  setsid -w nice -n 19 bash -c "set -euo pipefail; $2" >"$beside_log" 2>&1 &
  beside_pid=$!
}
wait_beside() {
  local rc=0 t=$SECONDS
  wait "$beside_pid" || rc=$?
  beside_pid=""
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    tail -n 60 "$beside_log" >&2
    echo "test.sh: $beside_what failed (exit $rc)" >&2
    exit "$rc"
  fi
  tail -n 2 "$beside_log"
  echo "$beside_what: waited $((SECONDS - t)) s for it after the tests"
  rm -f "$beside_log"
}

# The later stages' builds, each run beside a stage's tests.
subprojects_build() {
  BATON_SUBPROJECTS_BUILD_ONLY=1 tests/subprojects_test.sh build-subprojects
}
sanitizer_builds() {
  local tsan_options=(-Dbuildtype=plain -Doptimization=1 -Dc_args=-g1 -Dcpp_args=-g1 -Db_sanitize=thread -Db_lundef=false)
  if [ ! -f build-tsan/build.ninja ]; then
    meson setup build-tsan "${tsan_options[@]}" >/dev/null
  else
    meson configure build-tsan "${tsan_options[@]}" >/dev/null
  fi
  # Only what the concurrency test loads: the whole tree (both delegates, every suite) would triple the time.
  # The isolation tests' plugins by name too: a kept build folder lists its targets as of its last configure.
  ninja -C build-tsan -j "$BATON_JOBS" tests/concurrency_tests tests/isolation_tests runtime/baton-plugin-host \
    tests/libcrashdeleg.so tests/libcrashpack.so op-packs/builtin/libbaton_builtin.so \
    $(ninja -C build-tsan -t targets all | sed -nE 's|^(tests/[a-z_]+\.so):.*|\1|p') >/dev/null
  BATON_FUZZ_BUILD_ONLY=1 tests/fuzz/run-fuzzers.sh
}

packaging=${BATON_TEST_SKIP_PACKAGING:-}
packaging=$([ -z "$packaging" ] && echo 1 || true)
sanitize=$([ -z "${BATON_TEST_SKIP_SANITIZE:-}" ] && echo 1 || true)

stage "release build"
configure_and_build build
if [ -n "$packaging" ]; then
  stage "release tests, the subprojects/ build beside them"
  build_beside "the subprojects/ build" subprojects_build
  run_tests build
  wait_beside
  # A skip (exit 77) is only where it cannot run at all (not root, not Debian); anything else fails CI.
  allow_skip() { local rc=0; "$@" || rc=$?; [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"; }
  stage "the core built from subprojects/ (flatbuffers, gtest, pybind11; --wrap-mode=forcefallback)"
  allow_skip tests/subprojects_test.sh build-subprojects
  stage "Debian packages: dpkg-buildpackage, lintian, installed in a fresh Debian root"
  allow_skip tests/debian_packages_test.sh
else
  stage "release tests"
  run_tests build
fi
if [ -n "$sanitize" ]; then
  stage "AddressSanitizer + UndefinedBehaviorSanitizer build"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # -O1 with line tables (-g1): the sanitizers' reports keep their file:line stacks, and the build takes
  # less than half the time of -O2 -g (the largest part of a fresh run of this script). The Python module
  # is tested in the release build only (python cannot load it without the sanitizer's runtime preloaded).
  configure_and_build build-asan -Dbuildtype=plain -Doptimization=1 -Dc_args=-g1 -Dcpp_args=-g1 \
    -Db_sanitize=address,undefined -Db_lundef=false -Dpython_module=disabled
  stage "AddressSanitizer + UndefinedBehaviorSanitizer tests, the ThreadSanitizer and libFuzzer builds beside them"
  build_beside "the ThreadSanitizer and libFuzzer builds" sanitizer_builds
  # The serve load test's minute is the release run's; under the sanitizers half of it finds the same.
  BATON_LOAD_SECONDS=${BATON_LOAD_SECONDS:-30} run_tests build-asan
  wait_beside
  stage "ThreadSanitizer: interpreters in threads sharing plugins"
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 1 concurrency
  # Interpreters in threads sharing one isolated plugin, and a child that dies under them.
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} build-tsan/tests/isolation_tests \
    --gtest_filter='Isolation.InterpretersInThreadsShareOneChild:Isolation.EnvironmentsOfOneProcessShareOneChild:Isolation.AKilledChildIsReplacedForTheNextInterpreter:*crashdeleg_segv_invoke:*crashpack_hang_invoke'
  stage "libFuzzer: model loader and interpreter, ${BATON_FUZZ_SECONDS:-60} s each (side by side), 2 GB memory limits"
  BATON_FUZZ_PARALLEL=${BATON_FUZZ_PARALLEL:-1} tests/fuzz/run-fuzzers.sh "${BATON_FUZZ_SECONDS:-60}"
fi
