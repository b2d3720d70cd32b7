#!/usr/bin/env bash
# The install layout, tested as a vendor meets it: install into a temporary prefix, build the Atan op
# pack from a folder outside the source tree with only `cc` and `pkg-config --cflags baton-plugin`, drop
# it into a plugin folder, and run a model that needs it with the installed `baton`, which must also find
# the installed builtin pack with no flags. The vendor templates (templates/vendor-plugin), built with
# meson against the installed SDK and run.
#
# With a PYTHON, the Python module too: installed where that Python imports from, and finding the
# installed plugins.
#
# usage: install_test.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baton-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/stage" >/dev/null
baton=$(find "$tmp/stage" -path '*/bin/baton' -type f | head -n 1)
[ -x "$baton" ] || fail "no bin/baton installed"
pc=$(find "$tmp/stage" -name baton-plugin.pc | head -n 1)
[ -f "$pc" ] || fail "no baton-plugin.pc installed"
[ -n "$(find "$tmp/stage" -name baton.pc)" ] || fail "no baton.pc installed"
[ -n "$(find "$tmp/stage" -name plugin_api.h -path '*/include/baton/*')" ] || fail "no baton/plugin_api.h installed"
[ -n "$(find "$tmp/stage" -name c_api.h -path '*/include/baton/*')" ] || fail "no baton/c_api.h installed"
[ -n "$(find "$tmp/stage" -name baton.conf.example)" ] || fail "no example config installed"

# The installed tool, alone: no config, no plugin path, nothing from the build tree.
export XDG_CONFIG_HOME=$tmp/xdg XDG_STATE_HOME=$tmp/state
unset BATON_PLUGIN_PATH BATON_CONFIG
# meson test points LD_LIBRARY_PATH at the build tree; the installed tool must use the installed library.
unset LD_LIBRARY_PATH
plugins=$("$baton" plugins --json)
grep -q '"name":"builtin"' <<< "$plugins" || fail "the installed baton does not find the installed builtin pack: $plugins"
grep -q "\"path\":\"$tmp/stage" <<< "$plugins" || fail "builtin was not loaded from the install: $plugins"
# The plugin folder is named after the ABI's major version, so another major's plugins live apart.
abi_major=$(sed -n 's/^#define BATON_ABI_VERSION_MAJOR \([0-9]*\).*/\1/p' "$src/plugin-api/include/baton/plugin_api.h")
grep -q "\"path\":\"$tmp/stage[^\"]*/baton/plugins-$abi_major/libbaton_builtin.so\"" <<< "$plugins" ||
  fail "builtin was not loaded from <libdir>/baton/plugins-$abi_major: $plugins"

# A vendor's folder, outside the source tree: only the C file.
mkdir -p "$tmp/vendor" "$tmp/plugins"
cp "$src/op-packs/examples/atan/atan.c" "$tmp/vendor/"
# The staged prefix is not the configured one: pkg-config maps it with a sysroot.
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$tmp/stage pkg-config --cflags baton-plugin)
(cd "$tmp/vendor" && cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC $cflags atan.c -o "$tmp/plugins/atan.so" -lm) \
  || fail "the atan pack does not build with only cc and pkg-config"

"$build/op-packs/examples/atan/make-atan-model" "$tmp/atan.tflite" 6
"$baton" run "$tmp/atan.tflite" --plugin-dir "$tmp/plugins" --seed 3 --output-dir "$tmp/out" >/dev/null \
  || fail "baton run with the out-of-tree pack failed"

# Compare y with atan(x) element by element (.npy: 10-byte preamble + header, then little-endian floats).
floats() {
  local f=$1 len
  len=$(od -A n -t u2 -j 8 -N 2 "$f" | tr -d ' ')
  od -A n -t f4 -v -j $((10 + len)) "$f" | tr -s ' ' '\n' | grep -v '^$'
}
paste <(floats "$tmp/out/in_0.npy") <(floats "$tmp/out/out_0.npy") |
  awk 'BEGIN { n = 0 } { n++; want = atan2($1, 1); d = $2 - want; if (d < 0) d = -d;
       if (d > 1e-6) { printf "install_test: FAIL: atan(%s) = %s, baton gave %s\n", $1, want, $2; bad = 1 } }
       END { if (n != 6) { print "install_test: FAIL: expected 6 values, got " n; bad = 1 } exit bad }'

