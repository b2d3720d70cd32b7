#!/usr/bin/env bash
# baton's Debian packages, end to end: dpkg-buildpackage from debian/ (in a copy of the tree, so the
# checkout stays clean), lintian with no errors, then a fresh Debian root made from Debian's packages
# (mmdebstrap; the base root is cached in ~/.cache/baton/debian-root-<release>.tar) where the packages
# are installed with apt and used as a user would: `baton plugins`, `baton run` on a real model,
# `python3 -c "import baton"`, the TFLite-compatible library only in its own folder; removing a plugin's
# package takes it out of `baton plugins` and the default delegate chain, installing it again brings it
# back. Then the vendor templates (templates/vendor-plugin) built into packages in that root with
# dpkg-buildpackage against the installed libbaton-dev, checked to depend on baton-abi-1, installed and
# listed.
#
#   tests/debian_packages_test.sh [OUT_DIR]    (the .deb files and logs are left in OUT_DIR if given)
#   BATON_TEST_DEBS=DIR tests/debian_packages_test.sh    (install the packages already built in DIR)
#   BATON_DEB_BUILD_OPTIMIZE=1 tests/debian_packages_test.sh    (build at -O2 as a release does; default -O0)
#
# Needs root (chroot) and Debian's mirror (apt). Installs dpkg-dev, debhelper, dh-python, lintian and
# mmdebstrap when missing. Exit 77 (skipped) where that cannot be had (not root, not Debian) unless
# BATON_REQUIRE_MODELS=1, where it fails instead.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
fail() { echo "debian_packages_test: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${BATON_REQUIRE_MODELS:-}" = 1 ]; then fail "$*"; fi
  echo "debian_packages_test: skipped: $*"; exit 77
}
# Not root, or not Debian: nothing setup.sh could change; skipped even under BATON_REQUIRE_MODELS=1.
if [ "$(id -u)" -ne 0 ]; then echo "debian_packages_test: skipped: needs root (chroot, apt in the new root)"; exit 77; fi
if [ ! -f /etc/debian_version ] || ! command -v apt-get >/dev/null; then
  echo "debian_packages_test: skipped: not a Debian system"; exit 77
fi
jobs=${BATON_JOBS:-$(nproc)}
lock=()
if command -v flock >/dev/null; then lock=(flock /tmp/baton-build.lock); fi
models=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
model=$models/face_detection_short_range.tflite
[ -f "$model" ] || skip "no $model (tools/fetch-models.sh fetches it)"

tools=(dpkg-dev debhelper dh-python lintian mmdebstrap fakeroot)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "debian_packages_test: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    skip "cannot install ${missing[*]}"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-deb.XXXXXX")
root=$work/root
cleanup() {
  # The new root's /proc is mounted only inside the namespaces of `unshare`: nothing to unmount here.
  rm -rf "$work"
}
trap cleanup EXIT
out=${1:-$work/out}
mkdir -p "$out"
t0=$(date +%s)

