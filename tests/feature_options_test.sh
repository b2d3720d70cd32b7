#!/usr/bin/env bash
# The optional parts are meson `feature` options: `disabled` builds none of them, `enabled` is a
# configure error where a part cannot be built, and (on a machine that tools/setup.sh prepared) `enabled`
# configures every part. Each case is a configure only (a few seconds), in a scratch build folder.
#
# usage: feature_options_test.sh SOURCE_DIR [TFLITE_C_DIR]
set -euo pipefail
src=$(cd "$1" && pwd)
tflite_c_dir=${2:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baton-features.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "feature_options_test: FAIL: $*" >&2; exit 1; }
parts=(xnnpack cpu_delegate vulkan python_module tflite_c tflite_delegates)
if grep -q "option('server'" "$src/meson_options.txt"; then parts+=(server); fi

# Everything optional off: none of those targets exist.
off=()
for p in "${parts[@]}"; do off+=("-D$p=disabled"); done
meson setup "$tmp/off" "$src" -Dtests=false ${tflite_c_dir:+-Dtflite_c_dir="$tflite_c_dir"} "${off[@]}" \
  >"$tmp/off.log" 2>&1 || { cat "$tmp/off.log" >&2; fail "configure with every optional part disabled"; }
targets=$(ninja -C "$tmp/off" -t targets all)
for t in libbaton_xnnpack.so libbaton_cpu.so libbaton_vulkan.so libbaton_tflite_delegates.so \
         libtensorflowlite_c.so baton-serve 'baton.cpython-'; do
  if grep -q -- "$t" <<< "$targets"; then fail "$t is built although its feature is disabled"; fi
done
grep -q 'libbaton_builtin.so' <<< "$targets" || fail "the builtin pack is not built with the optional parts off"

# Enabled where it cannot be built: an error that says why.
if meson setup "$tmp/no-tflite" "$src" -Dtests=false -Dtflite_c=enabled -Dtflite_c_dir= >"$tmp/no-tflite.log" 2>&1; then
  fail "-Dtflite_c=enabled configured without TFLite's C headers"
fi
grep -q "Feature tflite_c cannot be enabled" "$tmp/no-tflite.log" || { cat "$tmp/no-tflite.log" >&2; fail "no reason given for tflite_c"; }
if meson setup "$tmp/no-loader" "$src" -Dtests=false -Dtflite_delegates=enabled -Dtflite_c_dir= >"$tmp/no-loader.log" 2>&1; then
  fail "-Dtflite_delegates=enabled configured without TFLite's C headers"
fi

# Every part enabled, on a machine with every dependency (tools/setup.sh; the TFLite headers given).
if [ -n "$tflite_c_dir" ]; then
  on=()
  for p in "${parts[@]}"; do on+=("-D$p=enabled"); done
  if ! meson setup "$tmp/on" "$src" -Dtests=false -Dtflite_c_dir="$tflite_c_dir" "${on[@]}" >"$tmp/on.log" 2>&1; then
    if [ "${BATON_REQUIRE_MODELS:-}" = 1 ]; then
      tail -n 5 "$tmp/on.log" >&2
      fail "a part does not configure as enabled on a machine tools/setup.sh prepared"
    fi
    echo "feature_options_test: some optional dependency is missing here; the enabled case is not checked"
  else
    targets=$(ninja -C "$tmp/on" -t targets all)
    for t in libbaton_xnnpack.so libbaton_cpu.so libbaton_vulkan.so libbaton_tflite_delegates.so \
             libtensorflowlite_c.so 'baton.cpython-'; do
      grep -q -- "$t" <<< "$targets" || fail "$t is not built although its feature is enabled"
    done
  fi
fi
echo "feature_options_test: disabled, enabled and enabled-but-missing: OK"
