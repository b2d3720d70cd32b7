#!/usr/bin/env bash
# baton built with flatbuffers, googletest and pybind11 from subprojects/ instead of the system
# (`--wrap-mode=forcefallback`), with no download by meson: the sources come from Debian's source packages
# (tools/stage-subproject-sources.sh). Builds the core (libbaton, the builtin pack, the `baton` tool, the
# Python module, the runtime and quantized-op suites) in its own build folder, checks that each of the three
# came from its subproject, and runs those suites and the module on a model.
#
#   tests/subprojects_test.sh [BUILD_DIR]     (default: build-subprojects, kept between runs)
#   BATON_SUBPROJECTS_BUILD_ONLY=1 tests/subprojects_test.sh   stage, configure and build, then stop
#                                             (tools/test.sh builds it beside another stage's tests)
#
# Exit status 77 (skipped) only where the sources cannot be had (no deb-src access and no installed
# package carries them) and BATON_REQUIRE_MODELS is not 1.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-subprojects}
fail() { echo "subprojects_test: FAIL: $*" >&2; exit 1; }
jobs=${BATON_JOBS:-$(nproc)}
# Other builds share this machine: compile under the project's build lock when it is there.
lock=()
if command -v flock >/dev/null; then lock=(flock /tmp/baton-build.lock); fi

start=$(date +%s)
status=0
tools/stage-subproject-sources.sh || status=$?
if [ "$status" -ne 0 ]; then
  if [ "$status" -eq 3 ] && [ "${BATON_REQUIRE_MODELS:-}" != 1 ]; then
    echo "subprojects_test: skipped: the subprojects' sources are not available here (see above)"
    exit 77
  fi
  fail "the subprojects' sources could not be staged"
fi

python=${BATON_PYTHON:-/usr/bin/python3}
# Only the core: the delegates and the other doors use none of the three and take most of the build.
# At -O1: what this checks is where the three come from; -O1 builds in about half the time of a release.
options=(--wrap-mode=forcefallback -Dbuildtype=plain -Doptimization=1 -Dxnnpack=disabled -Dcpu_delegate=disabled -Dvulkan=disabled
         -Dtflite_c=disabled -Dtflite_delegates=disabled -Dpython_module=enabled -Dpython="$python")
if grep -q "option('server'" meson_options.txt; then options+=(-Dserver=disabled); fi
if [ -f "$build/build.ninja" ]; then
  "${lock[@]}" meson configure "$build" "${options[@]}" >/dev/null
else
  "${lock[@]}" meson setup "$build" "${options[@]}" > "$build.setup.log" 2>&1 || { tail -n 20 "$build.setup.log" >&2; fail "meson setup"; }
  rm -f "$build.setup.log"
fi

# Each dependency from its subproject, not from the system.
info=$(meson introspect "$build" --projectinfo)
for p in flatbuffers gtest pybind11; do
  grep -q "\"name\": \"$p\"" <<< "$info" || fail "$p is not built from subprojects/ (meson introspect --projectinfo: $info)"
done
log=$build/meson-logs/meson-log.txt
grep -q "Program flatc found: YES (overridden)" "$log" || grep -Eq "Fallback to subproject flatbuffers which provides program flatc" "$log" ||
  fail "flatc does not come from the flatbuffers subproject"
configured=$(date +%s)

targets=(runtime/libbaton.so.0.1.0 runtime/baton-plugin-host op-packs/builtin/libbaton_builtin.so tools/baton/baton tests/runtime_tests tests/quant_ops_tests
         op-packs/examples/atan/atan.so op-packs/examples/atan/make-atan-model)
targets+=($(ninja -C "$build" -t targets all | sed -nE 's|^(tests/[A-Za-z0-9_]+\.so):.*|\1|p; s|^(runtime/python/baton\.cpython-[^:]*\.so):.*|\1|p'))
"${lock[@]}" ninja -C "$build" -j "$jobs" "${targets[@]}" > "$build/ninja.log" 2>&1 || { tail -n 30 "$build/ninja.log" >&2; fail "the core does not build"; }
built=$(date +%s)
for f in "$build"/subprojects/flatbuffers-2.0.8/flatc "$build"/subprojects/googletest-release-1.12.1/libgtest.a; do
  [ -e "$f" ] || fail "$f was not built"
done
if [ -n "${BATON_SUBPROJECTS_BUILD_ONLY:-}" ]; then
  echo "subprojects_test: built in $((built - start)) s (-j$jobs); tests not run"
  exit 0
fi

meson test -C "$build" --no-rebuild --print-errorlogs --num-processes 1 runtime quant-ops
module=$(ls "$build"/runtime/python/baton.cpython-*.so 2>/dev/null | head -n 1)
[ -n "$module" ] || fail "the Python module was not built against the pybind11 subproject"
"$build/op-packs/examples/atan/make-atan-model" "$build/atan.tflite" 4
PYTHONPATH=$(dirname "$module") "$python" -c '
import sys, numpy as np, baton
interp = baton.Interpreter(model_path=sys.argv[1], plugin_dirs=[sys.argv[2], sys.argv[3]])
interp.allocate_tensors()
x = np.array([0.0, 1.0, -1.0, 0.5], dtype=np.float32).reshape(interp.get_input_details()[0]["shape"])
interp.set_tensor(interp.get_input_details()[0]["index"], x)
interp.invoke()
y = interp.get_tensor(interp.get_output_details()[0]["index"])
assert np.allclose(y.ravel(), np.arctan(x.ravel()), atol=1e-6), y
' "$build/atan.tflite" "$build/op-packs/examples/atan" "$build/op-packs/builtin" || fail "the Python module built with the pybind11 subproject does not run a model"
done_at=$(date +%s)
echo "subprojects_test: flatbuffers, gtest and pybind11 from subprojects/: configure $((configured - start)) s," \
     "build $((built - configured)) s (-j$jobs), tests $((done_at - built)) s: OK"