profiles=()
notflite=
# 1. The packages, from a copy of the tree: dpkg-buildpackage writes into debian/ and ../.
if [ -n "${BATON_TEST_DEBS:-}" ]; then
  cp "$BATON_TEST_DEBS"/*.deb "$out/" 2>/dev/null || true
fi
if [ -z "${BATON_TEST_DEBS:-}" ]; then
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
tree=$work/pkg/baton-$version
mkdir -p "$tree"
# The working tree's files that git tracks or would track (not build folders), as they are now.
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do if [ -e "$f" ]; then printf '%s\0' "$f"; fi; done |
  tar --null -T - -cf - | tar -xf - -C "$tree"
tflite_c_dir=$(tools/fetch-tflite-c.sh 2>/dev/null) || tflite_c_dir=
if [ -z "$tflite_c_dir" ]; then
  [ "${BATON_REQUIRE_MODELS:-}" = 1 ] && fail "tools/fetch-tflite-c.sh could not fetch TFLite's C headers"
  echo "debian_packages_test: no TFLite C headers: building without libbaton-tflite-c and baton-plugin-tflite-delegates"
  profiles=(-Ppkg.baton.notflite)
  notflite=1
fi
# noopt (-O0) by default: this test checks what the packages hold and do, not how fast their code runs, and
# -O0 builds in three quarters of the time (362 s against 493 s here, the largest part of this test);
# BATON_DEB_BUILD_OPTIMIZE=1 builds as a release does.
opt=noopt
[ -z "${BATON_DEB_BUILD_OPTIMIZE:-}" ] || opt=
echo "== dpkg-buildpackage (-j$jobs${opt:+, $opt})"
if ! (cd "$tree" && BATON_TFLITE_C_DIR=$tflite_c_dir DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$jobs $opt" \
      "${lock[@]}" dpkg-buildpackage -us -uc -b "${profiles[@]}" > "$out/dpkg-buildpackage.log" 2>&1); then
  tail -n 40 "$out/dpkg-buildpackage.log" >&2
  fail "dpkg-buildpackage (log: $out/dpkg-buildpackage.log)"
fi
fi
[ -n "${BATON_TEST_DEBS:-}" ] || cp "$work"/pkg/*.deb "$work"/pkg/*.changes "$work"/pkg/*.buildinfo "$out/"
ls "$out"/libbaton0_*.deb >/dev/null 2>&1 || fail "no libbaton0 package in ${BATON_TEST_DEBS:-the build}"
ls "$out"/libbaton-tflite-c_*.deb >/dev/null 2>&1 || notflite=1
t_build=$(date +%s)

echo "== lintian"
lintian --fail-on error "$out"/*.deb > "$out/lintian.log" 2>&1 || {
  cat "$out/lintian.log" >&2; fail "lintian reports errors"; }
echo "lintian: $(grep -c '^E:' "$out/lintian.log" || true) errors, $(grep -c '^W:' "$out/lintian.log" || true) warnings"
echo "== packages"
for deb in "$out"/*.deb; do
  printf '  %-48s %8s bytes, installed %6s KiB\n' "$(basename "$deb")" "$(stat -c %s "$deb")" \
    "$(dpkg-deb -f "$deb" Installed-Size)"
done
t_lint=$(date +%s)

# 2. A fresh Debian root of this machine's release, from Debian's packages. The base (with the
#    packages' run-time dependencies already in, to save a download per run) is made once and cached.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mirror=${BATON_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/baton
base=$cache/debian-root-$codename.tar
if [ ! -f "$base" ]; then
  echo "== mmdebstrap $codename (once; cached in $base)"
  mkdir -p "$cache"
  mmdebstrap --variant=apt --format=tar --skip=cleanup/apt/lists \
    --include=python3,python3-numpy,libboost-program-options1.74.0,libxnnpack0,libpthreadpool0,libvulkan1,mesa-vulkan-drivers,libgrpc++1.51,libprotobuf32 \
    "$codename" "$base.part" "$mirror" > "$out/mmdebstrap.log" 2>&1 || { tail -n 20 "$out/mmdebstrap.log" >&2; fail "mmdebstrap"; }
  mv "$base.part" "$base"
fi
mkdir -p "$root"
tar -xf "$base" -C "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/tmp/debs" "$root/tmp/models"
cp "$out"/*.deb "$root/tmp/debs/"
cp "$model" "$root/tmp/models/"
t_root=$(date +%s)

# Runs a shell command in the root, with its own /proc, as a fresh login would (no variable of ours).
in_root() {
  unshare --mount --pid --fork --mount-proc="$root/proc" \
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
    /bin/sh -ec "$1"
}

echo "== install into the new root"
in_root 'apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/debs/*.deb >/dev/null 2>/tmp/apt.err || { cat /tmp/apt.err >&2; exit 1; }' ||
  fail "apt cannot install the packages in a fresh $codename root"
t_install=$(date +%s)

plugins_json() { in_root 'baton plugins --json'; }
names() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(sorted(p["name"] for p in d["plugins"])), "|", " ".join(d["delegate_chain"]))'; }

listed=$(plugins_json | names) || fail "baton plugins failed in the new root"
echo "baton plugins: $listed"
for p in builtin cpu xnnpack vulkan mediapipe detection; do
  grep -qw "$p" <<< "${listed%%|*}" || fail "plugin $p is not listed by the installed baton: $listed"
done
[ -n "$notflite" ] || grep -qw tflite-delegates <<< "${listed%%|*}" || fail "the tflite-delegates loader is not listed: $listed"
grep -qw xnnpack <<< "${listed#*|}" || fail "xnnpack is not in the default chain: $listed"
dir=$(in_root 'baton plugins --json' | python3 -c 'import json,sys; d=json.load(sys.stdin); print([p["path"] for p in d["plugins"] if p["name"]=="builtin"][0])')
case $dir in
  /usr/lib/*/baton/plugins-1/libbaton_builtin.so) ;;
  *) fail "the builtin pack was loaded from $dir, not the versioned plugin folder" ;;
esac

run=$(in_root 'baton run /tmp/models/face_detection_short_range.tflite --seed 1 --output-dir /tmp/out 2>&1 && ls /tmp/out') ||
  fail "baton run on a real model failed: $run"
grep -q out_0.npy <<< "$run" || fail "baton run wrote no output: $run"
grep -q xnnpack <<< "$run" || fail "the run's plan does not use xnnpack: $run"

