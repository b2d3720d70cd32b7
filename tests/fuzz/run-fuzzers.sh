#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer + fuzzer instrumentation) in build-fuzz and
# runs each for a time budget, seeded with the real models (from the model cache), the tiny test models and
# a few one-op quantized models (tests/data/quant-ops).
#
#   tests/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET]   (default 60; tools/test.sh uses this)
# A crash leaves its input in build-fuzz/fuzz-artifacts/; copy it to tests/fuzz/regressions/ with a name
# that says what broke, fix the bug, and the regression test keeps it fixed. Longer runs: pass more
# seconds, or run build-fuzz/tests/fuzz/fuzz_model_loader CORPUS_DIR -jobs=N yourself.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
# -O1 with line tables, as libFuzzer's documentation builds targets: half the build time of -O2 -g.
options=(-Dfuzz=true -Dbuildtype=plain -Doptimization=1 -Dc_args=-gline-tables-only -Dcpp_args=-gline-tables-only
         -Db_sanitize=address -Db_lundef=false)
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ meson setup build-fuzz "${options[@]}" >/dev/null
else
  meson configure build-fuzz "${options[@]}" >/dev/null
fi
ninja -C build-fuzz -j "$(nproc)" tests/fuzz/fuzz_model_loader tests/fuzz/fuzz_interpreter \
  op-packs/builtin/libbaton_builtin.so op-packs/examples/atan/make-atan-model >/dev/null
corpus=build-fuzz/fuzz-corpus
mkdir -p "$corpus/model_loader" "$corpus/interpreter" build-fuzz/fuzz-artifacts
for m in face_detection_short_range model_1 model_quant_f16_1 selfie_segmentation face_detection_full_range_sparse; do
  [ -f "$cache/$m.tflite" ] && cp -n "$cache/$m.tflite" "$corpus/model_loader/" && cp -n "$cache/$m.tflite" "$corpus/interpreter/"
done
# A tiny model too: small inputs are where the fuzzer mutates fastest.
build-fuzz/op-packs/examples/atan/make-atan-model "$corpus/model_loader/tiny_atan.tflite" 4
cp -n "$corpus/model_loader/tiny_atan.tflite" "$corpus/interpreter/"
# Small quantized models, so mutations reach the 8-bit and int8-weight kernels' checks.
for c in conv_3x3_uint8 depthwise_int8 add_uint8 softmax_int8 concatenation_uint8 hybrid_fully_connected_asymmetric; do
  cp -n "tests/data/quant-ops/$c/model.tflite" "$corpus/interpreter/quant_$c.tflite"
  cp -n "tests/data/quant-ops/$c/model.tflite" "$corpus/model_loader/quant_$c.tflite"
done
# Several subgraphs (loops, branches, variables, signatures), so mutations reach control flow.
for c in tests/data/control-flow/*/; do
  c=$(basename "$c")
  cp -n "tests/data/control-flow/$c/model.tflite" "$corpus/model_loader/flow_$c.tflite"
  [ "$c" = while_endless ] || cp -n "tests/data/control-flow/$c/model.tflite" "$corpus/interpreter/flow_$c.tflite"
done
cp -n tests/fuzz/regressions/* "$corpus/model_loader/" 2>/dev/null || true
status=0
for target in model_loader interpreter; do
  log=build-fuzz/fuzz-$target.log
  if ! ASAN_OPTIONS=detect_leaks=0 build-fuzz/tests/fuzz/fuzz_$target "$corpus/$target" -max_total_time="$seconds" \
      -rss_limit_mb=3072 -timeout=20 -max_len=4000000 -artifact_prefix=build-fuzz/fuzz-artifacts/ -print_final_stats=1 \
      >"$log" 2>&1; then
    echo "fuzz_$target: FOUND A CRASH (see $log and build-fuzz/fuzz-artifacts/)"
    tail -n 40 "$log"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: $runs executions in ${seconds}s, $(ls "$corpus/$target" | wc -l) inputs in the corpus"
done
exit $status
