#!/usr/bin/env bash
# fetch-images.sh - put the public-domain test photograph astronaut.png (from Debian's python3-skimage
# package, taken with `apt-get download`, nothing installed) into a cache and check its sha256.
#
# usage: tools/fetch-images.sh [CACHE_DIR|-]
#   CACHE_DIR "-" or none: ${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
# Prints the path of the image. A second run with the image present needs no network.
set -euo pipefail

astronaut_sha256=88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5
astronaut_member=./usr/lib/python3/dist-packages/skimage/data/astronaut.png

cache=${1:--}
if [ "$cache" = "-" ]; then cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}; fi
if [ "$cache" = "-h" ] || [ "$cache" = "--help" ]; then sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
image=$cache/images/astronaut.png
if sha256sum "$image" 2>/dev/null | grep -q "^$astronaut_sha256 "; then
  echo "$image"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch-images.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get download python3-skimage >/dev/null 2>&1); then
  # A fresh machine may not have package lists yet.
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq >/dev/null
  (cd "$tmp" && apt-get download python3-skimage >/dev/null) || { echo "fetch-images: apt-get download python3-skimage failed" >&2; exit 1; }
fi
mkdir -p "$cache/images"
dpkg-deb --fsys-tarfile "$tmp"/python3-skimage_*.deb | tar -xOf - "$astronaut_member" > "$tmp/astronaut.png"
if ! sha256sum "$tmp/astronaut.png" | grep -q "^$astronaut_sha256 "; then
  echo "fetch-images: astronaut.png from python3-skimage does not have sha256 $astronaut_sha256" >&2
  exit 1
fi
mv "$tmp/astronaut.png" "$image"
echo "$image"