in_root 'cd /tmp && python3 -c "
import baton, numpy as np
i = baton.Interpreter(model_path=\"/tmp/models/face_detection_short_range.tflite\")
i.allocate_tensors()
d = i.get_input_details()[0]
i.set_tensor(d[\"index\"], np.zeros(d[\"shape\"], dtype=np.float32))
i.invoke()
assert i.get_tensor(i.get_output_details()[0][\"index\"]).size > 0
print(\"python3: import baton and a model: OK\")
"' || fail "the Python module does not import or run in the new root"

if [ -z "$notflite" ]; then
  in_root 'ls /usr/lib/*/baton/tflite-compat/libtensorflowlite_c.so >/dev/null && ! ldconfig -p | grep libtensorflowlite_c >/dev/null' ||
    fail "libtensorflowlite_c.so is missing from its folder or on the loader's path"
fi

# Removing a plugin's package takes it out of the plugins and the default chain, with no config.
in_root 'apt-get remove -y -qq baton-plugin-xnnpack >/dev/null 2>&1' || fail "apt cannot remove baton-plugin-xnnpack"
listed=$(plugins_json | names)
echo "without baton-plugin-xnnpack: $listed"
! grep -qw xnnpack <<< "$listed" || fail "xnnpack is still listed after its package was removed: $listed"
in_root 'baton run /tmp/models/face_detection_short_range.tflite --seed 1 --output-dir /tmp/out2 >/dev/null 2>&1' ||
  fail "baton run fails without the xnnpack package"
in_root 'apt-get install -y -qq --no-install-recommends /tmp/debs/baton-plugin-xnnpack_*.deb >/dev/null 2>&1' ||
  fail "apt cannot install baton-plugin-xnnpack again"
listed=$(plugins_json | names)
echo "with baton-plugin-xnnpack again: $listed"
grep -qw xnnpack <<< "${listed%%|*}" && grep -qw xnnpack <<< "${listed#*|}" ||
  fail "xnnpack did not come back with its package: $listed"
t_checks=$(date +%s)

# 3. A vendor's path: the templates (templates/vendor-plugin) packaged in the root as a vendor would,
#    their build dependencies from apt (libbaton-dev is the package installed above, the rest Debian's),
#    each package depending on baton-abi-1 and installing into the versioned plugin folder; installed,
#    `baton plugins` lists them and the delegate takes the real model's ADD nodes.
echo "== vendor templates"
mkdir -p "$root/tmp/vendor"
cp -r templates/vendor-plugin/op-pack templates/vendor-plugin/delegate "$root/tmp/vendor/"
in_root 'cd /tmp/vendor && apt-get install -y -qq --no-install-recommends build-essential >/dev/null 2>/tmp/apt.err &&
  apt-get build-dep -y -qq --no-install-recommends ./op-pack ./delegate >/dev/null 2>>/tmp/apt.err ||
  { cat /tmp/apt.err >&2; exit 1; }' || fail "apt cannot install the templates' build dependencies"
for template in op-pack delegate; do
  in_root "cd /tmp/vendor/$template && DEB_BUILD_OPTIONS=noautodbgsym dpkg-buildpackage -us -uc -b >/tmp/vendor/$template.log 2>&1" || {
    tail -n 30 "$root/tmp/vendor/$template.log" >&2; fail "dpkg-buildpackage of the $template template"; }
done
for package in baton-plugin-vendor-ops baton-plugin-vendor-delegate; do
  deb=$(ls "$root"/tmp/vendor/${package}_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || fail "the templates built no $package package"
  depends=$(dpkg-deb -f "$deb" Depends)
  grep -qw 'baton-abi-1' <<< "$depends" || fail "$package does not depend on baton-abi-1: $depends"
  # Read whole first: grep -q stops at the first match, and under pipefail the writer's SIGPIPE would
  # fail the check.
  contents=$(dpkg-deb -c "$deb")
  grep -q ' \./usr/lib/[^/]*/baton/plugins-1/vendor_[a-z]*\.so$' <<< "$contents" ||
    fail "$package does not install into /usr/lib/<triplet>/baton/plugins-1: $contents"
done
in_root 'apt-get install -y -qq --no-install-recommends /tmp/vendor/*.deb >/dev/null 2>/tmp/apt.err || { cat /tmp/apt.err >&2; exit 1; }' ||
  fail "apt cannot install the templates' packages"
listed=$(plugins_json | names)
echo "with the vendor templates' packages: $listed"
grep -qw vendor-ops <<< "${listed%%|*}" && grep -qw vendor-delegate <<< "${listed%%|*}" ||
  fail "baton plugins does not list the templates' plugins: $listed"
plan=$(in_root 'baton plan /tmp/models/face_detection_short_range.tflite --delegate vendor-delegate') ||
  fail "baton plan with the packaged vendor delegate failed: $plan"
grep -q 'ADD v1 *vendor-delegate (partition' <<< "$plan" || fail "the packaged vendor delegate takes no ADD node of the real model: $plan"
t_vendor=$(date +%s)

# A plugin package cannot go in without a runtime of its ABI major version.
in_root 'apt-get remove -y -qq libbaton0 >/dev/null 2>&1 && ! dpkg -s baton-plugin-xnnpack >/dev/null 2>&1' ||
  fail "removing libbaton0 (baton-abi-1) leaves baton-plugin-xnnpack installed"
in_root '! dpkg -s baton-plugin-vendor-ops >/dev/null 2>&1 && ! dpkg -s baton-plugin-vendor-delegate >/dev/null 2>&1' ||
  fail "removing libbaton0 (baton-abi-1) leaves the templates' packages installed"
t_end=$(date +%s)
echo "debian_packages_test: build $((t_build - t0)) s, lintian $((t_lint - t_build)) s, root $((t_root - t_lint)) s," \
     "install $((t_install - t_root)) s, checks $((t_checks - t_install + t_end - t_vendor)) s," \
     "vendor templates $((t_vendor - t_checks)) s: OK"
