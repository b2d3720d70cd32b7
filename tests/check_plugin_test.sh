#!/bin/sh
# `baton check-plugin` (tools/baton/cmd_check_plugin.cc) on the shipped plugins (each passes: exit 0),
# on the deliberately broken test plugins (each finding named, exit 1), on packs with a wrong kernel, a
# refusal without a reason and a kernel that ignores a resized input (tests/plugins/faulty_add_pack.c:
# the op and type named), and its --json (parsed) and usage errors (exit 2).
# usage: check_plugin_test.sh BATON TEST_PLUGIN_DIR BUILD_ROOT SOURCE_ROOT
set -u
BATON=$1
TESTS=$2
BUILD=$3
SRC=$4
CASES=$SRC/tests/data/op-cases
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/baton-check-plugin-test.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
# The checker keeps its own crash journal; this keeps anything else's out of the user's state folder.
export XDG_STATE_HOME=$SCRATCH/state
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# check NAME EXPECTED_STATUS FILE [options...]: runs the checker, keeps its output in $SCRATCH/NAME.out.
check() {
  name=$1
  want=$2
  shift 2
  "$BATON" check-plugin "$@" --cases "$CASES" >"$SCRATCH/$name.out" 2>"$SCRATCH/$name.err"
  got=$?
  if [ "$got" != "$want" ]; then
    fail "$name: exit status $got, expected $want"
    sed 's/^/    /' "$SCRATCH/$name.out" "$SCRATCH/$name.err" | tail -25
  fi
}

# expect NAME TEXT: the output of NAME holds TEXT (a fixed string).
expect() {
  if ! grep -qF -- "$2" "$SCRATCH/$1.out"; then
    fail "$1: the output does not say '$2'"
    sed 's/^/    /' "$SCRATCH/$1.out" | tail -25
  fi
}

# The shipped plugins pass. The builtin pack runs every case (the command's default); vulkan runs on the
# test device (lavapipe here), named as the vulkan tests name it.
for p in op-packs/builtin/libbaton_builtin.so op-packs/mediapipe/libbaton_mediapipe.so \
         op-packs/detection/libbaton_detection.so plugins/cpu/libbaton_cpu.so plugins/xnnpack/libbaton_xnnpack.so; do
  [ -f "$BUILD/$p" ] || continue
  name=shipped-$(basename "$p" .so)
  check "$name" 0 "$BUILD/$p"
  expect "$name" "check-plugin: PASS"
done
# Every case applies to the builtin pack, and every one passes.
cases=$(find "$CASES" -mindepth 2 -maxdepth 2 -name model.tflite | wc -l)
expect shipped-libbaton_builtin "$cases case(s): $cases pass, 0 fail, 0 refused"
if [ -f "$BUILD/plugins/vulkan/libbaton_vulkan.so" ]; then
  # float32 storage: within the default tolerance (1e-5 of the largest value) of every case
  printf '[plugin.vulkan]\ndevice = 0\nfp16 = false\n' >"$SCRATCH/vulkan.conf"
  check shipped-vulkan 0 "$BUILD/plugins/vulkan/libbaton_vulkan.so" --config "$SCRATCH/vulkan.conf"
  expect shipped-vulkan "check-plugin: PASS"
  # The default, float16 storage: not within 1e-5, and within 2e-2 (the spectrogram's MUL moves 1.2e-2,
  # the rest less than 4e-3)
  printf '[plugin.vulkan]\ndevice = 0\nfp16 = true\n' >"$SCRATCH/vulkan16.conf"
  check shipped-vulkan-fp16-strict 1 "$BUILD/plugins/vulkan/libbaton_vulkan.so" --config "$SCRATCH/vulkan16.conf"
  expect shipped-vulkan-fp16-strict "[mismatch] EXP FLOAT32 (exp_f32_wide)"
  check shipped-vulkan-fp16 0 "$BUILD/plugins/vulkan/libbaton_vulkan.so" --config "$SCRATCH/vulkan16.conf" --tolerance 2e-2
  expect shipped-vulkan-fp16 "check-plugin: PASS"
fi
expect shipped-libbaton_xnnpack "ADD                          v1         FLOAT32       3     3     0       0  same"

# The broken test plugins: each finding named.
check wrong-major 1 "$TESTS/testplugin_wrong_major.so"
expect wrong-major "[descriptor] ABI major mismatch: plugin built for ABI 2.0"
check min-gt-max 1 "$TESTS/testplugin_min_gt_max.so"
expect min-gt-max "[descriptor] op declaration 0 (CONV_2D v4-2) has an invalid version range"
check null-custom 1 "$TESTS/testplugin_null_custom.so"
expect null-custom "[descriptor] op declaration 0 is CUSTOM without a name"
check duplicate-op 1 "$TESTS/testplugin_duplicate_op.so"
expect duplicate-op "overlaps an earlier declaration"
check init-fails 1 "$TESTS/testplugin_init_fails.so"
expect init-fails "[init] init failed: no such device /dev/fake-npu"
check no-entry 1 "$TESTS/testplugin_no_entry.so"
expect no-entry "[not-a-plugin] no entry symbol 'baton_plugin_entry'"
# A file name that does not say the plugin's name (config sections and isolation find it by name).
check misnamed 1 "$TESTS/testpack_dup.so" --ops NONE
expect misnamed "[descriptor] the file name says 'testpack-dup' but the plugin is named 'testpack'"
# A pack whose ADD throws out of prepare: its process dies of it (the exception leaves the plugin's
# host); in this process (--in-process) the runtime catches it at the C boundary.
check thrower 1 "$TESTS/misbehaving.so" --ops ADD
expect thrower "[crash] ADD INT32"
check thrower-in-process 1 "$TESTS/misbehaving.so" --ops ADD --in-process
expect thrower-in-process "[exception] ADD INT32"
# Plugins that crash (their `fail` option, from a config): a crash is a finding, and the check goes on to
# the next case.
printf '[plugin.crashpack]\nfail = segv-prepare\n' >"$SCRATCH/crash.conf"
check crashpack 1 "$TESTS/libcrashpack.so" --config "$SCRATCH/crash.conf" --ops MUL
# A sanitizer in the child (a -Db_sanitize build; meson sets BATON_SANITIZE) catches the segfault, reports it
# and exits with its own status instead.
if [ "${BATON_SANITIZE:-none}" = none ]; then
  segv="its process was killed by signal 11 (SIGSEGV)"