# The same op written in C++ with the installed op-pack kit (baton/op_pack_kit.hpp), built out of tree
# with only c++ and pkg-config: the same values as the C pack's, bit for bit.
if command -v c++ >/dev/null; then
  mkdir -p "$tmp/kit-plugins"
  cp "$src/op-packs/examples/atan/atan_kit.cc" "$tmp/vendor/"
  (cd "$tmp/vendor" && c++ -std=c++20 -O2 -Wall -Wextra -Werror -shared -fPIC $cflags atan_kit.cc \
     -o "$tmp/kit-plugins/atan_kit.so") || fail "the kit-built atan pack does not build with only c++ and pkg-config"
  "$baton" run "$tmp/atan.tflite" --plugin-dir "$tmp/kit-plugins" --seed 3 --output-dir "$tmp/kit-out" >/dev/null \
    || fail "baton run with the kit-built pack failed"
  cmp -s "$tmp/out/out_0.npy" "$tmp/kit-out/out_0.npy" || fail "the kit-built pack's outputs differ from the C pack's"
fi

# The vendor templates (templates/vendor-plugin), copied out of the tree and built with meson against
# the staged SDK alone: `dependency('baton-plugin')` gives the headers and the plugin folder, which
# `meson install` fills under the template's own prefix. The op pack must run LEAKY_RELU in place of the
# builtin pack and give TFLite's values of the one-op case bit for bit; the delegate must take ADD nodes
# of a real model, refuse an int8 ADD with its reason, and give the builtin pack's outputs bit for bit.
case_dir=$src/tests/data/op-cases/leaky_relu_f32
vendor_prefix=$tmp/vendor-prefix
for template in op-pack delegate; do
  [ -f "$src/templates/vendor-plugin/$template/meson.build" ] || fail "no templates/vendor-plugin/$template"
  cp -r "$src/templates/vendor-plugin/$template" "$tmp/vendor-$template"
  (PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$tmp/stage \
     meson setup "$tmp/vendor-$template-build" "$tmp/vendor-$template" --prefix "$vendor_prefix" --libdir lib \
       -Dwerror=true && ninja -C "$tmp/vendor-$template-build" && meson install -C "$tmp/vendor-$template-build") \
    >"$tmp/vendor-$template.log" 2>&1 ||
    { cat "$tmp/vendor-$template.log" >&2; fail "the $template template does not build and install against the installed SDK"; }
done
vendor_plugins=$vendor_prefix/lib/baton/plugins-$abi_major
[ -f "$vendor_plugins/vendor_ops.so" ] && [ -f "$vendor_plugins/vendor_delegate.so" ] ||
  fail "the templates did not install into <libdir>/baton/plugins-$abi_major: $(find "$vendor_prefix" -type f)"
listed=$("$baton" plugins --plugin-dir "$vendor_plugins" --json)
grep -q '"name":"vendor-ops"' <<< "$listed" && grep -q '"name":"vendor-delegate"' <<< "$listed" ||
  fail "baton plugins does not list the templates' plugins: $listed"

vendor_plan=$("$baton" plan "$case_dir/model.tflite" --plugin-dir "$vendor_plugins" --no-delegates)
grep -q 'LEAKY_RELU v1 *vendor-ops (op pack)' <<< "$vendor_plan" ||
  fail "the template op pack does not run LEAKY_RELU: $vendor_plan"
"$baton" run "$case_dir/model.tflite" --plugin-dir "$vendor_plugins" --no-delegates --input "$case_dir/in_0.npy" \
  --output-dir "$tmp/vendor-ops-out" >/dev/null || fail "baton run with the template op pack failed"
[ "$(floats "$tmp/vendor-ops-out/out_0.npy")" = "$(floats "$case_dir/out_0.npy")" ] ||
  fail "the template op pack's LEAKY_RELU differs from TFLite's ($case_dir/out_0.npy)"

"$baton" plan "$src/tests/data/quant-ops/add_int8/model.tflite" --plugin-dir "$vendor_plugins" --delegate vendor-delegate |
  grep -q 'vendor-delegate refused: INT8 tensor (float32 only)' || fail "the template delegate gives no reason for an int8 ADD"
face=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}/face_detection_short_range.tflite
if [ -f "$face" ]; then
  plan=$("$baton" plan "$face" --plugin-dir "$vendor_plugins" --delegate vendor-delegate)
  grep -q 'ADD v1 *vendor-delegate (partition' <<< "$plan" || fail "the template delegate takes no ADD node: $plan"
  "$baton" run "$face" --plugin-dir "$vendor_plugins" --delegate vendor-delegate --seed 5 --output-dir "$tmp/vendor-del-out" \
    >/dev/null || fail "baton run with the template delegate failed"
  "$baton" run "$face" --plugin-dir "$vendor_plugins" --no-delegates --seed 5 --output-dir "$tmp/vendor-builtin-out" >/dev/null
  for f in "$tmp"/vendor-builtin-out/out_*.npy; do
    cmp -s "$f" "$tmp/vendor-del-out/$(basename "$f")" || fail "the template delegate's $(basename "$f") differs from the builtin pack's"
  done
