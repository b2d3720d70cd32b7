#!/usr/bin/env bash
# Builds baton and runs the whole test suite twice: a release build, then a build with
# AddressSanitizer and UndefinedBehaviorSanitizer; then the concurrency tests under ThreadSanitizer. Installs what is missing and fetches the real test
# models (pinned, sha256-checked, cached outside the repo) first.
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
trap report_timings EXIT
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
run_suite() {
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
  meson test -C "$dir" --print-errorlogs --num-processes 1
}

stage "release build"
run_suite build
if [ -z "${BATON_TEST_SKIP_PACKAGING:-}" ]; then
  # A skip (exit 77) is only where it cannot run at all (not root, not Debian); anything else fails CI.
  allow_skip() { local rc=0; "$@" || rc=$?; [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"; }
  export BATON_JOBS=$jobs
  stage "the core built from subprojects/ (flatbuffers, gtest, pybind11; --wrap-mode=forcefallback)"
  allow_skip tests/subprojects_test.sh build-subprojects
  stage "Debian packages: dpkg-buildpackage, lintian, installed in a fresh Debian root"
  allow_skip tests/debian_packages_test.sh
fi
if [ -z "${BATON_TEST_SKIP_SANITIZE:-}" ]; then
  stage "AddressSanitizer + UndefinedBehaviorSanitizer build"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # -O1 with line tables (-g1): the sanitizers' reports keep their file:line stacks, and the build takes
  # less than half the time of -O2 -g (the largest part of a fresh run of this script).
  run_suite build-asan -Dbuildtype=plain -Doptimization=1 -Dc_args=-g1 -Dcpp_args=-g1 -Db_sanitize=address,undefined -Db_lundef=false
  stage "ThreadSanitizer build: interpreters in threads sharing plugins"
  tsan_options=(-Dbuildtype=plain -Doptimization=1 -Dc_args=-g1 -Dcpp_args=-g1 -Db_sanitize=thread -Db_lundef=false)
  if [ ! -f build-tsan/build.ninja ]; then
    meson setup build-tsan "${tsan_options[@]}" >/dev/null
  else
    meson configure build-tsan "${tsan_options[@]}" >/dev/null
  fi
  # Only what the concurrency test loads: the whole tree (both delegates, every suite) would triple the time.
  # The isolation tests' plugins by name too: a kept build folder lists its targets as of its last configure.
  ninja -C build-tsan -j "$jobs" tests/concurrency_tests tests/isolation_tests runtime/baton-plugin-host \
    tests/libcrashdeleg.so tests/libcrashpack.so op-packs/builtin/libbaton_builtin.so $(ninja -C build-tsan -t targets all | sed -nE 's|^(tests/[a-z_]+\.so):.*|\1|p') >/dev/null
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 1 concurrency
  # Interpreters in threads sharing one isolated plugin, and a child that dies under them.
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} build-tsan/tests/isolation_tests \
    --gtest_filter='Isolation.InterpretersInThreadsShareOneChild:Isolation.EnvironmentsOfOneProcessShareOneChild:Isolation.AKilledChildIsReplacedForTheNextInterpreter:*crashdeleg_segv_invoke:*crashpack_hang_invoke' 
  stage "libFuzzer: model loader and interpreter, ${BATON_FUZZ_SECONDS:-60} s each, 2 GB memory limits"
  tests/fuzz/run-fuzzers.sh "${BATON_FUZZ_SECONDS:-60}"
fi