else
  segv="its process exited with status"
fi
expect crashpack "[crash] MUL INT16 (mul_i16_broadcast): isolated plugin crashpack failed in kernel prepare: $segv"
expect crashpack "[crash] MUL INT32 (mul_i32_rank3)"
printf '[plugin.crashdeleg]\nfail = abort-invoke\n' >"$SCRATCH/crashdeleg.conf"
check crashdeleg 1 "$TESTS/libcrashdeleg.so" --config "$SCRATCH/crashdeleg.conf" --ops ADD
expect crashdeleg "[crash] ADD FLOAT32 (dequantize_int4): invoke failed: isolated plugin crashdeleg failed in partition invoke: its process was killed by signal 6 (SIGABRT)"
# A delegate told to fail its invokes (tests/plugins/test_delegate.c).
printf '[plugin.deleg-a]\nops = ADD\nfail = invoke\n' >"$SCRATCH/deleg.conf"
check deleg-fails 1 "$TESTS/deleg_a.so" --config "$SCRATCH/deleg.conf" --ops ADD
expect deleg-fails "[invoke-error] ADD FLOAT32"
expect deleg-fails "simulated invoke failure"

# Kernels with a deliberate fault: the op and type named, the other op of the pack passing.
check wrongfloor 1 "$TESTS/libwrongfloor.so"
expect wrongfloor "[mismatch] FLOOR FLOAT32 (floor_f32): output 0: largest |diff| 0.001"
grep -E '^FLOOR +v1 +FLOAT32 +1 +0 +1 +0 .*FAIL floor_f32' "$SCRATCH/wrongfloor.out" >/dev/null || fail "wrongfloor: no failing FLOOR FLOAT32 row"
grep -E '^SUB +v1 +INT64 +1 +1 +0 +0 +same +ok +pass$' "$SCRATCH/wrongfloor.out" >/dev/null || fail "wrongfloor: SUB INT64 does not pass"
check silentsub 1 "$TESTS/libsilentsub.so"
expect silentsub "[silent-refusal] SUB INT64 (sub_i64_scalar)"
grep -E '^FLOOR +v1 +FLOAT32 .* pass$' "$SCRATCH/silentsub.out" >/dev/null || fail "silentsub: FLOOR does not pass"
check stalefloor 1 "$TESTS/libstalefloor.so"
expect stalefloor "[resize] FLOOR FLOAT32 (floor_f32): input 0 resized to [6,5], output 0 differs from the builtin pack's"

# --json parses; its verdict and findings agree with the exit status.
"$BATON" check-plugin "$TESTS/libwrongfloor.so" --cases "$CASES" --json >"$SCRATCH/wrongfloor.json"
[ $? = 1 ] || fail "wrongfloor --json: exit status is not 1"
python3 - "$SCRATCH/wrongfloor.json" <<'EOF' || fail "wrongfloor --json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"] is False, r["passed"]
assert r["plugin"]["name"] == "wrongfloor" and r["plugin"]["isolation"] == "process", r["plugin"]
rows = {(x["op"], x["type"]): x for x in r["rows"]}
assert rows[("FLOOR", "FLOAT32")]["result"] == "fail" and abs(rows[("FLOOR", "FLOAT32")]["max_diff"] - 0.001) < 1e-4, rows
assert rows[("SUB", "INT64")]["result"] == "pass", rows
assert [(f["kind"], f["op"], f["type"]) for f in r["findings"]] == [("mismatch", "FLOOR", "FLOAT32")], r["findings"]
EOF
"$BATON" check-plugin "$BUILD/op-packs/builtin/libbaton_builtin.so" --cases "$CASES" --ops ADD,CONV_2D --json \
  >"$SCRATCH/builtin.json"
[ $? = 0 ] || fail "builtin --json: exit status is not 0"
python3 - "$SCRATCH/builtin.json" <<'EOF' || fail "builtin --json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["passed"] is True and r["findings"] == [], r["findings"]
assert {x["op"] for x in r["rows"]} == {"ADD", "CONV_2D"}, r["rows"]
assert all(x["outcome"] == "pass" and x["threads"] == "same" for x in r["results"]), r["results"]
EOF

# Usage errors.
"$BATON" check-plugin >/dev/null 2>&1
[ $? = 2 ] || fail "no file: exit status is not 2"
"$BATON" check-plugin "$SCRATCH/none.so" >/dev/null 2>&1
[ $? = 2 ] || fail "a missing file: exit status is not 2"
"$BATON" check-plugin "$TESTS/libwrongfloor.so" --cases "$SCRATCH/nowhere" >/dev/null 2>&1
[ $? = 2 ] || fail "a missing case folder: exit status is not 2"
help_text=$("$BATON" check-plugin --help)
case "$help_text" in *--cases*) ;; *) fail "--help does not name --cases" ;; esac

# The user's state folder is never written: every journal of the run lives in its scratch folder.
[ ! -e "$XDG_STATE_HOME/baton" ] || fail "the checker wrote the state folder it was given: $(ls -R "$XDG_STATE_HOME")"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "check-plugin: all checks passed"