elif [ "${BATON_REQUIRE_MODELS:-}" = 1 ]; then
  fail "no $face for the template delegate's run (tools/fetch-models.sh fetches it)"
else
  echo "install_test: no $face: the template delegate's run on a real model is left out"
fi

# The CMake package config, where CMake is installed: find_package(baton) from the staged prefix (its
# paths are relative to itself), the atan pack built with baton::plugin, a program with baton::baton
# that runs the atan model through the installed library and the staged plugin folder.
if command -v cmake >/dev/null; then
  cmake_config=$(find "$tmp/stage" -name batonConfig.cmake | head -n 1)
  [ -n "$cmake_config" ] || fail "no batonConfig.cmake installed"
  mkdir -p "$tmp/cmake-vendor"
  cp "$src/op-packs/examples/atan/atan.c" "$tmp/cmake-vendor/"
  cat > "$tmp/cmake-vendor/app.c" <<'EOC'
#include <baton/c_api.h>
#include <stdio.h>
int main(int argc, char** argv) {
  baton_environment_options o = {0};
  o.struct_size = sizeof o;
  o.plugin_dirs = (const char* const*)&argv[2];
  o.plugin_dir_count = 1;
  baton_environment* env = baton_environment_create(&o);
  baton_interpreter* interp = env ? baton_interpreter_create_from_file(env, argv[1]) : NULL;
  if (!interp) { fprintf(stderr, "%s\n", baton_last_error()); return 1; }
  baton_interpreter_destroy(interp);
  baton_environment_destroy(env);
  return argc == 3 ? 0 : 1;
}
EOC
  cat > "$tmp/cmake-vendor/CMakeLists.txt" <<'EOC'
cmake_minimum_required(VERSION 3.16)
project(vendor C)
find_package(baton 0.1 REQUIRED)
add_library(atan MODULE atan.c)
set_target_properties(atan PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden)
target_link_libraries(atan PRIVATE baton::plugin m)
add_executable(app app.c)
target_link_libraries(app PRIVATE baton::baton)
file(WRITE ${CMAKE_BINARY_DIR}/abi_major ${BATON_ABI_MAJOR})
EOC
  cmake -S "$tmp/cmake-vendor" -B "$tmp/cmake-build" -Dbaton_DIR="$(dirname "$cmake_config")" \
    >"$tmp/cmake.log" 2>&1 && cmake --build "$tmp/cmake-build" >>"$tmp/cmake.log" 2>&1 \
    || { cat "$tmp/cmake.log" >&2; fail "find_package(baton) does not build a plugin and a program"; }
  mkdir -p "$tmp/cmake-plugins" && cp "$tmp/cmake-build/atan.so" "$tmp/cmake-plugins/"
  staged_lib=$(find "$tmp/stage" -name 'libbaton.so.*' -type f | head -n 1)
  # In a sanitizer build the library needs the sanitizer's runtime loaded first, and the program CMake
  # built is not instrumented: preload it (its leak check is the instrumented suites' job).
  preload=$(ldd "$staged_lib" | awk '/lib(asan|tsan|ubsan)\.so/ {print $3; exit}')
  LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=$(dirname "$staged_lib") \
    "$tmp/cmake-build/app" "$tmp/atan.tflite" "$tmp/cmake-plugins" || fail "the CMake-built program does not load the model"
fi

if [ -n "${3:-}" ]; then
  module=$(find "$tmp/stage" -name 'baton.cpython-*.so' | head -n 1)
  [ -n "$module" ] || fail "no Python module installed"
  site=$(dirname "${module#"$tmp/stage"}")
  "$3" -c 'import sys; sys.exit(sys.argv[1] not in sys.path)' "$site" \
    || fail "the Python module went to $site, which $3 does not import from"
  # The staged library stands in for the installed one the module's run path names.
  libdir=$(dirname "$(find "$tmp/stage" -name 'libbaton.so.*' -type f | head -n 1)")
  names=$(cd "$tmp" && LD_LIBRARY_PATH=$libdir PYTHONPATH=$(dirname "$module") "$3" -c '
import sys, baton
interp = baton.Interpreter(model_path=sys.argv[1], plugin_dirs=[sys.argv[2]])
print(" ".join(p["name"] + "@" + p["path"] for p in interp.plugins()["plugins"]))' "$tmp/atan.tflite" "$tmp/plugins") \
    || fail "the installed Python module does not load a model"
  grep -q "builtin@$tmp/stage" <<< "$names" || fail "the Python module did not find the installed builtin pack: $names"
fi
echo "install_test: installed baton (plugins in plugins-N), out-of-tree Atan pack and its model, the vendor templates, find_package(baton), the Python module: OK"
