#!/usr/bin/env bash
# Puts the sources of the subprojects/ fallbacks (flatbuffers, gtest, pybind11) where meson looks for
# them, from Debian's own source packages, so that `meson setup --wrap-mode=forcefallback` builds them
# with no download of its own. See subprojects/README.md.
#
#   tools/stage-subproject-sources.sh [SOURCE_DIR]     (default: this checkout)
#
# For each wrap: Debian's `.orig` tarball (`apt-get source --download-only`, through a private deb-src
# list of the Debian release this machine runs; cached in ~/.cache/baton/debian-sources) goes into
# subprojects/packagecache under the wrap's source_filename when its sha256 is the wrap's source_hash
# (googletest and pybind11: Debian ships upstream's release tarball unchanged), where meson checks the
# hash and unpacks it itself. A repacked one (flatbuffers' +dfsg1, without two Gradle jars) cannot pass
# that check: it is unpacked into the wrap's directory with the wrap's packagefiles laid over it, which is
# what meson does with a download. Without apt's deb-src access, googletest and pybind11 come from the
# installed libgtest-dev/googletest (/usr/src/googletest) and pybind11-dev (/usr/include/pybind11).
#
# Exit status: 0 all three staged; 3 one could not be found (named on stderr).
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
sub=$src/subprojects
cache=${BATON_DEBIAN_SOURCES:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/debian-sources}
mkdir -p "$cache" "$sub/packagecache"

wrap_key() { sed -n "s/^$2 *= *//p" "$sub/$1.wrap" | head -n 1; }

# Debian's source packages, once: a deb-src list of this release's main archive, apt's own state kept in
# the cache folder (no change to the system's apt configuration, no root needed).
fetch_debian_sources() {
  local codename mirror apt_dir opts
  if ls "$cache"/googletest_*.orig.tar.* "$cache"/pybind11_*.orig.tar.* "$cache"/flatbuffers_*.orig.tar.* >/dev/null 2>&1; then
    return 0
  fi
  command -v apt-get >/dev/null || return 1
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  mirror=${BATON_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  apt_dir=$cache/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $codename main" > "$apt_dir/sources.list"
  opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Debug::NoLocking=1)
  if [ "$(id -u)" -eq 0 ]; then opts+=(-o APT::Sandbox::User=root); fi
  apt-get "${opts[@]}" -qq update >/dev/null 2>&1 || return 1
  (cd "$cache" && apt-get "${opts[@]}" -qq source --download-only googletest pybind11 flatbuffers >/dev/null 2>&1) || return 1
}

# Lays the wrap's packagefiles over an unpacked source directory, as meson does after a download.
overlay() {
  local name=$1 dir=$2
  cp -r "$sub/packagefiles/$(wrap_key "$name" patch_directory)/." "$sub/$dir/"
}

stage() {
  local name=$1 debian_name=$2 file hash dir orig
  file=$(wrap_key "$name" source_filename)
  hash=$(wrap_key "$name" source_hash)
  dir=$(wrap_key "$name" directory)
  if [ -f "$sub/packagecache/$file" ] && [ "$(sha256sum < "$sub/packagecache/$file" | cut -d' ' -f1)" = "$hash" ]; then
    echo "$name: $file already in subprojects/packagecache"
    return 0
  fi
  if [ -f "$sub/$dir/meson.build" ]; then
    echo "$name: subprojects/$dir already unpacked"
    return 0
  fi
  orig=$(ls "$cache/${debian_name}"_*.orig.tar.* 2>/dev/null | head -n 1 || true)
  if [ -n "$orig" ] && [ "$(sha256sum < "$orig" | cut -d' ' -f1)" = "$hash" ]; then
    cp "$orig" "$sub/packagecache/$file"
    echo "$name: Debian's $(basename "$orig") is upstream's $file (same sha256): subprojects/packagecache/$file"
    return 0
  fi
  if [ -n "$orig" ]; then
    # A repacked tarball: its top folder is the wrap's directory (checked, not assumed).
    local top
    top=$(tar -tf "$orig" | head -n 1 | cut -d/ -f1)
    if [ "$top" = "$dir" ]; then
      tar -xf "$orig" -C "$sub"
      overlay "$name" "$dir"
      echo "$name: Debian's repacked $(basename "$orig") unpacked into subprojects/$dir, packagefiles laid over it"
      return 0
    fi
  fi
  # No source package: what Debian's binary packages install.
  case $name in
    gtest)
      if [ -d /usr/src/googletest/googletest/src ]; then
        mkdir -p "$sub/$dir"
        cp -r /usr/src/googletest/googletest /usr/src/googletest/googlemock "$sub/$dir/"
        overlay "$name" "$dir"
        echo "$name: subprojects/$dir from /usr/src/googletest (Debian's googletest package)"
        return 0
      fi ;;
    pybind11)
      if [ -f /usr/include/pybind11/pybind11.h ]; then
        mkdir -p "$sub/$dir/include"
        cp -r /usr/include/pybind11 "$sub/$dir/include/"
        overlay "$name" "$dir"
        echo "$name: subprojects/$dir from /usr/include/pybind11 (Debian's pybind11-dev)"
        return 0
      fi ;;
  esac
  echo "stage-subproject-sources: no source for $name: Debian's source package $debian_name could not be fetched (apt-get source) and no installed package carries it" >&2
  return 3
}

fetch_debian_sources || echo "stage-subproject-sources: Debian's source packages could not be fetched; using installed packages where they carry the source" >&2
status=0
stage gtest googletest || status=$?
stage pybind11 pybind11 || status=$?
stage flatbuffers flatbuffers || status=$?
exit "$status"
